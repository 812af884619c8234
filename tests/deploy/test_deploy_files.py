"""deploy/ checked with maintained validators, no container runtime or cluster needed: the
compose file against the compose spec's schema, the Helm chart linted, rendered by Helm's own
Go SDK and validated against Kubernetes' schemas, the Dockerfile linted by hadolint
(deploy/check.py runs each; deploy/README.md says how)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CHECK = DEPLOY / "check.py"
VALUES = yaml.safe_load((DEPLOY / "helm" / "tetromino" / "values.yaml").read_text())


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), *args], capture_output=True, text=True, timeout=300
    )


def _render(*sets: str) -> list[dict[str, Any]]:
    done = _check("render", *(f"--set={s}" for s in sets))
    assert done.returncode == 0, done.stderr
    docs: list[dict[str, Any]] = json.loads(done.stdout)
    return docs


def _one(docs: list[dict[str, Any]], kind: str, suffix: str) -> dict[str, Any]:
    [doc] = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].endswith(suffix)]
    return doc


@pytest.mark.slow
def test_compose_file_follows_the_compose_spec(tmp_path: Path) -> None:
    """compose.yaml passes check-jsonschema with the compose spec's schema, and the same check
    rejects a copy with a misspelt service key (the schema is strict enough to matter)."""
    done = _check("compose")
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / "compose.yaml"
    text = (DEPLOY / "compose.yaml").read_text()
    broken.write_text(text.replace("    stop_grace_period: 45s", "    stop_grace_perod: 45s", 1))
    refused = subprocess.run(
        [Path(sys.executable).parent / "check-jsonschema", "--builtin-schema",
         "vendor.compose-spec", str(broken)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "stop_grace_perod" in refused.stdout + refused.stderr


@pytest.mark.slow
def test_helm_chart_lints_and_every_manifest_is_valid() -> None:
    """helm lint --strict finds nothing and each rendered manifest validates against the
    Kubernetes 1.33 schema of its kind (strict: no unknown field), with autoscaling on and off."""
    for sets in ([], ["worker.autoscaling.enabled=false", "sandbox.hostUsers=true"]):
        done = _check("chart", "--json", *(f"--set={s}" for s in sets))
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["lint"] == [], report
        failed = [row for row in report["manifests"] if not row["ok"]]
        assert failed == [] and done.returncode == 0, failed
    kinds = sorted(row["kind"] for row in report["manifests"])
    assert kinds == ["ConfigMap", "Deployment", "Deployment", "Job", "Secret", "Service"]


@pytest.mark.slow
def test_validator_rejects_a_wrong_manifest(tmp_path: Path) -> None:
    """The manifest validator is not a rubber stamp: a Deployment with a misspelt field and one
    with a string where a number goes both fail."""
    docs = _render()
    server = _one(docs, "Deployment", "-server")
    server.pop("_template")
    misspelt = json.loads(json.dumps(server))
    misspelt["spec"]["replica"] = misspelt["spec"].pop("replicas")
    wrong_type = json.loads(json.dumps(server))
    wrong_type["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "long"
    for bad in (misspelt, wrong_type):
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(bad))
        done = _check("manifests", str(path), "--json")
        assert done.returncode == 1
        assert json.loads(done.stdout)["manifests"][0]["ok"] is False


@pytest.mark.slow
def test_chart_states_what_the_sandbox_needs() -> None:
    """Server and worker pods run non-root with every capability dropped, under the shipped
    Localhost seccomp profile, in their own user namespace with an unmasked /proc (what
    bubblewrap needs), and the profile is the file the chart ships."""
    docs = _render()
    profile_name = VALUES["sandbox"]["seccompLocalhostProfile"]
    for suffix in ("-server", "-worker"):
        pod = _one(docs, "Deployment", suffix)["spec"]["template"]["spec"]
        security = pod["securityContext"]
        assert security["runAsNonRoot"] is True and security["runAsUser"] == 10001
        assert security["seccompProfile"] == {"type": "Localhost", "localhostProfile": profile_name}
        assert security["appArmorProfile"] == {"type": "Unconfined"}
        assert pod["hostUsers"] is False
        [container] = pod["containers"]
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["procMount"] == "Unmasked"
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    shipped = (DEPLOY / "helm" / "tetromino" / "files" / "referee-sandbox.seccomp.json").read_text()
    config = _one(docs, "ConfigMap", "-seccomp")["data"]
    assert json.loads(config[Path(profile_name).name]) == json.loads(shipped)


@pytest.mark.slow
def test_chart_runs_the_commands_a_deployment_needs() -> None:
    """The migration Job runs `referee db upgrade` as a pre-install/pre-upgrade hook after the
    Secret it reads; the server serves with --db, /metrics and gRPC health probes; workers run
    `referee worker --db` with /metrics and a health port the probes use; the HPA scales them
    on the external queue-depth metric."""
    docs = _render()
    job = _one(docs, "Job", "-migrate")
    secret = _one(docs, "Secret", "-database")
    hooks = job["metadata"]["annotations"]
    assert hooks["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert int(secret["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(
        hooks["helm.sh/hook-weight"]
    )
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == ["db", "upgrade"]
    assert secret["stringData"]["ARENA_DATABASE_URL"].startswith("postgresql")
    server = _one(docs, "Deployment", "-server")["spec"]["template"]["spec"]["containers"][0]
    assert server["args"][:2] == ["serve", "--db=$(ARENA_DATABASE_URL)"]
    assert "--metrics-listen=0.0.0.0:9100" in server["args"]
    assert server["readinessProbe"]["grpc"]["port"] == 50051
    worker = _one(docs, "Deployment", "-worker")["spec"]["template"]["spec"]["containers"][0]
    assert worker["args"][:2] == ["worker", "--db=$(ARENA_DATABASE_URL)"]
    assert "--health-listen=0.0.0.0:50052" in worker["args"]
    assert worker["livenessProbe"]["grpc"]["port"] == 50052
    hpa = _one(docs, "HorizontalPodAutoscaler", "-worker")
    [metric] = hpa["spec"]["metrics"]
    assert metric["external"]["metric"]["name"] == "tetromino_queue_depth"
    assert hpa["spec"]["scaleTargetRef"]["name"].endswith("-worker")


@pytest.mark.slow
def test_chart_refuses_to_render_without_a_database() -> None:
    """Without database.url (or an existing Secret) rendering fails and says what is missing."""
    done = _check("render", "--set=database.url=")
    assert done.returncode != 0
    assert "database.url is required" in done.stderr


@pytest.mark.slow
def test_dockerfile_lints_clean() -> None:
    """hadolint finds nothing in deploy/Dockerfile (its two ignores carry their reasons)."""
    done = _check("dockerfile")
    assert done.returncode == 0, done.stdout + done.stderr
