# syntax=docker/dockerfile:1
# The DroidRetriever image: one image for every role of a deployment (docs/deploy.md).
#
#   api            python -m droidretriever.api                     (HTTP API + dashboard, port 8700)
#   runner         python -m flows.runner --status-file ...          (runs asked from the dashboard)
#   subscriptions  python -m flows.serve --status-file ...           (scheduled questions)
#   device worker  python -m tasks.worker.device_worker --serial S   (one per phone)
#   farm monitor   python -m tasks.worker.farm_monitor               (redelivers a dead worker's sub-task)
#   anything else  droidretriever ...                                (ask, doctor, farm status, ...)
#
# Every setting comes from DROIDRETRIEVER_* variables (docs/configuration.md); no secret is
# baked in. Build from the repository root: docker build -t droidretriever:0.1.0 .
FROM python:3.11-slim-bookworm

# What scripts/setup.sh installs, less what only tests need (Redis, Chromium, espeak-ng):
# fonts to render CJK screens, OpenCV's shared libraries for RapidOCR, and adb for the
# device workers of USB, network and emulator phones.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       fonts-noto-cjk fonts-dejavu-core libgl1 libglib2.0-0 adb tini \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# Dependencies first (cached while only the code changes), pinned to the tested set.
COPY pyproject.toml constraints.txt README.md ./
COPY core ./core
COPY droidretriever ./droidretriever
COPY suites ./suites
COPY flows ./flows
COPY tasks ./tasks
COPY device_farm ./device_farm
COPY inference ./inference
COPY storage ./storage
COPY deploy ./deploy
RUN pip install -c constraints.txt . \
    && python -c "import core, droidretriever, suites, prefect, celery, adbutils, rapidocr_onnxruntime"

# Never root: state (spool, logs, route memory) under the user's home, a volume in compose.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin droidretriever \
    && mkdir -p /home/droidretriever/.droidretriever \
    && chown -R droidretriever:droidretriever /home/droidretriever
USER droidretriever
ENV DROIDRETRIEVER_STATE_DIR=/home/droidretriever/.droidretriever \
    HOME=/home/droidretriever

EXPOSE 8700
# tini reaps the adb server and Celery's children and forwards SIGTERM (warm shutdown:
# a worker hands its unfinished sub-task back).
ENTRYPOINT ["tini", "--"]
CMD ["droidretriever", "--help"]
