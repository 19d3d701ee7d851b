"""A record list reported record by record, every field kept, the question's filters applied and said.

The page is the virtual phones' trip list, recorded by record_captures.py from a
Study 1 task's scripted path; the questions are written here, not a suite's.
"""

from __future__ import annotations

import io
import re
from datetime import date

from PIL import Image

from core.models import AppStatus, Bounds, Capture, Query, SubTaskStatus, UIElement
from droidretriever.testing import Card, Line, draw_capture
from storage import FakeObjectStore
from tasks.synthesis.extractive import EXTRACTIVE_NAME, write_extractive
from tasks.synthesis.report import build_report, synthesize_report
from tests.tasks.synthesis.record_captures import CAPTURES_DIR

TRIPS = "s1_07_taxi_trips.com.sdu.didi.psnger.json"


def _trips() -> tuple[Capture, list[AppStatus]]:
    capture = Capture.model_validate_json((CAPTURES_DIR / TRIPS).read_text("utf-8"))
    return capture, [AppStatus(app_label="DiDi", package=capture.package, status=SubTaskStatus.COMPLETED)]


def _record_lines(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith(("- 20", "| 20", "- **20"))]


def test_every_record_with_every_field_when_no_filter() -> None:
    capture, apps = _trips()
    written = write_extractive(Query(text="Show my DiDi trips"), [capture], apps)
    rows = _record_lines(written.markdown)
    assert len(rows) == 16  # every trip on the stitched page, the seam's cut copy once
    assert written.page_dumps == ()  # records are an answer, not a dump
    first = rows[0]
    for field in ("2024-10-08 09:12", "起点 徐家汇地铁站", "终点 漕河泾开发区", "¥17.40"):
        assert field in first


def test_a_price_range_and_a_month_range_are_applied_and_said() -> None:
    capture, apps = _trips()
    query = Query(text="My rides between May and August that cost 15-20 yuan")
    written = write_extractive(query, [capture], apps)
    rows = _record_lines(written.markdown)
    assert [r.split(" · ")[0] for r in rows] == ["- 2024-08-21 22:07", "- 2024-07-03 19:15", "- 2024-05-18 08:42"]
    assert "applied: price 15-20 yuan; dates: between may and august" in written.markdown
    report = build_report(run_id="run-records", query=query, markdown=written.markdown, captures=[capture],
                          apps=apps, synthesizer=EXTRACTIVE_NAME, threshold=0.8)
    assert report.citations and all(c.grounded for c in report.citations)


def test_last_month_counts_from_the_phones_date_in_the_report() -> None:
    capture, apps = _trips()
    capture = capture.model_copy(update={"phone_date": date(2024, 9, 15)})  # as the capture step reads it
    query = Query(text="What did my rides cost last month?")
    store = FakeObjectStore()  # the capture's image, blank here: the highlight crops cut it
    image = io.BytesIO()
    Image.new("RGB", (capture.width, capture.height), "white").save(image, "PNG")
    store.put_bytes(capture.image_key, image.getvalue(), "image/png")
    report = synthesize_report(run_id="run-last-month", query=query, captures=[capture], apps=apps,
                               store=store, threshold=0.8)
    rows = _record_lines(report.markdown)
    assert [r.split(" · ")[0] for r in rows] == ["- 2024-08-21 22:07", "- 2024-08-02 18:50"]
    assert "dates: last month (2024-08-01 to 2024-08-31, by the phone's date)" in report.markdown


def test_a_month_range_across_a_new_year_ends_at_the_latest_such_month_by_the_phones_date() -> None:
    capture, apps = _trips()
    written = write_extractive(Query(text="My rides from September to April"), [capture], apps,
                               today=date(2025, 5, 10))
    dates = [r.split(" · ")[0][2:12] for r in _record_lines(written.markdown)]
    assert dates == ["2024-10-08", "2024-09-21", "2024-09-02"]
    assert "(2024-09-01 to 2025-04-30)" in written.markdown


def test_with_a_filter_the_records_naming_the_search_term_are_the_answer() -> None:
    capture, apps = _trips()
    everything = _record_lines(write_extractive(Query(text="Show my DiDi trips"), [capture], apps).markdown)
    to_park = [r for r in everything if "漕河泾" in r]
    assert 0 < len(to_park) < len(everything)
    written = write_extractive(Query(text="Which of my rides in 2024 went to 漕河泾?"), [capture], apps,
                               search_terms=("漕河泾",), today=date(2024, 10, 20))
    rows = _record_lines(written.markdown)
    assert [r.split(" [")[0] for r in rows] == [r.split(" [")[0] for r in to_park]
    assert "applied: naming '漕河泾'; dates: in 2024" in written.markdown


def test_the_cheapest_n_as_a_table_and_names_only() -> None:
    capture, apps = _trips()
    table = write_extractive(Query(text="我的行程里价格最低的2个,做成表格"), [capture], apps).markdown
    rows = _record_lines(table)
    assert len(rows) == 2 and "¥12.90" in rows[0] and "¥14.20" in rows[1]
    assert "cheapest first; the first 2" in table
    names = write_extractive(Query(text="rides in the evening, only the names"), [capture], apps).markdown
    rows = _record_lines(names)
    assert rows and all("¥" not in row.split("[")[0] for row in rows)  # names only, no fares
    assert "time of day: in the evening" in names


def _results_page() -> tuple[Capture, list[AppStatus]]:
    """A search results page: its title (the term searched for), then products with prices whose
    names share no word with the question (another language, other words)."""
    rows = [("Desk lamp", 60, 100), ("Nordic LED light, warm white", 300, 120),
            ("¥129.00", 360, 60), ("Clip-on reading light", 600, 120), ("¥39.90", 660, 60),
            ("Architect light, metal arm", 900, 120), ("¥259.00", 960, 60)]
    elements = tuple(UIElement(id=f"e{i}", text=text, bounds=Bounds(left=40, top=top, right=1000, bottom=top + h))
                     for i, (text, top, h) in enumerate(rows))
    capture = Capture(id="shop-1-c1", run_id="run-1", subtask_id="shop-1", package="com.example.shop",
                      image_key="k", width=1080, height=2340, elements=elements, title="Desk lamp")
    return capture, [AppStatus(app_label="Shop", package=capture.package, status=SubTaskStatus.FAILED)]


def test_a_listed_page_is_shaped_by_the_question_even_when_its_app_failed() -> None:
    capture, apps = _results_page()
    cheapest = write_extractive(Query(text="What's the cheapest desk lamp? Just the cheapest one."),
                                [capture], apps).markdown
    listed = [line for line in cheapest.splitlines() if line.startswith("- ")]
    assert len(listed) == 1 and "Clip-on reading light" in listed[0] and "¥39.90" in listed[0], cheapest
    assert "applied: cheapest first; the first 1" in cheapest
    plain = write_extractive(Query(text="Show me desk lamps"), [capture], apps).markdown
    assert sum(line.startswith("- ") for line in plain.splitlines()) == 3, plain  # all, as shown
    table = write_extractive(Query(text="Desk lamps under ¥200, as a table"), [capture], apps).markdown
    rows = [line for line in table.splitlines() if line.startswith("| ") and "¥" in line]
    assert len(rows) == 2 and "price ¥129.00" in rows[0] and "price ¥39.90" in rows[1], table


def test_a_card_named_without_its_values_is_reported_with_them() -> None:
    """A dish card "NAME | 月售N · 好评率P | ¥X" is named without its sales and price; asked for
    in one sentence, its line still states both."""
    dishes = ["农家小炒肉 | 月售1200 · 好评率95% | ¥28.0", "梅菜扣肉 | 月售800 · 好评率92% | ¥32.0",
              "番茄炒蛋 | 月售2000 · 好评率98% | ¥18.0"]
    header = Card(60, (Line("老乡鸡 (徐汇店)", 60, 80, 44), Line("评分4.7 · 月售5600 · 约25分钟 · 距离1.1km", 60, 150, 32)),
                  height=200)
    cards = [header, *(Card(300 + 200 * i, (Line(text, 60, 330 + 200 * i, 36),), height=160)
                       for i, text in enumerate(dishes))]
    drawn = draw_capture("cap-store-1", "com.example.food", cards, height=1200)
    apps = [AppStatus(app_label="Food", package="com.example.food", status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="老乡鸡的农家小炒肉多少钱、月售多少？一句话告诉我。"),
                               [drawn.capture], apps)
    line = next(row for row in written.markdown.splitlines() if row.startswith("- 农家小炒肉"))
    stated = re.sub(r"\[[^\]]*\]", "", line)  # the claim without its citations
    assert "月售1200" in stated and "¥28.0" in stated, written.markdown


def test_a_card_whose_name_lost_a_value_word_is_still_a_record() -> None:
    # At the seam of a stitched page a card shows twice, cut and whole. "优惠券" (a coupon) is read
    # as a value and taken out of the card's name, which then has no "|" between its texts: it is
    # still a card, reported with its fields once. Before, it was dropped from the records.
    cards = [("高铁餐食兑换券", 2000), ("站内咖啡兑换券", 1500), ("行李寄存优惠券", 800), ("定制水杯", 5200)]
    elements = [UIElement(id="title", text="积分商城", bounds=Bounds(left=44, top=101, right=1036, bottom=185))]
    elements += [UIElement(id=f"card{n}", text=f"{name} | {points} 积分", clickable=True,
                           bounds=Bounds(left=44, top=300 + 215 * n, right=1036, bottom=493 + 215 * n))
                 for n, (name, points) in enumerate(cards)]
    elements.append(UIElement(id="cut", text="行李寄存优惠券 | 800 积分", clickable=True,
                              bounds=Bounds(left=44, top=730, right=1036, bottom=832)))
    capture = Capture(id="cap-mall-1", run_id="run-mall", subtask_id="com.example.rail-1", package="com.example.rail",
                      image_key="runs/run-mall/captures/cap-mall-1.png", width=1080, height=2340,
                      elements=tuple(elements), title="积分商城")
    apps = [AppStatus(app_label="Rail", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Rail 积分商城能换些什么，各要多少积分？列个表。"), [capture], apps)
    listed = [re.sub(r"\[[^\]]*\]", "", line) for line in written.markdown.splitlines()
              if line.startswith("| ") and "积分" in line]
    assert len(listed) == 4, written.markdown
    coupon = next(line for line in listed if "行李寄存优惠券" in line)
    assert "800 积分" in coupon and coupon.count("行李寄存优惠券") == 1, coupon


def test_the_first_row_under_a_paragraph_is_a_record_of_its_own() -> None:
    # A playlist's page: its description (a tall paragraph), then its songs, each a title over its
    # artist. The gap under the paragraph is wider than the gap inside a song, but narrow for a
    # paragraph's height; measured against the shorter line, the first song is a record. Before, it
    # joined the paragraph and was left out.
    texts = [("Songs of a decade: from the first single to the latest world tour, in one playlist.", 1021, 114)]
    for n, song in enumerate(["Opening Night", "Second Wind", "Third Act"]):
        texts += [(song, 1163 + 149 * n, 66), ("The Band", 1240 + 149 * n, 50)]
    elements = tuple(UIElement(id=f"t{n}", text=text, bounds=Bounds(left=44, top=top, right=1036, bottom=top + height))
                     for n, (text, top, height) in enumerate(texts))
    capture = Capture(id="cap-pl-1", run_id="run-pl", subtask_id="com.example.music-1", package="com.example.music",
                      image_key="runs/run-pl/captures/cap-pl-1.png", width=1080, height=2340, elements=elements,
                      title="Decade")
    apps = [AppStatus(app_label="Music", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which songs are on the Decade playlist in Music? As a table."), [capture], apps)
    rows = [line for line in written.markdown.splitlines() if line.startswith("| ") and "The Band" in line]
    assert [r.split(" ")[1] for r in rows] == ["Opening", "Second", "Third"], written.markdown


def _cards_page(capture_id: str, rows: list[tuple[str, str]], headings: dict[int, str]) -> Capture:
    """A page of clickable cards "NAME | DETAIL", with plain-text headings before the cards at the
    given indexes."""
    elements: list[UIElement] = []
    top = 200
    for index, (name, detail) in enumerate(rows):
        if index in headings:
            elements.append(UIElement(id=f"h{index}", text=headings[index],
                                      bounds=Bounds(left=44, top=top, right=700, bottom=top + 70)))
            top += 100
        elements.append(UIElement(id=f"card{index}", text=f"{name} | {detail}", clickable=True,
                                  bounds=Bounds(left=44, top=top, right=1036, bottom=top + 160)))
        top += 190
    return Capture(id=capture_id, run_id="run-lists", subtask_id="com.example.lists-1", package="com.example.lists",
                   image_key=f"runs/run-lists/captures/{capture_id}.png", width=1080, height=top + 200,
                   elements=tuple(elements), title="Lists")


def _stated(markdown: str) -> list[str]:
    return [re.sub(r"\[[^\]]*\]", "", line).strip() for line in markdown.splitlines() if line.startswith("- ")]


def test_a_count_the_question_names_filters_the_records_with_magnitudes_read() -> None:
    channels = [("Cooking with Ana", "2.4M subscribers · recipes"), ("Daily Tech", "850K subscribers"),
                ("Garden Hour", "1,200,000 subscribers"), ("Tiny Homes", "95K subscribers")]
    capture = _cards_page("cap-channels-1", channels, {})
    apps = [AppStatus(app_label="Lists", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which channels have more than a million subscribers?"),
                               [capture], apps).markdown
    stated = _stated(written)
    assert [line.split(" · ")[0] for line in stated] == ["- Cooking with Ana", "- Garden Hour"], written
    assert "applied: count more than a million subscribers" in written
    bloggers = [("博主甲", "粉丝 120万"), ("博主乙", "粉丝 80万"), ("博主丙", "3.5w粉丝"), ("博主丁", "粉丝 2.1万")]
    chinese = _cards_page("cap-bloggers-1", bloggers, {})
    written = write_extractive(Query(text="Lists上粉丝超过10万的博主有哪些？"), [chinese], apps).markdown
    assert [line.split(" · ")[0] for line in _stated(written)] == ["- 博主甲", "- 博主乙"], written


def test_the_record_at_a_place_on_the_list_under_the_heading_the_question_names() -> None:
    """Two charts on one page, each ranked 1 to 4: "number 3 on the classics chart" is one book."""
    new = [(f"{n}. New book {n}", f"{4.0 + n / 10}分") for n in range(1, 5)]
    classics = [(f"{n}. Classic {n}", f"{9.0 - n / 10}分") for n in range(1, 5)]
    capture = _cards_page("cap-charts-1", new + classics, {0: "本周新书榜", 4: "经典必读榜"})
    apps = [AppStatus(app_label="Lists", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Lists 经典必读榜第3名是哪本书？"), [capture], apps).markdown
    assert [line.split(" · ")[0] for line in _stated(written)] == ["- 3. Classic 3"], written
    assert "under '经典必读榜'; number 3 by the rank shown" in written
    # Without ranks on the records, the place in the order shown.
    plain = _cards_page("cap-charts-2", [(name.split(". ")[1], detail) for name, detail in classics], {})
    written = write_extractive(Query(text="Which is the 2nd book on the Lists chart?"), [plain], apps).markdown
    assert [line.split(" · ")[0] for line in _stated(written)] == ["- Classic 2"], written


def test_the_records_in_the_state_the_question_asks_for() -> None:
    permissions = [("Camera", "Denied"), ("Contacts", "Allowed"), ("Phone", "Not allowed"),
                   ("Storage", "Allowed only while in use")]
    capture = _cards_page("cap-permissions-1", permissions, {})
    apps = [AppStatus(app_label="Lists", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which permissions of Lists are not allowed?"), [capture], apps).markdown
    assert [line.split(" · ")[0] for line in _stated(written)] == ["- Camera", "- Phone"], written
    assert "state: not allowed (denied)" in written
    orders = [("订单 1042", "待付款 · ¥56.00"), ("订单 1041", "已完成 · ¥23.50"), ("订单 1039", "待付款 · ¥12.00")]
    chinese = _cards_page("cap-orders-1", orders, {})
    written = write_extractive(Query(text="Lists 里哪些订单还没付款？"), [chinese], apps).markdown
    assert [line.split(" · ")[0] for line in _stated(written)] == ["- 订单 1042", "- 订单 1039"], written


def test_what_the_lists_of_a_page_name_most_often_with_every_list_naming_it() -> None:
    """Two charts share books at the same rank: each listing is a record of its own (before, the
    same fields anywhere on the page were one record), and the book on both charts comes first."""
    weekly = [("1. Tide Lines (2019)", "8.9分"), ("2. Paper Moons (2021)", "8.7分"), ("3. The Quiet Field (2015)", "8.5分")]
    classic = [("1. Tide Lines (2019)", "8.9分"), ("2. Iron Orchard (1988)", "9.1分"), ("3. Paper Moons (2021)", "8.7分")]
    capture = _cards_page("cap-charts-3", weekly + classic, {0: "Weekly chart", 3: "All-time classics"})
    apps = [AppStatus(app_label="Lists", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which 2 books appear most often across the Lists charts?"),
                               [capture], apps).markdown
    assert "lists 6 records; applied: most often listed first, the first 2" in written, written
    stated = _stated(written)
    assert [line.split(" · ")[0] for line in stated] == ["- **Tide Lines (2019)**", "- **Paper Moons (2021)**"]
    assert "listed 2 times: under Weekly chart" in stated[0] and "under All-time classics" in stated[0]
    assert "[cap-charts-3(Weekly chart)]" in written and "[cap-charts-3(All-time classics)]" in written
