#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite: lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
echo "==> ruff"
ruff check .
echo "==> mypy (strict)"
mypy
echo "==> import contracts (layers, pyproject.toml) and circles"
lint-imports --no-cache
python scripts/find_import_cycles.py
echo "==> pytest"
python -m pytest "$@"
