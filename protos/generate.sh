#!/usr/bin/env bash
# Regenerate client_sdk/proto/ from protos/**/*.proto (commit the result).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-.venv/bin/python}" -m referee.tools.genproto "$@"
