"""LLM4 wired in: against the scripted OpenAI-compatible stub (a test double), citations grounded."""

from __future__ import annotations

from pydantic import AnyHttpUrl

from core.config import BudgetSettings, LLMEndpoint, LLMSettings, load_settings
from core.models import AppStatus, Bounds, Query, SubTaskStatus, UIElement
from droidretriever.testing import DrawnCapture, OpenAIStub, ScriptedReply
from inference.perception import count_tokens
from tasks.synthesis.evidence import FolderStore
from tasks.synthesis.llm_writer import writer_for
from tasks.synthesis.render import render_report_markdown
from tasks.synthesis.report import FAILED_MODEL_NAME, synthesize_report

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
    # The last line's citations are not grounded: that key point is marked, and said above.
    assert report.markdown.endswith("delivers a free toy [cap-eleme-9(toy)]. *(uncited)*")
    assert report.markdown.startswith("> **1 of 3 key points carry no grounded citation")
    assert report.warnings and "1 of 3 key points" in report.warnings[0]
    assert 'id="cap-meituan-1"' in prompt and "Big Mac Meal ¥26.0 Sold 2k+" in prompt
    assert writer.usage.prompt == 900 and writer.usage.completion == 120
    assert report.tokens.roles["synthesizer"].prompt == 900
    assert [c.grounded for c in report.citations] == [True, True, True, False, False]
    assert report.citations[1].box == eleme.boxes["Big Mac Meal ¥26.0 Sold 2k+"]
    assert report.citations[0].crop_key is not None
    # A wrong number is not grounded on a near-identical string.
    assert report.citations[3].quote == "¥24.5" and report.citations[3].box is None


def test_model_failure_falls_back_to_an_extractive_report_that_says_so(
        meituan: DrawnCapture, store: FolderStore) -> None:
    with OpenAIStub() as stub:
        stub.enqueue(ScriptedReply(status=500, content="CUDA out of memory"), ScriptedReply(status=500))
        writer = writer_for(settings_for(stub))
        report = synthesize_report(run_id="run-fail", query=QUERY, captures=[meituan.capture],
                                   apps=APPS[:1], store=store, threshold=0.8, writer=writer)
    assert report.synthesizer == FAILED_MODEL_NAME
    assert "the synthesizer's model failed: " in report.markdown
    assert "no language model is configured" not in report.markdown
    assert "¥25.5" in report.markdown and all(c.grounded for c in report.citations)
    assert [(t.role, t.count) for t in report.fallbacks] == [("synthesizer", 1)]
    assert report.tokens.roles["synthesizer"].failed == 2  # both requests counted
    assert "the synthesizer's model failed once" in render_report_markdown(report)


def test_a_refused_request_keeps_the_captures_with_its_fix(meituan: DrawnCapture, store: FolderStore) -> None:
    """Issue 31 item 3: a 4xx at the end of a run is no reason to lose the run's captures."""
    with OpenAIStub() as stub:
        stub.enqueue(ScriptedReply(status=404, content="The model `x` does not exist."))
        report = synthesize_report(run_id="run-404", query=QUERY, captures=[meituan.capture],
                                   apps=APPS[:1], store=store, threshold=0.8, writer=writer_for(settings_for(stub)))
    assert report.synthesizer == FAILED_MODEL_NAME and "¥25.5" in report.markdown
    assert "refused the request with HTTP 404" in report.markdown and "LLM__SYNTHESIZER__MODEL" in report.markdown
    assert report.tokens.roles["synthesizer"].failed == 1


def test_a_cut_off_report_is_not_published(meituan: DrawnCapture, store: FolderStore) -> None:
    """Table row 7: an answer stopped at max_tokens (twice) falls back, saying why."""
    cut = "| App | Big Mac Meal |\n|---|---|\n| Meituan | ¥25.5 [cap-meituan-1(¥25"
    with OpenAIStub() as stub:
        stub.enqueue(ScriptedReply(content=cut, finish_reason="length"),
                     ScriptedReply(content=cut + ".5)] |\n| Ele.me |", finish_reason="length"))
        writer = writer_for(settings_for(stub))
        report = synthesize_report(run_id="run-cut", query=QUERY, captures=[meituan.capture],
                                   apps=APPS[:1], store=store, threshold=0.8, writer=writer)
        limits = [r["max_tokens"] for r in stub.requests]
    assert limits == [4096, 8192]
    assert report.synthesizer == FAILED_MODEL_NAME and "cut off at 8192 tokens" in report.markdown
    assert report.fallbacks[0].role == "synthesizer"


def test_a_report_with_no_citation_falls_back_with_a_banner(meituan: DrawnCapture, store: FolderStore) -> None:
    """Table row 8: uncited claims are not published as the answer."""
    uncited = "Meituan sells the Big Mac Meal for ¥19.\n\nIt is the cheapest option in town."
    with OpenAIStub() as stub:
        stub.enqueue(uncited)
        report = synthesize_report(run_id="run-uncited", query=QUERY, captures=[meituan.capture],
                                   apps=APPS[:1], store=store, threshold=0.8,
                                   writer=writer_for(settings_for(stub)))
    assert report.synthesizer == FAILED_MODEL_NAME
    assert "no citation grounded on the captures" in report.markdown
    assert "¥19" not in report.markdown and "¥25.5" in report.markdown


def test_the_synthesizer_input_keeps_the_relevant_lines_within_its_budget(
        meituan: DrawnCapture, store: FolderStore) -> None:
    with OpenAIStub() as stub:
        stub.enqueue(f"Big Mac Meal costs ¥25.5 [{meituan.capture.id}(¥25.5)]")
        settings = settings_for(stub).model_copy(update={
            "budgets": BudgetSettings(synthesis_input_tokens=500)})
        padded = meituan.capture.model_copy(update={"elements": (*meituan.capture.elements, *(
            UIElement(id=f"pad{i}", text=f"Recommended shop number {i} with a long description of noodles",
                      bounds=Bounds(left=0, top=3000 + 40 * i, right=600, bottom=3030 + 40 * i))
            for i in range(200)))})
        synthesize_report(run_id="run-budget", query=QUERY, captures=[padded], apps=APPS[:1], store=store,
                          threshold=0.8, writer=writer_for(settings), search_terms=("Big Mac",))
        prompt = stub.requests[0]["messages"][1]["content"]
    assert count_tokens(prompt) < 900
    assert "Big Mac Meal" in prompt and "¥25.5" in prompt
    assert "less relevant lines left out" in prompt
