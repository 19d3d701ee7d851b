"""Test double ``test.login_gate``: a navigate stand-in whose only skill is the login gate.

It answers the navigate contract like ``copilot.navigate`` does at a login
wall: when the virtual phone's app is logged out (read from the simulator's
control API) it returns ``needs_user`` (login) and keeps the phone for the
run; once the person has logged in, it completes. The pause, lease and resume
machinery of the flows is what the tests exercise with it.
"""

from __future__ import annotations

from core.models import RiskCategory, SubTaskResult, SubTaskStatus, Trace
from device_farm.sim import SimControlClient
from tasks.navigate import NavigateRequest
from tasks.worker import BoundDevice, device_task

LOGIN_GATE = "test.login_gate"


@device_task(LOGIN_GATE, NavigateRequest)
def run_login_gate(device: BoundDevice, request: NavigateRequest) -> SubTaskResult:
    subtask = request.subtask
    device.driver.open_app(subtask.package)
    control = SimControlClient(device.info.adb_host, device.info.adb_port)
    logged_in = control.status(device.serial)[0].logged_in.get(subtask.package, True)
    if not logged_in:
        device.hold_for_user()
        return SubTaskResult(subtask_id=subtask.id, status=SubTaskStatus.NEEDS_USER,
                             trace=Trace(subtask_id=subtask.id), reason="the app asks to log in",
                             risk_category=RiskCategory.LOGIN, device=device.serial)
    return SubTaskResult(subtask_id=subtask.id, status=SubTaskStatus.COMPLETED,
                         trace=Trace(subtask_id=subtask.id), reason="", device=device.serial)
