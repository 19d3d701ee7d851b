"""The farm host's shared OCR service: one per host, started before the workers that ask it.

When ``perception.ocr_backend`` is ``service`` and ``perception.ocr_service_url``
is on loopback, ``farm up`` (and so ``droidretriever up``) starts
``python -m inference.perception.ocr_service`` as the farm process ``ocr``
(``<state_dir>/farm/ocr.log``), after generating its token
(``<state_dir>/secrets/ocr-token``) unless one is set; the workers read the same
token from the same file. ``repair_farm`` starts it again like any farm process.
A URL on another host is that host's service: nothing is started here.
"""

from __future__ import annotations

import time

from pydantic import SecretStr

from deploy.farm.processes import ProcessRecord, is_running, start_process, stop_process
from deploy.local.processes import is_port_free
from device_farm.errors import FarmSetupError
from droidretriever.config import Settings, is_loopback
from droidretriever.secrets import StackSecret
from inference.errors import OcrServiceError
from inference.perception import check_ocr_service

__all__ = ["OCR_PROCESS", "start_shared_ocr", "wants_shared_ocr"]

OCR_PROCESS = "ocr"  # its name among the farm's processes (pid and log files)


def wants_shared_ocr(settings: Settings) -> bool:
    """Whether this host's farm runs the OCR service: backend ``service`` on a loopback URL."""
    perception = settings.perception
    return perception.ocr_backend == "service" and is_loopback(perception.ocr_service_url.host)


def start_shared_ocr(settings: Settings, timeout_s: float = 120.0) -> tuple[ProcessRecord, ...]:
    """Start the host's OCR service and wait until it reads (); () when the farm needs none."""
    if not wants_shared_ocr(settings):
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
                           ["python", "-m", "inference.perception.ocr_service"])
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
