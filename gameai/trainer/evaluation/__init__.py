"""Judging models: the honest evaluator (layered trees, or repeated positions along a state
graph), the exact model, the judge against the solver, its book of proved positions, and the
calibration of the levels of play."""
