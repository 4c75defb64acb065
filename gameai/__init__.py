"""gameai: learn m,n,k board games by self-play and serve moves from a Redis model store."""

__version__ = "0.1.0"
