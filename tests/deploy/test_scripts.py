"""The small scripts of deploy/: Compose secrets, the image's health check."""

from __future__ import annotations

import http.server
import importlib.util
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.deploy.conftest import DEPLOY


def make_secrets(target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(DEPLOY / "make-secrets.sh"), str(target)],
                          capture_output=True, text=True, timeout=30)


def test_make_secrets_writes_matching_credentials(tmp_path: Path) -> None:
    target = tmp_path / "secrets"
    assert make_secrets(target).returncode == 0
    files = {p.name: p.read_text().strip() for p in target.iterdir()}
    assert set(files) == {"redis_password", "store_url", "admin_token",
                          "grafana_admin_password"}
    assert files["store_url"] == f"redis://:{files['redis_password']}@redis:6379/0"
    assert len(files["redis_password"]) >= 24 and len(files["admin_token"]) >= 16
    assert len(set(files.values())) == 4
    assert target.stat().st_mode & 0o777 == 0o700


def test_make_secrets_never_replaces_a_secret(tmp_path: Path) -> None:
    target = tmp_path / "secrets"
    target.mkdir()
    (target / "store_url").write_text("rediss://:external-one@db.example:6380/0\n")
    result = make_secrets(target)
    assert "kept" in result.stdout
    assert (target / "store_url").read_text() == "rediss://:external-one@db.example:6380/0\n"
    again = make_secrets(target)
    assert again.stdout.count("kept") == 4


def test_secrets_dir_is_not_committable() -> None:
    ignore = (DEPLOY / "secrets" / ".gitignore").read_text().split()
    assert "*" in ignore and "!.gitignore" in ignore
    assert "*.env" in (DEPLOY / "k8s" / "overlays" / ".gitignore").read_text().split()


@pytest.fixture(scope="module")
def healthcheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("healthcheck",
                                                  DEPLOY / "docker" / "healthcheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("argv", "env", "url"), [
    (["/opt/gameai/bin/python", "/opt/gameai/bin/gameai", "serve"], {},
     "http://127.0.0.1:8000/healthz"),
    (["/sbin/docker-init", "--", "gameai", "serve", "--http-port", "8081"], {},
     "http://127.0.0.1:8081/healthz"),
    (["gameai", "serve"], {"GAMEAI_HTTP_PORT": "9000"}, "http://127.0.0.1:9000/healthz"),
    (["gameai", "serve", "--http-port=7000"], {"GAMEAI_HTTP_PORT": "9000"},
     "http://127.0.0.1:7000/healthz"),
    (["gameai", "trainer", "--game", "tictactoe"], {"GAMEAI_HTTP_PORT": "9000"},
     "http://127.0.0.1:9100/healthz"),
    (["gameai", "trainer", "--metrics-port", "9200"], {}, "http://127.0.0.1:9200/healthz"),
    (["gameai", "trainer"], {"GAMEAI_METRICS_PORT": "9300"}, "http://127.0.0.1:9300/healthz"),
    (["gameai", "serve"], {"GAMEAI_HEALTHCHECK_URL": "http://127.0.0.1:1/x"},
     "http://127.0.0.1:1/x"),
])
def test_healthcheck_probes_the_port_of_the_role(healthcheck: ModuleType, argv: list[str],
                                                 env: dict[str, str], url: str) -> None:
    assert healthcheck.health_url(argv, env) == url


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/healthz" else 503)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_healthcheck_exit_status_follows_the_answer(healthcheck: ModuleType,
                                                    http_port: int) -> None:
    assert healthcheck.main([f"http://127.0.0.1:{http_port}/healthz"]) == 0
    assert healthcheck.main([f"http://127.0.0.1:{http_port}/readyz"]) == 1
    assert "HTTP 503" in healthcheck.probe(f"http://127.0.0.1:{http_port}/readyz")
    from gameai.store.embedded import free_port

    refused = healthcheck.probe(f"http://127.0.0.1:{free_port()}/healthz")
    assert refused and "refused" in refused.lower()
