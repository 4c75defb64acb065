"""The learners: one module per algorithm (tally, td, qlearning, the n-tuple network, seed 004's
distillation), their parameters, per-game defaults, schedules, the position table they
keep values in, and the export of what they learned into a model."""
