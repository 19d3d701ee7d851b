#!/usr/bin/env bash
# Set up everything DroidRetriever needs on a fresh Debian machine; safe to run again.
#   - Debian packages: redis-server (broker, live state), postgresql (Prefect's database in the
#     local stack; `droidretriever up` runs its own cluster under the state folder: the system's
#     cluster the package may start is not used), Noto CJK + DejaVu fonts (virtual phone
#     rendering), chromium (dashboard/report tests), espeak-ng (synthesised speech for ASR tests),
#     libgl1/libglib2.0 (OpenCV, pulled in by RapidOCR, links against them), iproute2 (`ip netns`
#     for the multi-host test in network namespaces), adb (the stock client, tested against the
#     virtual phones: tests/device_farm/sim/test_stock_adb.py)
#   - a virtual environment in .venv with the package and its dev extra, pinned by constraints.txt
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(redis-server postgresql fonts-noto-cjk fonts-dejavu-core chromium espeak-ng libgl1 libglib2.0-0 iproute2 adb)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "==> installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $PYTHON"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
stamp=.venv/.droidretriever-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  echo "==> installing droidretriever[dev] (pinned by constraints.txt)"
  # pip's output goes to a log, shown only when it fails: a failed install must stop here.
  log=.venv/pip-install.log
  if ! { python -m pip install -q --upgrade pip && python -m pip install -q -c constraints.txt -e ".[dev]"; } >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "setup failed: pip could not install droidretriever[dev] (full log: $log)" >&2
    exit 1
  fi
  python -c "import droidretriever, prefect, celery, adbutils, rapidocr_onnxruntime"
  touch "$stamp"
fi
echo "==> setup done (activate with: . .venv/bin/activate)"
