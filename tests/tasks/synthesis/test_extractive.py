"""Extractive synthesis of a Big-Mac-style comparison from two drawn captures."""

from __future__ import annotations

import re

from core.models import AppStatus, Capture, Query, SubTaskStatus
from droidretriever.testing import DrawnCapture
from tasks.synthesis.citations import parse_citations
from tasks.synthesis.evidence import FolderStore
from tasks.synthesis.extractive import EXTRACTIVE_NAME, write_extractive
from tasks.synthesis.items import detect_items, read_query_terms
from tasks.synthesis.records import find_records
from tasks.synthesis.report import publish_report, synthesize_report
from tasks.synthesis.values import MeasureKind, read_measures
from tests.support.pages import titled_page
from tests.tasks.synthesis.record_captures import CAPTURES_DIR

QUERY = Query(text="Is a Big Mac cheaper on Meituan or Ele.me?")
BIG_MAC_PAGE = "s2_multi_05_big_mac.com.mcdonalds.gma.cn.json"  # the product page in McDonald's app
APPS = (
    AppStatus(app_label="Meituan", package="com.sankuai.meituan", status=SubTaskStatus.COMPLETED),
    AppStatus(app_label="Ele.me", package="me.ele", status=SubTaskStatus.COMPLETED),
    AppStatus(app_label="McDonald's", package="com.mcdonalds.gma.cn",
              status=SubTaskStatus.NEEDS_USER, reason="the app asks to log in"),
)


def table_rows(markdown: str) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| |"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0]] = cells[1:]
    return rows


def test_measures_in_chinese_and_english() -> None:
    cases = {
        "Big Mac Meal ¥25.5 Sold 2k+": [(MeasureKind.PRICE, 25.5), (MeasureKind.SALES, 2000.0)],
        "月售 2000+": [(MeasureKind.SALES, 2000.0)],
        "30分钟 4.8分": [(MeasureKind.DELIVERY_TIME, 30.0), (MeasureKind.RATING, 4.8)],
        "配送费 ¥3 起送 ¥20": [(MeasureKind.DELIVERY_FEE, 3.0), (MeasureKind.MIN_ORDER, 20.0)],
        "VIVO X100 Ultra 6499元 2万+人付款": [(MeasureKind.PRICE, 6499.0), (MeasureKind.SALES, 20000.0)],
        "Rating 4.6 (1,234 reviews)": [(MeasureKind.RATING, 4.6), (MeasureKind.REVIEWS, 1234.0)],
        "满30减5": [(MeasureKind.PROMOTION, 5.0)],
        "Delivery 25-35 min · 1.2km": [(MeasureKind.DELIVERY_TIME, 35.0), (MeasureKind.DISTANCE, 1.2)],
        # Lengths of reading or watching are not delivery times.
        "生效日期：2025年3月1日 · 阅读时长约 6 分钟": [],
        "视频时长12分钟": [],
        "6 min read": [],
        # An upper-case M after a number counts millions; metres are "m", "km" either case.
        "1.2M followers · 800m away": [(MeasureKind.DISTANCE, 800.0)],
        "5KM": [(MeasureKind.DISTANCE, 5.0)],
    }
    for text, expected in cases.items():
        assert [(m.kind, m.value) for m in read_measures(text)] == expected, text


def test_comparison_table_has_each_apps_price_with_grounded_citations(
        meituan: DrawnCapture, eleme: DrawnCapture, store: FolderStore) -> None:
    captures = [meituan.capture, eleme.capture]
    report = synthesize_report(run_id="run-test", query=QUERY, captures=captures, apps=APPS,
                               store=store, threshold=0.8)
    assert report.synthesizer == EXTRACTIVE_NAME
    assert "no language model is configured" in report.markdown

    rows = table_rows(report.markdown)
    assert rows["Price"][0].startswith("¥25.5 [cap-meituan-1(")
    assert rows["Price"][1].startswith("¥26.0 [cap-eleme-1(")
    assert rows["Sales"][0].startswith("月售 2000+")
    assert rows["Delivery time"][1].startswith("35 min")
    assert "Lowest price: Meituan (¥25.5" in report.markdown
    # The McChicken on the same page is not what was asked for.
    assert "McChicken" not in report.markdown

    # Every citation in the report is grounded, and each table value's box holds that value.
    assert report.citations and all(c.grounded for c in report.citations)
    refs = [ref for mark in parse_citations(report.markdown) for ref in mark.refs]
    assert len(refs) == len(report.citations)
    price_cells = {"cap-meituan-1": "¥25.5", "cap-eleme-1": "¥26.0"}
    for capture_id, price in price_cells.items():
        drawn = meituan if capture_id == meituan.capture.id else eleme
        owners = [text for text in drawn.boxes if price in text]
        price_citations = [c for c in report.citations
                           if c.capture_id == capture_id and price in c.quote]
        assert price_citations
        for citation in price_citations:
            assert citation.box is not None and citation.crop_key is not None
            assert any(citation.box == drawn.boxes[text] for text in owners)

    # The app that needs a person is named, not silently missing.
    assert "McDonald's (needs a person)" in report.markdown
    assert "log in" in report.markdown

    files = publish_report(report, captures, store)
    markdown = store.get_bytes(files.markdown_key).decode()
    assert "**McDonald's**: needs person (the app asks to log in)" in markdown
    assert re.search(r"grounded \(score 1\.00\) at \[60,\d+\]\[160,\d+\]", markdown)
    assert store.get_bytes(files.html_key).startswith(b"<!doctype html>")


def test_one_app_gives_a_list_not_a_table(meituan: DrawnCapture, store: FolderStore) -> None:
    report = synthesize_report(run_id="run-one", query=Query(text="McDonald's fries price on Meituan"),
                               captures=[meituan.capture], apps=APPS[:1], store=store, threshold=0.8)
    assert "## Comparison" not in report.markdown
    assert "**Fries (large)**" in report.markdown
    assert "price ¥12 [cap-meituan-1(¥12)]" in report.markdown
    assert report.page_dumps == ()  # picked by the question's words: an answer


def test_no_match_still_lists_what_was_read(eleme: DrawnCapture, store: FolderStore) -> None:
    report = synthesize_report(run_id="run-none", query=Query(text="sushi platter"),
                               captures=[eleme.capture], apps=APPS[1:2], store=store, threshold=0.8)
    assert "No line on the captured pages matches" in report.markdown
    assert "Apple Pie" in report.markdown
    assert all(c.grounded for c in report.citations)
    # The copied page is marked as such on the report, its lines unchanged for a person.
    lines = report.markdown.splitlines()
    dumped = [n for n in range(len(lines)) if any(n in span for span in report.page_dumps)]
    assert any("Apple Pie" in lines[n] for n in dumped)
    cited = [n for n, line in enumerate(lines) if parse_citations(line)]
    assert cited and set(cited) <= set(dumped), "every cited line is a copied page line"


def test_a_details_page_no_word_names_is_stated_by_its_own_subject() -> None:
    """"Which burger has the most calories?": the product page reached names neither word; its
    subject and price are stated as the answer (cited), not dumped as the page's text."""
    capture = Capture.model_validate_json((CAPTURES_DIR / BIG_MAC_PAGE).read_text("utf-8"))
    apps = [AppStatus(app_label="McDonald's", package=capture.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which burger in the McDonald's app has the most calories? "
                                          "Just that one."), [capture], apps)
    assert written.page_dumps == ()
    claim = next(line for line in written.markdown.splitlines() if line.startswith("- Big Mac"))
    assert "¥24.0" in re.sub(r"\[[^\]]*\]", "", claim)


def _stated(markdown: str) -> str:
    """The report's lines without their citations: what it states."""
    return re.sub(r"\[[^\]]*\]", "", markdown)


def test_a_question_pages_answers_are_listed_under_its_heading() -> None:
    """A question page ("Question" in its bar, the person's question as its heading): the answers
    below the heading share no word with the question and are the answer."""
    page = titled_page("Question",
                 ("Which houseplants survive in a dark room?", 253, 60), ("88 answers · 1K followers", 320, 40),
                 ("Follow", 612, 60), ("Garden Guru | Plant writer | Snake plants and ZZ plants do best.", 877, 160),
                 ("Mia | Florist | Pothos, with a lamp nearby.", 1100, 160))
    apps = [AppStatus(app_label="QA", package=page.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which houseplants survive in a dark room?"), [page], apps)
    assert written.page_dumps == ()
    assert "Snake plants and ZZ plants" in _stated(written.markdown)
    assert "Pothos, with a lamp nearby" in _stated(written.markdown)
    assert "88 answers · 1K followers" in _stated(written.markdown)  # the heading's own lines too


def test_a_best_match_is_reported_with_its_lines() -> None:
    """An answer set close under the question is a line of its item: stated with it, cited."""
    page = titled_page("Question",
                 ("How long should a first marathon training plan be?", 253, 60),
                 ("Coach Lee", 320, 40), ("Plan on 16 to 20 weeks of training.", 365, 40))
    apps = [AppStatus(app_label="QA", package=page.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="How long is a first marathon training plan, on QA?"), [page], apps)
    assert "16 to 20 weeks" in _stated(written.markdown)


def test_the_first_n_of_a_chart_count_its_records_not_the_caption_over_them() -> None:
    """"The top 3 of the chart, names only": the caption under the page's title ("updated daily")
    is no song, so the first three are the first three songs. Before, the caption was the first."""
    songs = [("Morning Rain", "Ana Ruiz · 98120"), ("Blue Harbour", "The Tides · 95511"),
             ("Paper Kites", "Lumen · 91230"), ("Night Drive", "K. Osei · 88740")]
    lines = [("Updated daily from the growth in plays", 253, 50)]
    for n, (song, meta) in enumerate(songs):
        top = 364 + 215 * n
        lines += [(song, top, 66), (meta, top + 77, 50)]
    page = titled_page("Rising chart", *lines)
    apps = [AppStatus(app_label="Music", package=page.package, status=SubTaskStatus.COMPLETED)]
    written = write_extractive(Query(text="Which are the top 3 songs of the rising chart on Music? Names only."),
                               [page], apps)
    stated = _stated(written.markdown)
    assert "Morning Rain" in stated and "Blue Harbour" in stated and "Paper Kites" in stated, stated
    assert "Night Drive" not in stated and "Updated daily" not in stated, stated


def test_records_naming_what_the_question_asks_for_are_kept_when_it_has_no_search_term() -> None:
    """"最近一次打车花了多少钱": the bills list every payment; the rows naming a taxi ride (the
    lexicon's rides, "打车") are the ones asked about, and the latest of them is the answer, not
    the latest bill. Before, the newest bill of all (a coffee) was reported."""
    bills = [("瑞幸咖啡", "06-23 08:12 · 餐饮美食", "-13.90"), ("高德打车", "06-22 08:55 · 交通出行", "-18.60"),
             ("盒马鲜生", "06-21 12:20 · 日用百货", "-126.50"), ("曹操打车", "06-20 18:45 · 交通出行", "-22.30")]
    lines = [("本月支出 ¥3,286.40", 253, 50)]
    for n, (name, meta, amount) in enumerate(bills):
        top = 364 + 230 * n
        lines += [(name, top, 60), (meta, top + 70, 50), (amount, top + 130, 50)]
    page = titled_page("账单", *lines)
    apps = [AppStatus(app_label="Pay", package=page.package, status=SubTaskStatus.COMPLETED)]
    stated = _stated(write_extractive(Query(text="Pay 上最近一次打车花了多少钱？"), [page], apps).markdown)
    assert "高德打车" in stated and "-18.60" in stated, stated
    assert "瑞幸咖啡" not in stated and "盒马鲜生" not in stated, stated
    assert "曹操打车" not in stated, stated  # an older ride: "最近一次" is one record, the newest
    assert re.search(r"The captured page \*\*账单\*\* +lists", stated), stated  # which page they are of


def test_records_whose_text_only_mentions_what_the_question_names_are_all_kept() -> None:
    """Posts about a film series: two mention a cinema or a ticket (the lexicon's movies) in their
    text, none is a film by its name; every post is an answer. Before, only those two were kept."""
    posts = [("影迷甲", "当然想看，我就买票进电影院。"), ("路人乙", "有点审美疲劳了，不如就此完结。"),
             ("接班人", "希望换个年轻主角带新人。"), ("抽奖号", "转发抽奖送电影票")]
    lines = []
    for n, (author, text) in enumerate(posts):
        top = 300 + 230 * n
        lines += [(author, top, 60), (text, top + 70, 50), (f"6月22日 2{n}:31 · 赞 {100 + n}", top + 130, 50)]
    page = titled_page("Comments", *lines)
    apps = [AppStatus(app_label="Feed", package=page.package, status=SubTaskStatus.COMPLETED)]
    for question in ("Feed 上大家怎么看这部电影？", "Find out how fans feel about the possibility of more Top Gun films."):
        stated = _stated(write_extractive(Query(text=question), [page], apps).markdown)
        assert all(author in stated for author, _ in posts), stated


def test_a_question_asking_which_records_are_of_a_kind_gets_every_one_that_names_it() -> None:
    """Standing payments, each with its price: the question asks which are memberships. Before,
    the five best matches by the question's words were stated, a bike pass among them and one
    membership left out; now every record naming the concept, and no other."""
    cards = ["单车 | 自动扣款 · 骑行卡到期自动续费 ¥15/月 | 开通时间 2021-08-30",
             "影视VIP会员 | 自动扣款 · 连续包月 ¥25/月 | 开通时间 2020-02-17",
             "打车 | 免密支付 · 行程结束后自动扣款 | 开通时间 2021-03-14",
             "视频大会员 | 自动扣款 · 连续包季 ¥58/季 | 开通时间 2023-02-11",
             "外卖 | 免密支付 · 单笔限额¥300 | 开通时间 2020-11-02",
             "电费 | 自动扣款 · 每月自动缴纳 | 开通时间 2020-05-20",
             "动画会员 | 自动扣款 · 连续包月 ¥15/月 | 开通时间 2022-10-24"]
    page = titled_page("自动扣款", *((card, 300 + 200 * n, 150) for n, card in enumerate(cards)))
    apps = [AppStatus(app_label="Pay", package=page.package, status=SubTaskStatus.COMPLETED)]
    stated = _stated(write_extractive(Query(text="Pay 里开通了自动续费的会员有哪些？每期多少钱？"), [page], apps).markdown)
    for kept in ("影视VIP会员", "视频大会员", "动画会员", "¥58/季"):
        assert kept in stated, stated
    for left in ("单车", "打车", "外卖", "电费"):
        assert left not in stated, stated


def test_the_apps_suggestions_under_a_page_are_not_its_records() -> None:
    """A cart with the shop's suggestions under it ("猜你喜欢"): the dearest item in the cart is one
    of the cart's, not a suggested phone that costs more. Before, the suggestions were records."""
    lines = []
    for n, (name, price) in enumerate((("Socks 10 pairs", "¥29.90"), ("PC case", "¥269.00"), ("CPU 14 cores", "¥1599.00"))):
        top = 300 + 260 * n
        lines += [(name, top, 60), (f"{price}  x1", top + 70, 50), (f"加入时间 2025-06-2{n}", top + 130, 50)]
    lines += [("猜你喜欢", 1200, 60)]
    for n, (name, price) in enumerate((("Phone 512GB", "¥6299.00"), ("RAM 16GB", "¥219.00"))):
        top = 1300 + 260 * n
        lines += [(name, top, 60), (price, top + 70, 50), ("5万+人付款", top + 130, 50)]
    page = titled_page("购物车", *lines)
    apps = [AppStatus(app_label="Shop", package=page.package, status=SubTaskStatus.COMPLETED)]
    stated = _stated(write_extractive(Query(text="Which item in my Shop cart costs the most?"), [page], apps).markdown)
    assert "CPU 14 cores" in stated and "¥1599.00" in stated, stated
    assert "Phone 512GB" not in stated and "Socks" not in stated, stated
    # Asked for ("what do they recommend"), the suggestions are records too.
    items = detect_items(page, read_query_terms("Which items does Shop recommend?"))
    assert "Phone 512GB" not in [r.name for r in find_records([page], items)]
    assert "Phone 512GB" in [r.name for r in find_records([page], items, suggested=True)]
