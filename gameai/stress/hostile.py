"""``gameai stress hostile``: bad input of every kind, on both transports of a real server.

* Probes: oversized bodies, boards and headers, deeply nested JSON, wrong types, unicode
  and control characters, a huge ``client_id``, gRPC messages over the size limit and
  malformed protobuf. Each must get its precise 4xx or gRPC status naming the field
  (:mod:`gameai.stress.probes`).
* Memory stays bounded while 16 clients send near-limit and over-limit requests at once.
* ``schemathesis`` generates requests from the running server's OpenAPI schema for
  ``--seconds``: no 5xx, and every answer matches the documented status, content type and
  schema.
* hypothesis fuzzes the core functions and batch parsing in-process (:mod:`gameai.stress.fuzz`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from gameai.store import ModelStore
from gameai.stress.harness import ServerProcess, private_redis, seed_store, start_server
from gameai.stress.probes import grpc_probes, memory_burst, rest_probes
from gameai.stress.report import Report

MAX_MEMORY_GROWTH = 64 * 2**20


def run(seconds: float = 20.0, *, fuzz_examples: int = 200, api_examples: int | None = None,
        command: str = "gameai stress hostile") -> Report:
    """``api_examples``: schemathesis examples per operation instead of ``seconds`` of
    generation (a fixed amount of work, for the short version CI runs)."""
    report = Report("hostile", command)
    with tempfile.TemporaryDirectory(prefix="gameai-stress-") as tmp, \
            private_redis(Path(tmp)) as redis:
        work = Path(tmp)
        token = work / "admin-token"
        token.write_text("hostile-suite-admin-token-0123456789\n")
        with ModelStore.from_url(redis.url) as store:
            seed_store(store, ["tictactoe"], versions=2, canary_weight=10)
        server = start_server(redis.url, log_dir=work, workers=1,
                              extra=("--admin-token-file", str(token), "--log-level",
                                     "warning"))
        try:
            _probes(report, server)
            _memory(report, server)
            _schemathesis(report, server, seconds, work, api_examples)
            _fuzz(report, redis.url, fuzz_examples)
            log = server.log_text()
            tracebacks = log.count("Traceback")
            if not report.check("tracebacks in the server log", tracebacks, "0",
                                tracebacks == 0):
                first = log[log.index("Traceback"):]
                report.note("the first traceback", first[-1500:])
        finally:
            server.terminate()
    return report


def _probes(report: Report, server: ServerProcess) -> None:
    for transport, probes in (("REST", rest_probes(server)), ("gRPC", grpc_probes(server))):
        wrong = [p for p in probes if not p.ok]
        report.check(f"{transport} hostile requests answered as documented",
                     f"{len(probes) - len(wrong)} of {len(probes)}"
                     + "".join(f"; {p.name}: got {p.got}, want {p.want}" for p in wrong[:5]),
                     "all", not wrong)
        report.figures[f"{transport.lower()}_probes"] = [
            {"name": p.name, "got": p.got, "want": p.want, "ok": p.ok} for p in probes]


def _memory(report: Report, server: ServerProcess) -> None:
    before = server.rss_bytes()
    sent, peak = memory_burst(server)
    after = server.rss_bytes()
    growth = max(after, peak) - before
    report.check("memory under 16 clients of near- and over-limit requests",
                 f"{sent} requests; RSS {before / 2**20:.0f} -> peak {peak / 2**20:.0f}, "
                 f"after {after / 2**20:.0f} MiB", f"< +{MAX_MEMORY_GROWTH // 2**20} MiB",
                 growth < MAX_MEMORY_GROWTH)
    status, _ = server.readyz()
    report.check("server still ready after the burst", status, "200", status == 200)


def _schemathesis(report: Report, server: ServerProcess, seconds: float, work: Path,
                  examples: int | None) -> None:
    """``st run`` against the live ``/openapi.json``: every phase, for ``seconds`` (or
    ``examples`` per operation)."""
    out = work / "schemathesis.json"
    budget = ["--max-examples", str(examples)] if examples else [
        "--max-time", str(max(1, int(seconds)))]
    command = [str(Path(sys.executable).with_name("st")), "run", f"{server.http}/openapi.json",
               "--checks", "not_a_server_error,status_code_conformance,"
               "content_type_conformance,response_schema_conformance",
               *budget, "--seed", "7", "--workers", "1",
               "--generation-database", "none", "--suppress-health-check", "all",
               "--report", "json", "--report-json-path", str(out), "--no-color"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 300,
                          check=False, cwd=work)  # its .schemathesis/ cache goes there
    if not out.exists():
        report.check("schemathesis ran", done.stdout[-500:] + done.stderr[-500:], "a report",
                     False)
        return
    result = json.loads(out.read_text())
    cases = result["test_cases"]
    failures = [f"{f['title']} x{f['count']} ({', '.join(f['operations'][:3])})"
                for f in result.get("failures", [])]
    report.check("schemathesis: generated requests (OpenAPI, every operation)",
                 f"{cases['generated']:,} requests over {result['operations']['tested']} "
                 f"operations; failures: {'; '.join(failures) or 'none'}",
                 "no 5xx; status, content type and body as documented",
                 done.returncode == 0 and not failures and cases["errored"] == 0)
    report.figures["schemathesis"] = {"generated": cases["generated"], "failures": failures,
                                      "exit_code": done.returncode}


def _fuzz(report: Report, url: str, examples: int) -> None:
    from gameai.service.metrics import Metrics
    from gameai.service.registry import Registry
    from gameai.stress.fuzz import Unexpected, fuzz_core

    with ModelStore.from_url(url, prefix="fuzz") as store:
        seed_store(store, ["tictactoe", "connect-3x4-3"], versions=2, canary_weight=10)
        registry = Registry(store, ("tictactoe", "connect-3x4-3"), Metrics())
        registry.start()
        outcomes: Counter[str] = Counter()
        error = ""
        try:
            outcomes = fuzz_core(registry, examples=examples)
        except Unexpected as e:
            error = str(e).splitlines()[0]
        finally:
            registry.stop()
    total = sum(outcomes.values())
    report.check("hypothesis: core calls and batch parsing",
                 f"{total:,} calls: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
                 + (f"; FAILED: {error}" if error else ""),
                 "only named errors (4xx / 503)", not error)
    report.figures["fuzz"] = dict(outcomes)

