"""One actor's side of parallel self-play: its own copy of the weights, games played on it,
and the sparse delta of each share sent back (:mod:`gameai.trainer.selfplay.sparse`).

A host plays one or more *slots* a round: a slot is a logical actor (its own random
generator, its share of the round's games), so the weights learned depend on the seed, the
number of slots and the round's size, never on how many hosts play them or where: a host
plays each of its slots from the round's base weights (the delta taken out puts the copy
back) and a slot lost with its host is replayed elsewhere from the same state, to the same
delta. The same class runs in a thread (the local backend) and inside a Ray actor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from gameai.models.ntuple_kernels import Net
from gameai.trainer.learners.ntuple import play_games
from gameai.trainer.selfplay.sparse import Delta, Update, apply, collect, undo

GROW_GAMES = 64  # games between checks of the update log's room


@dataclass
class Share:
    """A slot's work in a round: its generator state, its games and the number of games
    played before its first one (for the schedules)."""

    slot: int
    rng: np.ndarray  # 1 uint64, the slot's generator state at the share's start
    games: int
    played: int


@dataclass
class Played:
    """A share played: its delta, the generator's state after it, its x wins, o wins,
    draws and moves, and the seconds it took."""

    slot: int
    delta: Delta
    rng: np.ndarray
    stats: np.ndarray
    seconds: float


class Host:
    """An actor's weights copy and tracking buffers."""

    def __init__(self, net: Net, weights: np.ndarray) -> None:
        self.net = net
        self.weights = np.array(weights, dtype=np.float32, copy=True)  # writable, its own
        self.flat = self.weights.reshape(-1)
        self.log = np.empty(0, dtype=np.int64)  # the update log (play_games' tracking)
        self.old = np.empty(0, dtype=np.float32)
        self.spare_log = np.empty(0, dtype=np.int64)  # the log's sort moves entries here
        self.spare_old = np.empty(0, dtype=np.float32)
        self.count = np.zeros(1, dtype=np.int64)
        self._empty = np.zeros((0, 0, 0), dtype=np.float32)

    def warm(self, schedule: np.ndarray) -> None:
        """Compile (or load from numba's cache) every kernel a share runs, changing nothing
        (two games played and taken back out)."""
        self.play([Share(0, np.zeros(1, np.uint64), 2, 0)], schedule)
        none = Update(np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, np.float32))
        self.apply([none])
        undo(self.flat, none)

    def _room(self, games: int, siblings: int) -> None:
        """Room in the log for ``games`` more games' updates (at most cells x physical
        tuples x (1 + siblings) a game), grown by doubling, what is logged kept."""
        need = int(self.count[0]) + (games * self.net.cells * self.net.pt_cells.shape[0]
                                     * (1 + siblings))
        if need > self.log.shape[0]:
            size = max(need, 2 * self.log.shape[0])
            n = int(self.count[0])
            for name, dtype in (("log", np.int64), ("old", np.float32)):
                grown = np.empty(size, dtype=dtype)
                grown[:n] = getattr(self, name)[:n]
                setattr(self, name, grown)
            self.spare_log = np.empty(size, dtype=np.int64)
            self.spare_old = np.empty(size, dtype=np.float32)

    def play(self, shares: list[Share], schedule: np.ndarray,
             back: list[Update] | None = None) -> list[Played]:
        """Play each share from the current weights, or from the weights before the updates
        ``back`` (the last ones applied, in the order applied: a share of an earlier round
        played again); the weights are left as they were."""
        for update in reversed(back or []):
            undo(self.flat, update)
        try:
            return self._play(shares, schedule)
        finally:
            self.apply(back or [])

    def _play(self, shares: list[Share], schedule: np.ndarray) -> list[Played]:
        out = []
        for share in shares:
            started = time.perf_counter()
            rng = share.rng.copy()
            stats = np.zeros(4, dtype=np.int64)
            done = 0
            while True:  # at least once, so that warm() compiles
                games = min(GROW_GAMES, share.games - done)
                self._room(games, int(schedule[13]))
                play_games(self.net, self.weights, self._empty, self._empty, rng, games,
                           share.played + done, schedule, stats, self.log, self.old,
                           self.count)
                done += games
                if done >= share.games:
                    break
            # sorted here, in the actors' own threads or processes: the learner's merge
            # is then one ascending pass over the weights
            delta = collect(self.flat, self.log, self.old, int(self.count[0]),
                            self.spare_log, self.spare_old)
            self.count[0] = 0
            out.append(Played(share.slot, delta, rng, stats, time.perf_counter() - started))
        return out

    def apply(self, updates: list[Update]) -> None:
        """Take the learner's updates, in order."""
        for update in updates:
            apply(self.flat, update)
