"""Proving suites: load, rollouts and faults under traffic, hostile input, security.

Each suite is a ``gameai stress NAME`` command that prints a table of figures, with a
short version run by CI under a pytest marker.
"""
