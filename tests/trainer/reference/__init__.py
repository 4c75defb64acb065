"""The learners as they were before issue 23 made each algorithm one kernel over a walker:
td, qlearning and tally written twice, once over m,n,k bitboards and hash tables
(``td.py``...) and once along a state graph (``td_graph.py``...), with their engines
(``bitboard.py``, ``position_graph.py``, ``base.py``). Frozen copies (imports aside): the
references that ``tests/trainer/test_same_models.py`` holds today's learners to, byte for
byte. They share with today's code only what the move did not change: the hash table's
find and insert, the export helpers, the learners' and parameters' base classes."""
