"""An app's section of the extractive report is written by the first of an ordered table of named
strategies, and the report says which one wrote each app's section."""

from __future__ import annotations

from core.models import AppStatus, Capture, Query, SubTaskStatus
from tasks.synthesis.extractive import write_extractive
from tasks.synthesis.sections import STRATEGIES
from tests.support.pages import titled_page
from tests.tasks.synthesis.record_captures import CAPTURES_DIR

BIG_MAC_PAGE = "s2_multi_05_big_mac.com.mcdonalds.gma.cn.json"  # a product page in a burger chain's app


def _app(capture: Capture | None = None) -> list[AppStatus]:
    return [AppStatus(app_label="QA", package=capture.package if capture else "com.example.qa",
                      status=SubTaskStatus.COMPLETED)]


def test_the_strategies_are_tried_in_the_old_order_of_the_branches() -> None:
    assert [s.name for s in STRATEGIES] == [
        "no_capture", "most_frequent", "records", "best_matches", "page_subject", "page_dump"]
    assert all(s.write.__doc__ for s in STRATEGIES), "each strategy says which kind of capture it is for"


def test_each_section_records_the_strategy_that_wrote_it() -> None:
    nothing = write_extractive(Query(text="Which houseplants survive in a dark room?"), [], _app())
    assert nothing.decided_by == (("QA", "no_capture"),)

    question = titled_page("Question", ("Which houseplants survive in a dark room?", 253, 60),
                     ("Garden Guru | Plant writer | Snake plants and ZZ plants do best.", 877, 160),
                     ("Mia | Florist | Pothos, with a lamp nearby.", 1100, 160))
    answered = write_extractive(Query(text="Which houseplants survive in a dark room?"), [question], _app(question))
    assert answered.decided_by == (("QA", "best_matches"),)

    unrelated = titled_page("Weather", ("Sunny, 24 degrees", 253, 60), ("Wind 3 km/h from the west", 330, 60))
    dumped = write_extractive(Query(text="sushi platter"), [unrelated], _app(unrelated))
    assert dumped.decided_by == (("QA", "page_dump"),) and dumped.page_dumps

    product = Capture.model_validate_json((CAPTURES_DIR / BIG_MAC_PAGE).read_text("utf-8"))
    stated = write_extractive(Query(text="Which burger in this app has the most calories? Just that one."),
                              [product], _app(product))
    assert stated.decided_by == (("QA", "page_subject"),), stated.decided_by
