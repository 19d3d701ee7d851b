"""A run with the flow's model roles on the recording server (a test double): every token counted.

The decomposer answers HTTP 500 (the rules plan, and the run says so), the
synthesizer writes a cited report. The run's manifest, the report's footer, the
event stream and a Prefect artifact all carry the tokens per role, failed calls
included, and the fallback.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from core.models import RunEventKind
from droidretriever.testing import Answer, RecordingOpenAIServer, ServedModel
from flows.models import RetrieveRequest
from flows.retrieve import run_retrieve
from flows.runtime import open_services
from flows.ui import artifact_key
from storage import RunEventReader
from tasks.synthesis import render_report_markdown
from tests.flows.conftest import FlowFarm


@pytest.fixture
def text_models(flow_farm: FlowFarm, monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("planner"), ServedModel("writer")]) as server:
        for role, model in (("DECOMPOSER", "planner"), ("SYNTHESIZER", "writer")):
            monkeypatch.setenv(f"DROIDRETRIEVER_LLM__{role}__BASE_URL", server.base_url)
            monkeypatch.setenv(f"DROIDRETRIEVER_LLM__{role}__MODEL", model)
        yield server


def test_the_runs_model_tokens_and_fallbacks_are_recorded_everywhere(
        flow_farm: FlowFarm, text_models: RecordingOpenAIServer) -> None:
    """Table rows 3 and 11: a failed decomposer is said once and counted; so is the synthesizer."""
    text_models.answer_by_default("planner", Answer.SERVER_ERROR)
    outcome = run_retrieve(RetrieveRequest(text="Which permissions does Meituan have?"))
    report = outcome.report
    services = open_services(flow_farm.settings)
    manifest = services.manifests.read(outcome.run_id)
    assert manifest.plan is not None and manifest.plan.decomposer == "rules"
    assert manifest.plan.notes[0].startswith("rule-based decomposition (the decomposer model failed: ")
    planner, writer = manifest.tokens.roles["decomposer"], manifest.tokens.roles["synthesizer"]
    assert (planner.calls, planner.failed) == (2, 2) and planner.prompt > 0  # both requests, estimated
    assert (writer.calls, writer.failed) == (1, 0)
    assert writer.prompt == sum(r.text_tokens for r in text_models.requests_for("writer"))
    assert report.synthesizer == "llm:writer" and report.tokens == manifest.tokens
    assert [(t.role, t.count) for t in manifest.fallbacks] == [("decomposer", 1)]
    footer = render_report_markdown(report).split("## Models", 1)[1]
    assert "the decomposer's model failed once; the plan comes from the rules" in footer
    assert "synthesizer: 1 call" in footer
    events = RunEventReader(services.redis).read_after(outcome.run_id)
    fallbacks = [e.message for e in events if e.kind is RunEventKind.MODEL_FALLBACK]
    assert len(fallbacks) == 1 and fallbacks[0].startswith("the decomposer's model failed once")
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=[artifact_key(outcome.run_id, "models")])))
    assert "decomposer" in str(artifact.data) and "synthesizer" in str(artifact.data)
    assert text_models.problems == []
