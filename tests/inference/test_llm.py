"""The OpenAI-compatible client against a real HTTP stub server (OpenAIStub)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from droidretriever.config import LLMEndpoint, load_settings
from droidretriever.errors import ConfigError
from droidretriever.testing import OpenAIStub, ScriptedReply, free_port
from inference.errors import LLMOutputError, LLMRequestError, LLMTimeout, LLMUnavailable
from inference.llm import ChatMessage, LLMClient, Role, client_for


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
        make_client(stub, timeout_s=0.3).chat_json(ask(), Price)
    assert issubclass(LLMTimeout, LLMUnavailable)  # callers fall back on either


def test_sdk_retry_is_bounded(stub: OpenAIStub) -> None:
    stub.enqueue(ScriptedReply(content="{}", delay_s=3.0), ScriptedReply(content="{}", delay_s=3.0))
    client = LLMClient(
        LLMEndpoint(base_url=stub.base_url, model="m", timeout_s=0.3), role="evaluator", max_retries=1
    )
    with pytest.raises(LLMTimeout):
        client.chat_text(ask())
    assert len(stub.requests) == 2


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
    assert (reply.usage.prompt, reply.usage.calls) == (0, 1)


def test_screenshot_goes_only_to_vision_endpoints(stub: OpenAIStub) -> None:
    png = b"\x89PNG fake bytes"
    message = [ChatMessage(role="user", content="what is on screen?", image_png=png)]
    stub.enqueue("text only", "with image")
    make_client(stub).chat_text(message)
    make_client(stub, vision=True).chat_text(message)
    assert stub.requests[0]["messages"][0]["content"] == "what is on screen?"
    parts = stub.requests[1]["messages"][0]["content"]
    assert parts[0] == {"type": "text", "text": "what is on screen?"}
    url = parts[1]["image_url"]["url"]
    assert base64.b64decode(url.removeprefix("data:image/png;base64,")) == png


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
    assert json.loads(json.dumps(stub.requests[0]))["max_tokens"] == 1024
