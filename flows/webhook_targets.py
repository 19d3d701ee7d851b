"""Where this machine may POST on its own: the one check of a webhook's address.

A webhook is a URL someone else chose (``subscribe --webhook``, ``POST
/subscriptions``) that the stack calls later, from inside the network it runs
in. :func:`check_webhook_target` is called by all three that touch one: the CLI
and the API when subscribing, and :class:`flows.notifiers.WebhookNotifier`
before each POST (a name may resolve elsewhere by then). It resolves the host
and reads every address it resolves to as IPv4 when it wraps one
(``::ffff:169.254.169.254``, ``::a.b.c.d``, 6to4, NAT64, Teredo), then:

    always refused        link-local (169.254/16, fe80::/10: a cloud's metadata service
                          answers on 169.254.169.254), known metadata addresses, multicast,
                          unspecified; any non-public address on a port of the stack's
                          own services (Redis, S3 and SeaweedFS, Prefect, the API, OCR)
    refused unless        loopback and private networks (10/8, 172.16/12, 192.168/16,
    allowed               100.64/10, fc00::/7, ...): ``subscriptions.webhook_private``
                          allows a receiver on this machine or the LAN
    taken                 public addresses, any port
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from core.config import Settings
from core.text import mask_url
from flows.errors import NotifierError

__all__ = ["METADATA_ADDRESSES", "check_webhook_target", "stack_ports"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services outside link-local: Alibaba, Oracle, AWS's IPv6 one.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")
_PRIVATE_HINT = ("give a public host, or set DROIDRETRIEVER_SUBSCRIPTIONS__WEBHOOK_PRIVATE=true "
                 "to allow this machine and private networks")


def stack_ports(settings: Settings) -> frozenset[int]:
    """The ports of the stack's own services, which no webhook may name on a non-public address."""
    s3 = settings.s3.endpoint.port or 80
    weed = settings.stack.weed_base_port
    return frozenset({settings.redis.port, s3, settings.prefect.port, settings.api.port,
                      settings.perception.ocr_service_url.port or 80, *range(weed, weed + 7)})


def check_webhook_target(url: str, settings: Settings, *, reachable: bool = False,
                         timeout_s: float = 3.0) -> None:
    """Raise :class:`NotifierError` unless ``url`` is a webhook this machine may POST to.

    With ``reachable`` the host must also resolve and accept a connection on the port
    now; without it, a name that does not resolve yet passes (it is checked again
    before each POST, when it must).
    """
    shown = mask_url(url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotifierError(f"the webhook {shown!r} is not an http:// or https:// URL",
                            hint="give a URL such as https://hooks.example.com/path")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise NotifierError(f"the webhook {shown!r} has an invalid port",
                            hint="give a port from 1 to 65535") from exc
    try:
        addresses = _resolve(parts.hostname, port)
    except NotifierError:
        if reachable:
            raise
        return
    for address in addresses:
        _check_address(parts.hostname, port, address, settings)
    if reachable:
        try:
            socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
        except OSError as exc:
            raise NotifierError(
                f"nothing answers at the webhook's {parts.hostname}:{port} "
                f"({exc.strerror or type(exc).__name__})",
                hint="start the receiver first, or set DROIDRETRIEVER_SUBSCRIPTIONS__WEBHOOK_CHECK"
                "=false to subscribe without checking") from exc


def _check_address(host: str, port: int, resolved: Address, settings: Settings) -> None:
    address = _unwrapped(resolved)
    named = f"the webhook's host {host}" + (f" is {resolved}" if str(resolved) != host else "") + (
        f" ({address})" if address != resolved else "")
    if address in METADATA_ADDRESSES or address.is_link_local:
        raise NotifierError(f"{named}, a link-local or cloud metadata address",
                            hint="give a public host: the metadata service is never a webhook")
    if address.is_multicast or address.is_unspecified:
        raise NotifierError(f"{named}, a multicast or unspecified address",
                            hint="give the address of one host")
    if address.is_global:
        return
    if port in stack_ports(settings):
        raise NotifierError(f"{named}, and {port} is a port of the stack's own services",
                            hint="give the URL of the service that should hear of changes")
    if not settings.subscriptions.webhook_private:
        kind = "this machine (loopback)" if address.is_loopback else "a private address"
        raise NotifierError(f"{named}, {kind}", hint=_PRIVATE_HINT)


def _unwrapped(address: Address) -> Address:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, NAT64, Teredo), else it."""
    if isinstance(address, ipaddress.IPv4Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or (address in _V4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def _resolve(host: str, port: int) -> list[Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise NotifierError(f"the webhook's host {host!r} cannot be resolved",
                            hint="check the URL's host name") from exc
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
