"""The farm host's shared OCR service: one per host, started before the workers that ask it.

With ``farm.shared_ocr`` (the default) and an OCR engine in ``perception.ocr_backend``
(``rapidocr`` or ``paddle``), or with ``perception.ocr_backend = "service"``, and
``perception.ocr_service_url`` on loopback, ``farm up`` (and so ``droidretriever
up``) starts ``python -m inference.perception.ocr_service --engine ENGINE`` as the
farm process ``ocr`` (``<state_dir>/farm/ocr.log``), after generating its token
(``<state_dir>/secrets/ocr-token``) unless one is set, and starts each worker with
``--ocr-backend service``: the workers read the same token from the same file and
hold no engine. ``repair_farm`` starts it again like any farm process (its command
line is recorded). A URL on another host is that host's service: nothing is
started here.
"""

from __future__ import annotations

import time

from pydantic import SecretStr

from core.config import Settings, is_loopback
from core.secrets import StackSecret
from deploy.farm.processes import ProcessRecord, is_running, start_process, stop_process
from deploy.local.processes import is_port_free
from device_farm.errors import FarmSetupError
from inference.errors import OcrServiceError
from inference.perception import check_ocr_service

__all__ = ["OCR_PROCESS", "shared_ocr_engine", "start_shared_ocr", "worker_ocr_args"]

OCR_PROCESS = "ocr"  # its name among the farm's processes (pid and log files)


def shared_ocr_engine(settings: Settings) -> str | None:
    """The engine this host's OCR service holds, or None when the farm starts no service."""
    perception = settings.perception
    if not is_loopback(perception.ocr_service_url.host):
        return None  # another host's service, or none
    if perception.ocr_backend == "service":
        return perception.ocr_service_engine
    if perception.ocr_backend in ("rapidocr", "paddle") and settings.farm.shared_ocr:
        return perception.ocr_backend
    return None


def worker_ocr_args(settings: Settings) -> list[str]:
    """What a worker's command line adds so that it asks the host's service (else nothing)."""
    if settings.perception.ocr_backend != "service" and shared_ocr_engine(settings) is not None:
        return ["--ocr-backend", "service"]
    return []


def start_shared_ocr(settings: Settings, timeout_s: float = 120.0) -> tuple[ProcessRecord, ...]:
    """Start the host's OCR service and wait until it answers; () when the farm needs none."""
    engine = shared_ocr_engine(settings)
    if engine is None:
        return ()
    perception = settings.perception
    url = perception.ocr_service_url
    host, port = url.host or "127.0.0.1", url.port or 8710
    if not is_port_free(host, port):
        raise FarmSetupError(
            f"port {host}:{port} for the shared OCR service is taken",
            hint="stop what uses it, or move the service with DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_URL",
        )
    if perception.ocr_service_token is None:
        token = SecretStr(settings.secrets.ensure(StackSecret.OCR_TOKEN))
        perception = perception.model_copy(update={"ocr_service_token": token})
    record = start_process(settings.state_dir, OCR_PROCESS,
                           ["python", "-m", "inference.perception.ocr_service", "--engine", engine])
    deadline = time.monotonic() + timeout_s
    probe = perception.model_copy(update={"ocr_service_retry_s": 0.0, "ocr_service_timeout_s": 5.0})
    while True:
        if not is_running(record):
            raise FarmSetupError(f"the shared OCR service exited while starting: {_last_line(record)}",
                                 hint=f"see its log: {record.log_path}")
        try:
            check_ocr_service(probe)
            return (record,)
        except OcrServiceError as exc:
            if time.monotonic() > deadline:
                stop_process(record)
                raise FarmSetupError(f"the shared OCR service did not answer within {timeout_s:.0f} s: "
                                     f"{exc}", hint=f"see its log: {record.log_path}") from exc
        time.sleep(0.25)


def _last_line(record: ProcessRecord) -> str:
    try:
        lines = [ln for ln in record.log_path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log written"
    return lines[-1][:300] if lines else "no output"
