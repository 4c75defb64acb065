"""A real Prometheus (the Debian package's binary) on a free loopback port, for tests.

It runs the scrape jobs and alert rules of ``deploy/prometheus/`` with the targets
replaced by loopback addresses, so the live test exercises the deployed configuration.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from gameai.store.embedded import free_port

DEPLOYED = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def loopback_config(targets: dict[str, list[str]], *, interval: str = "1s") -> dict[str, Any]:
    """deploy/prometheus/prometheus.yml with each gameai job scraping ``targets[job]``."""
    config = yaml.safe_load((DEPLOYED / "prometheus.yml").read_text())
    config["global"].update(scrape_interval=interval, scrape_timeout=interval,
                            evaluation_interval=interval)
    config["rule_files"] = [str(p) for p in sorted((DEPLOYED / "rules").glob("*.yml"))]
    jobs = []
    for job in config["scrape_configs"]:
        if job["job_name"] in targets:
            job = {k: v for k, v in job.items() if not k.endswith("_sd_configs")}
            job["static_configs"] = [{"targets": targets[job["job_name"]]}]
            jobs.append(job)
    assert {j["job_name"] for j in jobs} == set(targets), "a job is not in prometheus.yml"
    config["scrape_configs"] = jobs
    return config


class PrometheusServer:
    """``with PrometheusServer(config, tmp) as prom: prom.query("up")``."""

    def __init__(self, config: dict[str, Any], work_dir: Path) -> None:
        self.config = config
        self.work_dir = work_dir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> PrometheusServer:
        binary = shutil.which("prometheus") or "/usr/bin/prometheus"
        config = self.work_dir / "prometheus.yml"
        config.write_text(yaml.safe_dump(self.config))
        self.log = self.work_dir / "prometheus.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={self.work_dir}/data",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT)
        self.wait_until(lambda: self._get("/-/ready", raw=True) == "ready", "ready", 30)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _get(self, path: str, params: dict[str, str] | None = None, raw: bool = False) -> Any:
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read().decode()
        except urllib.error.HTTPError as e:
            body = e.read().decode()
        except OSError:
            return None
        if raw:
            return "ready" if "Ready" in body else body
        return json.loads(body)

    def query(self, expr: str) -> dict[str, Any]:
        """The API's answer to an instant query: ``{"status", "data" | "error"}``."""
        return self._get("/api/v1/query", {"query": expr})

    def api(self, path: str) -> Any:
        answer = self._get(f"/api/v1/{path}")
        assert answer["status"] == "success", answer
        return answer["data"]

    def wait_until(self, condition: Any, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"prometheus exited: {self.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"prometheus: not {what} after {timeout:.0f} s")
            time.sleep(0.2)
