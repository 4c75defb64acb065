"""CPU time per ``core.best_move`` call in process: the server's hot path without the
transports, for a plain query (no top, no budget) and, with ``--asked``, for the queries
that ask more (top moves, a node budget). Run it with each checkout's python, interleaved,
to compare two versions on one machine (docs/api.md, Budgets, has a run).

    python scripts/bench_core_best_move.py [--asked]
"""
import json
import statistics
import sys
import tempfile
import time

import numpy as np

from gameai.games import get_game
from gameai.models import ModelInfo, NtupleModel
from gameai.models.ntuple import random_walks
from gameai.models.oracle import solver_model
from gameai.service import core
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import ModelStore
from gameai.store.embedded import RedisServer


def network():
    game = get_game("connect-four")
    rng = np.random.default_rng(1)
    return NtupleModel(game, ModelInfo(game=game.name, algorithm="ntuple", seed=1),
                       tuples=random_walks(game, 6, 5, 1),
                       weights=rng.normal(scale=0.2, size=(6, 4 ** 5)).astype(np.float32))

with tempfile.TemporaryDirectory() as d, RedisServer(d, tcp=True, persist=False) as redis:
    store = ModelStore.from_url(redis.url, prefix="bench")
    for m in (solver_model(get_game("tictactoe")), network()):
        v = store.publish(m.to_bytes(), by="bench").version
        store.set_alias(game=m.game.name, alias="production", version=v, by="bench")
    registry = Registry(store, ("tictactoe", "connect-four"), Metrics())
    registry.store_up = True
    registry.refresh()
    cases = {"tictactoe": ["X--|-O-|---", "XX-|OO-|---", "XO-|-X-|---"],
             "connect-four": ["-------|-------|-------|-------|---O---|--XX---"]}
    out = {}
    for game, boards in cases.items():
        for b in boards:
            core.best_move(registry, game=game, board=b)  # warm, cache
        per = []
        for _ in range(7):
            n = 20000
            t = time.process_time()
            for i in range(n):
                core.best_move(registry, game=game, board=boards[i % len(boards)])
            per.append((time.process_time() - t) / n * 1e6)
        out[game] = {"min_us": round(min(per), 2), "median_us": round(statistics.median(per), 2)}
    if "--asked" in sys.argv:
        asked = {"tictactoe top 3": ("tictactoe", {"top": 3}),
                 "connect-four top 3": ("connect-four", {"top": 3}),
                 "connect-four nodes 2000": ("connect-four", {"nodes": 2000})}
        for name, (game, extra) in asked.items():
            board = cases[game][0]
            core.best_move(registry, game=game, board=board, **extra)  # warm
            per = []
            for _ in range(5):
                n = 200
                t = time.process_time()
                for _ in range(n):
                    core.best_move(registry, game=game, board=board, **extra)
                per.append((time.process_time() - t) / n * 1e6)
            out[name] = {"min_us": round(min(per), 1),
                         "median_us": round(statistics.median(per), 1)}
    print(json.dumps(out))
