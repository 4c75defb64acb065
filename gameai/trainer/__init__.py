"""The trainer: self-play learners, the walkers they play on, evaluation against the exact
solvers, the training loop shared by ``gameai train`` and the worker, and the worker that
publishes and promotes through gates."""
