"""Each role's configuration is checked once, against a vLLM-shaped server (the recording test double)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.config import LLMEndpoint, load_settings
from droidretriever.testing import Answer, RecordingOpenAIServer, ServedModel, free_port
from inference.errors import LLMRequestError, LLMUnavailable
from inference.llm import ProbeStatus, check_roles, probe_role, probe_roles, prompt_budget


@pytest.fixture
def vllm() -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("qwen-vl", vision=True), ServedModel("qwen-text"),
                                ServedModel("whisper", transcription=True)], api_key="s3cret") as server:
        yield server


def endpoint(server: RecordingOpenAIServer, model: str, **extra: object) -> LLMEndpoint:
    return LLMEndpoint.model_validate({"base_url": server.base_url, "model": model, "api_key": "s3cret",
                                       "timeout_s": 5, **extra})


def test_a_served_model_passes_every_check(vllm: RecordingOpenAIServer) -> None:
    result = probe_role("navigator", endpoint(vllm, "qwen-vl", vision=True))
    assert result.status is ProbeStatus.OK and result.usable
    assert result.passed == ("served", "json_schema", "image")
    assert vllm.problems == []  # the probe's own requests fit vLLM's documented shape
    requests = vllm.requests_for("qwen-vl")
    assert requests[0].body["response_format"]["type"] == "json_schema" and len(requests[1].images) == 1


def test_a_wrong_model_name_names_the_served_ones(vllm: RecordingOpenAIServer) -> None:
    """Table row 1: vLLM answers 404 unless --served-model-name matches; found before any run."""
    result = probe_role("evaluator", endpoint(vllm, "Qwen/Qwen2.5-VL-7B-Instruct"))
    assert result.status is ProbeStatus.REFUSED
    assert "serves qwen-vl, qwen-text, whisper" in result.detail
    assert "DROIDRETRIEVER_LLM__EVALUATOR__MODEL" in result.fix and "--served-model-name" in result.fix
    assert vllm.requests_for("Qwen/Qwen2.5-VL-7B-Instruct") == []  # no chat request was wasted


def test_images_to_a_text_only_model_are_a_configuration_error(vllm: RecordingOpenAIServer) -> None:
    result = probe_role("navigator", endpoint(vllm, "qwen-text", vision=True))
    assert result.status is ProbeStatus.REFUSED and result.passed == ("served", "json_schema")
    assert "not a multimodal model" in result.detail
    assert "VISION=false" in result.fix


def test_a_wrong_key_and_a_wrong_path_are_refused(vllm: RecordingOpenAIServer) -> None:
    wrong_key = probe_role("decomposer", endpoint(vllm, "qwen-text", api_key="nope"))
    assert wrong_key.status is ProbeStatus.REFUSED and "__API_KEY" in wrong_key.fix
    no_v1 = probe_role("decomposer", endpoint(vllm, "qwen-text", base_url=vllm.base_url.removesuffix("/v1")))
    assert no_v1.status is ProbeStatus.REFUSED and "/v1" in no_v1.fix


def test_an_answer_that_ignores_the_schema_is_refused(vllm: RecordingOpenAIServer) -> None:
    vllm.script("qwen-text", Answer.INVALID_JSON, Answer.INVALID_JSON)
    result = probe_role("synthesizer", endpoint(vllm, "qwen-text"))
    assert result.status is ProbeStatus.REFUSED and "ignored response_format json_schema" in result.detail


def test_the_transcriber_is_probed_through_its_route(vllm: RecordingOpenAIServer) -> None:
    result = probe_role("transcriber", endpoint(vllm, "whisper"))
    assert result.status is ProbeStatus.OK and result.passed == ("served", "transcription")


def test_check_roles_raises_one_line_with_the_fix(vllm: RecordingOpenAIServer) -> None:
    settings = load_settings(llm={
        "navigator": {"base_url": vllm.base_url, "model": "qwen-vl", "api_key": "s3cret", "vision": True},
        "evaluator": {"base_url": vllm.base_url, "model": "qwen", "api_key": "s3cret"}})
    with pytest.raises(LLMRequestError) as caught:
        check_roles(settings)
    assert str(caught.value).startswith("the evaluator's model 'qwen' at ") and "\n" not in str(caught.value)
    assert "qwen-vl" in caught.value.hint
    absent = load_settings()
    assert all(r.status is ProbeStatus.ABSENT for r in check_roles(absent))


def test_a_server_that_does_not_answer_is_unreachable() -> None:
    settings = load_settings(llm={"decomposer": {"base_url": f"http://127.0.0.1:{free_port()}/v1",
                                                 "model": "m", "timeout_s": 2}})
    with pytest.raises(LLMUnavailable, match="no answer from") as caught:
        check_roles(settings, ("decomposer",))
    assert "docs/models.md" in caught.value.hint


def test_max_tokens_over_the_served_context_is_refused_with_the_fix() -> None:
    """Issue 31 item 3: `vllm serve --max-model-len 8192` lists 8192; max_tokens 8192 can never fit."""
    with RecordingOpenAIServer([ServedModel("qwen-8k", max_model_len=8192)]) as server:
        settings = load_settings(llm={"synthesizer": {"base_url": server.base_url, "model": "qwen-8k",
                                                      "max_tokens": 8192}})
        (result,) = probe_roles(settings, ("synthesizer",))
        budget = prompt_budget(settings, "synthesizer")
        assert server.requests_for("qwen-8k") == []  # found from /v1/models alone, nothing sent
    assert budget is not None and budget > settings.budgets.synthesis_input_tokens
    assert result.status is ProbeStatus.REFUSED and result.passed == ("served",)
    assert f"max_tokens 8192 + a prompt of up to {budget} tokens" in result.detail
    assert "max_model_len 8192" in result.detail
    assert result.fix.startswith(f"lower DROIDRETRIEVER_LLM__SYNTHESIZER__MAX_TOKENS to at most {8192 - budget}")
    assert "DROIDRETRIEVER_BUDGETS__SYNTHESIS_INPUT_TOKENS" in result.fix and "--max-model-len" in result.fix


def test_a_role_that_fits_the_served_context_passes_the_check() -> None:
    with RecordingOpenAIServer([ServedModel("qwen-vl", vision=True, max_model_len=32_768)]) as server:
        settings = load_settings(llm={"navigator": {"base_url": server.base_url, "model": "qwen-vl",
                                                    "vision": True}})
        (result,) = probe_roles(settings, ("navigator",))
    assert result.status is ProbeStatus.OK
    assert result.passed == ("served", "context", "json_schema", "image")
    # The image at max_pixels counts in the navigator's prompt budget.
    assert prompt_budget(settings, "navigator") == (prompt_budget(load_settings(), "navigator") or 0) + 256
