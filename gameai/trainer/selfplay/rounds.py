"""The learner's side of parallel self-play: the master weights, the slots, the rounds.

:class:`SelfPlay` owns the master weights and one random generator per *slot* (a logical
actor). It hands shares of games to the hosts a backend runs (threads here, Ray actors
across a cluster: :mod:`gameai.trainer.selfplay.local`, :mod:`gameai.trainer.selfplay.ray`),
merges the sparse deltas they send back (:mod:`gameai.trainer.selfplay.sparse`) and hands
the update out to every host.

* **Rounds** (``staleness=0``, the default): every slot plays its share of ``round_games``
  from the same weights; the deltas are merged in slot order. The weights depend on the
  seed, the number of slots and the round's size only, not on the hosts, their number, the
  threads' timing or the machines: the Ray backend's model is byte-identical to the local
  one's.
* **Overlapping rounds** (``overlap=1``): a round is queued on the hosts before the one
  before it is merged, and plays from the weights without that one (one round stale), so
  the merge and a round's slowest host no longer stall the others. Still reproducible: a
  share's generator is a new stream drawn from its slot's own when it is queued, and the
  update of a call's last round is held back until the next round is queued.
* **Asynchronous** (``staleness=N``): each host plays chunks of ``round_games / slots``
  games and its delta is merged as soon as it arrives, then it takes what the others merged
  meanwhile and plays on; a host starts a chunk only while every chunk in flight stays at
  most ``N`` games behind the master when it is merged. Faster where hosts differ in speed;
  not reproducible.

A host that is lost (its node died) costs only the games it had not sent: its shares are
played again from the same generator states and base weights, by the hosts left
(``on_loss="continue"``) or by new hosts once the cluster has room for them
(``on_loss="wait"``), so the round's merge is the one it would have been. Nothing is
merged half-made: a round's update is applied only when every share of it is in.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gameai.models.ntuple_kernels import Net
from gameai.trainer.selfplay.host import Played, Share
from gameai.trainer.selfplay.sparse import Update, apply, merge_one, merge_parts, merge_round
from gameai.trainer.walkers.rng import next_u64

log = logging.getLogger("gameai.trainer.selfplay")


class HostLost(RuntimeError):
    """A host died (its process or node went away) with the work it held."""


class ClusterLost(RuntimeError):
    """The cluster's head (or the learner on it) went away: the run cannot go on."""


class HostHandle(Protocol):
    """A host as the backend runs it: calls return futures, run in the order made; a lost
    host's futures raise :class:`HostLost`."""

    name: str

    def play(self, shares: list[Share], schedule: np.ndarray,
             back: list[Any] | None = None) -> cf.Future[list[Played]]: ...

    def apply(self, updates: list[Any]) -> None: ...

    def close(self) -> None: ...


class Backend(Protocol):
    name: str

    def room(self, hosts: int) -> int:
        """How many more hosts the machines have room for now, beyond ``hosts``."""
        ...

    def new_host(self, net: Net, weights: Any, schedule: np.ndarray) -> HostHandle: ...

    def machines(self) -> dict[str, float]:
        """``nodes`` and ``cpus`` the backend runs on now."""
        ...

    def close(self) -> None: ...


@dataclass
class Status:
    """The last call's figures, for the worker's metrics."""

    backend: str = "local"
    hosts: int = 0
    nodes: float = 1
    cpus: float = 1
    host_rates: dict[str, float] = field(default_factory=dict)  # games/s while playing
    merge_seconds: float = 0.0  # the last round's merge and hand-out
    merge_lag: float = 0.0  # from the first share in to the update out, last round
    staleness: int = 0  # games the latest delta merged was behind (asynchronous mode)
    hosts_lost: int = 0  # since the start
    update_entries: int = 0  # weights changed by the last merge
    delta_bytes: int = 0  # bytes of the deltas sent in the last round
    busy: float = 0.0  # the hosts' share of the last call spent playing (play and collect)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


@dataclass
class _Round:
    """A round in flight: its shares' futures (by host) and the shares played so far."""

    index: int  # rounds dispatched before it
    games: int
    played: int
    base: int  # updates handed out when it was queued: the weights its shares play from
    futures: dict[cf.Future[list[Played]], tuple[HostHandle, list[Share]]] = field(
        default_factory=dict)
    done: dict[int, Played] = field(default_factory=dict)
    first_in: float | None = None


class SelfPlay:
    """Parallel self-play of one n-tuple network (see the module docstring)."""

    def __init__(self, backend: Backend, net: Net, weights: np.ndarray, *, seed: int,
                 slots: int, round_games: int, rule: int, staleness: int = 0,
                 overlap: int = 0, on_loss: str = "continue",
                 rng_of: Callable[[int, int], np.ndarray] | None = None,
                 rngs: list[np.ndarray] | None = None) -> None:
        from gameai.trainer.walkers.bitboard import seed_state

        self.backend, self.net, self.weights = backend, net, weights
        self.flat = weights.reshape(-1)
        self.slots, self.round_games, self.rule = slots, round_games, rule
        self.staleness, self.overlap, self.on_loss = staleness, overlap, on_loss
        # the weights the hosts hold after what they have queued: the master's, or, when
        # rounds overlap, the master's without the last round merged
        self.base = weights if not overlap else np.array(weights, copy=True)
        self._dispatched = 0  # rounds queued since the start
        self._handed_count = 0  # updates handed out since the start
        self._tokens: dict[int, Any] = {}  # the last ones, by number (to step back over)
        self._held: list[tuple[Update, Any]] = []  # merged, not yet handed out
        self._pending: _Round | None = None  # the round still playing (overlap)
        self._merged_games = 0
        make = rng_of or (lambda s, i: seed_state(s * 1_000_003 + i + 1))
        self.rngs = ([np.array(r, copy=True) for r in rngs] if rngs is not None
                     else [make(seed, i) for i in range(slots)])
        self.hosts: list[HostHandle] = []
        self.status = Status(backend=backend.name)
        self._host_games: dict[str, tuple[int, float]] = {}
        self._started = time.perf_counter()  # the call's start (the hosts' busy share)

    # -- hosts ------------------------------------------------------------------------------

    def _grow(self, schedule: np.ndarray, *, at_least: int = 0) -> None:
        """Start hosts up to one a slot, as far as the machines have room (``at_least``
        more whether or not they have: they wait for room)."""
        want = max(0, min(self.slots - len(self.hosts), self.backend.room(len(self.hosts))))
        want = max(want, at_least)
        if not want:
            return
        share = getattr(self.backend, "share", None)  # Ray: the weights put in the object
        weights = share(self.base) if share is not None else self.base  # store once
        for _ in range(want):
            self.hosts.append(self.backend.new_host(self.net, weights, schedule))
        if want:
            log.info("%d self-play hosts (%s)", len(self.hosts), self.backend.name)

    def _lose(self, host: HostHandle) -> None:
        if host in self.hosts:
            self.hosts.remove(host)
            self.status.hosts_lost += 1
            log.warning("self-play host %s lost; its unsent games are played again", host.name)
            host.close()

    def _refresh(self) -> None:
        s = self.status
        s.hosts = len(self.hosts)
        machines = self.backend.machines()
        s.nodes, s.cpus = machines["nodes"], machines["cpus"]
        s.host_rates = {name: games / seconds for name, (games, seconds)
                        in self._host_games.items() if seconds > 0}
        # the rest of the hosts' time: waiting for a round's last share or for the
        # learner, taking updates, and the handing to and fro
        playing = sum(seconds for _, seconds in self._host_games.values())
        wall = time.perf_counter() - self._started
        s.busy = playing / (wall * len(self.hosts)) if self.hosts and wall > 0 else 0.0

    def _count(self, host: HostHandle, played: list[Played]) -> None:
        games, seconds = self._host_games.get(host.name, (0, 0.0))
        for p in played:
            games += int(p.stats[0] + p.stats[1] + p.stats[2])
            seconds += p.seconds
        self._host_games[host.name] = (games, seconds)

    # -- playing -----------------------------------------------------------------------------

    def run(self, games: int, played: int, schedule: np.ndarray, stats: np.ndarray) -> None:
        """Play ``games`` games (``played`` before them), merged into the weights."""
        self._host_games = {}
        self._started = time.perf_counter()
        self._grow(schedule, at_least=0 if self.hosts else 1)
        if self.staleness:
            self._run_async(games, played, schedule, stats)
        else:
            done = 0
            while done < games:
                at = played + done  # rounds end at multiples of round_games
                chunk = min(self.round_games - at % self.round_games, games - done)
                this = self._dispatch(chunk, at, schedule)
                for update, token in self._held:  # the previous call's last round
                    self._hand_out(update, token)
                self._held = []
                if self.overlap:  # the previous round merges while this one plays
                    if self._pending is not None:
                        self._finish(self._pending, schedule, stats)
                    self._pending = this
                else:
                    self._finish(this, schedule, stats)
                done += chunk
                self._grow(schedule)
            if self._pending is not None:  # every game played is in the master weights
                self._finish(self._pending, schedule, stats)
                self._pending = None
        self._refresh()

    def _shares(self, games: int, played: int) -> list[Share]:
        k = self.slots
        counts = [games // k + (i < games % k) for i in range(k)]
        starts = np.cumsum([0, *counts[:-1]])
        return [Share(i, self._stream(i), counts[i], played + int(starts[i]))
                for i in range(k)]

    def _stream(self, slot: int) -> np.ndarray:
        """The generator a slot's share plays with: where its last share left it, or, when
        rounds overlap (a round is queued before the last one is played), a new stream
        drawn from the slot's own generator."""
        if not self.overlap:
            return self.rngs[slot].copy()
        return np.array([next_u64(self.rngs[slot])], dtype=np.uint64)

    def _dispatch(self, games: int, played: int, schedule: np.ndarray) -> _Round:
        """Queue a round's shares on the hosts, one slot after another in turn."""
        if not self.hosts:
            self._grow(schedule, at_least=1)
        this = _Round(self._dispatched, games, played, self._handed_count)
        self._dispatched += 1
        self._queue(this, self._shares(games, played), list(self.hosts), schedule)
        return this

    def _queue(self, this: _Round, shares: list[Share], targets: list[HostHandle],
               schedule: np.ndarray) -> None:
        # a share queued after updates its round's base lacks steps back over them
        back = [self._tokens[i] for i in range(this.base, self._handed_count)]
        for h, host in enumerate(targets):
            mine = shares[h::len(targets)]
            if mine:
                this.futures[host.play(mine, schedule, back or None)] = (host, mine)

    def _finish(self, this: _Round, schedule: np.ndarray, stats: np.ndarray) -> None:
        """Wait for a round's shares (playing a lost host's again), merge them in slot
        order, and hand the update out (or hold it, see :meth:`run`)."""
        while this.futures:
            todo: list[Share] = []
            for future in cf.as_completed(list(this.futures)):
                host, shares = this.futures.pop(future)
                try:
                    result = future.result()
                except HostLost:
                    self._lose(host)
                    todo += shares
                    continue
                this.first_in = this.first_in or time.perf_counter()
                self._count(host, result)
                for p in result:
                    this.done[p.slot] = p
            if todo:  # a lost host's shares: to the hosts left, or to new ones ("wait")
                todo.sort(key=lambda s: s.slot)
                targets = list(self.hosts)
                if self.on_loss == "wait" or not self.hosts:
                    before = len(self.hosts)
                    self._grow(schedule, at_least=max(1, min(len(todo),
                                                             self.slots - len(self.hosts))))
                    targets = self.hosts[before:]
                self._queue(this, todo, targets, schedule)
        started = time.perf_counter()
        ordered = [this.done[i] for i in range(self.slots)]
        update = merge_round(self.flat, [p.delta for p in ordered], self.rule,
                             parts=merge_parts())
        token = self._publish(update)
        if self.overlap and self._dispatched == this.index + 1:
            self._held.append((update, token))  # the next round plays from before it
        else:
            self._hand_out(update, token)
        for p in ordered:
            if not self.overlap:
                self.rngs[p.slot] = p.rng
            stats += p.stats
        now = time.perf_counter()
        s = self.status
        s.merge_seconds = now - started
        s.merge_lag = now - (this.first_in or started)
        s.update_entries = update.size
        s.delta_bytes = sum(p.delta.nbytes for p in ordered)
        s.staleness = self._merged_games if self.overlap else 0
        self._merged_games = this.games
        # kept: the updates a round still in flight (queued after this one, so from this
        # one's base or a later one) may have to step back over
        for i in [i for i in self._tokens if i < this.base]:
            del self._tokens[i]

    def _hand_out(self, update: Update, token: Any) -> None:
        """Every host takes the update after what it has queued; so does the hosts' base."""
        for host in self.hosts:
            host.apply([token])
        if self.base is not self.weights:
            apply(self.base.reshape(-1), update)
        self._tokens[self._handed_count] = token
        self._handed_count += 1

    def _run_async(self, games: int, played: int, schedule: np.ndarray,
                   stats: np.ndarray) -> None:
        chunk = max(1, self.round_games // self.slots)
        log_: list[Any] = []  # the updates of this call, as handed out
        seen: dict[str, int] = {h.name: 0 for h in self.hosts}  # updates each host has
        slot_of: dict[str, int] = {}
        free_slots = list(range(self.slots))
        for host in self.hosts:
            slot_of[host.name] = free_slots.pop(0)
        pool: list[tuple[int, int]] = []  # (first game, games) not yet played
        claimed = merged = 0
        inflight: dict[cf.Future[list[Played]], tuple[HostHandle, int, int, int]] = {}
        busy: set[str] = set()
        while merged < games:
            for host in list(self.hosts):
                if host.name in busy:
                    continue
                if pool:
                    first, c = pool.pop(0)
                elif claimed < games:
                    first, c = played + claimed, min(chunk, games - claimed)
                    # the chunks in flight must not fall more than staleness behind
                    if any(claimed + c - base > self.staleness
                           for (_, _, _, base) in inflight.values()):
                        break
                    claimed += c
                else:
                    break
                host.apply(log_[seen.get(host.name, 0):])
                seen[host.name] = len(log_)
                slot = slot_of[host.name]
                share = Share(slot, self.rngs[slot].copy(), c, first)
                inflight[host.play([share], schedule)] = (host, first, c, merged)
                busy.add(host.name)
            if not inflight:
                self._grow(schedule, at_least=1)
                for host in self.hosts:
                    if host.name not in slot_of and free_slots:
                        slot_of[host.name] = free_slots.pop(0)
                continue
            ready, _ = cf.wait(list(inflight), return_when=cf.FIRST_COMPLETED)
            for future in ready:
                host, first, c, base = inflight.pop(future)
                busy.discard(host.name)
                try:
                    result = future.result()
                except HostLost:
                    self._lose(host)
                    free_slots.append(slot_of.pop(host.name))
                    pool.append((first, c))
                    if self.on_loss == "wait" or not self.hosts:
                        self._grow(schedule, at_least=1)
                    for h in self.hosts:
                        if h.name not in slot_of and free_slots:
                            slot_of[h.name] = free_slots.pop(0)
                    continue
                started = time.perf_counter()
                p = result[0]
                update = merge_one(self.flat, p.delta, self.rule)
                log_.append(self._publish(update))
                self.status.staleness = merged - base
                merged += c
                self.rngs[p.slot] = p.rng
                stats += p.stats
                self._count(host, result)
                self.status.merge_seconds = time.perf_counter() - started
                self.status.update_entries = update.size
                self.status.delta_bytes = p.delta.nbytes
        for host in self.hosts:  # every copy ends at the master's weights
            host.apply(log_[seen.get(host.name, 0):])

    def _publish(self, update: Update) -> Any:
        """The update as the hosts take it: itself, or (Ray) its reference in the object
        store, put there once for every node."""
        publish = getattr(self.backend, "publish", None)
        return update if publish is None else publish(update)

    def pull(self, into: np.ndarray) -> None:
        """Copy the master weights into ``into`` (nothing to do when it is them)."""
        if into is not self.weights:
            np.copyto(into, self.weights)

    def close(self) -> None:
        for host in self.hosts:
            host.close()
        self.hosts = []
        self.backend.close()
