"""Benchmarks: the figures of ``gameai bench ...``. Only the command line imports this room."""
