"""LLM4 wired in: against the scripted OpenAI-compatible stub (a test double), citations grounded."""

from __future__ import annotations

from pydantic import AnyHttpUrl

from droidretriever.config import LLMEndpoint, LLMSettings, load_settings
from droidretriever.models import AppStatus, Query, SubTaskStatus
from droidretriever.testing import DrawnCapture, OpenAIStub, ScriptedReply
from tasks.synthesis.evidence import FolderStore
from tasks.synthesis.extractive import EXTRACTIVE_NAME
from tasks.synthesis.llm_writer import writer_for
from tasks.synthesis.report import synthesize_report

APPS = (AppStatus(app_label="Meituan", package="com.sankuai.meituan", status=SubTaskStatus.COMPLETED),
        AppStatus(app_label="Ele.me", package="me.ele", status=SubTaskStatus.COMPLETED))
QUERY = Query(text="Is a Big Mac cheaper on Meituan or Ele.me?")


def settings_for(stub: OpenAIStub):  # type: ignore[no-untyped-def]
    endpoint = LLMEndpoint(base_url=AnyHttpUrl(stub.base_url), model=stub.model, timeout_s=5.0)
    return load_settings(llm=LLMSettings(synthesizer=endpoint))


def test_no_model_configured_means_no_writer() -> None:
    assert writer_for(load_settings(llm=LLMSettings())) is None


def test_model_report_is_grounded_and_unverified_citations_are_kept(
        meituan: DrawnCapture, eleme: DrawnCapture, store: FolderStore) -> None:
    answer = ("| App | Big Mac Meal |\n|---|---|\n"
              "| Meituan | ¥25.5 [cap-meituan-1(¥25.5)] |\n"
              "| Ele.me | ¥26.0 [[cap-eleme-1(Big Mac Meal ¥26.0)][cap-eleme-1(Sold 2k+)]] |\n\n"
              "Meituan is cheaper by ¥0.5 [cap-meituan-1(¥24.5)], and delivers a free toy [cap-eleme-9(toy)].")
    with OpenAIStub() as stub:
        stub.enqueue(ScriptedReply(content=answer, prompt_tokens=900, completion_tokens=120))
        writer = writer_for(settings_for(stub))
        assert writer is not None
        report = synthesize_report(run_id="run-llm", query=QUERY, captures=[meituan.capture, eleme.capture],
                                   apps=APPS, store=store, threshold=0.8, writer=writer)
        prompt = " ".join(m["content"] for m in stub.requests[0]["messages"])
    assert report.synthesizer == f"llm:{stub.model}"
    assert report.markdown == answer
    assert 'id="cap-meituan-1"' in prompt and "Big Mac Meal ¥26.0 Sold 2k+" in prompt
    assert writer.usage.prompt == 900 and writer.usage.completion == 120
    assert [c.grounded for c in report.citations] == [True, True, True, False, False]
    assert report.citations[1].box == eleme.boxes["Big Mac Meal ¥26.0 Sold 2k+"]
    assert report.citations[0].crop_key is not None
    # A wrong number is not grounded on a near-identical string.
    assert report.citations[3].quote == "¥24.5" and report.citations[3].box is None


def test_model_failure_falls_back_to_an_extractive_report_that_says_so(
        meituan: DrawnCapture, store: FolderStore) -> None:
    with OpenAIStub() as stub:
        stub.enqueue(ScriptedReply(status=400, content="model not found"))
        writer = writer_for(settings_for(stub))
        report = synthesize_report(run_id="run-fail", query=QUERY, captures=[meituan.capture],
                                   apps=APPS[:1], store=store, threshold=0.8, writer=writer)
    assert report.synthesizer == EXTRACTIVE_NAME
    assert "the report model failed" in report.markdown
    assert "¥25.5" in report.markdown and all(c.grounded for c in report.citations)
