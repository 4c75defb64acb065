"""Hexapawn for gameai: a game family that plugs in through the ``gameai.games`` entry
point (the rules and the family: :mod:`gameai_hexapawn.game`)."""
