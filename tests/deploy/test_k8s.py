"""Kubernetes: ``kubectl kustomize deploy/k8s`` renders, the result validates against the
Kubernetes schemas (kubernetes-validate, strict), the objects fit together (probes on the
ports the Services name, scrape annotations on the metrics ports, the Secret's keys), and
both overlays render once credentials are made."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.conftest import DEPLOY, tool
from tests.deploy.contract import settings

K8S = DEPLOY / "k8s"
VERSIONS = ("1.29.0", "1.33.0")  # the oldest we support and a current one


def kustomize(path: Path) -> tuple[str, list[dict[str, Any]]]:
    result = subprocess.run([tool("kubectl"), "kustomize", str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout, [d for d in yaml.safe_load_all(result.stdout) if d]


def by_kind(docs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], re.sub(r"-[a-z0-9]{10}$", "", d["metadata"]["name"])): d for d in docs}


@pytest.fixture(scope="module")
def rendered() -> tuple[str, dict[tuple[str, str], dict[str, Any]]]:
    text, docs = kustomize(K8S)
    return text, by_kind(docs)


@pytest.fixture(scope="module")
def objects(rendered: tuple[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return rendered[1]


def validate(path: Path, version: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("kubernetes-validate"), "--strict", "-k", version, str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("version", VERSIONS)
def test_render_validates_against_the_kubernetes_schemas(
        rendered: tuple[str, Any], version: str, tmp_path: Path) -> None:
    path = tmp_path / "gameai.yaml"
    path.write_text(rendered[0])
    result = validate(path, version)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("passed for resource") == len(rendered[1])


def test_validation_rejects_a_mistyped_manifest(rendered: tuple[str, Any],
                                                tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(rendered[0].replace("containerPort: 8000", "containerPort: http", 1)
                    .replace("periodSeconds: 5", "periodSecond: 5", 1))
    result = validate(path, VERSIONS[-1])
    assert result.returncode != 0


def test_renders_every_object_the_install_needs(objects: dict[tuple[str, str], Any]) -> None:
    assert set(objects) == {
        ("Namespace", "gameai"), ("ConfigMap", "gameai-redis"),
        ("Secret", "gameai-credentials"), ("Service", "gameai-redis"),
        ("Service", "gameai-server"), ("Service", "gameai-server-headless"),
        ("Deployment", "gameai-server"), ("Deployment", "gameai-trainer"),
        ("StatefulSet", "gameai-redis"), ("PodDisruptionBudget", "gameai-server"),
        ("HorizontalPodAutoscaler", "gameai-server"), ("NetworkPolicy", "gameai-redis")}
    for (kind, _), obj in objects.items():
        if kind != "Namespace":
            assert obj["metadata"]["namespace"] == "gameai"


def containers(objects: dict[tuple[str, str], Any]) -> dict[str, dict[str, Any]]:
    found = {}
    for (kind, name), obj in objects.items():
        if kind in ("Deployment", "StatefulSet"):
            (container,) = obj["spec"]["template"]["spec"]["containers"]
            found[name] = container
    return found


def test_server_probes_resources_and_ports(objects: dict[tuple[str, str], Any]) -> None:
    server = containers(objects)["gameai-server"]
    ports = {p["name"]: p["containerPort"] for p in server["ports"]}
    assert ports == {"http": 8000, "grpc": 50051}
    assert server["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert server["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert server["args"] == ["serve"] and server["image"] == "gameai:0.1.0"
    service = objects[("Service", "gameai-server")]["spec"]
    assert {p["name"]: (p["port"], p["targetPort"]) for p in service["ports"]} == {
        "http": (8000, "http"), "grpc": (50051, "grpc")}
    assert objects[("Deployment", "gameai-server")]["spec"]["replicas"] == 2


def test_every_container_has_requests_limits_and_a_locked_down_context(
        objects: dict[tuple[str, str], Any]) -> None:
    for name, container in containers(objects).items():
        resources = container["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]), name
        assert {"cpu", "memory"} <= set(resources["limits"]), name
        context = container["securityContext"]
        assert context["readOnlyRootFilesystem"] is True, name
        assert context["allowPrivilegeEscalation"] is False, name
        assert context["capabilities"]["drop"] == ["ALL"], name
        assert "livenessProbe" in container, name
    for (kind, name), obj in objects.items():
        if kind in ("Deployment", "StatefulSet"):
            pod = obj["spec"]["template"]["spec"]
            assert pod["securityContext"]["runAsNonRoot"] is True, name
            assert pod["automountServiceAccountToken"] is False, name


def test_pdb_and_hpa_target_the_server(objects: dict[tuple[str, str], Any]) -> None:
    selector = objects[("Deployment", "gameai-server")]["spec"]["selector"]["matchLabels"]
    pdb = objects[("PodDisruptionBudget", "gameai-server")]["spec"]
    assert pdb["selector"]["matchLabels"] == selector and pdb["minAvailable"] == 1
    hpa = objects[("HorizontalPodAutoscaler", "gameai-server")]["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                     "name": "gameai-server"}
    assert 2 <= hpa["minReplicas"] < hpa["maxReplicas"]


def test_trainer_is_a_single_writer(objects: dict[tuple[str, str], Any]) -> None:
    trainer = objects[("Deployment", "gameai-trainer")]["spec"]
    assert trainer["replicas"] == 1 and trainer["strategy"] == {"type": "Recreate"}
    container = containers(objects)["gameai-trainer"]
    assert container["args"][0] == "trainer"
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}


def test_scrape_annotations_name_the_metrics_ports(objects: dict[tuple[str, str], Any]) -> None:
    for name in ("gameai-server", "gameai-trainer"):
        template = objects[("Deployment", name)]["spec"]["template"]
        notes = template["metadata"]["annotations"]
        assert notes["prometheus.io/scrape"] == "true" and notes["prometheus.io/path"] == "/metrics"
        ports = {str(p["containerPort"]) for p in template["spec"]["containers"][0]["ports"]}
        assert notes["prometheus.io/port"] in ports
    assert "prometheus.io/scrape" not in \
        objects[("StatefulSet", "gameai-redis")]["spec"]["template"]["metadata"].get(
            "annotations", {})


def test_redis_persists_and_reads_its_password_from_the_secret(
        objects: dict[tuple[str, str], Any]) -> None:
    redis = objects[("StatefulSet", "gameai-redis")]["spec"]
    (claim,) = redis["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    assert {"name": "data", "mountPath": "/data"} in redis["template"]["spec"]["containers"][0][
        "volumeMounts"]
    config = objects[("ConfigMap", "gameai-redis")]["data"]
    assert "appendonly yes" in config["redis.conf"] and "requirepass" in config["start.sh"]
    secret = objects[("Secret", "gameai-credentials")]
    assert set(secret["data"]) == {"redis-password", "store-url"}


def test_pods_use_secrets_that_exist_and_contract_settings_only(
        objects: dict[tuple[str, str], Any]) -> None:
    from gameai.service.settings import SERVER
    from gameai.trainer.worker.settings import WORKER

    known = settings() | {s.variable for s in (*SERVER, *WORKER)} | {
        s.file_variable for s in (*SERVER, *WORKER) if s.file_variable}
    secret = objects[("Secret", "gameai-credentials")]
    for (kind, name), obj in objects.items():
        if kind not in ("Deployment", "StatefulSet"):
            continue
        pod = obj["spec"]["template"]["spec"]
        for volume in pod["volumes"]:
            if "secret" in volume:
                assert volume["secret"]["secretName"] == secret["metadata"]["name"]
                assert {i["key"] for i in volume["secret"]["items"]} <= set(secret["data"])
        env = pod["containers"][0].get("env", [])
        used = {e["name"] for e in env if e["name"].startswith("GAMEAI_")}
        assert used <= known, f"{name}: {sorted(used - known)} are read by nothing"


def relabel(config: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, str] | None:
    """Prometheus relabelling (keep / replace), enough for the gameai scrape config."""
    labels = dict(labels)
    for rule in config:
        value = ";".join(labels.get(s, "") for s in rule.get("source_labels", []))
        m = re.fullmatch(rule.get("regex", "(.*)"), value)
        if rule.get("action", "replace") == "keep":
            if not m:
                return None
        elif m:
            replacement = re.sub(r"\$(\d)", r"\\\1", rule.get("replacement", "$1"))
            labels[rule["target_label"]] = m.expand(replacement)
    return labels


def test_kubernetes_scrape_config_finds_the_pods_as_the_alerts_expect(
        objects: dict[tuple[str, str], Any]) -> None:
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus-kubernetes.yml").read_text())
    (job,) = config["scrape_configs"]
    assert job["kubernetes_sd_configs"][0]["namespaces"]["names"] == ["gameai"]
    for (kind, name), obj in objects.items():
        if kind not in ("Deployment", "StatefulSet"):
            continue
        meta = obj["spec"]["template"]["metadata"]
        discovered = {"__address__": "10.1.2.3:6379", "__metrics_path__": "/metrics"}
        for key, value in {**meta["labels"], **meta.get("annotations", {})}.items():
            kind_ = "annotation" if key in meta.get("annotations", {}) else "label"
            discovered[f"__meta_kubernetes_pod_{kind_}_" + re.sub(r"[^a-z0-9]", "_", key)] = value
        target = relabel(job["relabel_configs"], discovered)
        if name == "gameai-redis":
            assert target is None
            continue
        assert target is not None
        port = meta["annotations"]["prometheus.io/port"]
        assert target["__address__"] == f"10.1.2.3:{port}"
        assert target["job"] == name  # gameai-server, gameai-trainer: what the alerts use


def make_credentials(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(root / "make-credentials.sh"), *args],
                          capture_output=True, text=True, timeout=30)


def test_overlays_render_with_made_credentials(tmp_path: Path) -> None:
    root = tmp_path / "k8s"
    shutil.copytree(K8S, root, ignore=shutil.ignore_patterns("*.env"))
    assert make_credentials(root).returncode == 0
    url = "rediss://:s3cret-from-ops@redis.example.net:6380/0"
    assert make_credentials(root, "--external", url).returncode == 0

    text, docs = kustomize(root / "overlays" / "production")
    production = by_kind(docs)
    assert set(production) == set(by_kind(kustomize(K8S)[1]))
    env = (root / "overlays" / "production" / "credentials.env").read_text()
    password = re.search(r"^redis-password=(.+)$", env, re.M)[1]  # type: ignore[index]
    secret = {k: base64.b64decode(v).decode()
              for k, v in production[("Secret", "gameai-credentials")]["data"].items()}
    assert len(password) >= 24 and secret["redis-password"] == password
    assert "CHANGE-ME" not in secret["store-url"] and secret["admin-token"]
    assert f"store-url=redis://:{password}@gameai-redis:6379/0" in env
    (tmp_path / "production.yaml").write_text(text)
    assert validate(tmp_path / "production.yaml", VERSIONS[-1]).returncode == 0

    _, docs = kustomize(root / "overlays" / "external-redis")
    external = by_kind(docs)
    assert not [key for key in external if key[1] == "gameai-redis"]
    assert ("Deployment", "gameai-server") in external
    secret = external[("Secret", "gameai-credentials")]
    assert set(secret["data"]) == {"store-url", "admin-token"}
    server = external[("Deployment", "gameai-server")]["spec"]["template"]["spec"]
    assert server["volumes"][1]["secret"]["secretName"] == secret["metadata"]["name"]


def test_make_credentials_never_replaces_and_checks_the_url(tmp_path: Path) -> None:
    root = tmp_path / "k8s"
    shutil.copytree(K8S, root, ignore=shutil.ignore_patterns("*.env"))
    make_credentials(root)
    path = root / "overlays" / "production" / "credentials.env"
    first = path.read_text()
    again = make_credentials(root)
    assert again.returncode == 0 and "kept" in again.stdout
    assert path.read_text() == first
    assert path.stat().st_mode & 0o077 == 0
    bad = make_credentials(root, "--external", "http://redis:6379")
    assert bad.returncode == 2 and "redis://" in bad.stderr


def test_the_connect_four_component_trains_an_ntuple_network_and_serves_it(
        tmp_path: Path) -> None:
    """An overlay with ``components: [../../components/connect-four]`` (rendered from a copy
    of deploy/k8s, as an operator's overlay would be): the trainer learns Connect Four with
    an n-tuple network and the servers serve it beside tic-tac-toe."""
    shutil.copytree(K8S, tmp_path / "k8s")
    overlay = tmp_path / "k8s" / "overlays" / "c4"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - ../../base\ncomponents:\n  - ../../components/connect-four\n")
    _, docs = kustomize(overlay)
    objects = by_kind(docs)
    trainer = containers(objects)["gameai-trainer-connect-four"]
    args = trainer["args"]
    assert args[:5] == ["trainer", "--game", "connect-four", "--algorithm", "ntuple"]
    assert "--resume" in args and "0.0.0.0" in args
    server = containers(objects)["gameai-server"]
    env = {e["name"]: e.get("value") for e in server["env"]}
    assert env["GAMEAI_GAMES"] == "tictactoe,connect-four"
    # issue 28: tic-tac-toe keeps its trainer, and the two trainers' pods stay apart
    assert containers(objects)["gameai-trainer"]["args"][:3] == ["trainer", "--game",
                                                                 "tictactoe"]
    selectors = [objects[("Deployment", name)]["spec"]["selector"]["matchLabels"]
                 for name in ("gameai-trainer", "gameai-trainer-connect-four")]
    for mine, other in (selectors, selectors[::-1]):
        assert not other.items() <= _pod_labels(objects, mine).items()
    path = tmp_path / "c4.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = validate(path, VERSIONS[-1])
    assert result.returncode == 0, result.stdout + result.stderr


def _pod_labels(objects: dict[tuple[str, str], Any], selector: dict[str, str]
                ) -> dict[str, str]:
    """The pod template labels of the Deployment whose selector is ``selector``."""
    (labels,) = [obj["spec"]["template"]["metadata"]["labels"] for (kind, _), obj in
                 objects.items() if kind == "Deployment"
                 and obj["spec"]["selector"]["matchLabels"] == selector]
    return labels


@dataclass
class Role:
    """A ``gameai serve`` or ``gameai trainer`` container as rendered."""

    name: str  # the object and container
    args: list[str]
    env: dict[str, str]  # the plain values (a Secret's are not read here)


def roles(docs: list[dict[str, Any]]) -> list[Role]:
    """The ``gameai serve`` and ``gameai trainer`` containers of the rendered objects:
    Deployments, StatefulSets and a RayCluster's head."""
    out = []
    for doc in docs:
        spec = doc.get("spec", {})
        template = spec.get("template") if doc["kind"] in ("Deployment", "StatefulSet") \
            else spec.get("headGroupSpec", {}).get("template") if doc["kind"] == "RayCluster" \
            else None
        for c in (template or {}).get("spec", {}).get("containers", []):
            args = [str(a) for a in c.get("args", [])]
            if args[:1] in (["serve"], ["trainer"]):
                env = {e["name"]: str(e["value"]) for e in c.get("env", []) if "value" in e}
                out.append(Role(f"{doc['metadata']['name']}/{c['name']}", args, env))
    return out


def served_and_trained(docs: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The games the servers serve (``GAMEAI_GAMES``) and those some trainer learns (the
    ``--game`` of every ``gameai trainer`` container: Deployments and a RayCluster's head)."""
    served: set[str] = set()
    trained: set[str] = set()
    for role in roles(docs):
        if role.args[0] == "serve":
            served |= set((role.env.get("GAMEAI_GAMES") or "tictactoe").split(","))
        else:
            trained.add(role.args[role.args.index("--game") + 1])
    return served, trained


SHIPPED = {  # every shipped overlay, and the components on the base
    "base": ("kustomization.yaml", None),
    "production": ("overlays/production", None),
    "external-redis": ("overlays/external-redis", None),
    "connect-four": (None, ["connect-four"]),
    "connect-four+ray-trainer": (None, ["connect-four", "ray-trainer"]),
}


def render_shipped(case: str, tmp_path: Path) -> list[dict[str, Any]]:
    """The objects of one of :data:`SHIPPED` as ``kubectl kustomize`` renders them, with
    credentials made (a component is added to the base by an overlay made here)."""
    root = tmp_path / "k8s"
    shutil.copytree(K8S, root, ignore=shutil.ignore_patterns("*.env"))
    assert make_credentials(root).returncode == 0
    assert make_credentials(root, "--external", "redis://:pw@redis.example:6379/0"
                            ).returncode == 0
    where, components = SHIPPED[case]
    if components is not None:
        overlay = root / "overlays" / "with-components"
        overlay.mkdir()
        (overlay / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            "resources:\n  - ../../base\ncomponents:\n"
            + "".join(f"  - ../../components/{c}\n" for c in components))
        path = overlay
    else:
        path = root if where == "kustomization.yaml" else root / str(where)
    return kustomize(path)[1]


@pytest.mark.parametrize("case", sorted(SHIPPED))
def test_every_served_game_has_a_trainer_so_every_install_gets_ready(case: str,
                                                                     tmp_path: Path) -> None:
    """Issue 28: servers are ready only once every game they serve has a production
    version, and only a trainer makes one from an empty store; so in every shipped overlay
    and component, each served game is some trainer's game (the connect-four component
    served tic-tac-toe with no trainer for it: no pod was ever ready). The processes
    themselves are run in tests/deploy/test_k8s_ready.py."""
    served, trained = served_and_trained(render_shipped(case, tmp_path))
    assert served, "no server"
    assert served <= trained, f"served with no trainer: {sorted(served - trained)}"


def test_the_ray_trainer_component_runs_the_trainer_on_a_kuberay_cluster(
        tmp_path: Path) -> None:
    """An overlay with the connect-four and ray-trainer components: the trainer Deployment
    gives way to a KubeRay RayCluster whose head pod runs the trainer beside the Ray head
    (``--cluster auto`` through the shared session directory), worker pods that scale, shared
    memory for the object store, the hashed credentials and the image of the overlay; every
    pod template validates against the Kubernetes schemas (the CRD itself is KubeRay's)."""
    shutil.copytree(K8S, tmp_path / "k8s")
    overlay = tmp_path / "k8s" / "overlays" / "ray"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - ../../base\ncomponents:\n  - ../../components/connect-four\n"
        "  - ../../components/ray-trainer\n")
    _, docs = kustomize(overlay)
    objects = by_kind(docs)
    # one writer of Connect Four: the head's trainer; tic-tac-toe keeps its Deployment
    assert ("Deployment", "gameai-trainer-connect-four") not in objects
    assert containers(objects)["gameai-trainer"]["args"][2] == "tictactoe"
    ray = objects[("RayCluster", "gameai-trainer")]
    assert ray["apiVersion"] == "ray.io/v1" and ray["metadata"]["namespace"] == "gameai"
    head = ray["spec"]["headGroupSpec"]
    (workers,) = ray["spec"]["workerGroupSpecs"]
    assert workers["minReplicas"] <= workers["replicas"] <= workers["maxReplicas"]
    assert int(workers["rayStartParams"]["num-cpus"]) >= 1
    secret = next(d for d in docs if d["kind"] == "Secret")["metadata"]["name"]
    image = containers(objects)["gameai-server"]["image"]
    pods = {"head": head["template"], "worker": workers["template"]}
    for name, template in pods.items():
        spec = template["spec"]
        shm = next(v for v in spec["volumes"] if v["name"] == "shm")
        assert shm["emptyDir"]["medium"] == "Memory"
        for c in spec["containers"]:
            assert {"name": "shm", "mountPath": "/dev/shm"} in c["volumeMounts"], name
            assert c["image"] == image, name
            assert c["securityContext"]["readOnlyRootFilesystem"] is True
            assert c["resources"]["limits"] and c["resources"]["requests"]
    trainer = next(c for c in head["template"]["spec"]["containers"] if c["name"] == "trainer")
    args = trainer["args"]
    assert args[:5] == ["trainer", "--game", "connect-four", "--algorithm", "ntuple"]
    assert args[args.index("--cluster") + 1] == "auto" and "--resume" in args
    assert {"name": "tmp", "mountPath": "/tmp"} in trainer["volumeMounts"]  # /tmp/ray shared
    credentials = next(v for v in head["template"]["spec"]["volumes"]
                       if v["name"] == "credentials")
    assert credentials["secret"]["secretName"] == secret  # the hashed name
    assert head["template"]["metadata"]["annotations"]["prometheus.io/port"] == "9100"
    policy = objects[("NetworkPolicy", "gameai-ray")]
    assert policy["metadata"]["namespace"] == "gameai"
    # the pod templates as Pods, through the same strict schema check as every manifest
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"ray-{name}", "namespace": "gameai",
                      **{k: v for k, v in t["metadata"].items() if k != "name"}},
         "spec": t["spec"]} for name, t in pods.items()] + [policy]))
    result = validate(path, VERSIONS[-1])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("passed for resource") == 3
