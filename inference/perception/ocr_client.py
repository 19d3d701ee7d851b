"""An :class:`~inference.perception.ocr.OcrEngine` that asks the host's shared OCR service.

With ``perception.ocr_backend = "service"`` a device worker holds no OCR engine
(neither onnxruntime nor RapidOCR is imported): every read goes over loopback
to one service per host (:mod:`inference.perception.ocr_service`), which holds
the engine for all the host's workers. :class:`~inference.perception.ocr.CachedOcrEngine`
stays in front of this client, so a screen read once is not sent again.

A service that does not answer (restarting, not up yet) is retried with backoff
for ``ocr_service_retry_s``; past that, or on a refused secret or an error
answer, the read fails with :class:`OcrServiceError`, one line saying what and
what to do. It never falls back to another engine.
"""

from __future__ import annotations

import time

import httpx
from pydantic import ValidationError

from core.config import PerceptionSettings
from inference.errors import OcrServiceError
from inference.perception.image import RGBImage
from inference.perception.ocr import OcrLine
from inference.perception.ocr_wire import (
    HEALTH_PATH,
    READ_PATH,
    OcrReply,
    OcrServiceHealth,
    encode_pixels,
)

__all__ = ["OcrServiceClient", "check_ocr_service"]

# Faults of a service that is restarting or not up yet: worth another try.
_TRANSIENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError,
              httpx.WriteError, httpx.PoolTimeout)
_START_HINT = ("start it: `droidretriever farm up` runs one per host when "
               "DROIDRETRIEVER_PERCEPTION__OCR_BACKEND=service (its log: <state_dir>/farm/ocr.log), "
               "or run `python -m inference.perception.ocr_service`")
_SECRET_HINT = ("give the service and its clients the same DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_TOKEN "
                "(on one host, unset: both read <state_dir>/secrets/ocr-token)")


class OcrServiceClient:
    """Reads images through the OCR service at ``settings.ocr_service_url``."""

    name = "service"

    def __init__(self, settings: PerceptionSettings) -> None:
        token = settings.ocr_service_token
        self.url = str(settings.ocr_service_url).rstrip("/")
        if token is None:
            raise OcrServiceError(f"no secret for the OCR service at {self.url}", hint=_SECRET_HINT)
        self._retry_s = settings.ocr_service_retry_s
        self._http = httpx.Client(
            base_url=self.url, headers={"authorization": f"Bearer {token.get_secret_value()}"},
            timeout=httpx.Timeout(settings.ocr_service_timeout_s, connect=5.0),
        )

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """Every text line in ``image``, as the service's engine reads it."""
        height, width = image.shape[:2]
        if height < 4 or width < 4:
            return ()
        body, headers = encode_pixels(image)
        response = self._send("POST", READ_PATH, content=body, headers=headers)
        try:
            return OcrReply.model_validate_json(response.content).lines
        except ValidationError as exc:
            raise OcrServiceError(f"the OCR service at {self.url} answered something that is not "
                                  f"a list of lines", hint="is that URL the OCR service?") from exc

    def health(self) -> OcrServiceHealth:
        """What the service holds (one try, no retry: for health checks)."""
        response = self._send("GET", HEALTH_PATH, retry_s=0.0)
        try:
            return OcrServiceHealth.model_validate_json(response.content)
        except ValidationError as exc:
            raise OcrServiceError(f"{self.url}{HEALTH_PATH} is not the OCR service's health",
                                  hint="is that URL the OCR service?") from exc

    def close(self) -> None:
        """Close the connection to the service."""
        self._http.close()

    def _send(self, method: str, path: str, *, retry_s: float | None = None,
              content: bytes | None = None, headers: dict[str, str] | None = None) -> httpx.Response:
        window = self._retry_s if retry_s is None else retry_s
        deadline = time.monotonic() + window
        pause = 0.2
        while True:
            try:
                response = self._http.request(method, path, content=content, headers=headers)
            except _TRANSIENT as exc:
                if time.monotonic() + pause > deadline:
                    raise OcrServiceError(
                        f"the OCR service at {self.url} did not answer "
                        f"({type(exc).__name__}, retried for {window:.0f} s)", hint=_START_HINT) from exc
                time.sleep(pause)
                pause = min(2.0, pause * 2)
                continue
            except httpx.TimeoutException as exc:
                raise OcrServiceError(
                    f"the OCR service at {self.url} sent no answer within "
                    f"{self._http.timeout.read:.0f} s", hint="it is overloaded or hung: see its log; "
                    "raise DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_CONCURRENCY on a host with spare cores"
                ) from exc
            if response.status_code == 503 and time.monotonic() + pause <= deadline:
                time.sleep(pause)  # starting: its engine is still loading
                pause = min(2.0, pause * 2)
                continue
            _raise_for_status(self.url, response)
            return response


def _raise_for_status(url: str, response: httpx.Response) -> None:
    status = response.status_code
    if status < 400:
        return
    if status == 401:
        raise OcrServiceError(f"the OCR service at {url} refused this client's secret", hint=_SECRET_HINT)
    if status == 413:
        raise OcrServiceError(f"the OCR service at {url} refused an image as too large",
                              hint="raise DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_MAX_REQUEST_MB on the service")
    detail = response.text[:200].replace("\n", " ")
    raise OcrServiceError(f"the OCR service at {url} answered {status}: {detail}",
                          hint="see the service's log (<state_dir>/farm/ocr.log on a farm host)")


def check_ocr_service(settings: PerceptionSettings) -> OcrServiceHealth:
    """The service's health, asked once with the settings' secret; raises :class:`OcrServiceError`."""
    client = OcrServiceClient(settings)
    try:
        return client.health()
    finally:
        client.close()
