"""What the API refuses before a run or a subscription exists: a question without a word, an app
no phone of the farm has, a webhook this machine must not call. Each is one 422 line with its
fix, and nothing is written.

The app runs in this process (Starlette's test client) on the session's real Redis (a database of
its own, with one phone registered) and S3.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.config import RedisSettings, S3Settings, load_settings
from core.models import InstalledApp
from core.redis_client import open_redis
from device_farm.models import DeviceInfo
from device_farm.registry import DeviceRegistry
from droidretriever.api import create_app
from droidretriever.api.schemas import RunCreate, SubscriptionCreate
from tests.support.farm import own_database

pytestmark = pytest.mark.services

PHONE = DeviceInfo(serial="sim-inputs", width=1080, height=2340, apps=(
    InstalledApp(package="com.sankuai.meituan", label="Meituan"),
    InstalledApp(package="com.mcdonalds.app", label="McDonald's")))


@pytest.fixture()
def client(tmp_path: Path, redis_url: str, s3_settings: S3Settings) -> Iterator[TestClient]:
    redis_settings = RedisSettings(url=own_database(redis_url, 7))
    open_redis(redis_settings).flushdb()
    settings = load_settings(state_dir=tmp_path, redis=redis_settings,
                             s3=s3_settings.model_copy(update={"bucket": "dr-api-inputs"}))
    DeviceRegistry.from_settings(settings).register(PHONE, "worker@test")
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8700") as test_client:
        test_client.headers["authorization"] = f"Bearer {test_client.app.state.context.token}"  # type: ignore[attr-defined]
        yield test_client
    open_redis(redis_settings).flushdb()


def _refused(answer: Any) -> str:  # the test client's response
    """The 422 answer's error and fix, as one line."""
    body = answer.json()
    assert answer.status_code == 422, body
    assert "\n" not in body["error"]
    return f"{body['error']}; {body['hint']}"


def _nothing_written(client: TestClient) -> None:
    """No run's manifest, recording or subscription record in the store."""
    store = client.app.state.context.store  # type: ignore[attr-defined]
    assert store.list_objects("runs/") == [] and store.list_objects("subscriptions/") == []


@pytest.mark.parametrize("text", ["😀🔥💯", "\u202e\u202d\u2066", "\x1b[2J", "\u200b\ufe0f", "?!"])
def test_a_question_without_a_word_is_refused_before_a_run(client: TestClient, text: str) -> None:
    for path, body in (("/runs", {"text": text}), ("/subscriptions", {"text": text, "every_s": 60})):
        message = _refused(client.post(path, json=body))
        assert "the question has no words" in message and "ask it in words" in message
    _nothing_written(client)


@pytest.mark.parametrize("text", ["麦当劳的巨无霸在美团上多少钱？", "배달의민족에서 빅맥 가격은?",
                                  "メルカリで一番安いiPhoneは？", "Is a Big Mac 🍔 cheaper on Meituan?"])
def test_a_question_in_any_script_or_with_an_emoji_among_words_is_taken(text: str) -> None:
    assert RunCreate(text=text).text == text
    assert SubscriptionCreate(text=text).text == text


def test_an_app_no_phone_has_is_refused_before_a_run(client: TestClient) -> None:
    message = _refused(client.post("/runs", json={"text": "Big Mac price", "apps": ["NoSuchApp"]}))
    assert "apps 'NoSuchApp': no phone of the farm has it" in message
    assert "Meituan" in message and "McDonald's" in message  # what to name instead
    guessed = _refused(client.post("/runs", json={"text": "Big Mac price", "apps": ["Meituann"]}))
    assert "did you mean Meituan?" in guessed
    spoken = client.post("/runs/audio?apps=NoSuchApp", content=b"RIFF" + bytes(100),
                         headers={"content-type": "audio/wav"})
    assert "no phone of the farm has it" in _refused(spoken)
    subscribed = client.post("/subscriptions", json={"text": "Big Mac price", "every_s": 60,
                                                     "apps": ["Meituan", "NoSuchApp"]})
    assert "apps 'NoSuchApp'" in _refused(subscribed)
    _nothing_written(client)


@pytest.mark.parametrize("webhook", ["http://169.254.169.254/latest/meta-data",
                                     "http://[::ffff:169.254.169.254]/", "http://127.0.0.1:9/hook",
                                     "http://[::ffff:127.0.0.1]:8700/", "http://10.0.0.5/hook"])
def test_a_webhook_this_machine_must_not_call_is_refused(client: TestClient, webhook: str) -> None:
    message = _refused(client.post("/subscriptions", json={"text": "Big Mac price", "every_s": 60,
                                                           "webhook": webhook}))
    assert message.startswith("the webhook's host "), message
    assert ("link-local" in message or "WEBHOOK_PRIVATE=true" in message
            or "a port of the stack's own services" in message), message
    _nothing_written(client)
