"""The citation scanner on well-formed, malformed and adversarial report text."""

from __future__ import annotations

import time

import pytest

from tasks.synthesis.citations import (
    MAX_QUOTE,
    CitationRef,
    format_citation,
    format_citations,
    parse_citations,
    replace_citations,
)


def refs(text: str) -> list[tuple[str, str]]:
    return [(r.capture_id, r.quote) for mark in parse_citations(text) for r in mark.refs]


def test_single_and_group_citations_in_prose() -> None:
    text = "Meituan sells it for ¥25.5[cap-1(¥25.5)], Ele.me for ¥26 [[cap-2(¥26.0)][cap-2(Sold 2k+)]]."
    marks = parse_citations(text)
    assert [len(m.refs) for m in marks] == [1, 2]
    assert refs(text) == [("cap-1", "¥25.5"), ("cap-2", "¥26.0"), ("cap-2", "Sold 2k+")]
    assert text[marks[1].start : marks[1].end] == "[[cap-2(¥26.0)][cap-2(Sold 2k+)]]"


def test_paper_examples_with_numeric_interface_ids() -> None:
    assert refs("dissatisfaction with this song[3(not good)].") == [("3", "not good")]
    assert refs("price 120 yuan[1(120)], weight 450g[2(450g small capacity)]") == [
        ("1", "120"), ("2", "450g small capacity")]
    assert refs("[[1(xxx)][2(yyy)]]") == [("1", "xxx"), ("2", "yyy")]


def test_parentheses_inside_a_quote_are_kept() -> None:
    assert refs("[c1(Fries (large))]") == [("c1", "Fries (large)")]
    assert refs("[c1(price (approx ¥25)]") == [("c1", "price (approx ¥25")]
    assert refs("[c1(a) b)]") == [("c1", "a) b")]


def test_markdown_links_and_plain_brackets_are_not_citations() -> None:
    text = ("See [the menu](https://example.com/a(b)) and [Meituan(cheap)](https://x.y) "
            "or [note] or [x] (y) or [](z) or [a b(c)]")
    assert refs(text) == []


def test_unbalanced_and_truncated_input() -> None:
    for text in ["[", "[[", "[c1(", "[c1(abc", "[c1(abc)", "[[c1(a)]", "[[c1(a)][c2(b)",
                 "]]]][[[[", "(((())))", "[c1()", "[(x)]", "[c 1(x)]"]:
        parsed = refs(text)
        assert all(cid and " " not in cid for cid, _ in parsed), text
    # A broken group still yields the citations that parse on their own.
    assert refs("[[c1(a)][c2(b) and more") == [("c1", "a")]
    assert refs("[[c1(a)]x[c2(b)]]") == [("c1", "a"), ("c2", "b")]


def test_quote_may_not_span_lines_or_exceed_the_limit() -> None:
    assert refs("[c1(first line\nsecond)]") == []
    assert refs("[c1(" + "x" * (MAX_QUOTE + 1) + ")]") == []
    assert refs("[c1(" + "x" * MAX_QUOTE + ")]") == [("c1", "x" * MAX_QUOTE)]


def test_empty_quote_and_unknown_ids_are_still_reported() -> None:
    # Grounding decides they are unverified; the parser never drops them.
    assert refs("[c1()] and [no-such-capture(¥9)]") == [("c1", ""), ("no-such-capture", "¥9")]


def test_replace_keeps_everything_else_verbatim() -> None:
    text = "a [c1(x)] b [[c2(y)][c3(z)]] c [not(a citation)](url)"
    out = replace_citations(text, lambda m: f"<{len(m.refs)}>")
    assert out == "a <1> b <2> c [not(a citation)](url)"


def test_format_round_trips_awkward_quotes() -> None:
    for quote in ["Big Mac (large)", "a)] b", "line\nbreak", "  spaced   out ", "¥25.5"]:
        text = format_citation("cap-9", quote)
        (parsed,) = refs(text)
        assert parsed[0] == "cap-9"
        assert parsed[1].replace(") ]", ")]") == " ".join(quote.split())
    group = format_citations((CitationRef(capture_id="a", quote="x"), CitationRef(capture_id="b", quote="y")))
    assert group == "[[a(x)][b(y)]]"
    assert refs(group) == [("a", "x"), ("b", "y")]


@pytest.mark.parametrize("text", [
    "[" * 200_000,
    "[c1(" * 100_000,
    "[[c1(a)]" * 50_000,
    "[a(" + "(" * 200_000 + ")]",
    "[" + "a" * 200_000 + "(x)]",
    ("[c1(" + "x" * 400 + ")" ) * 2_000,
])
def test_adversarial_input_is_linear(text: str) -> None:
    ordinary = ("price ¥25.5 [cap-1(¥25.5)] and more words. " * (len(text) // 40 + 1))[: len(text)]
    started = time.perf_counter()
    parse_citations(ordinary)
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    parse_citations(text)
    elapsed = time.perf_counter() - started
    # Quadratic behaviour on these inputs takes minutes (10^5 x the baseline); linear stays
    # within a small factor of parsing ordinary text of the same length. The bound is loose
    # on purpose: on a shared 2-core machine one slice of CPU starvation costs seconds, and
    # this checks the complexity class, not a speed (speed is bench/synthesis.py's).
    assert elapsed < 1000 * baseline + 5.0, (elapsed, baseline)


def test_many_valid_citations_parse_fast() -> None:
    text = " ".join(f"value {i}[cap-{i % 7}(¥{i}.5)]" for i in range(50_000))
    started = time.perf_counter()
    assert len(parse_citations(text)) == 50_000
    assert time.perf_counter() - started < 10.0


def test_terminal_rendering_numbers_citations_and_lists_their_evidence() -> None:
    from core.models import Bounds, Citation, Query, Report
    from tasks.synthesis import render_report_terminal

    report = Report(
        run_id="run-1", query=Query(text="Big Mac?"), synthesizer="extractive (no model configured)",
        markdown="| | Meituan |\n|---|---|\n| Price | ¥25.5 [c1(¥25.5)] |\n\nCheapest [c2(¥9.9)].",
        citations=(
            Citation(capture_id="c1", quote="¥25.5", grounded=True, score=1.0,
                     box=Bounds(left=0, top=0, right=10, bottom=10)),
            Citation(capture_id="c2", quote="¥9.9", grounded=False, score=0.3),
        ),
    )
    text = render_report_terminal(report)
    assert "| Price | ¥25.5 [1] |" in text  # the table keeps one line per row
    assert "Cheapest [2?]." in text  # an unverified citation is marked, not dropped
    assert "1. `c1` “¥25.5”: grounded" in text and "2. `c2` “¥9.9”: **unverified**" in text
