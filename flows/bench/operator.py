"""The scripted operator: a test double of the person who answers pauses, for benchmark runs.

A benchmark of login-gated tasks needs someone to log in. ``ScriptedOperator``
watches the farm's pause queue (:mod:`flows.pause_queue`) for pauses of the runs
it was given and answers each the way a person does from the dashboard, through
the same control path (:class:`flows.steering.Steering`, and
:func:`tasks.takeover.apply_remote_input` as ``POST /devices/{serial}/input``):

    login      after a human-like delay: take the phone over, tap each empty field of the
               sign-in form and type the test account into it (the password into a password
               field), tap the form's submit button, then back to auto (the run continues
               from the screen it left); each input is an intervention step of the run
    any other  refuse (skip): payment, deletion, sending are never done for a benchmark

It is named as a double: only a benchmark (``droidretriever bench run --operator
scripted``) starts it, on virtual phones whose apps accept any account. Typed
text is a secret on the way (``RemoteInput.text``): nothing it types is logged.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections import Counter

import redis
from pydantic import SecretStr

from core.models import RiskCategory, UIElement
from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceError
from device_farm.registry import DeviceRegistry
from flows.errors import FlowError, SteeringConflict
from flows.pause_queue import PauseEntry, PauseQueue
from flows.pauses import resume_run
from flows.steering import SteerAction, Steering, SteerRequest
from inference.perception import parse_hierarchy
from storage import ManifestStore, ObjectStore, RunEventPublisher
from tasks.takeover import InterventionRecorder, RemoteInput, RemoteInputKind, apply_remote_input

__all__ = ["OPERATOR_ACTOR", "LoginForm", "ScriptedOperator", "read_login_form"]

log = logging.getLogger(__name__)

OPERATOR_ACTOR = "scripted operator"
_SETTLE_S = 0.4
# Words of a sign-in form's submit button, as apps label it (kinds of screens, not one app's).
_SUBMIT = re.compile(r"^(log ?in|sign ?in|next|continue|submit|done|ok|登录|登入|下一步|继续|确定)$",
                     re.IGNORECASE)
_PHONE_FIELD = re.compile(r"phone|mobile|手机|电话")
_EMAIL_WORD = re.compile(r"e-?mail|邮箱")


class LoginForm:
    """A sign-in screen as the operator reads it: its empty fields and its submit button."""

    def __init__(self, fields: list[UIElement], submit: UIElement | None) -> None:
        self.fields, self.submit = fields, submit


def read_login_form(elements: list[UIElement]) -> LoginForm:
    """The editable fields (top to bottom) and the submit button below the first of them."""
    fields = sorted((e for e in elements if e.editable and e.enabled), key=lambda e: e.bounds.top)
    top = fields[0].bounds.top if fields else 0
    buttons = [e for e in elements if e.clickable and e.enabled and not e.editable
               and _SUBMIT.match(e.label.strip()) and e.bounds.top >= top]
    return LoginForm(fields, min(buttons, key=lambda e: e.bounds.top, default=None))


class ScriptedOperator:
    """Answers the pauses of the given runs like a person at the dashboard (see the module)."""

    def __init__(self, client: redis.Redis[bytes], registry: DeviceRegistry, store: ObjectStore,
                 manifests: ManifestStore, *, delay_s: float = 3.0,
                 account: str = "bench.operator@example.com", phone_number: str = "13800138000") -> None:
        self._redis = client
        self._registry = registry
        self._events = RunEventPublisher(client, store, flush_every=1)
        self._steering = Steering(client, registry, manifests, self._events, _resume)
        self._recorder = InterventionRecorder(store, self._events, client)
        self._pauses = PauseQueue(client)
        self._delay_s = delay_s
        self._account = account
        self._phone = phone_number
        self._password = f"pw-{secrets.token_hex(6)}"  # the virtual phones take any
        self._runs: set[str] = set()
        self._seen: set[str] = set()
        self._answers: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, run_id: str) -> None:
        """Answer the pauses of ``run_id`` from now on."""
        with self._lock:
            self._runs.add(run_id)

    def answers(self, run_id: str) -> int:
        """Pauses of ``run_id`` answered so far (logged in, or refused)."""
        with self._lock:
            return self._answers[run_id]

    def start(self) -> ScriptedOperator:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="scripted-operator")
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._events.close()

    def __enter__(self) -> ScriptedOperator:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                for entry in self._pauses.list():
                    self._maybe_answer(entry)
            except redis.RedisError as exc:
                log.warning("the scripted operator cannot read the pause queue: %s", exc)
            self._stop.wait(0.5)

    def _maybe_answer(self, entry: PauseEntry) -> None:
        with self._lock:
            if entry.run_id not in self._runs or entry.flow_run_id in self._seen:
                return
            self._seen.add(entry.flow_run_id)
        threading.Thread(target=self._answer, args=(entry,), daemon=True,
                         name=f"operator-{entry.serial}").start()

    def _answer(self, entry: PauseEntry) -> None:
        time.sleep(self._delay_s)  # a person notices the pause and walks to the phone
        try:
            if entry.category is RiskCategory.LOGIN:
                self._log_in(entry)
            else:
                self._apply(entry.run_id, SteerRequest(action=SteerAction.ANSWER, answer="skip",
                                                       note=f"refused: {entry.category or 'risky'}"))
        except (SteeringConflict, FlowError, DeviceError) as exc:
            log.warning("the scripted operator could not answer %s on %s: %s",
                        entry.app_label, entry.serial, exc)
            return
        with self._lock:
            self._answers[entry.run_id] += 1

    def _log_in(self, entry: PauseEntry) -> None:
        self._apply(entry.run_id, SteerRequest(action=SteerAction.TAKE_OVER, serial=entry.serial))
        info = self._registry.info(entry.serial)
        driver = AdbDriver.for_device(info, timeout_s=10.0)
        try:
            form = self._read_form(driver)
            for field in form.fields:
                self._input(driver, entry, RemoteInput(kind=RemoteInputKind.TAP, x=field.bounds.center.x,
                                                       y=field.bounds.center.y))
                self._input(driver, entry, RemoteInput(kind=RemoteInputKind.TEXT,
                                                       text=SecretStr(self._value_for(field))))
            submit = self._read_form(driver).submit or form.submit
            if submit is not None:
                self._input(driver, entry, RemoteInput(kind=RemoteInputKind.TAP, x=submit.bounds.center.x,
                                                       y=submit.bounds.center.y))
        finally:
            driver.close()
        self._apply(entry.run_id, SteerRequest(action=SteerAction.RESUME, note="logged in with the test account"))

    def _value_for(self, field: UIElement) -> str:
        if field.password:
            return self._password
        words = field.label.casefold() + " " + field.resource_id.casefold()
        if _PHONE_FIELD.search(words) and not _EMAIL_WORD.search(words):
            return self._phone
        return self._account

    def _read_form(self, driver: AdbDriver) -> LoginForm:
        seen = driver.observe()
        elements = parse_hierarchy(seen.hierarchy_xml, width=seen.width, height=seen.height).elements
        return read_login_form(list(elements))

    def _input(self, driver: AdbDriver, entry: PauseEntry, remote: RemoteInput) -> None:
        """One input as the API's ``POST /devices/{serial}/input`` does it: checked, applied, recorded."""
        steered = self._steering.check_input(entry.serial, OPERATOR_ACTOR)
        apply_remote_input(driver, remote)
        time.sleep(_SETTLE_S)
        if steered.subtask_id is not None:
            self._recorder.record(entry.run_id, steered.subtask_id, remote, driver.screenshot_png(),
                                  OPERATOR_ACTOR)

    def _apply(self, run_id: str, request: SteerRequest) -> None:
        self._steering.apply(run_id, request, OPERATOR_ACTOR)


def _resume(run_id: str, action: str, note: str, app: str | None) -> list[str]:
    return resume_run(run_id, "skip" if action == "skip" else "continue", note, app)
