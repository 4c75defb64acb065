"""Benchmarks: the figures of ``gameai bench ...``. Only the command line imports this room."""


class CannotBench(ValueError):
    """A benchmark cannot run as asked; the message says why (the command line reports it)."""
