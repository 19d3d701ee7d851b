"""Bring a phone to a task's starting state before the task is asked on it.

Virtual phones (their ADB server answers the control service): as booted, on the
task's simulated day, with the task's ``signed_out`` apps logged out. Real phones:
the task's apps force-stopped, so each starts from its launch screen (their data
and logins stay: a real phone's accounts are its owner's).
"""

from __future__ import annotations

from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceError
from device_farm.registry import DeviceRegistry
from device_farm.virtual_control import VirtualPhoneControl
from flows.errors import FlowError
from suites import SuiteTask

__all__ = ["missing_apps", "prepare_phone"]


def missing_apps(registry: DeviceRegistry, serial: str, task: SuiteTask) -> tuple[str, ...]:
    """The task's apps (launcher labels) that the phone does not have."""
    labels = {a.label for a in registry.info(serial).apps}
    return tuple(a for a in task.apps if a not in labels)


def prepare_phone(registry: DeviceRegistry, serial: str, task: SuiteTask) -> str:
    """Put ``serial`` in ``task``'s starting state; says how ("virtual: reset, day 3", ...)."""
    info = registry.info(serial)
    packages = {a.label: a.package for a in info.apps}
    control = VirtualPhoneControl(info.adb_host, info.adb_port)
    local = info.local_serial  # the control service names the phone as its adb server does
    try:
        if control.is_virtual():
            control.reset("boot", local)
            control.set_day(task.day, local)
            for label in task.signed_out:
                if label not in packages:
                    raise FlowError(f"{task.id} signs out {label}, which phone {serial} lacks",
                                    hint="run the suite on phones that have the task's apps")
                control.set_logged_in(local, packages[label], False)
            signed = f", {', '.join(task.signed_out)} signed out" if task.signed_out else ""
            return f"virtual: reset, day {task.day}{signed}"
        driver = AdbDriver.for_device(info, timeout_s=10.0)
        try:
            for label in task.apps:
                if label in packages:
                    driver.force_stop(packages[label])
        finally:
            driver.close()
    except DeviceError as exc:
        raise FlowError(f"cannot bring phone {serial} to the start of {task.id}: {exc}",
                        hint=exc.hint or "check the phone: `droidretriever farm status`") from exc
    return "real: task apps force-stopped"
