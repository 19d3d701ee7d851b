#!/usr/bin/env bash
# Set up (idempotent) and run the tests: lint, types, import contracts, then pytest.
#   ./scripts/test.sh            the full suite (what CI runs)
#   ./scripts/test.sh --fast     the fast tier: the same checks, then only the tests that need no
#                                service and are not marked slow (-m "not services and not slow")
# Any other arguments go to pytest (e.g. ./scripts/test.sh --fast tests/inference -x).
set -euo pipefail
cd "$(dirname "$0")/.."
marks=()
if [ "${1:-}" = "--fast" ]; then
  shift
  marks=(-m "not services and not slow")
fi
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
echo "==> pytest${marks:+ (fast tier: ${marks[1]})}"
python -m pytest "${marks[@]}" "$@"
