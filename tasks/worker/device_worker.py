"""One Celery worker process bound to one phone: ``python -m tasks.worker.device_worker --serial S``.

At start it checks the model roles the copilot uses (navigator, evaluator): one
a run could not use (a wrong model name, images to a text-only model) stops
the worker with one line and the fix; a server that does not answer yet is a
warning (the rules decide, visibly, until it does). Then it connects to the
phone through its adb server, learns what the phone is (model, size, apps
with labels), binds the process to it, and runs a
solo-pool worker (one sub-task at a time, on the consumer's own thread, so a
quarantine can cancel its queues before a rejected message comes back)
consuming ``device.<serial>`` and ``app.<package>`` for every installed app.
Bootsteps register it in the registry, start the heartbeat and hand the
consumer to the binding.
"""

from __future__ import annotations

import argparse
import logging
import re
import socket
from typing import Any

from celery import Celery, bootsteps

from core.config import Settings, load_settings
from device_farm.adb_driver import AdbDriver
from device_farm.models import DeviceInfo, DeviceState
from device_farm.registry import DeviceRegistry
from inference.errors import LLMRequestError, LLMUnavailable
from inference.llm import check_roles
from tasks.worker.bound_device import BoundDevice, bind_device, bound_device, unbind_device
from tasks.worker.celery_app import create_celery_app

__all__ = ["check_copilot_models", "describe_device", "main", "run_device_worker", "worker_hostname"]

log = logging.getLogger(__name__)


class _DeviceLifecycle(bootsteps.StartStopStep):  # type: ignore[misc]
    """Worker bootstep: register the phone and beat while the worker runs."""

    def start(self, worker: Any) -> None:
        device = bound_device()
        device.hostname = worker.hostname
        device.registry.register(device.info, worker.hostname)
        device.start_heartbeat()

    def stop(self, worker: Any) -> None:
        device = bound_device()
        device.stop_heartbeat()
        try:
            device.registry.set_state(device.serial, DeviceState.OFFLINE, "worker stopped")
        except Exception as exc:  # Redis may already be gone at shutdown; nothing to save
            log.warning("could not mark %s offline: %s", device.serial, exc)


class _ConsumerHandle(bootsteps.StartStopStep):  # type: ignore[misc]
    """Consumer bootstep: give the binding the live consumer (again after each reconnect)."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, parent: Any) -> None:
        bound_device().consumer = parent

    def stop(self, parent: Any) -> None:
        bound_device().consumer = None


def worker_hostname(serial: str) -> str:
    """A Celery node name unique across hosts: ``<serial>@<host>``."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", serial)
    return f"{safe}@{socket.gethostname()}"


def describe_device(driver: AdbDriver) -> DeviceInfo:
    """Learn what the phone is: model, screen size, installed apps with labels."""
    width, height = driver.screen_size()
    host, port = driver.address
    return DeviceInfo(
        serial=driver.serial, model=driver.model(), width=width, height=height,
        apps=driver.list_apps(), adb_host=host, adb_port=port,
        adb_serial="" if driver.adb_serial == driver.serial else driver.adb_serial,
    )


def check_copilot_models(settings: Settings) -> None:
    """Probe the navigator and evaluator once; exit (code 2) on a configuration error."""
    try:
        check_roles(settings, ("navigator", "evaluator"))
    except LLMRequestError as exc:
        log.error("%s; fix: %s", exc, exc.hint)
        raise SystemExit(2) from exc
    except LLMUnavailable as exc:
        log.warning("%s; the rules decide until it answers (fix: %s)", exc, exc.hint)


def run_device_worker(settings: Settings, serial: str, adb_host: str, adb_port: int,
                      loglevel: str = "INFO", farm_serial: str = "") -> None:
    """Bind this process to adb's ``serial`` and run its worker until stopped.

    ``farm_serial``: the phone's name in the registry and queues, where it is host-qualified
    (device_farm.serials); empty: ``serial`` itself.
    """
    check_copilot_models(settings)
    driver = AdbDriver(farm_serial or serial, host=adb_host, port=adb_port, adb_serial=serial)
    info = describe_device(driver)
    registry = DeviceRegistry.from_settings(settings)
    device = BoundDevice(settings, info, driver, registry)
    app: Celery = create_celery_app(settings)
    device.app = app
    bind_device(device)
    device.deliveries.listen()
    app.steps["worker"].add(_DeviceLifecycle)
    app.steps["consumer"].add(_ConsumerHandle)
    log.info("worker for %s consumes %s", device.serial, ", ".join(device.queues))
    try:
        app.worker_main([
            "worker", "--pool=solo", "--concurrency=1", "--prefetch-multiplier=1",
            f"--queues={','.join(device.queues)}", f"--hostname={worker_hostname(device.serial)}",
            "--without-gossip", "--without-mingle", f"--loglevel={loglevel}",
        ])
    finally:
        device.deliveries.close()
        unbind_device()
        driver.close()


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m tasks.worker.device_worker``."""
    parser = argparse.ArgumentParser(description="A Celery worker bound to one phone.")
    parser.add_argument("--serial", required=True, help="the phone's serial on its adb server")
    parser.add_argument("--farm-serial", default="",
                        help="its name in the farm where host-qualified (`farm up` passes it); "
                             "default: --serial")
    parser.add_argument("--adb-host", default=None, help="default: settings.farm.adb_host")
    parser.add_argument("--adb-port", type=int, default=None, help="default: settings.farm.adb_port")
    parser.add_argument("--loglevel", default="INFO")
    parser.add_argument("--ocr-backend", choices=["rapidocr", "paddle", "service", "none"],
                        help="default: settings.perception.ocr_backend (`farm up` passes service "
                             "when the host's workers share one OCR engine)")
    args = parser.parse_args(argv)
    settings = load_settings()
    if args.ocr_backend:
        perception = settings.perception.model_copy(update={"ocr_backend": args.ocr_backend})
        settings = settings.model_copy(update={"perception": perception})
    logging.basicConfig(level=args.loglevel, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    run_device_worker(
        settings, args.serial, args.adb_host or settings.farm.adb_host,
        args.adb_port or settings.farm.adb_port, args.loglevel, args.farm_serial,
    )


if __name__ == "__main__":
    main()
