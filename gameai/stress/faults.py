"""``gameai stress faults``: the faults a move service meets in its worst minute.

1. Redis killed under traffic and started again after ``--seconds`` (4): servers answer
   throughout from the versions they hold, ``/readyz`` and the metrics say the store is
   down, they reconnect by themselves and follow the next promote (:mod:`gameai.stress.outage`).
2. The same, with Redis coming back empty: nothing working is unloaded.
3. Damaged payloads (a flipped bit, truncated, garbage with a matching checksum, empty)
   written straight into Redis and made production: refused, counted, logged once; the
   old version keeps serving (:mod:`gameai.stress.outage`).
4. The trainer SIGKILLed mid-publish at many points (:mod:`gameai.stress.kills`).
5. SIGTERM to a server under load (:mod:`gameai.stress.drain`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from gameai.stress.drain import sigterm_under_load
from gameai.stress.harness import private_redis
from gameai.stress.kills import trainer_kills
from gameai.stress.outage import corrupt_payloads, redis_outage
from gameai.stress.report import Report


def run(seconds: float = 4.0, *, random_kills: int = 3,
        command: str = "gameai stress faults") -> Report:
    report = Report("faults", command)
    with tempfile.TemporaryDirectory(prefix="gameai-stress-") as tmp:
        work = Path(tmp)
        redis_outage(report, work, seconds, empty=False)
        redis_outage(report, work, seconds, empty=True)
        with private_redis(work) as redis:
            corrupt_payloads(report, work, redis.url)
            trainer_kills(report, work, redis.url, random_kills=random_kills)
            sigterm_under_load(report, work, redis.url)
    return report
