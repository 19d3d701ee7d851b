#!/usr/bin/env bash
# Set up (idempotent), start the embedded local stack and show it.
# The end-to-end question answering (`droidretriever ask`) is not wired yet: see README "Status".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
droidretriever up
droidretriever status
