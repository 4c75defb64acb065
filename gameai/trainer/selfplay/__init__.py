"""Parallel self-play for the n-tuple learner: actors on their own copies of the weights
send back sparse deltas; a learner merges them and hands out the changes (rounds.py),
with hosts in local threads (local.py, the default) or Ray actors across a cluster (ray.py,
the optional extra ``gameai[ray]``)."""
