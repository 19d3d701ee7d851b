#!/usr/bin/env bash
# Set up (idempotent), start the embedded local stack, then answer a real question end to end:
# `ask` starts virtual phones with one worker each if no farm is up, runs the retrieve flow on
# the local Prefect server and prints the cited report and where report.html is.
# Afterwards: `droidretriever farm down` and `droidretriever down` stop everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
droidretriever up
droidretriever status
droidretriever ask "Is a Big Mac cheaper on Meituan or Ele.me?"
