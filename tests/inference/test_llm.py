"""The OpenAI-compatible client against a real HTTP stub server (OpenAIStub)."""

from __future__ import annotations

import base64
import io
import json
import time
from collections.abc import Iterator

import pytest
from PIL import Image
from pydantic import BaseModel

from core.config import LLMEndpoint, load_settings
from core.errors import ConfigError
from droidretriever.testing import OpenAIStub, ScriptedReply, free_port
from inference.errors import (
    LLMCutOffError,
    LLMOutputError,
    LLMRequestError,
    LLMTimeout,
    LLMUnavailable,
)
from inference.llm import (
    DEFAULT_MAX_TOKENS,
    ChatMessage,
    LLMClient,
    Role,
    client_for,
    estimate_image_tokens,
)


class Price(BaseModel):
    item: str
    yuan: float


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as server:
        yield server


def make_client(stub: OpenAIStub, **endpoint: object) -> LLMClient:
    settings = {"base_url": stub.base_url, "model": "qwen-test", "timeout_s": 5.0, **endpoint}
    return LLMClient(LLMEndpoint.model_validate(settings), role="navigator", max_retries=0)


def ask(text: str = "price?") -> list[ChatMessage]:
    return [ChatMessage(role="system", content="answer in JSON"), ChatMessage(role="user", content=text)]


def test_json_schema_is_sent_and_answer_validated(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(content='{"item": "Big Mac", "yuan": 24.5}', prompt_tokens=321, completion_tokens=17))
    reply = make_client(stub).chat_json(ask(), Price)
    assert reply.value == Price(item="Big Mac", yuan=24.5)
    assert (reply.usage.prompt, reply.usage.completion, reply.usage.calls) == (321, 17, 1)
    assert reply.model == "qwen-test" and reply.role == "navigator" and not reply.repaired
    assert reply.latency_ms > 0
    sent = stub.requests[0]
    assert sent["model"] == "qwen-test"
    assert sent["response_format"]["type"] == "json_schema"
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["item", "yuan"] and schema["properties"]["yuan"]["type"] == "number"


def test_one_repair_round_shows_the_validation_error(stub: OpenAIStub) -> None:
    stub.enqueue(
        ScriptedReply(content='{"item": "Big Mac", "yuan": "cheap"}', prompt_tokens=100, completion_tokens=10),
        ScriptedReply(content='```json\n{"item": "Big Mac", "yuan": 24.5}\n```', prompt_tokens=150, completion_tokens=12),
    )
    reply = make_client(stub).chat_json(ask(), Price)
    assert reply.value.yuan == 24.5 and reply.repaired
    # Tokens of both rounds are counted.
    assert (reply.usage.prompt, reply.usage.completion, reply.usage.calls) == (250, 22, 2)
    repair = stub.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"item": "Big Mac", "yuan": "cheap"}'}
    assert "yuan" in repair[-1]["content"] and "valid number" in repair[-1]["content"]


def test_second_bad_answer_is_a_typed_failure(stub: OpenAIStub) -> None:
    stub.enqueue("not json at all", '{"item": 3}')
    with pytest.raises(LLMOutputError, match="answered twice without a valid Price") as caught:
        make_client(stub).chat_json(ask(), Price)
    assert "guided decoding" in caught.value.hint
    assert len(stub.requests) == 2  # exactly one repair round, no more


def test_semantic_check_failure_gets_the_repair_round(stub: OpenAIStub) -> None:
    stub.enqueue('{"item": "Whopper", "yuan": 30}', '{"item": "Big Mac", "yuan": 24.5}')
    reply = make_client(stub).chat_json(
        ask(), Price, check=lambda p: None if p.item == "Big Mac" else "item must be Big Mac"
    )
    assert reply.value.item == "Big Mac"
    assert "item must be Big Mac" in stub.requests[1]["messages"][-1]["content"]


def test_timeout_is_a_typed_error(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(content="{}", delay_s=3.0))
    with pytest.raises(LLMTimeout, match=r"did not answer within 0.3 s"):
        make_client(stub, timeout_s=0.3, tokens_per_s=10_000).chat_json(ask(), Price)
    assert issubclass(LLMTimeout, LLMUnavailable)  # callers fall back on either


def test_one_deadline_covers_the_whole_call(stub: OpenAIStub) -> None:
    """Table row 12: a hanging server costs one timeout per call, not timeout x SDK retries."""
    stub.enqueue(ScriptedReply(content="{}", delay_s=3.0), ScriptedReply(content="{}", delay_s=3.0))
    endpoint = LLMEndpoint(base_url=stub.base_url, model="m", timeout_s=0.3, tokens_per_s=10_000)
    client = LLMClient(endpoint, role="evaluator", max_retries=1)
    started = time.perf_counter()
    with pytest.raises(LLMTimeout) as caught:
        client.chat_text(ask())
    assert time.perf_counter() - started < 1.0
    assert len(stub.requests) == 1  # no second request once the deadline is spent
    assert [c.outcome for c in caught.value.calls] == ["timeout"]
    assert caught.value.calls[0].usage.prompt > 0 and caught.value.calls[0].estimated  # still counted


def test_a_shorter_deadline_from_the_caller_wins(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(content="{}", delay_s=3.0))
    with pytest.raises(LLMTimeout, match=r"within 0\.2 s"):
        make_client(stub).chat_json(ask(), Price, deadline_s=0.2)


def test_a_5xx_is_retried_once_inside_the_deadline(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(status=503), '{"item": "Big Mac", "yuan": 24.5}')
    client = LLMClient(LLMEndpoint(base_url=stub.base_url, model="m", timeout_s=5), role="navigator")
    reply = client.chat_json(ask(), Price)
    assert reply.value.yuan == 24.5 and len(stub.requests) == 2
    assert [c.outcome for c in reply.calls] == ["unavailable", "ok"]
    assert (reply.usage.calls, reply.usage.failed) == (2, 1)


def test_a_cut_off_answer_is_asked_again_with_a_higher_limit(stub: OpenAIStub) -> None:
    """Table row 7: finish_reason "length" is an error, retried once with twice the limit."""
    stub.enqueue(ScriptedReply(content='{"item": "Big M', finish_reason="length"),
                 '{"item": "Big Mac", "yuan": 24.5}')
    reply = make_client(stub, max_tokens=40).chat_json(ask(), Price)
    assert reply.value.item == "Big Mac"
    assert [r["max_tokens"] for r in stub.requests] == [40, 80]
    assert [c.outcome for c in reply.calls] == ["cut_off", "ok"]
    stub.enqueue(ScriptedReply(content="# Rep", finish_reason="length"),
                 ScriptedReply(content="# Report, still", finish_reason="length"))
    with pytest.raises(LLMCutOffError, match=r"cut off at 80 tokens") as caught:
        make_client(stub, max_tokens=40).chat_text(ask())
    assert "MAX_TOKENS" in caught.value.hint and caught.value.transient
    assert len(caught.value.calls) == 2


def test_each_role_has_its_own_completion_limit(stub: OpenAIStub) -> None:
    for role in ("decomposer", "navigator", "evaluator", "synthesizer"):
        stub.enqueue("ok")
        LLMClient(LLMEndpoint(base_url=stub.base_url, model="m"), role=role).chat_text(ask())
    sent = [r["max_tokens"] for r in stub.requests]
    assert sent == [DEFAULT_MAX_TOKENS[r] for r in ("decomposer", "navigator", "evaluator", "synthesizer")]
    assert sent[3] >= 4096 > sent[1]


def test_unreachable_server_is_unavailable() -> None:
    endpoint = LLMEndpoint(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", timeout_s=2)
    with pytest.raises(LLMUnavailable, match="cannot reach the decomposer model m") as caught:
        LLMClient(endpoint, role="decomposer", max_retries=0).chat_text(ask())
    assert "vLLM" in caught.value.hint


def test_http_errors_are_translated(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(content="model 'x' not found", status=404), ScriptedReply(status=503))
    client = make_client(stub)
    with pytest.raises(LLMRequestError, match="HTTP 404"):
        client.chat_text(ask())
    with pytest.raises(LLMUnavailable, match="HTTP 503"):
        client.chat_text(ask())


def test_missing_usage_still_counts_the_call(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(content="# Report", include_usage=False))
    reply = make_client(stub).chat_text(ask())
    assert reply.value == "# Report"
    assert reply.usage.calls == 1 and reply.usage.prompt > 0 and reply.usage.completion == 2
    assert reply.calls[0].estimated  # counted here with the offline tokenizer


def test_screenshot_goes_only_to_vision_endpoints_first_and_downscaled(stub: OpenAIStub) -> None:
    """Item 9: the image first in the content list, downscaled to max_pixels, its tokens counted."""
    buffer = io.BytesIO()
    Image.new("RGB", (1080, 2340), "white").save(buffer, format="PNG")
    message = [ChatMessage(role="user", content="what is on screen?", image_png=buffer.getvalue())]
    stub.enqueue("text only", "with image")
    make_client(stub).chat_text(message)
    reply = make_client(stub, vision=True, max_pixels=200_704).chat_text(message)
    assert stub.requests[0]["messages"][0]["content"] == "what is on screen?"
    parts = stub.requests[1]["messages"][0]["content"]
    assert parts[1] == {"type": "text", "text": "what is on screen?"}
    url = parts[0]["image_url"]["url"]
    with Image.open(io.BytesIO(base64.b64decode(url.removeprefix("data:image/png;base64,")))) as sent:
        assert (sent.width, sent.height) == (280, 644)  # what Qwen2.5-VL's processor would resize to
        assert reply.usage.image == estimate_image_tokens(sent.width, sent.height, 200_704) == 230
    assert estimate_image_tokens(1080, 2340, 12_845_056) == 3276  # Qwen2.5-VL's default max_pixels


def test_absent_role_is_none_never_faked(stub: OpenAIStub) -> None:
    settings = load_settings()
    assert client_for(settings, Role.NAVIGATOR) is None
    configured = load_settings(llm={"navigator": {"base_url": stub.base_url, "model": "qwen"}})
    client = client_for(configured, Role.NAVIGATOR)
    assert client is not None and client.name == "llm:qwen"
    assert client_for(configured, Role.EVALUATOR) is None
    with pytest.raises(ConfigError, match="no model configured"):
        LLMClient(LLMEndpoint(), role="evaluator")


def test_empty_text_answer_is_an_error(stub: OpenAIStub) -> None:
    stub.enqueue("   ")
    with pytest.raises(LLMOutputError, match="empty answer"):
        make_client(stub).chat_text(ask())
    assert json.loads(json.dumps(stub.requests[0]))["max_tokens"] == DEFAULT_MAX_TOKENS["navigator"]
