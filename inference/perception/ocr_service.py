"""The host's shared OCR service: ``python -m inference.perception.ocr_service``.

One process per host holds the OCR engine (``perception.ocr_service_engine``:
RapidOCR, or PaddleOCR with the gpu extra) and reads for every device worker of
the host over loopback HTTP (:mod:`inference.perception.ocr_wire`), so that the
workers import neither onnxruntime nor the engine (issue 16: a worker held
158 MB before any task, 283 MB after Study 2, with the engine in it).

- every route needs ``Authorization: Bearer <perception.ocr_service_token>``
  (compared in constant time; 401 without it);
- a read's body is at most ``ocr_service_max_request_mb`` (413 past it);
- at most ``ocr_service_concurrency`` reads run at once, one engine each (on a
  2-core host one at a time: a read already uses both cores); the others wait;
- the engine is loaded (one small read) before the port opens, so a client
  that connects finds it ready; while it loads, clients retry.

The farm launcher starts it when ``perception.ocr_backend`` is ``service``
(``<state_dir>/farm/ocr.log``).
"""

from __future__ import annotations

import argparse
import hmac
import logging
import queue
import sys
import threading
from collections.abc import Sequence

import numpy as np
import uvicorn
from fastapi import FastAPI, HTTPException, Request, Response
from starlette.concurrency import run_in_threadpool

from core.config import PerceptionSettings, load_settings
from core.errors import DroidRetrieverError
from inference.errors import OcrError, OcrServiceError
from inference.perception.image import RGBImage
from inference.perception.ocr import OcrEngine, OcrLine
from inference.perception.ocr_backends import create_engine_in_process
from inference.perception.ocr_wire import (
    HEALTH_PATH,
    HEIGHT_HEADER,
    READ_PATH,
    WIDTH_HEADER,
    OcrReply,
    OcrServiceHealth,
    decode_pixels,
)

__all__ = ["EnginePool", "create_ocr_app", "load_engine_pool", "main"]

log = logging.getLogger(__name__)


class EnginePool:
    """Engines lent one read at a time: as many reads at once as engines, the rest wait."""

    def __init__(self, engines: Sequence[OcrEngine]) -> None:
        if not engines:
            raise ValueError("an engine pool needs at least one engine")
        self.name = engines[0].name
        self.size = len(engines)
        self._idle: queue.Queue[OcrEngine] = queue.Queue()
        for engine in engines:
            self._idle.put(engine)
        self._lock = threading.Lock()
        self.reads = 0

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """Read ``image`` with the next idle engine (blocks while all are busy)."""
        engine = self._idle.get()
        try:
            return engine.read(image)
        finally:
            self._idle.put(engine)
            with self._lock:
                self.reads += 1


def load_engine_pool(settings: PerceptionSettings) -> EnginePool:
    """``ocr_service_concurrency`` engines of ``ocr_service_engine``, their models loaded."""
    engines = [create_engine_in_process(settings.ocr_service_engine, settings)
               for _ in range(settings.ocr_service_concurrency)]
    blank = np.full((32, 96, 3), 255, dtype=np.uint8)
    for engine in engines:
        engine.read(blank)  # loads the models now, not on a worker's first read
    return EnginePool(engines)


def _check_token(request: Request, token: bytes) -> None:
    presented = request.headers.get("authorization", "")
    scheme, _, value = presented.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token):
        raise HTTPException(401, "a bearer token is needed (perception.ocr_service_token)",
                            headers={"WWW-Authenticate": "Bearer"})


def _image_size(request: Request) -> tuple[int, int]:
    try:
        return int(request.headers[WIDTH_HEADER]), int(request.headers[HEIGHT_HEADER])
    except (KeyError, ValueError):
        raise HTTPException(400, f"headers {WIDTH_HEADER} and {HEIGHT_HEADER} must give the "
                                 "image's size in pixels") from None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"a read is at most {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"a read is at most {limit} bytes")
    return bytes(body)


def create_ocr_app(pool: EnginePool, token: str, *, max_request_bytes: int) -> FastAPI:
    """The service's HTTP app: ``POST /read`` and ``GET /health``, both behind ``token``."""
    if not token:
        raise ValueError("the OCR service needs a token")
    secret = token.encode()
    app = FastAPI(title="DroidRetriever OCR service", docs_url=None, redoc_url=None, openapi_url=None)

    @app.post(READ_PATH)
    async def read(request: Request) -> Response:
        _check_token(request, secret)
        width, height = _image_size(request)
        if width * height * 3 > max_request_bytes:
            raise HTTPException(413, f"a {width}x{height} image is more than {max_request_bytes} bytes")
        body = await _read_body(request, max_request_bytes)
        try:
            image = decode_pixels(body, width, height)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        try:
            lines = await run_in_threadpool(pool.read, image)
        except OcrError as exc:
            log.warning("a read failed: %s", exc)
            raise HTTPException(500, str(exc).splitlines()[0][:300]) from None
        return Response(OcrReply(lines=lines).model_dump_json(), media_type="application/json")

    @app.get(HEALTH_PATH)
    async def health(request: Request) -> Response:
        _check_token(request, secret)
        answer = OcrServiceHealth(engine=pool.name, concurrency=pool.size, reads=pool.reads)
        return Response(answer.model_dump_json(), media_type="application/json")

    return app


def main(argv: list[str] | None = None) -> None:
    """Serve on the host and port of ``perception.ocr_service_url`` (or ``--host`` / ``--port``)."""
    parser = argparse.ArgumentParser(description="The host's shared OCR service (issue 16).")
    parser.add_argument("--host", help="address to bind (default: the host of perception.ocr_service_url)")
    parser.add_argument("--port", type=int, help="port (default: the port of perception.ocr_service_url)")
    parser.add_argument("--engine", choices=["rapidocr", "paddle"],
                        help="the engine to hold (default: perception.ocr_service_engine)")
    args = parser.parse_args(argv)
    logging.basicConfig(level="INFO", format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        settings = load_settings().perception
        if args.engine:
            settings = settings.model_copy(update={"ocr_service_engine": args.engine})
        token = settings.ocr_service_token
        if token is None:
            raise OcrServiceError(
                "the OCR service has no secret to ask of its clients",
                hint="set DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_TOKEN, or let `droidretriever farm up` "
                "generate <state_dir>/secrets/ocr-token")
        pool = load_engine_pool(settings)
    except DroidRetrieverError as exc:
        sys.exit(f"error: {exc}" + (f"\n  hint: {exc.hint}" if exc.hint else ""))
    host = args.host or settings.ocr_service_url.host or "127.0.0.1"
    port = args.port or settings.ocr_service_url.port or 8710
    app = create_ocr_app(pool, token.get_secret_value(),
                         max_request_bytes=settings.ocr_service_max_request_mb * 1024 * 1024)
    log.info("OCR service (%s, %d read(s) at once) on http://%s:%d", pool.name, pool.size, host, port)
    # No access log: nothing in it would help, and a busy farm writes a line per read.
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False,
                proxy_headers=False, timeout_graceful_shutdown=5)


if __name__ == "__main__":
    main()
