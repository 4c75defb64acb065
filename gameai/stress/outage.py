"""Store faults under traffic: Redis killed and started again (with its data, or empty),
and damaged payloads written straight into Redis.

Each scenario runs a real ``gameai serve`` (two workers) against a ``redis-server`` of its
own, with a client process sending production-track requests on both transports the
whole time, and adds its rows to the report.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import redis

from gameai.games import get_game
from gameai.games.mnk.positions import live_boards
from gameai.store import ModelStore, RedisServer
from gameai.stress.harness import (
    ServerProcess,
    perfect_model,
    start_server,
    variant,
    wait_until,
)
from gameai.stress.report import Report
from gameai.stress.traffic import Answer, TrafficRun, mixed_calls

RATE = 200.0


def _traffic(server: ServerProcess) -> TrafficRun:
    boards = {"tictactoe": live_boards(get_game("tictactoe"), limit=2000)}
    calls = mixed_calls(boards, models=("", "production"))
    return TrafficRun([(server.http_port, server.grpc_port)], calls, concurrency=8, rate=RATE)


def _failed(answers: list[Answer]) -> str:
    failed = [a for a in answers if not a.ok]
    first = f" (first: {failed[0].error})" if failed else ""
    return f"{len(answers):,} requests, {len(failed)} failed{first}"


class _Watch:
    """Samples ``/readyz`` and the metrics every 100 ms in a thread."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.samples: list[tuple[float, int, dict[str, Any], float | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                status, body = self.server.readyz()
                self.samples.append((time.monotonic(), status, body,
                                     self.server.metric("gameai_store_up")))
            except Exception as e:  # a failed probe is itself a finding
                self.samples.append((time.monotonic(), 0, {"error": repr(e)}, None))
            self._stop.wait(0.1)

    def stop(self) -> list[tuple[float, int, dict[str, Any], float | None]]:
        self._stop.set()
        self._thread.join(5)
        return self.samples


def redis_outage(report: Report, work: Path, seconds: float, *, empty: bool) -> None:
    """Kill Redis under traffic, keep it down ``seconds``, start it again (``empty``: with
    its data gone), then promote a version: served throughout, followed after."""
    label = "Redis back empty" if empty else "Redis restarted"
    server_dir = work / ("empty" if empty else "restart")
    own = RedisServer(server_dir / "redis", tcp=True, persist=True).start()
    try:
        with ModelStore.from_url(own.url, timeout=0.5, retries=1) as store:
            model = perfect_model()
            one = store.publish(variant(model, 0), by="stress").version
            two = store.publish(variant(model, 1), by="stress").version
            store.set_alias(game="tictactoe", alias="production", version=one, by="stress")
            store.set_canary(game="tictactoe", version=two, weight=30, by="stress")
            time.sleep(1.2)  # the AOF is fsynced every second
            server = start_server(own.url, log_dir=server_dir, workers=2,
                                  extra=("--poll-seconds", "0.5", "--log-level", "info"))
            try:
                traffic = _traffic(server)
                watch = _Watch(server)
                time.sleep(1.0)
                own.kill()
                killed = time.monotonic()
                time.sleep(seconds)
                if empty:
                    shutil.rmtree(own.data_dir)
                own.start()
                restarted = time.monotonic()
                up_after = wait_until(lambda: server.metric("gameai_store_up") == 1, 15,
                                      "the server never saw the store again")
                kept = server.readyz()[1]["games"]["tictactoe"]
                fresh = store.publish(variant(model, 99), by="stress").version
                store.set_alias(game="tictactoe", alias="production", version=fresh,
                                by="stress")
                promoted = time.monotonic()
                sha = store.version(game="tictactoe", version=fresh).sha256  # type: ignore[union-attr]
                wait_until(lambda: _serves(server, fresh, sha), 10,
                           "the server never followed the promote after the restart")
                followed = time.monotonic() - promoted
                reconnects = server.metric("gameai_store_reconnects_total")
                time.sleep(0.5)
                answers = traffic.stop()
                samples = watch.stop()
            finally:
                server.terminate()
    finally:
        own.stop()
    during = [s for s in samples if killed + 0.5 < s[0] < restarted]
    report.check(f"{label}: requests while down {seconds:g} s and after", _failed(answers),
                 "0 failed", all(a.ok for a in answers))
    ready = [s[1] for s in during]
    down = [s for s in during if s[2].get("store") == "down" and s[2].get("degraded")]
    report.check(f"{label}: /readyz while Redis was down",
                 f"{ready.count(200)} of {len(ready)} probes 200, {len(down)} said store down",
                 "all 200 and store down", bool(ready) and set(ready) == {200}
                 and len(down) == len(during))
    gauge = {s[3] for s in during}
    report.check(f"{label}: gameai_store_up while down / after", f"{gauge} / 1 after "
                 f"{up_after:.1f} s", "0 / 1 (by itself)", gauge == {0.0})
    report.check(f"{label}: reconnections counted", reconnects, ">= 1",
                 (reconnects or 0) >= 1)
    if empty:
        held = kept["aliases"] == {"production": one, "canary": two} and any(
            "missing from the store" in p for p in kept["problems"])
        report.check(f"{label}: versions kept though the store forgot them",
                     f"aliases {kept['aliases']}, problems {len(kept['problems'])}",
                     "production and canary still served, problem named", held)
    report.check(f"{label}: a promote after the restart is followed", f"{followed:.2f} s",
                 "< 3 s", followed < 3)


def _serves(server: ServerProcess, version: int, sha256: str) -> bool:
    body = server.client.get(f"/v1/games/tictactoe/models/{version}").json()
    aliases, _ = server.served_aliases()
    return aliases.get("production") == version and body.get("sha256") == sha256 \
        and body.get("loaded") is True


def corrupt_payloads(report: Report, work: Path, url: str) -> None:
    """Damaged bytes written straight into Redis and made ``production`` behind the
    store's back: refused, counted, logged once; the old version keeps serving."""
    prefix = "corrupt"
    raw = redis.Redis.from_url(url)
    with ModelStore.from_url(url, prefix=prefix) as store:
        model = perfect_model()
        one = store.publish(variant(model, 0), by="stress").version
        store.set_alias(game="tictactoe", alias="production", version=one, by="stress")
        server = start_server(url, log_dir=work / "corrupt", prefix=prefix, workers=1,
                              extra=("--poll-seconds", "0.5", "--log-level", "info"))
        keys = store.keys
        try:
            traffic = _traffic(server)
            time.sleep(0.5)
            damage = {
                "a flipped bit": lambda b: b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 1])
                + b[len(b) // 2 + 1:],
                "truncated to half": lambda b: b[:len(b) // 2],
                "garbage whose sha256 matches the index": lambda b: b"GAMEAI-NOT" + b[10:],
                "empty": lambda b: b"",
            }
            bad: dict[str, int] = {}
            for what, spoil in damage.items():
                version = store.publish(variant(model, len(bad) + 1), by="stress").version
                good = raw.get(keys.payload("tictactoe", version)) or b""
                spoiled = spoil(good)
                raw.set(keys.payload("tictactoe", version), spoiled)
                if what.startswith("garbage"):  # a forged index entry to match
                    entry = json.loads(raw.hget(keys.index("tictactoe"), version) or "{}")
                    entry["sha256"] = hashlib.sha256(spoiled).hexdigest()
                    raw.hset(keys.index("tictactoe"), version, json.dumps(entry))
                _point(raw, keys, "production", version)
                bad[what] = version
                wait_until(lambda v=version: f"version {v}" in server.log_text(), 5,
                           f"the server never reported version {version}")
            loads = server.metric("gameai_model_loads_total", {"result": "corrupt"})
            # more changes: every refresh must not load (and log) the bad versions again
            for i in range(5):
                store.set_canary(game="tictactoe", version=one, weight=10 * i, by="stress")
                time.sleep(0.2)
            time.sleep(1.0)
            loads_after = server.metric("gameai_model_loads_total", {"result": "corrupt"})
            ready = server.readyz()[1]["games"]["tictactoe"]
            answers = traffic.stop()
            log = server.log_text()
        finally:
            server.terminate()
    raw.close()
    report.check("damaged payloads: requests meanwhile", _failed(answers), "0 failed",
                 all(a.ok for a in answers))
    versions = {a.version for a in answers if a.ok}
    report.check("damaged payloads: answering versions", sorted(versions), f"only v{one}",
                 versions == {one})
    report.check("damaged payloads: production kept", ready["aliases"].get("production"),
                 f"v{one}", ready["aliases"].get("production") == one)
    report.check("damaged payloads: refusals counted (model_loads_total corrupt)",
                 f"{loads:g} after {len(bad)} damaged versions, {loads_after:g} after 5 more "
                 "changes", f"{len(bad)} and still {len(bad)}",
                 loads == len(bad) and loads_after == len(bad))
    lines = {what: sum(1 for line in log.splitlines()
                       if f"version {v}:" in line and "cannot load" in line)
             for what, v in bad.items()}
    report.check("damaged payloads: log lines per damaged version",
                 ", ".join(f"{k}: {n}" for k, n in lines.items()), "1 each",
                 set(lines.values()) == {1})
    report.check("damaged payloads: named in /readyz", f"{len(ready['problems'])} problems",
                 ">= 1", bool(ready["problems"]))


def _point(raw: redis.Redis, keys: Any, alias: str, version: int) -> None:
    """Set an alias directly in Redis (as a bad restore would), then wake the servers."""
    raw.hset(keys.aliases("tictactoe"), alias, version)
    counter = raw.incr(keys.counter)
    raw.publish(keys.events, json.dumps({"game": "tictactoe", "type": "alias", "alias": alias,
                                         "version": version, "counter": counter}))
