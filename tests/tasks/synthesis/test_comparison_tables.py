"""Comparison tables on the virtual phones' real pages (recorded by tests/tasks/synthesis/record_captures.py).

The two Study 2 comparison tasks: the Big Mac on McDonald's own app and two
delivery apps' store pages, and the VIVO X100 Ultra on two shops' product
pages. The scoring points are the task files' (suites/study2).
"""

from __future__ import annotations

import pytest

from core.models import AppStatus, Capture, Citation, Query, Report, SubTaskStatus
from suites import SuiteTask, load_suite
from tasks.synthesis.citations import parse_citations
from tasks.synthesis.extractive import EXTRACTIVE_NAME, write_extractive, write_extractive_markdown
from tasks.synthesis.items import detect_items, read_query_terms
from tasks.synthesis.offers import read_attribute_row
from tasks.synthesis.report import build_report
from tasks.synthesis.values import MeasureKind, read_measures
from tests.tasks.synthesis.record_captures import CAPTURES_DIR
from tests.tasks.synthesis.test_extractive import table_rows

MCDONALDS, MEITUAN, ELEME = "com.mcdonalds.gma.cn", "com.sankuai.meituan", "me.ele"
TAOBAO, JD = "com.taobao.taobao", "com.jingdong.app.mall"
LABELS = {MCDONALDS: "McDonald's", MEITUAN: "Meituan", ELEME: "Ele.me", TAOBAO: "Taobao", JD: "JD"}


def _task(task_id: str) -> SuiteTask:
    return next(t for t in load_suite() if t.id == task_id)


def _captures(task_id: str, packages: tuple[str, ...]) -> list[Capture]:
    return [Capture.model_validate_json((CAPTURES_DIR / f"{task_id}.{p}.json").read_text("utf-8"))
            for p in packages]


def _report(query: str, captures: list[Capture]) -> Report:
    apps = [AppStatus(app_label=LABELS[c.package], package=c.package, status=SubTaskStatus.COMPLETED)
            for c in captures]
    markdown = write_extractive_markdown(Query(text=query), captures, apps)
    return build_report(run_id="run-tables", query=Query(text=query), markdown=markdown,
                        captures=captures, apps=apps, synthesizer=EXTRACTIVE_NAME, threshold=0.8)


def _citation_in(report: Report, cell: str) -> Citation:
    """The grounded citation of a table cell; its box is the element holding the cell's value."""
    marks = parse_citations(cell)
    assert marks, f"no citation in {cell!r}"
    ref = marks[0].refs[0]
    citation = next(c for c in report.citations if c.capture_id == ref.capture_id and c.quote == ref.quote)
    assert citation.grounded and citation.box is not None, citation
    return citation


def _element_text(captures: list[Capture], citation: Citation) -> str:
    capture = next(c for c in captures if c.id == citation.capture_id)
    return next(e.label for e in capture.elements if e.id == citation.element_id)


def test_big_mac_table_gives_every_app_its_price_and_the_stores_terms() -> None:
    task = _task("s2_multi_05_big_mac")
    captures = _captures(task.id, (MCDONALDS, MEITUAN, ELEME))
    report = _report(task.query, captures)
    rows = table_rows(report.markdown)
    header = next(line for line in report.markdown.splitlines() if line.startswith("| |"))
    assert header == "| | McDonald's | Meituan | Ele.me |"

    # Every app's price, McDonald's own menu included, each cited on the element showing it.
    for cell, price in zip(rows["Price"], ("¥24.0", "¥25.5", "¥22.9"), strict=True):
        assert price in task.scoring_points
        assert cell.startswith(price), rows["Price"]
        assert price in _element_text(captures, _citation_in(report, cell))
    # The dish's own sales; the store's delivery time, rating and offers, marked as the store's.
    assert rows["Sales"][1].startswith("月售3200") and rows["Sales"][2].startswith("月售2856")
    assert rows["Delivery time"][1].startswith("28分钟") and rows["Delivery time"][1].endswith("†")
    assert "约28分钟送达" in _element_text(captures, _citation_in(report, rows["Delivery time"][1]))
    assert rows["Rating"][1].startswith("评分 4.8") and rows["Rating"][2].startswith("评分4.7")
    assert rows["Promotions"][1].startswith("满30减5 · 巨无霸第二份半价")
    assert rows["Promotions"][2].startswith("满25减4 · 首单立减3元 · 吃货卡红包¥5")
    assert rows["Sales"][0] == "not shown"  # McDonald's own menu shows no sales
    assert "Lowest price: Ele.me (¥22.9" in report.markdown
    assert "Highest rating: Meituan" in report.markdown
    assert "† Stated by the page the item is on" in report.markdown
    assert not report.unverified, report.unverified


def test_vivo_table_compares_price_gifts_payment_and_membership_discounts() -> None:
    task = _task("s2_multi_06_vivo_x100_ultra")
    captures = _captures(task.id, (TAOBAO, JD))
    report = _report(task.query, captures)
    rows = table_rows(report.markdown)

    expected = {  # row -> (Taobao, JD), as the task's scoring points print them
        "Price": ("¥6299.00", "¥6499.00"),
        "Bundled gifts": ("赠 原装保护壳 + 钢化膜 + 蓝牙耳机 TWS 3e",
                          "赠 vivo 原装80W闪充充电器 + 素皮保护壳 + 一年碎屏险"),
        "Payment discounts": ("支付宝支付立减¥30；花呗分期12期免息",
                              "京东支付随机立减最高¥50；工行信用卡支付满6000减200"),
        "Membership discounts": ("88VIP 专享95折，最高减¥300", "PLUS会员专享价再减¥100，可与满减叠加"),
    }
    for row, values in expected.items():
        for cell, value in zip(rows[row], values, strict=True):
            assert value in task.scoring_points
            assert cell.startswith(value), (row, cell)
            assert value in _element_text(captures, _citation_in(report, cell))
            assert not cell.endswith("†")  # the product's own page, not borrowed
    # The offers' own amounts (¥30 off, ¥100 off) are not taken for prices.
    assert "Lowest price: Taobao (¥6299.00" in report.markdown
    assert not report.unverified, report.unverified


def test_a_recommendation_on_another_products_page_borrows_none_of_its_offers() -> None:
    captures = _captures("s2_multi_06_vivo_x100_ultra", (TAOBAO, JD))
    # On JD's vivo page, OPPO Find X7 Ultra is a "看了又看" card at the bottom.
    report = _report("OPPO Find X7 Ultra 16GB+512GB price on Taobao or JD", captures)
    rows = table_rows(report.markdown)
    jd = list(LABELS[c.package] for c in captures).index("JD")
    assert "OPPO Find X7 Ultra" in rows["Item"][jd]
    assert rows["Price"][jd].startswith("¥6299.00")
    assert rows["Bundled gifts"][jd] == "not shown", rows["Bundled gifts"]


def test_a_detail_page_is_one_item_named_once() -> None:
    capture = _captures("s2_multi_05_big_mac", (MCDONALDS,))[0]
    items = detect_items(capture, read_query_terms("Big Mac"))
    big_mac = [i for i in items if "Big Mac" in i.name]
    assert len(big_mac) == 1  # top bar, photo and title name one item
    assert big_mac[0].page and big_mac[0].value(MeasureKind.PRICE) is not None
    assert big_mac[0].value(MeasureKind.PRICE).text == "¥24.0"  # type: ignore[union-attr]


@pytest.mark.parametrize(("line", "kind", "text"), [
    ("赠品  赠 原装保护壳 + 钢化膜", MeasureKind.GIFT, "赠 原装保护壳 + 钢化膜"),
    ("支付优惠  花呗分期12期免息", MeasureKind.PAYMENT_DISCOUNT, "花呗分期12期免息"),
    ("会员  PLUS会员专享价再减¥100", MeasureKind.MEMBER_DISCOUNT, "PLUS会员专享价再减¥100"),
    ("优惠活动: 满25减4 · 首单立减3元", MeasureKind.PROMOTION, "满25减4 · 首单立减3元"),
    ("Gift: free case", MeasureKind.GIFT, "free case"),
    ("已选  白月光 16GB+512GB", None, "白月光 16GB+512GB"),
])
def test_labelled_rows(line: str, kind: MeasureKind | None, text: str) -> None:
    row = read_attribute_row(line)
    assert row is not None and row.kind is kind and row.text == text


@pytest.mark.parametrize("line", ["巨无霸 Big Mac | 月售3200 | ¥25.5", "评分 4.8 · 月售 9000",
                                  "Big Mac: ¥24", "麦当劳 (漕溪北路店)"])
def test_lines_that_are_not_offer_rows(line: str) -> None:
    row = read_attribute_row(line)
    assert row is None or row.kind is None


def test_shop_sales_and_delivery_fee_words() -> None:
    assert [(m.kind, m.value) for m in read_measures("vivo官方旗舰店 · 月销2万+")] == [
        (MeasureKind.SALES, 20000.0)]
    assert [(m.kind, m.value) for m in read_measures("起送¥20 · 配送¥3.0")] == [
        (MeasureKind.MIN_ORDER, 20.0), (MeasureKind.DELIVERY_FEE, 3.0)]


def test_a_page_titled_by_the_question_is_listed_row_by_row_with_grounded_citations() -> None:
    """Meituan's permissions: the rows share no word with the question; the page's title does."""
    task = _task("s2_single_01_meituan_permissions")
    captures = _captures(task.id, ("com.android.settings",))
    apps = [AppStatus(app_label="Settings", package="com.android.settings",
                      status=SubTaskStatus.COMPLETED)]
    query = Query(text="Which permissions does Meituan have?")
    markdown = write_extractive_markdown(query, captures, apps)
    report = build_report(run_id="run-listing", query=query, markdown=markdown, captures=captures,
                          apps=apps, synthesizer=EXTRACTIVE_NAME, threshold=0.8)

    listing = report.markdown.split("lists (", 1)[1]
    rows = [line for line in listing.splitlines() if line.startswith("- ")]
    for point in task.scoring_points:  # the 9 permissions and both statuses
        assert any(point in row for row in rows), f"{point!r} is not listed:\n{listing}"
    assert all(parse_citations(row) for row in rows)
    assert report.citations and all(c.grounded for c in report.citations)
    assert "Navigate up" not in listing  # above the title: not the page's content
    assert write_extractive(query, captures, apps).page_dumps == ()  # a page the question names


def test_a_page_titled_by_a_concept_the_question_asks_for_is_its_answer_in_reading_order() -> None:
    """An English question, a Chinese article: "community guidelines" and "社区公约" share no word,
    the lexicon's guidelines concept names both. Without a model the page's lines are the answer,
    cited, in the page's order: an answer to what was asked, not a copy of a page."""
    task = _task("s2_single_02_bilibili_guidelines")
    captures = _captures(task.id, ("tv.danmaku.bili",))
    apps = [AppStatus(app_label="Bilibili", package="tv.danmaku.bili", status=SubTaskStatus.COMPLETED)]
    query = Query(text="What are Bilibili's community guidelines?")
    written = write_extractive(query, captures, apps)
    report = build_report(run_id="run-article", query=query, markdown=written.markdown,
                          captures=captures, apps=apps, synthesizer=EXTRACTIVE_NAME, threshold=0.8,
                          page_dumps=written.page_dumps)

    assert "No line on the captured pages matches the question's words" not in report.markdown
    assert written.page_dumps == ()
    shown = report.markdown.split("top to bottom):", 1)[1]
    rows = [line.strip() for line in shown.splitlines() if line.strip().startswith("- ")]
    for point in task.scoring_points:  # the three principles and what each asks
        assert any(point in row for row in rows), f"{point!r} is not listed:\n{shown}"
    assert all(parse_citations(row) for row in rows)
    assert shown.index("认真创作") < shown.index("友好交流") < shown.index("拥抱创新")
    assert report.citations and all(c.grounded for c in report.citations)
    assert "Delivery time" not in report.markdown  # "阅读时长约 6 分钟" is a reading time


def test_a_policy_page_is_listed_whole_its_rules_with_their_values_in_place() -> None:
    """"Refund policy" in English, "退改签说明" on the page: its rules (values in their sentences,
    "最低按2元计收") and the questions under them, not only the five question-and-answer cards
    that read as records."""
    task = _task("s1_03_12306_refund")
    captures = _captures(task.id, ("com.MobileTicket",))
    apps = [AppStatus(app_label="12306", package="com.MobileTicket", status=SubTaskStatus.COMPLETED)]
    query = Query(text=task.query)
    written = write_extractive(query, captures, apps)
    report = build_report(run_id="run-policy", query=query, markdown=written.markdown, captures=captures,
                          apps=apps, synthesizer=EXTRACTIVE_NAME, threshold=0.8, page_dumps=written.page_dumps)

    assert written.page_dumps == ()
    shown = report.markdown.split("top to bottom):", 1)[1]
    rows = [line.strip() for line in shown.splitlines() if line.strip().startswith("- ")]
    for point in task.scoring_points:  # the eight rules
        assert any(point in row for row in rows), f"{point!r} is not listed:\n{shown}"
    assert all(parse_citations(row) for row in rows)
    assert report.citations and all(c.grounded for c in report.citations)


def test_a_comparison_keeps_the_rows_the_question_names() -> None:
    # No value reader knows battery capacity or weight: the specification rows the question
    # names are reported as the page shows them, label and value cited.
    captures = _captures("s2_multi_06_vivo_x100_ultra", (JD, TAOBAO))
    query = "vivo X100 Ultra 在京东和淘宝的价格、电池容量和重量对比"
    report = _report(query, captures)
    jd = report.markdown.split("## JD", 1)[1].split("## ", 1)[0]
    assert "**电池容量**: 5500mAh" in jd and "**机身重量**: 约229g" in jd
    cited = {c.quote for c in report.citations if c.grounded}
    assert {"电池容量", "5500mAh", "机身重量", "约229g"} <= cited
    plain = _report("vivo X100 Ultra 在京东和淘宝的价格对比", captures).markdown
    assert "电池容量" not in plain  # rows the question does not name stay out


def test_a_question_naming_a_section_gets_every_row_under_its_heading() -> None:
    # "specs" names no row; it names the section headed 规格参数 (the lexicon's specifications), so
    # every labelled row under that heading is reported, label and value cited.
    captures = _captures("s2_multi_06_vivo_x100_ultra", (JD, TAOBAO))
    report = _report("Compare the VIVO X100 Ultra's specs on JD and Taobao.", captures)
    jd = report.markdown.split("## JD", 1)[1].split("## ", 1)[0]
    assert "**电池容量**: 5500mAh" in jd and "**机身重量**: 约229g" in jd
    cited = {c.quote for c in report.citations if c.grounded}
    assert {"电池容量", "5500mAh"} <= cited
    plain = _report("Compare the VIVO X100 Ultra's price on JD and Taobao.", captures).markdown
    assert "电池容量" not in plain  # no section named: its rows stay out


def test_an_english_question_names_chinese_rows_through_the_lexicon() -> None:
    # "How heavy", "battery": no word of the question is on the Chinese rows; the concepts it names
    # (weight, battery) are, in Chinese, so those rows are reported and no others. Before, only
    # the question's own words (or Chinese bigrams) named a row.
    captures = _captures("s2_multi_06_vivo_x100_ultra", (JD, TAOBAO))
    report = _report("How heavy is the vivo X100 Ultra on JD and Taobao, and how big is its battery?", captures)
    jd = report.markdown.split("## JD", 1)[1].split("## ", 1)[0]
    assert "**电池容量**: 5500mAh" in jd and "**机身重量**: 约229g" in jd, jd
    assert "6.78英寸" not in jd and "IP68" not in jd  # the rows it does not name: screen, water
