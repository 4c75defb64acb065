"""docker-compose.yml, checked without a Docker engine: the compose-spec JSON schema, then
what the services need from each other (health checks, start order, secrets, mounts)."""

from __future__ import annotations

import importlib.resources
import json
import re
from typing import Any

import jsonschema
import pytest
import yaml

from tests.deploy.conftest import DEPLOY, load_yaml
from tests.deploy.contract import settings

COMPOSE = DEPLOY / "docker-compose.yml"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_yaml(COMPOSE)


def compose_schema() -> dict[str, Any]:
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads((vendor / "compose-spec.json").read_text())


def test_matches_the_compose_spec_schema(compose: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(compose_schema())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in validator.iter_errors(compose)]
    assert not errors


def test_schema_check_rejects_a_broken_file(compose: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(compose))
    broken["services"]["server"]["depends_on"]["redis"]["condition"] = "when_ready"
    broken["services"]["redis"]["healthcheck"]["retries"] = "ten"
    validator = jsonschema.Draft202012Validator(compose_schema())
    assert len(list(validator.iter_errors(broken))) >= 2


def test_has_the_five_services(compose: dict[str, Any]) -> None:
    default = {n for n, s in compose["services"].items() if "profiles" not in s}
    assert default == {"redis", "server", "trainer", "prometheus", "grafana"}
    ray = {n for n, s in compose["services"].items() if "ray" in s.get("profiles", [])}
    assert ray == {"trainer-ray", "ray-worker"}


def test_the_ray_profile_is_a_head_trainer_and_scalable_workers(
        compose: dict[str, Any]) -> None:
    services = compose["services"]
    head, worker = services["trainer-ray"], services["ray-worker"]
    for service in (head, worker):
        assert service["build"]["args"] == {"EXTRAS": "ray"}  # an image with Ray
        shm = service["shm_size"]
        assert shm.endswith("gb") and float(shm[:-2]) * 1e9 > 1_000_000_000  # the store
        assert service["read_only"] is True and service["cap_drop"] == ["ALL"]
        assert "ray" in service["networks"] and "ports" not in service  # never published
        assert "container_name" not in service  # replicas allowed
    script = head["command"][0]
    assert script.startswith("ray start --head --port=6379")
    assert "--object-store-memory=1000000000" in script
    assert "exec gameai trainer" in script and "--cluster auto" in script
    assert "--algorithm ntuple" in script and "--param actors=" in script
    assert head["deploy"]["replicas"] == 1
    assert set(head["networks"]) == {"store", "metrics", "ray"}
    assert "--address=trainer-ray:6379" in worker["command"]
    assert "--block" in worker["command"]  # the container lives as long as its node
    assert worker["networks"] == ["ray"]  # no store, no metrics: it only plays
    assert worker["depends_on"] == {"trainer-ray": {"condition": "service_started"}}


def test_every_service_has_a_health_check_and_a_restart_policy(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        check = service["healthcheck"]
        assert check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert check["interval"] and check["retries"] >= 3, name
        assert service["restart"] == "unless-stopped", name


def test_start_order_waits_for_health(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("server", "trainer"):
        assert services[name]["depends_on"] == {"redis": {"condition": "service_healthy"}}
    assert services["grafana"]["depends_on"] == {"prometheus": {"condition": "service_healthy"}}


def test_redis_persists_to_a_volume_with_append_only(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert "redis-data:/data" in redis["volumes"]
    assert "redis-data" in compose["volumes"]
    conf = (DEPLOY / "k8s" / "base" / "redis" / "redis.conf").read_text()
    assert re.search(r"^appendonly yes$", conf, re.M)
    assert re.search(r"^maxmemory-policy noeviction$", conf, re.M)
    assert redis["command"] == ["sh", "/usr/local/etc/redis/start.sh"]


def test_server_scales_to_two_replicas_on_the_contract_ports(compose: dict[str, Any]) -> None:
    server = compose["services"]["server"]
    assert server["deploy"]["replicas"] == 2
    assert "container_name" not in server  # a fixed name would forbid replicas
    assert server["ports"] == ["${GAMEAI_HTTP_PORTS:-8000-8001}:8000",
                               "${GAMEAI_GRPC_PORTS:-50051-50052}:50051"]
    assert server["command"] == ["serve"]
    assert server["healthcheck"]["test"] == ["CMD", "gameai-healthcheck",
                                             "http://127.0.0.1:8000/healthz"]
    trainer = compose["services"]["trainer"]
    assert trainer["command"][0] == "trainer" and "--game" in trainer["command"]
    assert trainer["healthcheck"]["test"][-1] == "http://127.0.0.1:9100/healthz"


def test_secrets_come_from_files_never_from_the_file_itself(compose: dict[str, Any]) -> None:
    assert set(compose["secrets"]) == {"redis_password", "store_url", "admin_token",
                                       "grafana_admin_password"}
    for secret in compose["secrets"].values():
        assert set(secret) == {"file"} and secret["file"].startswith("${GAMEAI_SECRETS_DIR")
    services = compose["services"]
    env = {**services["server"]["environment"], **services["trainer"]["environment"]}
    assert "GAMEAI_STORE_URL" not in env and "GAMEAI_ADMIN_TOKEN" not in env
    assert env["GAMEAI_STORE_URL_FILE"] == "/run/secrets/store_url"
    assert env["GAMEAI_ADMIN_TOKEN_FILE"] == "/run/secrets/admin_token"
    assert services["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD__FILE"] == \
        "/run/secrets/grafana_admin_password"
    text = COMPOSE.read_text()
    assert not re.search(r"redis://:[^@$]+@", text), "a literal password in the compose file"
    assert "requirepass" not in text


def test_app_settings_are_contract_settings(compose: dict[str, Any]) -> None:
    for name in ("server", "trainer"):
        names = {k for k in compose["services"][name]["environment"] if k.startswith("GAMEAI_")}
        assert names <= settings(), sorted(names - settings())
    # the ray profile's own knobs are read by its start script, not by gameai
    names = {k for k in compose["services"]["trainer-ray"]["environment"]
             if k.startswith("GAMEAI_") and not k.startswith("GAMEAI_RAY_")
             and k != "GAMEAI_TRAINER_GAME"}
    assert names <= settings(), sorted(names - settings())


def test_app_containers_are_locked_down(compose: dict[str, Any]) -> None:
    for name in ("server", "trainer"):
        service = compose["services"][name]
        assert service["read_only"] is True
        assert service["cap_drop"] == ["ALL"]
        assert "no-new-privileges:true" in service["security_opt"]
        assert any(t.startswith("/tmp:") for t in service["tmpfs"])  # numba cache, tables
    assert set(compose["services"]["redis"]["networks"]) == {"store"}  # not on metrics
    assert "ports" not in compose["services"]["redis"]  # never published on the host
    assert compose["services"]["prometheus"]["ports"][0].startswith("127.0.0.1:")


def test_every_bind_mount_exists(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("./"):
                assert (DEPLOY / source).exists(), f"{name}: {source} is missing"
    assert (DEPLOY / compose["services"]["server"]["build"]["context"] / "Dockerfile").exists()


class _ComposeLoader(yaml.SafeLoader):
    """YAML with Compose's ``!reset`` and ``!override`` merge tags."""


_ComposeLoader.add_constructor("!reset", lambda loader, node: {"!reset": True})
_ComposeLoader.add_constructor("!override", lambda loader, node: {
    "!override": loader.construct_mapping(node) if isinstance(node, yaml.MappingNode) else None})


def test_external_redis_override_drops_the_bundled_redis(compose: dict[str, Any]) -> None:
    override = yaml.load((DEPLOY / "compose.external-redis.yml").read_text(),
                         Loader=_ComposeLoader)  # a SafeLoader: builds no objects
    services = override["services"]
    assert set(services) <= set(compose["services"])
    assert services["redis"]["profiles"] == ["bundled-redis"]
    waiting_on_redis = [n for n, s in compose["services"].items() if "redis" in
                        s.get("depends_on", {})]
    for name in waiting_on_redis:
        assert services[name]["depends_on"] == {"!reset": True}, name
