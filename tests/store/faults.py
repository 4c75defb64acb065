"""A TCP proxy in front of a real Redis that loses one reply: the network fault that makes
a client retry a command the server has already executed. It lives in
:mod:`stress.proxy`, with the other faults the stress suites inject."""

from stress.proxy import ReplyDropper

__all__ = ["ReplyDropper"]
