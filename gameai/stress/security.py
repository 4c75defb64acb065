"""``gameai stress security``: the security pass, on real processes.

* Admin routes: off without a token (404); 401 without or with a wrong token, with no
  timing difference between a token wrong in its first or its last character (measured
  in-process on the real check and over HTTP).
* Secrets: the admin token and the Redis password never appear in the server's log (at
  debug level), its metrics, readiness, listings, error bodies or command line, nor in
  what the CLI, the server and the trainer print when the password is wrong or Redis down.
* Loading never executes code: pickles and forged containers are refused by the store,
  by ``gameai models import``, and by the server when written straight into Redis.
* Limits: one greedy client (16 connections of 10,000-board batches) does not starve a
  polite one; request size and batch size are capped on both transports.
* The container runs as non-root with a read-only root filesystem (Dockerfile, compose,
  Kubernetes checked statically), and the pinned dependencies are audited
  (:mod:`gameai.stress.audit`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from gameai.stress.guards import admin_routes, container_settings, secrets_kept, untrusted_payloads
from gameai.stress.harness import private_redis
from gameai.stress.limits import fairness
from gameai.stress.report import Report

PASSWORD = "stress-redis-password-5f1c9a"
TOKEN = "stress-admin-token-7d2e4b0a9c1f"


def run(seconds: float = 5.0, *, command: str = "gameai stress security",
        audit: bool = True) -> Report:
    report = Report("security", command)
    with tempfile.TemporaryDirectory(prefix="gameai-stress-") as tmp:
        work = Path(tmp)
        with private_redis(work, password=PASSWORD) as redis:
            admin_routes(report, work, redis.url, TOKEN)
            untrusted_payloads(report, work, redis.url)
            fairness(report, work, redis.url, seconds)
            secrets_kept(report, work, redis, TOKEN, PASSWORD)
    container_settings(report)
    if audit:
        from gameai.stress.audit import audit_report

        audit_report(report)
    return report
