"""Compiled walkers: how self-play moves through a game, in numba, behind one interface
(:mod:`gameai.trainer.walkers.interface`) that every table learner's kernel is written
against. A game names its walker (``Game.walker``, :mod:`gameai.trainer.walkers.registry`):
the bitboard walker plays games whose moves fill a cell, on two bitmasks (m,n,k, boards
too large to enumerate); the position-graph walker plays any game small enough to
enumerate, along its state graph. :mod:`gameai.trainer.walkers.rng` holds the seeded
random numbers they all draw."""
