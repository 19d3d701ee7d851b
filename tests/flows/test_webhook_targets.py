"""Which addresses the stack may POST a webhook to: one check for the CLI, the API and the sender.

Addresses are given as literals (no DNS is asked); the sender's test POSTs to a real receiver on
loopback (tests/support/webhook.py), which the stack reaches only when private targets are
allowed (``subscriptions.webhook_private``), as a LAN receiver would be.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.config import Settings, load_settings
from flows.errors import NotifierError
from flows.notifiers import ChangeNotice, WebhookNotifier
from flows.webhook_targets import check_webhook_target, stack_ports
from tasks.synthesis import ChangeSummary
from tests.support.webhook import Webhook

METADATA = ["http://169.254.169.254/latest/meta-data", "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]/", "http://[::169.254.169.254]/",
            "http://[2002:a9fe:a9fe::1]/", "http://[64:ff9b::a9fe:a9fe]/",
            "http://[fe80::1]/", "http://100.100.100.200/", "http://[fd00:ec2::254]/",
            "http://user:hunter2@169.254.169.254/"]
PRIVATE = ["http://127.0.0.1:9000/hook", "http://[::1]:9000/", "http://[::ffff:127.0.0.1]:9000/",
           "http://localhost:9000/", "http://10.0.0.5:9000/", "http://192.168.1.20/hook",
           "http://[::ffff:10.1.2.3]/", "http://[fd12:3456::1]/", "http://100.64.0.1/"]


def _settings(*, private: bool) -> Settings:
    return load_settings(subscriptions={"webhook_private": private})


@pytest.fixture
def receiver() -> Iterator[Webhook]:
    hook = Webhook()
    yield hook
    hook.close()


@pytest.mark.parametrize("url", METADATA)
@pytest.mark.parametrize("private", [False, True])
def test_link_local_and_metadata_addresses_are_refused_in_every_form(url: str, private: bool) -> None:
    with pytest.raises(NotifierError, match="a link-local or cloud metadata address") as refused:
        check_webhook_target(url, _settings(private=private))
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize("url", ["http://224.0.0.1/", "http://0.0.0.0/", "http://[::]/",
                                 "http://[::ffff:0.0.0.0]/"])
def test_multicast_and_unspecified_addresses_are_refused(url: str) -> None:
    with pytest.raises(NotifierError, match="multicast or unspecified"):
        check_webhook_target(url, _settings(private=True))


@pytest.mark.parametrize("url", PRIVATE)
def test_loopback_and_private_addresses_only_when_allowed(url: str) -> None:
    with pytest.raises(NotifierError, match=r"this machine \(loopback\)|a private address") as refused:
        check_webhook_target(url, _settings(private=False))
    assert "DROIDRETRIEVER_SUBSCRIPTIONS__WEBHOOK_PRIVATE=true" in refused.value.hint
    check_webhook_target(url, _settings(private=True))


def test_the_stacks_own_ports_are_refused_even_when_private_targets_are_allowed() -> None:
    settings = _settings(private=True)
    ports = stack_ports(settings)
    assert {settings.redis.port, settings.prefect.port, settings.api.port,
            settings.s3.endpoint.port, settings.stack.weed_base_port + 6} <= ports
    for port in ports:
        for host in ("127.0.0.1", "[::ffff:127.0.0.1]", "[::1]", "192.168.1.20"):
            with pytest.raises(NotifierError, match="a port of the stack's own services"):
                check_webhook_target(f"http://{host}:{port}/", settings)


def test_a_public_address_passes_on_any_port() -> None:
    for url in ("https://93.184.215.14/hook", "http://93.184.215.14:6390/",
                "http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/"):
        check_webhook_target(url, _settings(private=False))


def _notice() -> ChangeNotice:
    return ChangeNotice(subscription_id="sub-abcdef12", query="Big Mac price", run_id="run-1",
                        summary=ChangeSummary(query="Big Mac price", before_run="run-0",
                                              after_run="run-1"),
                        report_key="subscriptions/sub-abcdef12/run-1/report.md")


def test_the_sender_checks_again_and_posts_only_where_allowed(receiver: Webhook) -> None:
    with pytest.raises(NotifierError, match=r"this machine \(loopback\)"):
        WebhookNotifier(receiver.url, _settings(private=False)).notify(_notice())
    mapped = receiver.url.replace("127.0.0.1", "[::ffff:127.0.0.1]")
    own = load_settings(subscriptions={"webhook_private": True},
                        api={"port": int(receiver.url.split(":")[2].split("/")[0])})
    with pytest.raises(NotifierError, match="a port of the stack's own services"):
        WebhookNotifier(mapped, own).notify(_notice())
    assert receiver.received == []
    WebhookNotifier(receiver.url, _settings(private=True)).notify(_notice())
    assert [r["run_id"] for r in receiver.received] == ["run-1"]
