"""Issue 14: an n-tuple network learned by afterstate TD(lambda) in self-play.

Seed 002's afterstate TD with a value function that generalises (Lucas; Thill, Bagheri
and Konen's Connect Four agent): the value of an afterstate is ``tanh`` of the sum of the
weights its n-tuples read (:mod:`gameai.models.ntuple_kernels`), shared by the board's
symmetries and by both players (a cell is "mine" or "theirs" for the player who just
moved), so what X learns about a shape O knows too.

One game: each player picks among its afterstates (epsilon-greedy, epsilon annealed from
``epsilon_start`` to ``epsilon_end``, halving every ``epsilon_halflife`` games), scoring
each candidate incrementally (only the tuples through the cell played). After the game the
afterstates are updated backwards towards a lambda-return in negamax form: the opponent's
next afterstate is worth ``-V`` to the player before it, so

    G_last = the result for the last mover (1 a win, 0 a draw)
    G_t = -gamma * ((1 - lambda) * B_{t+1} + lambda * G_{t+1})

where ``B_{t+1}`` is the value of the opponent's best afterstate at ply ``t + 1`` (what
greedy play would have got there: 1 if it had a win). After an exploratory move the return
is cut (``G_t = -gamma * B_{t+1}``: Watkins' cut, so a random move never teaches the one
before it that it was good), so the targets are those of greedy play. ``gamma`` (1 by
default) discounts a ply: with ``gamma`` < 1 a win is worth more the sooner it comes and a
loss less the later, so the loser's tables learn to hold out and the winner's to finish,
as an exact score does (:func:`lambda_returns`). Each weight read by ``s_t``
moves by ``alpha / P * (G_t - V(s_t)) * (1 - V(s_t)^2)`` (``P`` physical tuples; ``alpha``
annealed like epsilon): the squared error's gradient, whose tanh slope all but stops a
value the network is sure of (``V`` near -1 learns nothing from a win). With
``loss="cross-entropy"`` the slope is left out, the gradient of the cross-entropy of
``(1 + V) / 2`` against ``(1 + G) / 2``: a confident value the games contradict moves at
once. ``second_explores`` scales the second player's epsilon: its table values the
afterstates a search meets after every reply, not only those its greedy play chooses, and
the first player's returns are cut at its random moves as at any. ``siblings``: that
many of the mover's afterstates not played are learned at every ply too, each towards minus
the opponent's best afterstate value after it (a one-ply search's TD(0) target), so the
tables value the replies a search meets, not only those greedy play picks; it costs about
one more move's evaluations a sibling (Connect Four: 2.2x the time a game at 1).
``exploring_starts``:
the share of games that open with a random number of random moves
(:func:`gameai.trainer.walkers.bitboard.random_opening`; at most ``opening_plies`` of them
when given), so positions after an opponent's blunder are met too. With ``tcl`` the step
of each weight is scaled by temporal coherence learning's ``r = |sum of its updates| /
sum of |updates|`` (Beal and Smith), or with ``tcl_beta`` > 0 by ``exp(tcl_beta * (r -
1))`` (Bagheri et al.'s TCL-EXP, which lets a large ``alpha`` settle per weight).

With ``average_halflife`` > 0 the model exported is not the last weights but their
exponential moving average (Polyak and Juditsky's averaging of iterates): from the first
multiple of :data:`AVERAGE_EVERY` games at or past ``average_from`` a copy of the weights,
then at every such multiple ``average = d * average + (1 - d) * weights`` with ``d = 0.5 **
(AVERAGE_EVERY / average_halflife)``. Self-play goes on from the weights themselves; the
average only smooths what one changed value in the opening does to a checkpoint (a whole
family of lines won or lost: docs/ntuple.md, "Averaging the weights"). Taken at fixed game
counts, the average is the same however the games are split into calls.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numba as nb
import numpy as np

from gameai.games import Game
from gameai.games.mnk.game import MnkGame, as_mnk
from gameai.models import Model, ModelInfo, NtupleModel
from gameai.models.ntuple import build_net, default_shape, parse_patterns, random_walks
from gameai.models.ntuple_kernels import (
    MINE,
    PLAYABLE,
    THEIRS,
    Net,
    above,
    afterstate_delta,
    cell_states,
    playable,
    read_weights,
    set_cell_cur,
    set_index,
    side_table,
    tuple_indices,
    wins,
)
from gameai.trainer.learners.base import BATCH, Learner, Params, added_later, require
from gameai.trainer.learners.schedules import annealed
from gameai.trainer.selfplay.sparse import RULES
from gameai.trainer.walkers.bitboard import U64, below, greedy, random_opening, seed_state, uniform

if TYPE_CHECKING:
    from gameai.trainer.selfplay.ray import RemoteSelfPlay
    from gameai.trainer.selfplay.rounds import Backend, SelfPlay

LOSSES = ("squared", "cross-entropy")  # the step's loss (index 11 of the schedule)
AVERAGE_EVERY = 32_768  # games between two steps of the weights' moving average
MAX_SIBLINGS = 8  # at most this many afterstates not played are learned a ply


@dataclass(frozen=True)
class NtupleParams(Params):
    tuples: int = 0  # 0: the game's default (gameai.models.ntuple.default_shape)
    length: int = 0  # cells a tuple; 0: the game's default
    patterns: str = ""  # "0,1,2;3,4,5": the tuples' cells instead of random walks
    states: int = 0  # 0: 4 for gravity games (empty and playable told apart), else 3
    sides: int = 1  # weight tables: 1 shared by both players, 2 one set for each
    alpha_start: float = 0.5
    alpha_end: float = 0.1
    alpha_halflife: float = 20_000.0
    lam: float = 0.5
    epsilon_start: float = 0.2
    epsilon_end: float = 0.05
    epsilon_halflife: float = 20_000.0
    tcl: bool = False
    tcl_beta: float = 0.0  # 0: each weight's step times |sum| / sum of |updates|; > 0: TCL-EXP
    exploring_starts: float = 0.0
    opening_plies: int = 0  # an exploring start's random moves: 0 to this (0: to the end)
    actors: int = 1  # parallel self-play actors, each on its own copy of the weights
    sync_games: int = 2048  # games a round, all actors together; 0: shared weights (Hogwild)
    merge: str = "scaled"  # how a round's deltas combine: scaled, mean or sum (selfplay/)
    staleness: int = 0  # 0: reproducible rounds; N: asynchronous, at most N games behind
    overlap: int = added_later(0)  # 1: a round plays while the one before it merges
    average_halflife: float = added_later(0.0)  # games; > 0: export the moving average
    average_from: int = added_later(0)  # games before the average starts (a copy then)
    gamma: float = added_later(1.0)  # a ply's discount of the return (1: none)
    loss: str = added_later("squared")  # "cross-entropy": a step without tanh's slope
    second_explores: float = added_later(1.0)  # the second player's epsilon, times epsilon
    siblings: int = added_later(0)  # afterstates not played, learned a ply: TD(0) by search

    MACHINE: ClassVar[frozenset[str]] = frozenset(
        {"actors", "sync_games", "merge", "staleness", "overlap"})

    def check(self) -> None:
        require(self.tuples >= 0, "tuples", "at least 0 (0: the game's default)")
        require(self.length >= 0, "length", "at least 0 (0: the game's default)")
        require(self.states in (0, 3, 4), "states", "0 (the game's default), 3 or 4")
        require(self.sides in (1, 2), "sides", "1 (tables shared by both players) or 2")
        require(0 < self.alpha_end <= self.alpha_start, "alpha_end", "in (0, alpha_start]")
        require(self.alpha_halflife > 0, "alpha_halflife", "positive")
        require(0 <= self.lam <= 1, "lam", "between 0 and 1")
        require(0 <= self.epsilon_end <= self.epsilon_start <= 1, "epsilon_start",
                "at least epsilon_end and at most 1")
        require(self.epsilon_halflife > 0, "epsilon_halflife", "positive")
        require(0 <= self.exploring_starts <= 1, "exploring_starts", "between 0 and 1")
        require(self.opening_plies >= 0, "opening_plies", "at least 0 (0: any length)")
        require(0 <= self.tcl_beta <= 20, "tcl_beta", "between 0 and 20")
        require(self.tcl or self.tcl_beta == 0, "tcl_beta", "0 unless tcl=true")
        require(1 <= self.actors <= 64, "actors", "from 1 to 64")
        require(self.sync_games == 0 or self.sync_games >= self.actors, "sync_games",
                "0 (shared weights, not reproducible) or at least actors")
        require(self.merge in RULES, "merge", f"one of {', '.join(RULES)}")
        require(self.staleness >= 0, "staleness", "at least 0 (0: reproducible rounds)")
        require(self.staleness == 0 or self.merge != "mean", "merge",
                "scaled or sum with staleness > 0 (a mean needs a round's deltas together)")
        require(self.overlap in (0, 1), "overlap",
                "0 (each round from the last merge) or 1 (from the one before)")
        require(self.overlap == 0 or self.staleness == 0, "overlap",
                "0 with staleness > 0 (asynchronous merges do not come in rounds)")
        require(not self.tcl or self.actors == 1 or self.sync_games == 0, "tcl",
                "false with actors > 1 (the actors' deltas carry no coherence sums)")
        require(self.average_halflife >= 0, "average_halflife",
                "at least 0 (0: the last weights are exported)")
        require(self.average_from >= 0, "average_from", "at least 0")
        require(0 < self.gamma <= 1, "gamma", "in (0, 1] (1: no discount)")
        require(self.loss in LOSSES, "loss", f"one of {', '.join(LOSSES)}")
        require(0 <= self.second_explores <= 100, "second_explores",
                "between 0 and 100 (a multiple of epsilon, at most 1 in all)")
        require(0 <= self.siblings <= MAX_SIBLINGS, "siblings",
                f"from 0 to {MAX_SIBLINGS} (afterstates not played, learned a ply)")

    def schedule(self) -> np.ndarray:
        """The self-play kernel's parameters, in :func:`play_games`' order."""
        return np.array([self.alpha_start, self.alpha_end, self.alpha_halflife,
                         self.epsilon_start, self.epsilon_end, self.epsilon_halflife,
                         self.lam, self.exploring_starts, self.tcl_beta, self.opening_plies,
                         self.gamma, LOSSES.index(self.loss), self.second_explores,
                         self.siblings],
                        dtype=np.float64)


class NtupleLearner(Learner):
    algorithm = "ntuple"
    params_type = NtupleParams
    params: NtupleParams
    game: MnkGame

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        super().__init__(as_mnk(game), seed=seed, params=params)
        p = self.params
        default_count, default_length = default_shape(self.game)
        if p.patterns:
            tuples = parse_patterns(self.game, p.patterns)
        else:
            tuples = random_walks(self.game, p.tuples or default_count,
                                  p.length or min(default_length, self.game.cells), seed)
        states = p.states or (4 if self.game.gravity else 3)
        if states == 4 and not self.game.gravity:
            raise ValueError("states=4 (empty and playable told apart) is for gravity games")
        self.tuples = tuples
        self.net = build_net(self.game, tuples, states)
        # (sides, tuples, states ** n): the kernels' view of the model's weights
        self.weights = np.zeros((p.sides, len(tuples), states ** tuples.shape[1]),
                                dtype=np.float32)
        # temporal coherence: per weight, the sum of its updates and of their sizes
        shape = self.weights.shape if p.tcl else (0, 0, 0)
        self.tcl_sum = np.zeros(shape, dtype=np.float32)
        self.tcl_abs = np.zeros(shape, dtype=np.float32)
        # each actor's own generator, seeded from the learner's seed and its number
        self.actor_rngs = [seed_state(seed * 1_000_003 + i + 1) for i in range(p.actors)]
        self._pool: ThreadPoolExecutor | None = None  # shared weights' threads
        self.backend: Backend | None = None  # where the actors run (None: local threads)
        self._selfplay: SelfPlay | RemoteSelfPlay | None = None
        self._synced_games = 0  # games behind the weights last pulled from the actors
        self.selfplay_status: dict[str, Any] = {}  # the parallel actors' last figures
        self.average: np.ndarray | None = None  # the weights' moving average, once started

    def use_backend(self, backend: Backend | Any) -> None:
        """Run the parallel actors on ``backend`` (local threads by default; a Ray
        cluster: :mod:`gameai.trainer.selfplay.ray`). The weights learned are the same."""
        self.close()
        self.backend = backend

    @property
    def selfplay(self) -> SelfPlay | RemoteSelfPlay | None:
        """The parallel actors' learner, once started (its ``status`` feeds the metrics)."""
        return self._selfplay

    def close(self) -> None:
        """Stop the parallel actors (the weights stay: their last pulled state, if the
        cluster they ran on is gone)."""
        from gameai.trainer.selfplay.rounds import ClusterLost

        if self._selfplay is not None:
            with contextlib.suppress(ClusterLost):
                self.sync()
            if self._selfplay is not None:
                self._selfplay.close()
                self._selfplay = None

    def sync(self) -> None:
        """Bring ``weights`` up to date with the actors' learner where it runs apart.

        Raises:
            ClusterLost: that learner is gone; the weights and ``games_played`` are then
                those of the last pull.
        """
        from gameai.trainer.selfplay.rounds import ClusterLost

        if self._selfplay is not None:
            try:
                self._selfplay.pull(self.weights)
            except ClusterLost:
                self._lost()
                raise
            self._synced_games = self.games_played

    def _lost(self) -> None:
        """The actors' learner went with its cluster: keep what was last pulled."""
        self._selfplay = None
        self.games_played = self._synced_games

    @property
    def exploration(self) -> float:
        p = self.params
        return annealed(p.epsilon_start, p.epsilon_end, p.epsilon_halflife, self.games_played)

    def _batch(self) -> int:
        """Parallel rounds run many rounds a call: overlapping rounds pipeline only within
        one, and a round longer than the tables' ``BATCH`` must not be cut at it (it was:
        ``sync_games=8192`` played rounds of 4,096 games until 2026-11-27)."""
        p = self.params
        if p.actors > 1 and p.sync_games > 0:
            return max(BATCH, 16 * p.sync_games)
        return BATCH

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        """:meth:`_play`, cut at every multiple of :data:`AVERAGE_EVERY` games where the
        weights' moving average takes a step (:meth:`_average_step`)."""
        if self.params.average_halflife <= 0:
            self._play(games, played, stats)
            return
        while games > 0:
            step = min(games, AVERAGE_EVERY - played % AVERAGE_EVERY)
            self._play(step, played, stats)
            played, games = played + step, games - step
            if played % AVERAGE_EVERY == 0 and played >= self.params.average_from:
                self._average_step()

    def _average_step(self) -> None:
        """One step of the moving average: the weights themselves at its start."""
        self.sync()  # parallel actors' weights live with their learner
        if self.average is None:
            self.average = self.weights.copy()
        else:
            decay = 0.5 ** (AVERAGE_EVERY / self.params.average_halflife)
            blend(self.average.reshape(-1), self.weights.reshape(-1), np.float32(decay))

    def _play(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        schedule = p.schedule()
        if p.actors == 1:
            play_games(self.net, self.weights, self.tcl_sum, self.tcl_abs, self.rng, games,
                       played, schedule, stats, *NO_TRACKING)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(p.actors, thread_name_prefix="ntuple-actor")
        if p.sync_games == 0:
            self._shared_round(games, played, schedule, stats)
            return
        from gameai.trainer.selfplay.rounds import ClusterLost

        if self._selfplay is None:
            self._selfplay = self._start_selfplay(schedule)
        try:
            self._selfplay.run(games, played, schedule, stats)
        except ClusterLost:
            # the learner's weights went with the cluster: what is kept is what was last
            # pulled (an export's), and the games behind it
            self._lost()
            raise
        for i, rng in enumerate(self._selfplay.rngs):
            self.actor_rngs[i][:] = rng
        self.selfplay_status = self._selfplay.status.to_json()

    def _start_selfplay(self, schedule: np.ndarray) -> SelfPlay | RemoteSelfPlay:
        from gameai.trainer.selfplay.local import LocalBackend
        from gameai.trainer.selfplay.rounds import SelfPlay

        p = self.params
        options: dict[str, Any] = dict(slots=p.actors, round_games=p.sync_games,
                                       rule=RULES[p.merge], staleness=p.staleness,
                                       overlap=p.overlap,
                                       rng_of=lambda _s, i: self.actor_rngs[i].copy())
        backend = self.backend if self.backend is not None else LocalBackend()
        start = getattr(backend, "start", None)
        if start is not None:  # a backend whose learner runs apart (Ray)
            selfplay: SelfPlay | RemoteSelfPlay = start(self.net, self.weights,
                                                        seed=self.seed, **options)
        else:
            selfplay = SelfPlay(backend, self.net, self.weights, seed=self.seed, **options)
        return selfplay

    def _shares(self, games: int) -> tuple[list[int], list[int]]:
        k = self.params.actors
        shares = [games // k + (i < games % k) for i in range(k)]
        return shares, [sum(shares[:i]) for i in range(k)]

    def _shared_round(self, games: int, played: int, schedule: np.ndarray,
                      stats: np.ndarray) -> None:
        """``sync_games=0``: every actor updates the one set of weights at once, unlocked
        (Hogwild!): no copies and no merges, but the result depends on the threads'
        timing, so it is not reproducible."""
        k = self.params.actors
        shares, starts = self._shares(games)
        counts = [np.zeros(4, dtype=np.int64) for _ in range(k)]
        assert self._pool is not None
        futures = [self._pool.submit(play_games, self.net, self.weights, self.tcl_sum,
                                     self.tcl_abs, self.actor_rngs[i], shares[i],
                                     played + starts[i], schedule, counts[i], *NO_TRACKING)
                   for i in range(k)]
        for future in futures:
            future.result()
        stats += np.sum(counts, axis=0)

    def export(self, info: ModelInfo | None = None) -> Model:
        """The network: its weights' moving average once that started, else the weights."""
        self.sync()
        w = self.average if self.average is not None else self.weights
        return NtupleModel(self.game, info or self.info(), tuples=self.tuples,
                           weights=w.reshape(w.shape[0] * w.shape[1], w.shape[2]).copy())

    def warm_start(self, model: Model) -> None:
        """Continue from ``model``'s network: its tuples, cell states and weights (a
        restarted worker draws a fresh seed, whose random walks would differ)."""
        if not isinstance(model, NtupleModel):
            raise ValueError("warm start of an n-tuple learner needs an n-tuple model")
        if model.game.name != self.game.name:
            raise ValueError(f"warm start: the model plays {model.game.name}, not "
                             f"{self.game.name}")
        self.tuples = model.tuples.copy()
        self.net = model.net
        self.weights = model.tables.copy()  # its sides too
        self.average = None  # the average starts again, from these weights
        shape = self.weights.shape if self.params.tcl else (0, 0, 0)
        self.tcl_sum = np.zeros(shape, dtype=np.float32)
        self.tcl_abs = np.zeros(shape, dtype=np.float32)
        if self._selfplay is not None:  # the actors start again from the new weights
            self._selfplay.close()
            self._selfplay = None


@nb.njit(cache=True, nogil=True)
def blend(average: np.ndarray, weights: np.ndarray, decay: np.float32) -> None:
    """``average = decay * average + (1 - decay) * weights``, in place, in one pass (flat
    float32 arrays; the plain-numpy reference is in tests/trainer/test_ntuple_average.py)."""
    keep = np.float32(1) - decay
    for i in range(average.size):
        average[i] = decay * average[i] + keep * weights[i]


@nb.njit(cache=True, nogil=True)
def lambda_returns(best_value: np.ndarray, chosen_value: np.ndarray, greedy_move: np.ndarray,
                   last: int, lam: float, gamma: float, out: np.ndarray) -> None:
    """``out[t]``, ``t < last``: the lambda-return of ply ``t``'s afterstate, backwards
    (the module docstring; the forward sum of n-step returns is the reference in
    tests/trainer/test_ntuple.py). ``best_value[t]``: the mover's best afterstate value at
    ply ``t``; ``chosen_value[last]``: the last move's (1 a win, 0 a draw);
    ``greedy_move[t]``: ply ``t``'s move was the greedy one (else the return is cut)."""
    target = chosen_value[last]
    for t in range(last - 1, -1, -1):
        if greedy_move[t + 1]:
            target = -gamma * ((1.0 - lam) * best_value[t + 1] + lam * target)
        else:
            target = -gamma * best_value[t + 1]
        out[t] = target


# play_games' tracking arguments when nothing is tracked (one actor, shared weights)
NO_TRACKING = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32),
               np.zeros(1, dtype=np.int64))


@nb.njit(cache=True, nogil=True)
def sibling_target(net: Net, W: np.ndarray, states: np.ndarray, idx: np.ndarray,
                   cur: np.ndarray, base: float, opponent: np.uint64, occupied: np.uint64,
                   cell: int, pend: np.ndarray, touched: np.ndarray) -> float:
    """The opponent's best afterstate value after the mover plays ``cell`` (not a win, not
    the last cell): 1 if it then wins at once, 0 for a move that fills the board, else its
    table's value (``W``, and its view of the position now: ``states``, ``idx``, ``cur``,
    ``base``, all changed: the caller passes copies). ``opponent``: its pieces."""
    base += set_cell_cur(net, W, idx, cur, states, cell, THEIRS)
    up = above(net, cell)
    if up >= 0:
        base += set_cell_cur(net, W, idx, cur, states, up, PLAYABLE)
    occupied |= np.uint64(1) << np.uint64(cell)
    legal = playable(net, occupied)
    best = -2.0
    for c in range(net.cells):
        bit = np.uint64(1) << np.uint64(c)
        if not legal & bit:
            continue
        if wins(net, opponent | bit, c):
            return 1.0
        if (occupied | bit) == net.full:
            v = 0.0
        else:
            v = np.tanh(base + afterstate_delta(net, W, idx, cur, states, c, pend, touched))
        best = max(best, v)
    return best


@nb.njit(cache=True, nogil=True)
def learn_afterstate(net: Net, W3: np.ndarray, mover: int, index: np.ndarray, target: float,
                     alpha: float, cross_entropy: bool, tcl_sum: np.ndarray,
                     tcl_abs: np.ndarray, beta: float, changed: np.ndarray, old: np.ndarray,
                     n_changed: np.ndarray, last_flat: np.ndarray, last_slot: np.ndarray,
                     kf: np.ndarray) -> None:
    """One step of ``mover``'s afterstate (its physical tuples' ``index``) towards
    ``target`` (the module docstring), logged in ``changed`` / ``old`` when tracked
    (:func:`play_games`; ``kf``: one float32 of scratch)."""
    count = net.pt_cells.shape[0]
    n_tables = W3.shape[1]
    width = W3.shape[2]
    track = changed.size > 0
    use_tcl = tcl_sum.size > 0
    kb = kf.view(np.uint32)  # an update's 1 - a, as logged in its entry's low 32 bits
    W = W3[mover]
    s = 0.0
    for p in range(count):
        s += W[net.pt_table[p], index[p]]
    v = np.tanh(s)
    slope = 1.0 if cross_entropy else 1.0 - v * v
    delta = alpha / count * (target - v) * slope
    shrink = 1.0 - min(1.0, alpha * (1.0 - v * v) * slope)
    for p in range(count):
        tab = net.pt_table[p]
        i = index[p]
        if track:
            flat = (mover * n_tables + tab) * width + i
            if last_flat[mover, p] == flat:  # the tuple's weight as at its last
                slot = last_slot[mover, p]  # update: one entry, the steps' product
                kb[0] = np.uint32(changed[slot] & 0xFFFFFFFF)
                kf[0] = np.float32(kf[0] * np.float32(shrink))
            else:
                slot = n_changed[0]
                n_changed[0] = slot + 1
                kf[0] = shrink
                old[slot] = W[tab, i]
                last_flat[mover, p] = flat
                last_slot[mover, p] = slot
            changed[slot] = (flat << 32) | np.int64(kb[0])
        if use_tcl:
            a = tcl_abs[mover, tab, i]
            r = abs(tcl_sum[mover, tab, i]) / a if a > 0.0 else 1.0
            scale = r if beta <= 0.0 else np.exp(beta * (r - 1.0))
            W[tab, i] += delta * scale
            tcl_sum[mover, tab, i] += delta
            tcl_abs[mover, tab, i] += abs(delta)
        else:
            W[tab, i] += delta


@nb.njit(cache=True, nogil=True)  # nogil: parallel actors run it in threads
def play_games(net: Net, W3: np.ndarray, tcl_sum: np.ndarray, tcl_abs: np.ndarray, rng: U64,
               games: int, played: int, schedule: np.ndarray, stats: np.ndarray,
               changed: np.ndarray, old: np.ndarray, n_changed: np.ndarray) -> None:
    """Play and learn ``games`` games (see the module docstring); add x wins, o wins, draws
    and moves to ``stats``.

    With ``siblings`` (schedule index 13) > 0, at every ply that many of the mover's other
    afterstates (drawn at random among those that do not end the game) are learned too,
    each towards ``-gamma * B'``, ``B'`` the opponent's best afterstate value after it (a
    one-ply search's TD(0) target): a search values every reply, not only those self-play
    plays, so the tables learn the replies it meets. They are stepped after the game's own
    afterstates, with the weights of then.

    With a non-empty ``changed`` it also logs every update it makes, for a parallel actor's
    sparse delta (:mod:`gameai.trainer.selfplay.sparse`): entry ``n_changed[0]`` (then
    counted) of ``changed`` holds the weight's flat index in its high 32 bits and, as
    float32 bits in the low ones, ``1 - a``, ``a = alpha (1 - V^2)^2`` the share of the
    position's error the step removes; ``old`` the weight's value before the step. A
    tuple whose weight is the one of its previous update (its cells unchanged two plies
    on) adds its step to that entry (the product of the ``1 - a``) instead: a game's log
    is then about 2.4 times shorter. The caller leaves room for every update (at most
    cells x physical tuples x (1 + siblings) a game). Sequential writes only: a hash table
    of the touched weights, probed at every update, cost 35-55% of the kernel's speed on
    Connect Four (its random reads miss the cache beside the weights' own;
    docs/ntuple.md)."""
    cells = net.cells
    count = net.pt_cells.shape[0]
    states = np.empty((2, cells), dtype=np.int64)
    idx = np.empty((2, count), dtype=np.int64)
    cur = np.empty((2, count), dtype=np.float32)  # each physical tuple's weight now
    pend = np.zeros(count, dtype=np.int64)
    touched = np.empty(count, dtype=np.int64)
    base = np.zeros(2)
    history = np.empty((cells, count), dtype=np.int64)  # each ply's afterstate, mover's side
    best_value = np.empty(cells)
    chosen_value = np.empty(cells)
    greedy_move = np.zeros(cells, dtype=np.bool_)
    vals = np.empty(cells)
    moves = np.empty(cells, dtype=np.int64)
    ends = np.zeros(cells, dtype=np.bool_)  # the candidate ends the game
    lam = schedule[6]
    beta = schedule[8]
    gamma = schedule[10]
    cross_entropy = schedule[11] == 1.0
    second_explores = schedule[12]
    siblings = int(schedule[13])
    # the siblings learned a game: each one's indices (mover's side), target and mover
    sib_index = np.empty((cells * siblings, count), dtype=np.int64)
    sib_target = np.empty(cells * siblings)
    sib_mover = np.empty(cells * siblings, dtype=np.int64)
    others = np.empty(cells, dtype=np.int64)
    scratch_states = np.empty(cells, dtype=np.int64)
    scratch_idx = np.empty(count, dtype=np.int64)
    scratch_cur = np.empty(count, dtype=np.float32)
    targets = np.empty(cells)
    # an exploring start's random moves: 0 to opening_plies, or to cells - 2 (its default)
    longest = cells - 2 if schedule[9] <= 0 else min(int(schedule[9]), cells - 2)
    sides = W3.shape[0]
    last_flat = np.full((2, count), -1, dtype=np.int64)
    last_slot = np.zeros((2, count), dtype=np.int64)
    kf = np.empty(1, dtype=np.float32)
    for g in range(games):
        n = played + g
        alpha = schedule[1] + (schedule[0] - schedule[1]) * 0.5 ** (n / schedule[2])
        eps = schedule[4] + (schedule[3] - schedule[4]) * 0.5 ** (n / schedule[5])
        eps_side = (eps, min(1.0, eps * second_explores))
        x = np.uint64(0)
        o = np.uint64(0)
        for side in range(2):
            cell_states(net, x, o, states[side])
            tuple_indices(net, states[side], idx[side])
            base[side] = read_weights(net, side_table(W3, side), idx[side], cur[side])
        winner = -1
        last = 0
        n_sib = 0
        opening = random_opening(rng, schedule[7], longest + 2)
        for ply in range(cells):
            m = ply & 1
            mine = x if m == 0 else o
            occupied = x | o
            legal = playable(net, occupied)
            k = 0
            best = -2.0
            for c in range(cells):
                bit = np.uint64(1) << np.uint64(c)
                if not legal & bit:
                    continue
                moves[k] = c
                ends[k] = True
                if wins(net, mine | bit, c):
                    vals[k] = 1.0
                elif (occupied | bit) == net.full:
                    vals[k] = 0.0
                else:
                    ends[k] = False
                    vals[k] = np.tanh(base[m] + afterstate_delta(
                        net, side_table(W3, m), idx[m], cur[m], states[m], c, pend, touched))
                best = max(best, vals[k])
                k += 1
            if ply < opening or (eps_side[m] > 0.0 and uniform(rng) < eps_side[m]):
                pick = below(rng, k)
            else:
                pick = greedy(vals, k, rng)
            if siblings > 0:  # some of the afterstates not played, drawn without repeats
                n_others = 0
                for j in range(k):
                    if j != pick and not ends[j]:
                        others[n_others] = j
                        n_others += 1
                for s_ in range(min(siblings, n_others)):
                    r = s_ + below(rng, n_others - s_)
                    j = others[r]
                    others[r] = others[s_]
                    c = moves[j]
                    scratch_states[:] = states[1 - m]
                    scratch_idx[:] = idx[1 - m]
                    scratch_cur[:] = cur[1 - m]
                    reply = sibling_target(net, side_table(W3, 1 - m), scratch_states,
                                           scratch_idx, scratch_cur, base[1 - m],
                                           o if m == 0 else x, occupied, c, pend, touched)
                    sib_target[n_sib] = -gamma * reply
                    sib_mover[n_sib] = m if sides == 2 else 0
                    scratch_states[:] = states[m]
                    sib_index[n_sib, :] = idx[m]
                    set_index(net, sib_index[n_sib], scratch_states, c, MINE)
                    up = above(net, c)
                    if up >= 0:
                        set_index(net, sib_index[n_sib], scratch_states, up, PLAYABLE)
                    n_sib += 1
            c = moves[pick]
            best_value[ply] = best
            chosen_value[ply] = vals[pick]
            greedy_move[ply] = vals[pick] >= best and ply >= opening
            bit = np.uint64(1) << np.uint64(c)
            if m == 0:
                x |= bit
            else:
                o |= bit
            base[m] += set_cell_cur(net, side_table(W3, m), idx[m], cur[m], states[m], c,
                                    MINE)
            base[1 - m] += set_cell_cur(net, side_table(W3, 1 - m), idx[1 - m], cur[1 - m],
                                        states[1 - m], c, THEIRS)
            up = above(net, c)
            if up >= 0:
                for side in range(2):
                    base[side] += set_cell_cur(net, side_table(W3, side), idx[side],
                                               cur[side], states[side], up, PLAYABLE)
            history[ply, :] = idx[m]
            last = ply
            if vals[pick] == 1.0 and wins(net, x if m == 0 else o, c):
                winner = m
                break
            if (x | o) == net.full:
                break
        stats[3] += last + 1
        if winner == 0:
            stats[0] += 1
        elif winner == 1:
            stats[1] += 1
        else:
            stats[2] += 1
        lambda_returns(best_value, chosen_value, greedy_move, last, lam, gamma, targets)
        last_flat[:, :] = -1  # the log's entry of each side's tuple, for this game
        for t in range(last - 1, -1, -1):
            mover = t & 1 if sides == 2 else 0  # X moves at even plies
            learn_afterstate(net, W3, mover, history[t], targets[t], alpha, cross_entropy,
                             tcl_sum, tcl_abs, beta, changed, old, n_changed, last_flat,
                             last_slot, kf)
        for t in range(n_sib):
            learn_afterstate(net, W3, sib_mover[t], sib_index[t], sib_target[t], alpha,
                             cross_entropy, tcl_sum, tcl_abs, beta, changed, old, n_changed,
                             last_flat, last_slot, kf)
