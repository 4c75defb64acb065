"""The learners: one module per algorithm (tally, td, qlearning, the n-tuple network, seed 004's
distillation), each written once; their parameters, per-game defaults, schedules, the
position stores the table learners keep values in (a hash table, a dense table), and the
export of what they learned into a model."""
