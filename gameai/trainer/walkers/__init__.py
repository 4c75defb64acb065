"""Compiled walkers: how self-play moves through a game, in numba. The bitboard walker plays
games whose moves fill a cell (m,n,k); the position-graph walker plays any game small enough
to enumerate, along its state graph."""
