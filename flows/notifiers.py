"""Notifiers: where a subscription's change summary goes when something changed.

One small protocol, two real implementations: :class:`LogNotifier` (one line per
change appended to ``<state_dir>/logs/changes.log``, and the same line in the log of the
process that ran the check) and :class:`WebhookNotifier` (an HTTP POST
of the :class:`ChangeNotice` as JSON, e.g. to a chat integration). Which one
a subscription uses is data (:class:`NotifierSpec`), chosen when subscribing.

A webhook is an address this machine will POST to on its own, later:
:func:`flows.webhook_targets.check_webhook_target` says which it may be when
subscribing, and :class:`WebhookNotifier` checks the address again before each
POST (a name may resolve elsewhere by then).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Literal, Protocol, Self

import httpx
from pydantic import BaseModel, ConfigDict, HttpUrl, model_validator

from core.config import Settings
from core.models import utcnow
from core.private_files import make_private_dir
from core.text import mask_url, strip_controls
from flows.errors import NotifierError
from flows.webhook_targets import check_webhook_target
from tasks.synthesis import ChangeSummary

__all__ = ["ChangeNotice", "LogNotifier", "Notifier", "NotifierSpec", "WebhookNotifier",
           "changes_log", "notifier_for"]

log = logging.getLogger(__name__)


class ChangeNotice(BaseModel):
    """What a person is told: which subscription, what changed, where the new report is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subscription_id: str
    query: str
    run_id: str
    summary: ChangeSummary
    report_key: str

    @property
    def text(self) -> str:
        return f"[{self.subscription_id}] {self.summary.text}\nreport: {self.report_key}"

    def line(self) -> str:
        """The notice on one line (a change summary's own line breaks become " | ")."""
        summary = " | ".join(part.strip() for part in self.summary.text.splitlines() if part.strip())
        return (f"{utcnow():%Y-%m-%dT%H:%M:%SZ} [{self.subscription_id}] run {self.run_id}: "
                f"{strip_controls(summary, keep_newlines=False)} (report: {self.report_key})")


class Notifier(Protocol):
    """Delivers a change notice; raises :class:`NotifierError` when it cannot."""

    def notify(self, notice: ChangeNotice) -> None: ...


class LogNotifier:
    """Appends the notice as one line to ``path`` (``<state_dir>/logs/changes.log``, 0600), and
    logs it (the subscriptions service's own log, ``logs/subscriptions.log``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def notify(self, notice: ChangeNotice) -> None:
        """Append the change line; raise NotifierError when the file cannot be written."""
        line = notice.line()
        log.warning("%s", line)
        try:
            make_private_dir(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(line + "\n")
        except OSError as exc:
            raise NotifierError(f"the change of {notice.subscription_id} could not be written to "
                                f"{self.path}: {exc.strerror or exc}",
                                hint="check the state folder's permissions and free space") from exc


class WebhookNotifier:
    """POSTs the notice as JSON to ``url``; a non-2xx answer (a redirect too) is an error."""

    def __init__(self, url: str, settings: Settings, *, timeout_s: float = 10.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._url = url
        self._settings = settings
        self._client = httpx.Client(timeout=timeout_s, transport=transport, follow_redirects=False)

    def notify(self, notice: ChangeNotice) -> None:
        """Send the notice; raise NotifierError on a refused, unreachable or forbidden webhook."""
        check_webhook_target(self._url, self._settings)
        try:
            response = self._client.post(self._url, content=notice.model_dump_json(),
                                         headers={"content-type": "application/json"})
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise NotifierError(f"the webhook {mask_url(self._url)} did not take the change "
                                f"notice: {type(exc).__name__}",
                                hint="check the URL, or re-subscribe with another --webhook") from exc


class NotifierSpec(BaseModel):
    """How a subscription is notified: ``log``, or ``webhook`` with its URL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["log", "webhook"] = "log"
    url: HttpUrl | None = None

    @model_validator(mode="after")
    def _webhook_has_url(self) -> Self:
        if self.kind == "webhook" and self.url is None:
            raise ValueError("a webhook notifier needs a url")
        return self


def notifier_for(spec: NotifierSpec, settings: Settings) -> Notifier:
    """The notifier a spec describes (a webhook's address is checked by ``settings``' rules)."""
    if spec.kind == "webhook" and spec.url is not None:
        return WebhookNotifier(str(spec.url), settings)
    return LogNotifier(changes_log(settings))


def changes_log(settings: Settings) -> Path:
    """Where the ``log`` notifier writes: ``<state_dir>/logs/changes.log``."""
    return settings.logs_dir / "changes.log"
