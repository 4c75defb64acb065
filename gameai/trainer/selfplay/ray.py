"""The Ray backend (the optional extra ``gameai[ray]``): self-play hosts as Ray actors
across a cluster's nodes, the learner as an actor beside the trainer.

* :func:`connect` joins the cluster at ``ADDRESS`` (``host:port`` of its head) or ``auto``
  (the cluster this machine is a node of) as a driver.
* The learner (:class:`_Learner`, a Ray actor pinned to the trainer's node) owns the
  master weights and runs :class:`~gameai.trainer.selfplay.rounds.SelfPlay` with hosts
  that are Ray actors (one CPU each, as many as the cluster has CPUs, up to one a slot).
  Each host loads the weights once from the object store and compiles or loads the numba
  kernels once, when it starts; every update after that is put in the object store once
  and read by every node from there.
* A host that dies with its node raises :class:`~gameai.trainer.selfplay.rounds.HostLost`
  in the learner, which plays its shares again elsewhere (or waits for room); the learner
  itself, or the head, going away raises :class:`ClusterLost` in the trainer, which keeps
  the weights it last pulled (its last checkpoint).

Ray's own messages are pickled between its processes: a cluster is one trust domain, whose
ports must not be reachable from outside it (docs/operations.md). Nothing here unpickles
anything a user stored.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import os
import socket
import time
from typing import Any

import numpy as np

from gameai.models.ntuple_kernels import Net
from gameai.trainer.selfplay.host import Host, Played, Share
from gameai.trainer.selfplay.rounds import ClusterLost, HostLost, SelfPlay, Status
from gameai.trainer.selfplay.sparse import Update

log = logging.getLogger("gameai.trainer.selfplay")
INSTALL = "pip install 'gameai[ray]'"
HEAD_POLL = 1.0  # seconds between looks at the head while waiting on the learner
HEAD_GRACE = 10.0  # seconds the head may not answer before the run stops
# Ray ends a driver whose head has not answered for this long; the trainer stops first
# (HEAD_GRACE), and needs the time to write its last model
RAY_DRIVER_PATIENCE = "600"


def _answers(address: str) -> bool:
    """Whether the head's GCS port accepts a connection."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1.0):
            return True
    except (OSError, ValueError):
        return False


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be joined; the message says what to do."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise RayUnavailable(f"--cluster runs self-play on a Ray cluster, and Ray is not "
                             f"installed: {INSTALL}") from e
    return ray


def connect(address: str) -> dict[str, float]:
    """Join the Ray cluster at ``address`` (``auto``: the one this machine belongs to).
    Returns its ``nodes`` and ``cpus``.

    Raises:
        RayUnavailable: Ray is missing, or no cluster answers there.
    """
    ray = _ray()
    if not ray.is_initialized():
        os.environ.setdefault("RAY_gcs_rpc_server_reconnect_timeout_s", RAY_DRIVER_PATIENCE)
        try:
            ray.init(address=address, logging_level=logging.WARNING,
                     log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise RayUnavailable(f"--cluster {address}: cannot join a Ray cluster there: "
                                 f"{e}") from e
    return machines()


def machines() -> dict[str, float]:
    ray = _ray()
    alive = [n for n in ray.nodes() if n.get("Alive")]
    return {"nodes": float(len(alive)),
            "cpus": float(sum(n.get("Resources", {}).get("CPU", 0.0) for n in alive))}


def disconnect() -> None:
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


# -- inside the cluster ------------------------------------------------------------------------

class _Host:
    """A Ray actor holding one :class:`Host`."""

    def __init__(self, net: Net, weights: np.ndarray, schedule: np.ndarray) -> None:
        self.host = Host(net, weights)
        self.host.warm(schedule)  # numba compiles or loads here, once per actor

    def play(self, shares: list[Share], schedule: np.ndarray, *back: Update) -> list[Played]:
        return self.host.play(shares, schedule, list(back))

    def apply(self, *updates: Update) -> None:
        self.host.apply(list(updates))

    def node(self) -> str:
        return str(_ray().get_runtime_context().get_node_id())


def _lost(e: BaseException) -> bool:
    ray = _ray()
    return isinstance(e, (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError,
                          ray.exceptions.NodeDiedError))


class RayHost:
    """A host actor as the learner drives it (:class:`~gameai.trainer.selfplay.rounds.
    HostHandle`)."""

    def __init__(self, name: str, actor: Any) -> None:
        self.name, self.actor = name, actor

    def play(self, shares: list[Share], schedule: np.ndarray,
             back: list[Any] | None = None) -> cf.Future[list[Played]]:
        out: cf.Future[list[Played]] = cf.Future()

        def done(f: cf.Future[Any]) -> None:
            try:
                out.set_result(f.result())
            except BaseException as e:
                out.set_exception(HostLost(str(e)) if _lost(e) else e)

        # the updates to step back over as object references, each read once per node
        self.actor.play.remote(shares, schedule, *(back or [])).future().add_done_callback(done)
        return out

    def apply(self, updates: list[Any]) -> None:
        if updates:
            self.actor.apply.remote(*updates)  # object refs: each node reads them once

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already gone with its node
            _ray().kill(self.actor)


class RayBackend:
    """Hosts as Ray actors, one CPU each, up to the cluster's CPUs."""

    name = "ray"

    def __init__(self) -> None:
        self._made = 0

    def room(self, hosts: int) -> int:
        return max(0, int(machines()["cpus"]) - hosts)

    def share(self, weights: np.ndarray) -> Any:
        """The weights in the object store, once for all the hosts started together."""
        return _ray().put(weights)

    def new_host(self, net: Net, weights: Any, schedule: np.ndarray) -> RayHost:
        """A host actor on any node with a free CPU; ``weights``: their object reference
        (:meth:`share`), which Ray hands the actor as the array."""
        ray = _ray()
        self._made += 1
        actor = ray.remote(num_cpus=1, max_restarts=0)(_Host).remote(net, weights, schedule)
        return RayHost(f"ray-{self._made}", actor)

    def publish(self, update: Update) -> Any:
        return _ray().put(update)

    def machines(self) -> dict[str, float]:
        return machines()

    def close(self) -> None:
        pass


class _Learner:
    """The learner as a Ray actor: the master weights and the rounds."""

    def __init__(self, net: Net, weights: np.ndarray, options: dict[str, Any]) -> None:
        self.selfplay = SelfPlay(RayBackend(), net, np.array(weights, copy=True), **options)

    def run(self, games: int, played: int, schedule: np.ndarray) -> dict[str, Any]:
        stats = np.zeros(4, dtype=np.int64)
        self.selfplay.run(games, played, schedule, stats)
        return {"stats": stats, "rngs": self.selfplay.rngs,
                "status": self.selfplay.status.to_json()}

    def weights(self) -> np.ndarray:
        return self.selfplay.weights

    def close(self) -> None:
        self.selfplay.close()


class RemoteSelfPlay:
    """The trainer's handle on the learner actor: what :class:`SelfPlay` offers the
    n-tuple learner (``run``, ``pull``, ``rngs``, ``status``, ``close``)."""

    def __init__(self, actor: Any, slots: int, rngs: list[np.ndarray]) -> None:
        self.actor = actor
        self.head = str(_ray().get_runtime_context().gcs_address)
        self.rngs = rngs
        self.status = Status(backend="ray")

    def _call(self, method: Any, *args: Any) -> Any:
        """``method(*args)`` on the learner, waited for while the head answers: a head that
        stops answering for :data:`HEAD_GRACE` seconds, or a learner that dies, raises
        :class:`ClusterLost` (before Ray's own watchdog would end the process)."""
        ray = _ray()
        lost = (ray.exceptions.RayActorError, ray.exceptions.RaySystemError,
                ray.exceptions.ObjectLostError, ray.exceptions.NodeDiedError, ConnectionError)
        silent_since = None
        try:
            ref = method.remote(*args)
            while True:
                ready, _ = ray.wait([ref], timeout=HEAD_POLL)
                if ready:
                    return ray.get(ref)
                if _answers(self.head):
                    silent_since = None
                    continue
                silent_since = silent_since or time.monotonic()
                if time.monotonic() - silent_since > HEAD_GRACE:
                    raise ClusterLost(f"the Ray cluster went away (its head at {self.head} "
                                      f"has not answered for {HEAD_GRACE:.0f} s)")
        except lost as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ClusterLost(f"the Ray cluster's learner went away ({reason})") from e

    def run(self, games: int, played: int, schedule: np.ndarray, stats: np.ndarray) -> None:
        out = self._call(self.actor.run, games, played, schedule)
        stats += out["stats"]
        self.rngs = [np.array(r, copy=True) for r in out["rngs"]]
        self.status = Status(**out["status"])

    def pull(self, into: np.ndarray) -> None:
        np.copyto(into, self._call(self.actor.weights))

    def close(self) -> None:
        try:
            self._call(self.actor.close)
            _ray().kill(self.actor)
        except ClusterLost:
            pass


def start(net: Net, weights: np.ndarray, **options: Any) -> RemoteSelfPlay:
    """Start the learner actor on this node (it dies with the trainer's node, never
    before it) with the master ``weights``; ``options`` as :class:`SelfPlay`'s."""
    ray = _ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    rng_of = options.pop("rng_of", None)
    slots = options["slots"]
    rngs = [rng_of(0, i) if rng_of else None for i in range(slots)]
    if rng_of is not None:  # the generators travel as arrays, not as a function
        options["rng_of"] = None
        options["rngs"] = rngs
    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=0)(_Learner).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False)
    ).remote(net, ray.put(weights), options)
    return RemoteSelfPlay(actor, slots, [r for r in rngs if r is not None])


class RayCluster:
    """The backend object the n-tuple learner is given (``use_backend``): starts the
    learner actor on the cluster joined by :func:`connect`."""

    name = "ray"

    def __init__(self, on_loss: str = "continue") -> None:
        self.on_loss = on_loss  # a lost host's shares: to the hosts left, or "wait" for room

    def start(self, net: Net, weights: np.ndarray, **options: Any) -> RemoteSelfPlay:
        return start(net, weights, on_loss=self.on_loss, **options)
