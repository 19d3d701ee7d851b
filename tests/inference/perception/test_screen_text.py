"""Description, token budget, grounding, blocks and fingerprint on real screens."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.models import ElementSource, UIElement
from inference.errors import GroundingError
from inference.perception import (
    Perceiver,
    count_exposure,
    count_tokens,
    describe_screen,
    fingerprint_screen,
    ground_element,
    ground_instruction,
    ground_text,
    observe_droidbot_state,
)


@pytest.fixture(scope="module")
def perceiver() -> Perceiver:
    perceiver = Perceiver()
    perceiver.ocr = None  # these tests are about the hierarchy path
    return perceiver


def test_tokenizer_is_real_and_offline() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("tap [Search] then type McDonald") > 5


def test_descriptions_are_deterministic_and_within_budget(
    perceiver: Perceiver, state_paths: list[Path]
) -> None:
    sizes = []
    for path in state_paths[::5]:
        observation = observe_droidbot_state(path)
        first = perceiver.perceive(observation)
        text = describe_screen(first.screen, first.blocks)
        again = perceiver.perceive(observation)
        assert describe_screen(again.screen, again.blocks) == text
        n = len(first.screen.elements)
        sizes.append(n)
        if 45 <= n <= 75 and observation.package != "com.tencent.qqmusic":
            # about 1,200 tokens for a typical 60-element screen (cl100k)
            assert text.tokens <= 1200 * n / 60 + 100, (path.name, n, text.tokens)
        if first.screen.elements:
            assert text.element_id(1) == text.element_ids[0]
        assert text.element_id(len(text.element_ids) + 1) is None
        assert sorted(text.element_ids) == sorted(e.id for e in first.screen.elements)
    assert max(sizes) >= 45


def test_blocks_follow_core_partition(perceiver: Perceiver, state_paths: list[Path]) -> None:
    for path in state_paths[::30]:
        result = perceiver.perceive(observe_droidbot_state(path))
        blocks = result.blocks.blocks
        ids = [i for b in blocks for i in b.element_ids]
        assert sorted(ids) == sorted(e.id for e in result.screen.elements)
        if len(result.screen.elements) >= 3:
            assert len(blocks) >= 3 or result.blocks.level > 0
        first = blocks[0].id if blocks else ""
        exposure = count_exposure(result.blocks, (first,))
        assert exposure.total == len(ids)
        assert exposure.exposed == (len(blocks[0].element_ids) if blocks else 0)


def test_grounding_finds_tap_targets(perceiver: Perceiver, state_paths: list[Path]) -> None:
    path = next(p for p in state_paths if p.name == "state_2023-12-31_144126.json")
    screen = perceiver.perceive(observe_droidbot_state(path)).screen
    search = ground_instruction(screen.elements, "Tap [Search 5miles]")
    assert search.matched_text == "Search 5miles" and search.score == 1.0
    assert search.box.contains(search.point)
    assert ground_text(screen.elements, "search 5 miles").score >= 0.8
    assert ground_element(screen.elements, search.element_id).box == search.box
    with pytest.raises(GroundingError):
        ground_text(screen.elements, "Checkout now")
    with pytest.raises(GroundingError):
        ground_element(screen.elements, "e000")


def _element(eid: str, text: str, box: tuple[int, int, int, int], rid: str = "") -> UIElement:
    from core.models import Bounds

    left, top, right, bottom = box
    return UIElement(
        id=eid, text=text, resource_id=rid, class_name="android.widget.TextView",
        bounds=Bounds(left=left, top=top, right=right, bottom=bottom), source=ElementSource.HIERARCHY,
    )


def test_fingerprint_ignores_clock_and_badges_but_not_content() -> None:
    page = [
        _element("a", "9:41", (900, 5, 1060, 60), "com.android.systemui:id/clock"),
        _element("b", "Results for Big Mac", (0, 200, 1080, 300)),
        _element("c", "3", (1000, 210, 1040, 250)),
        _element("d", "Big Mac $5.99 · 5 min ago", (0, 400, 1080, 500)),
    ]
    later = [
        _element("a", "9:42", (900, 5, 1060, 60), "com.android.systemui:id/clock"),
        _element("b", "Results for Big Mac", (0, 201, 1080, 300)),
        _element("c", "4", (1000, 210, 1040, 250)),
        _element("d", "Big Mac $5.99 · 7 min ago", (0, 400, 1080, 500)),
    ]
    other = [*page[:3], _element("d", "Big Mac $6.49 · 5 min ago", (0, 400, 1080, 500))]

    def fp(elements: list[UIElement]) -> str:
        return fingerprint_screen(tuple(elements), package="com.x", width=1080, height=2160)

    assert fp(page) == fp(later)
    assert fp(page) != fp(other)
    assert fp(page) != fingerprint_screen(tuple(page), package="com.y", width=1080, height=2160)
