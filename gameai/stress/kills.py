"""The trainer SIGKILLed in the middle of publishing, at many points.

``gameai trainer`` reaches Redis through a :class:`~gameai.stress.proxy.FaultProxy`. For each
kill point the proxy waits for the trainer's publish (or promote) command and kills the
trainer at that exact moment: before any of the command has reached Redis, halfway
through it, one byte short of its end, after Redis executed it but before the reply, and
just after the reply; then a few kills at random moments. A reader loads every version
the index lists, continuously, the whole time. Between kills the store is audited: every
index entry's bytes verify against their sha256, no payload exists without its index
entry, every alias names a version that verifies, and version numbers only grow; and the
kill had exactly its effect: a new version only when Redis ran the publish, a promotion
only when it ran the alias change.

Every restart uses ``--resume`` (warm start from production, as Compose and Kubernetes
restart it). Finally the trainer runs once more to its end, with ``--publish every`` (a
perfect production leaves a trainer idle otherwise), and must publish a version that goes
on from production.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import redis

from gameai.models import CorruptModel
from gameai.store import ModelStore, StoreError
from gameai.stress.harness import gameai_command
from gameai.stress.proxy import FaultProxy
from gameai.stress.report import Report

PUBLISH, PROMOTE = b'"type": "publish"', b'"type": "alias"'
POINTS = [  # (what, trigger, fault, fraction, versions it adds, promotes)
    ("publish: nothing sent", PUBLISH, "cut", 0.0, 0, False),
    ("publish: half sent", PUBLISH, "cut", 0.5, 0, False),
    ("publish: all but the last byte", PUBLISH, "cut", 0.999, 0, False),
    ("publish: executed, reply lost", PUBLISH, "lose-reply", 1.0, 1, False),
    ("publish: just replied", PUBLISH, "after-reply", 1.0, 1, False),
    ("promote: half sent", PROMOTE, "cut", 0.5, 1, False),
    ("promote: executed, reply lost", PROMOTE, "lose-reply", 1.0, 1, True),
]


class _Reader(threading.Thread):
    """Loads every listed version over and over; records any that does not load."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.store = ModelStore.from_url(url, timeout=1.0, retries=1)
        self.loads = 0
        self.bad: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                for record in self.store.versions(game="tictactoe"):
                    self.store.load(game="tictactoe", version=record.version)
                    self.loads += 1
            except CorruptModel as e:
                self.bad.append(str(e))
            except StoreError:
                pass
            self.halt.wait(0.01)


def _trainer(proxy: FaultProxy, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(gameai_command(
            "trainer", "--game", "tictactoe", "--algorithm", "td", "--store", proxy.url(),
            "--metrics-port", "0", "--publish-every", "2000", "--publish-min-seconds", "0",
            "--promote", "auto", "--resume", "--log-level", "info", *extra),
            stdout=out, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("GAMEAI_STORE")})


def _kill(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(10)


def audit(url: str) -> list[str]:
    """What is wrong in the store (empty when all is well)."""
    problems = []
    raw = redis.Redis.from_url(url)
    with ModelStore.from_url(url) as store:
        keys = store.keys
        listed = {r.version for r in store.versions(game="tictactoe")}
        for version in sorted(listed):
            try:
                store.verified_payload(game="tictactoe", version=version)
            except CorruptModel as e:
                problems.append(str(e))
        stored = {int(k.rsplit(b":", 1)[1]) for k in raw.scan_iter(
            keys.payload("tictactoe", 0)[:-1].encode() + b"*")}
        if stored - listed:
            problems.append(f"payloads without an index entry: {sorted(stored - listed)}")
        for alias, version in store.rollout(game="tictactoe").aliases.items():
            if version not in listed:
                problems.append(f"alias {alias} names missing version {version}")
        last = int(raw.get(keys.next("tictactoe")) or 0)
        if listed and last < max(listed):
            problems.append(f"next number {last} below version {max(listed)}")
    raw.close()
    return problems


def trainer_kills(report: Report, work: Path, url: str, *, random_kills: int = 3,
                  seed: int = 7) -> None:
    proxy = FaultProxy(int(url.rsplit(":", 1)[1].split("/")[0]))
    reader = _Reader(url)
    reader.start()
    log = work / "trainer.log"
    rng = random.Random(seed)
    outcomes: list[tuple[str, bool, list[str]]] = []
    numbers: list[int] = []
    _load_scripts(url)
    try:
        for what, trigger, fault, fraction, adds, promotes in POINTS:
            latest, production = _latest(url), _production(url)
            process = _trainer(proxy, log)
            fired = proxy.arm(trigger, fault, fraction=fraction,
                              on_fire=lambda p=process: _kill(p))  # type: ignore[misc]
            hit = fired.wait(60)
            proxy.disarm()
            if process.poll() is None:
                _kill(process)
            problems = audit(url)
            now, now_production = _latest(url), _production(url)
            if now - latest != adds or (now_production == now != production) != promotes:
                problems.append(f"versions {latest} -> {now}, production {production} -> "
                                f"{now_production}: expected {adds} new, promoted {promotes}")
            outcomes.append((what, hit, problems))
            numbers.append(now)
        for i in range(random_kills):
            process = _trainer(proxy, log)
            time.sleep(rng.uniform(2.0, 4.0))
            _kill(process)
            outcomes.append((f"random moment {i + 1}", True, audit(url)))
            numbers.append(_latest(url))
        before = _latest(url)
        production = _production(url)
        # production is perfect by now, which leaves a trainer idle: ask for every version
        process = _trainer(proxy, log, "--max-games", "1500", "--publish", "every")
        try:
            code = process.wait(120)
        except subprocess.TimeoutExpired:
            _kill(process)
            code = -9
        after = _latest(url)
        parent = _parent(url, after)
        final = audit(url)
    finally:
        reader.halt.set()
        reader.join(5)
        proxy.close()
    missed = [what for what, hit, _ in outcomes if not hit]
    broken = [f"{what}: {p[0]}" for what, _, p in outcomes if p]
    report.check("trainer SIGKILLed mid-publish: kill points reached",
                 f"{len(outcomes) - len(missed)} of {len(outcomes)}"
                 + (f" (missed: {', '.join(missed)})" if missed else ""),
                 "all", not missed)
    report.check("trainer SIGKILLed mid-publish: the store after each kill",
                 f"{len(outcomes) - len(broken)} of {len(outcomes)} clean and as expected"
                 + (f"; {broken[0]}" if broken else ""),
                 "no half-written version, alias or number; a new version exactly when Redis ran "
                 "the publish", not broken and not final)
    report.check("trainer SIGKILLed mid-publish: reader loads meanwhile",
                 f"{reader.loads:,} loads, {len(reader.bad)} failed"
                 + (f" ({reader.bad[0]})" if reader.bad else ""), "0 failed",
                 not reader.bad and reader.loads > 0)
    report.check("trainer SIGKILLed mid-publish: version numbers",
                 " -> ".join(map(str, numbers)), "never lower, never reused",
                 numbers == sorted(numbers))
    report.check("trainer restarted (--resume) goes on from production",
                 f"exit {code}; versions {before} -> {after}, the new one's parent "
                 f"v{parent} (production was v{production})",
                 "exit 0, new versions, parent = production",
                 code == 0 and after > before and parent == production is not None)
    report.figures["kill_points"] = [{"point": w, "reached": h, "problems": p}
                                     for w, h, p in outcomes]


def _load_scripts(url: str) -> None:
    """Make Redis know the store's scripts, as it does once anything has been published:
    on a fresh server the first EVALSHA is answered NOSCRIPT before anything runs, and a
    kill then would only ever hit that answer."""
    from gameai.store import scripts

    raw = redis.Redis.from_url(url)
    for script in (scripts.PUBLISH, scripts.CHANGE_ALIAS, scripts.DELETE_VERSIONS):
        raw.script_load(script)
    raw.close()


def _production(url: str) -> int | None:
    with ModelStore.from_url(url) as store:
        return store.resolve(game="tictactoe", ref="production")


def _parent(url: str, version: int) -> int | None:
    with ModelStore.from_url(url) as store:
        record = store.version(game="tictactoe", version=version)
    return record.info.get("parent_version") if record is not None else None


def _latest(url: str) -> int:
    with ModelStore.from_url(url) as store:
        versions = store.versions(game="tictactoe")
    return versions[-1].version if versions else 0

