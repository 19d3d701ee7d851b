"""Notifiers: where a subscription's change summary goes when something changed.

One small protocol, two real implementations: :class:`LogNotifier` (the
serving process's log and stdout) and :class:`WebhookNotifier` (an HTTP POST
of the :class:`ChangeNotice` as JSON, e.g. to a chat integration). Which one
a subscription uses is data (:class:`NotifierSpec`), chosen when subscribing.

A webhook is an address this machine will POST to on its own, later: it must
be http(s), never a link-local, multicast or unspecified address (a cloud's
metadata service answers on 169.254.169.254) nor one of the local stack's own
ports; :func:`check_webhook_target` says so when subscribing, and
:class:`WebhookNotifier` checks the address again before each POST (a name may
resolve elsewhere by then).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Collection
from typing import Literal, Protocol, Self
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, HttpUrl, model_validator

from flows.errors import NotifierError
from tasks.synthesis import ChangeSummary

__all__ = ["ChangeNotice", "LogNotifier", "Notifier", "NotifierSpec", "WebhookNotifier",
           "check_webhook_target", "notifier_for"]

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


class Notifier(Protocol):
    """Delivers a change notice; raises :class:`NotifierError` when it cannot."""

    def notify(self, notice: ChangeNotice) -> None: ...


class LogNotifier:
    """Writes the notice to the log and to stdout (the serving process's output)."""

    def notify(self, notice: ChangeNotice) -> None:
        """Log and print the change summary."""
        log.warning("%s", notice.text)
        print(notice.text, flush=True)


def _addresses(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise NotifierError(f"the webhook's host {host!r} cannot be resolved",
                            hint="check the URL's host name") from exc
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def check_webhook_target(url: str, *, own_ports: Collection[int] = (), reachable: bool = False,
                         timeout_s: float = 3.0) -> None:
    """Raise :class:`NotifierError` unless ``url`` is a webhook this machine may POST to.

    http(s) only; no link-local, multicast or unspecified address; on loopback,
    none of ``own_ports`` (the local stack's services). With ``reachable``, the
    host must also resolve and accept a connection on the port now; without it,
    a name that does not resolve yet passes (the notifier checks again).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotifierError(f"the webhook {url!r} is not an http:// or https:// URL",
                            hint="give a URL such as https://hooks.example.com/path")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise NotifierError(f"the webhook {url!r} has an invalid port",
                            hint="give a port from 1 to 65535") from exc
    try:
        addresses = _addresses(parts.hostname, port)
    except NotifierError:
        if reachable:
            raise
        return  # checked again before each POST, when the name must resolve
    for address in addresses:
        if address.is_link_local or address.is_multicast or address.is_unspecified:
            raise NotifierError(
                f"the webhook's host {parts.hostname} is {address}, a link-local, multicast or "
                "unspecified address", hint="webhooks go to a routable host or this machine")
        if address.is_loopback and port in own_ports:
            raise NotifierError(f"the webhook {url!r} is a port of the local stack's own services",
                                hint="give the URL of the service that should hear of changes")
    if reachable:
        try:
            socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
        except OSError as exc:
            raise NotifierError(
                f"nothing answers at the webhook's {parts.hostname}:{port} "
                f"({exc.strerror or type(exc).__name__})",
                hint="start the receiver first, or set DROIDRETRIEVER_SUBSCRIPTIONS__WEBHOOK_CHECK"
                "=false to subscribe without checking") from exc


class WebhookNotifier:
    """POSTs the notice as JSON to ``url``; a non-2xx answer is an error."""

    def __init__(self, url: str, *, timeout_s: float = 10.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._url = url
        self._client = httpx.Client(timeout=timeout_s, transport=transport)

    def notify(self, notice: ChangeNotice) -> None:
        """Send the notice; raise NotifierError on a refused, unreachable or forbidden webhook."""
        check_webhook_target(self._url)
        try:
            response = self._client.post(self._url, content=notice.model_dump_json(),
                                         headers={"content-type": "application/json"})
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise NotifierError(f"the webhook {self._url} did not take the change notice: "
                                f"{type(exc).__name__}",
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


def notifier_for(spec: NotifierSpec) -> Notifier:
    """The notifier a spec describes."""
    if spec.kind == "webhook" and spec.url is not None:
        return WebhookNotifier(str(spec.url))
    return LogNotifier()
