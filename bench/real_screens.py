"""Perception on every recorded real screen, per app, before and after the real-screen fixes.

``python -m bench.real_screens`` reads every DroidBot state under the data
folder (7 English apps and QQ Music, reported apart) and measures, side by
side in one run, perception *before* (no occlusion, no names for unlabelled
controls, no text boxes, OCR on every blind region) and *after*.

Ground truth comes from the recordings, as follows:

- **texts**: the recorded visible views with a text (passwords and views
  under 20 px or off the screen left out);
- **covered**: a text view at least half under views drawn after it (Android's
  drawing order: document order, drawers over their content) whose text a
  full-screen OCR of the recorded screenshot cannot read in its box. The OCR
  is the pixels' independent witness; perception itself decides covering from
  the hierarchy and a thumbnail's colours, never from OCR;
- **visible**: the other text views. OCR recall is counted on them;
- **grounding**: each distinct visible text of a screen is a quote; the right
  element is one whose box holds a visible view with that text; text-box IoU
  compares the returned highlight with that view's own box.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rapidfuzz import fuzz, utils

from bench.ocr_store import StoredOcrEngine
from bench.results import create_figure, parse_bench_args, save_plot, summarize_ms, write_section
from core.config import PerceptionSettings, load_settings
from core.models import Bounds
from core.recordings import DroidbotState, DroidbotView, find_data_dir
from inference.errors import GroundingError
from inference.perception import (
    Observation,
    OcrLine,
    Perceiver,
    Perception,
    RapidOcrEngine,
    describe_screen,
    ground_text,
    list_droidbot_states,
    load_droidbot_state,
    observe_droidbot_state,
)
from inference.perception.hierarchy import ViewTree, parse_hierarchy
from inference.perception.image import RGBImage, decode_screenshot, decode_thumbnail
from inference.perception.naming import id_words
from inference.perception.occlusion import drawing_order, union_share
from inference.perception.ocr_regions import (
    find_blind_regions,
    is_photo,
    merge_ocr_elements,
    ocr_lines_to_elements,
)

__all__ = ["ScreenFigures", "main", "measure_screen"]

_MIN_TEXT_PX = 20
_COVER_SHARE = 0.5


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def text_read(text: str, box: Bounds, lines: tuple[OcrLine, ...]) -> bool:
    """Whether OCR read ``text`` inside ``box`` (fuzzy >= 0.8; a fragment counts for long texts)."""
    inside = " ".join(ln.text for ln in lines if box.contains(ln.box.center))
    score = fuzz.ratio(text, inside, processor=utils.default_process)
    if len(inside) >= 0.6 * len(text):
        score = max(score, fuzz.partial_ratio(text, inside, processor=utils.default_process))
    return score >= 80


@dataclass
class ScreenFigures:
    """What one screen contributed, before and after."""

    app: str
    texts: int = 0
    texts_in_hierarchy: int = 0
    visible: int = 0
    visible_read: int = 0
    all_read: int = 0
    covered: int = 0
    covered_described: dict[str, int] = field(default_factory=dict)
    visible_dropped: int = 0  # visible views perception called covered (after)
    quotes: int = 0
    repeated_quotes: int = 0
    right: dict[str, int] = field(default_factory=dict)
    right_repeated: dict[str, int] = field(default_factory=dict)
    grounded: dict[str, int] = field(default_factory=dict)
    box_ok: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    regions: dict[str, int] = field(default_factory=dict)  # blind regions OCR would read
    new_lines_lost: int = 0  # OCR lines with text the hierarchy lacks, inside regions left unread (after)
    photo_lines_lost: int = 0  # of those, inside regions left unread as photos (the rest: under a cover)
    clickable: int = 0
    unlabelled: dict[str, int] = field(default_factory=dict)  # clickables with no text or description
    named: dict[str, int] = field(default_factory=dict)  # of those, named by an id (before: raw; after: its words)
    nameless: dict[str, int] = field(default_factory=dict)  # of those, described as bare "button" / "item"


def _text_views(state: DroidbotState) -> list[DroidbotView]:
    out = []
    for view in state.visible_views():
        box = view.box
        if not (view.text or "").strip() or view.is_password or box.height < _MIN_TEXT_PX:
            continue
        if box.bottom > state.height or box.right > state.width or box.area == 0:
            continue
        out.append(view)
    return out


def _under_later_views(state: DroidbotState, views: list[DroidbotView], tree: ViewTree) -> set[int]:
    """Text views at least half under views drawn after them (temp ids), by the view tree."""
    drawn, end = drawing_order(tree.nodes)
    position = {(n.bounds, n.label): p for p, n in enumerate(drawn) if n.label}
    under: set[int] = set()
    for view in views:
        p = position.get((view.box, (view.text or "").strip()))
        if p is None:
            continue
        later = [n.bounds for n in drawn[end[p]:] if n.bounds.area > 0 and n.bounds.intersection(view.box) > 0]
        if union_share(view.box, later) >= _COVER_SHARE:
            under.add(view.temp_id)
    return under


def _regions(perceiver: Perceiver, observation: Observation) -> tuple[Bounds, ...]:
    """The blind regions ``perceiver`` would OCR on this screen (its OCR never runs here)."""
    counting = Perceiver(perceiver.settings.model_copy(update={"ocr_backend": "rapidocr"}), ocr=_NoOcr())
    return counting.perceive(observation).blind_regions


class _NoOcr:
    """An OCR engine that reads nothing: the regions a perceiver asks for are what is counted."""

    name = "none"

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        return ()


def _described_texts(perception: Perception) -> str:
    return " || ".join(_norm(e.label) for e in perception.screen.elements)


def _ground(perception: Perception, quote: str, *, tree: bool) -> Bounds | None:
    """The highlight box for ``quote`` (None when it does not ground)."""
    try:
        found = ground_text(perception.screen.elements, quote, tree=perception.tree if tree else None)
    except GroundingError:
        return None
    return found.highlight


def measure_screen(path: Path, app: str, lines: tuple[OcrLine, ...],
                   perceivers: dict[str, Perceiver]) -> ScreenFigures:
    """Every figure of one recorded screen, for each perceiver variant (``before``, ``after``)."""
    state = load_droidbot_state(path)
    observation = observe_droidbot_state(path)
    figures = ScreenFigures(app)
    views = _text_views(state)
    parsed = parse_hierarchy(observation.hierarchy_xml, width=state.width, height=state.height)
    labels = {_norm(p) for e in parsed.elements for p in [*e.text.split(" | "), e.content_desc] if p}
    figures.texts = len(views)
    figures.texts_in_hierarchy = sum(_norm(v.text or "") in labels for v in views)
    under = _under_later_views(state, views, parsed.tree)
    read = {v.temp_id: text_read((v.text or "").strip(), v.box, lines) for v in views}
    covered = [v for v in views if v.temp_id in under and not read[v.temp_id]]
    visible = [v for v in views if v not in covered]
    figures.all_read = sum(read.values())
    figures.covered, figures.visible = len(covered), len(visible)
    figures.visible_read = sum(read[v.temp_id] for v in visible)
    by_text: dict[str, list[DroidbotView]] = defaultdict(list)
    for view in visible:
        by_text[_norm(view.text or "")].append(view)
    quotes = {t: vs for t, vs in by_text.items() if len(t) >= 2}
    covered_texts = {_norm(v.text or "") for v in covered}
    figures.quotes = len(quotes)
    repeated = {t for t in quotes if len(quotes[t]) > 1 or t in covered_texts}
    figures.repeated_quotes = len(repeated)
    screen_box = Bounds(left=0, top=0, right=state.width, bottom=state.height)
    for variant, perceiver in perceivers.items():
        regions = _regions(perceiver, observation)
        figures.regions[variant] = len(regions)
        if variant == "after":
            unread = [r for r in find_blind_regions(parsed, state.width, state.height)
                      if r not in regions and r != screen_box]
            fresh = merge_ocr_elements(parsed.elements, ocr_lines_to_elements(lines, parsed))[len(parsed.elements):]
            lost = [e for e in fresh if any(r.contains(e.bounds.center) for r in unread)
                    and not any(r.contains(e.bounds.center) for r in regions)]  # not read in another region
            figures.new_lines_lost = len(lost)
            thumbnail = decode_thumbnail(observation.screenshot_png)
            photos = [r for r in unread if thumbnail is not None and is_photo(thumbnail, r)]
            figures.photo_lines_lost = sum(any(r.contains(e.bounds.center) for r in photos) for e in lost)
        start = time.perf_counter()
        perception = perceiver.perceive(observation)
        description = describe_screen(perception.screen, perception.blocks, name_unlabelled=variant == "after")
        figures.seconds[variant] = time.perf_counter() - start
        figures.tokens[variant] = description.tokens
        described = _described_texts(perception)
        figures.covered_described[variant] = sum(
            _norm(v.text or "") in described and not any(_norm(v.text or "") == _norm(w.text or "") for w in visible)
            for v in covered)
        if variant == "after":
            kept = {e.id for e in perception.screen.elements}
            dropped = [e for e in parsed.elements if e.id not in kept]
            figures.visible_dropped = sum(
                any(e.bounds.contains(v.box.center) and _norm(v.text or "") in _norm(e.label) for e in dropped)
                for v in visible if read[v.temp_id])
        figures.clickable = sum(1 for e in perception.screen.elements if e.clickable)
        unlabelled = [e for e in perception.screen.elements if e.clickable and not e.label]
        figures.unlabelled[variant] = len(unlabelled)
        # before: a raw resource id, or no name at all; after: id words, else the place (never nothing)
        figures.named[variant] = sum(bool(id_words(e.resource_id) if variant == "after" else e.resource_id)
                                     for e in unlabelled)
        figures.nameless[variant] = 0 if variant == "after" else sum(not e.resource_id for e in unlabelled)
        right = right_repeated = grounded = box_ok = 0
        for text, wanted in quotes.items():
            box = _ground(perception, text, tree=variant == "after")
            if box is None:
                continue
            grounded += 1
            hit = [v for v in wanted if _contains(box, v.box) or _contains(v.box, box)]
            if hit:
                right += 1
                right_repeated += text in repeated
                box_ok += max(box.iou(v.box) for v in hit) >= 0.5
        figures.right[variant], figures.right_repeated[variant] = right, right_repeated
        figures.grounded[variant], figures.box_ok[variant] = grounded, box_ok
    return figures


def _contains(outer: Bounds, inner: Bounds) -> bool:
    return outer.contains(inner.center)


_APPS = {  # package -> the name the tables use (the label the recordings' launchers show)
    "com.thirdrock.fivemiles": "5miles", "com.etsy.android": "Etsy", "com.buzzfeed.android": "BuzzFeed",
    "com.thomsonreuters.reuters": "Reuters", "jp.gocro.smartnews.android": "SmartNews",
    "com.contextlogic.wish": "Wish", "com.contextlogic.home": "Home", "com.tencent.qqmusic": "QQ Music",
}
_CHINESE = ("QQ Music",)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "-"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _sum(rows: list[ScreenFigures], name: str, variant: str | None = None) -> int:
    if variant is None:
        return sum(int(getattr(r, name)) for r in rows)
    return sum(int(getattr(r, name).get(variant, 0)) for r in rows)


def _median(rows: list[ScreenFigures], name: str, variant: str, scale: float = 1.0) -> str:
    values = [getattr(r, name)[variant] * scale for r in rows]
    return f"{statistics.median(values):.0f}" if scale == 1.0 else f"{statistics.median(values):.1f}"


def table_rows(groups: dict[str, list[ScreenFigures]]) -> list[str]:
    """One markdown row per app group: the figures before -> after."""
    out = []
    for name, rows in groups.items():
        visible, covered, quotes = _sum(rows, "visible"), _sum(rows, "covered"), _sum(rows, "quotes")
        ground = {v: _sum(rows, "grounded", v) for v in ("before", "after")}
        wrong = {v: ground[v] - _sum(rows, "right", v) for v in ("before", "after")}
        unlabelled = _sum(rows, "unlabelled", "after")
        out.append(
            f"| {name} | {len(rows)} | {_share(_sum(rows, 'texts_in_hierarchy'), _sum(rows, 'texts'))} "
            f"| {_share(_sum(rows, 'all_read'), _sum(rows, 'texts'))} / {_share(_sum(rows, 'visible_read'), visible)} "
            f"| {covered} | {_sum(rows, 'covered_described', 'before')} → {_sum(rows, 'covered_described', 'after')} "
            f"| {_sum(rows, 'visible_dropped')} "
            f"| {_pct(wrong['before'], ground['before'])} → {_pct(wrong['after'], ground['after'])} "
            f"| {_pct(_sum(rows, 'right_repeated', 'before'), _sum(rows, 'repeated_quotes'))} → "
            f"{_pct(_sum(rows, 'right_repeated', 'after'), _sum(rows, 'repeated_quotes'))} "
            f"| {_pct(_sum(rows, 'box_ok', 'before'), _sum(rows, 'right', 'before'))} → "
            f"{_pct(_sum(rows, 'box_ok', 'after'), _sum(rows, 'right', 'after'))} "
            f"| {_pct(ground['after'], quotes)} "
            f"| {_median(rows, 'tokens', 'before')} → {_median(rows, 'tokens', 'after')} "
            f"| {_median(rows, 'seconds', 'before', 1000)} → {_median(rows, 'seconds', 'after', 1000)} "
            f"| {_pct(unlabelled, _sum(rows, 'clickable'))}: "
            f"{_pct(_sum(rows, 'nameless', 'before'), _sum(rows, 'unlabelled', 'before'))} → "
            f"{_pct(_sum(rows, 'nameless', 'after'), unlabelled)} "
            f"({_pct(_sum(rows, 'named', 'after'), unlabelled)} by id words) "
            f"| {_sum(rows, 'regions', 'before')} → {_sum(rows, 'regions', 'after')} "
            f"({_sum(rows, 'photo_lines_lost')} / {_sum(rows, 'new_lines_lost') - _sum(rows, 'photo_lines_lost')}) |")
    return out


def group_rows(figures: list[ScreenFigures]) -> dict[str, list[ScreenFigures]]:
    """Per app, then all English apps together, then the Chinese one apart."""
    by_app: dict[str, list[ScreenFigures]] = defaultdict(list)
    for row in figures:
        by_app[row.app].append(row)
    english = [r for r in figures if r.app not in _CHINESE]
    groups = {app: by_app[app] for app in sorted(by_app, key=str.casefold) if app not in _CHINESE}
    groups["**all English apps**"] = english
    groups.update({app: by_app[app] for app in _CHINESE if app in by_app})
    return groups


def plot_grounding(groups: dict[str, list[ScreenFigures]]) -> str:
    """Bars per app: wrong-element rate and highlights matching the text's own box, before and after."""
    names = [n.strip("*").replace("all English apps", "all English") for n in groups]
    figure = create_figure(8.0, 3.4)
    left, right = figure.subplots(1, 2)
    xs = range(len(names))
    for axes, title, values in (
        (left, "wrong element (% of grounded quotes)",
         {v: [100 * (_sum(r, "grounded", v) - _sum(r, "right", v)) / max(1, _sum(r, "grounded", v))
              for r in groups.values()] for v in ("before", "after")}),
        (right, "highlight IoU >= 0.5 with the text (% of right ones)",
         {v: [100 * _sum(r, "box_ok", v) / max(1, _sum(r, "right", v)) for r in groups.values()]
          for v in ("before", "after")}),
    ):
        axes.bar([x - 0.2 for x in xs], values["before"], width=0.4, label="before", color="tab:gray")
        axes.bar([x + 0.2 for x in xs], values["after"], width=0.4, label="after", color="tab:blue")
        axes.set_xticks(list(xs), names, rotation=45, ha="right", fontsize=8)
        axes.set_title(title, fontsize=9)
        axes.legend(fontsize=8)
    left.axhline(3.0, color="tab:red", linestyle="--", linewidth=1)
    right.axhline(90.0, color="tab:red", linestyle="--", linewidth=1)
    return save_plot("real-screens", "grounding", figure,
                     "Bars per app: wrong-element grounding rate and text-box IoU >= 0.5, before and after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=find_data_dir(load_settings()))
    parser.add_argument("--ocr-store", type=Path, default=Path(".droidretriever/bench/ocr-full-screen.jsonl"),
                        help="full-screen OCR reads kept on disk (read once, ~1 h on a busy 2-core machine)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N screens (a quick look)")
    args = parse_bench_args(parser)
    if args.data is None:
        raise SystemExit("no recordings: pass --data ../shared/data (or set DROIDRETRIEVER_DATA_DIR)")
    paths = list_droidbot_states(args.data)[: args.limit or None]
    store = StoredOcrEngine(RapidOcrEngine(), args.ocr_store)
    perceivers = {
        "before": Perceiver(PerceptionSettings(ocr_backend="none", occlusion=False)),
        "after": Perceiver(PerceptionSettings(ocr_backend="none")),
    }
    figures = []
    for index, path in enumerate(paths):
        state = load_droidbot_state(path)
        lines = store.read(decode_screenshot(observe_droidbot_state(path).screenshot_png))
        figures.append(measure_screen(path, _APPS.get(state.package, state.package), lines, perceivers))
        if index % 50 == 0:
            print(f"{index}/{len(paths)} screens", flush=True)
    groups = group_rows(figures)
    picture = plot_grounding(groups)
    english = groups["**all English apps**"]
    body = f"""
All {len(paths)} recorded screens (`shared/data`: 7 English apps recorded with DroidBot, and QQ Music in
Chinese, reported apart). *Before* and *after* are measured side by side in one run: before = no
occlusion check, no names for unlabelled controls, grounding returns the element's box; after = this
section's fixes (`docs/perception.md`).

How the ground truth is derived from the recordings (nothing labelled by hand):

- *texts*: recorded visible views with a text (not passwords, at least {_MIN_TEXT_PX} px tall, on the screen);
- *covered*: a text view at least half under views drawn after it (Android's drawing order) whose text
  a full-screen RapidOCR read of the recorded screenshot cannot find in its box. The OCR is the pixels'
  independent witness: perception decides covering from the hierarchy and a thumbnail's colours, not OCR;
- *visible*: every other text view; OCR recall counts them (fuzzy >= 0.8);
- *grounding*: each distinct visible text (2+ characters) of a screen is a quote grounded with
  `ground_text`; right = the element holds a visible view with that text; *repeated* = quotes whose text is
  on the screen more than once (visible or covered); text-box IoU = the returned highlight against that
  view's own box;
- *unlabelled*: clickable elements with no text or description (their share of clickables); *bare* =
  described only as "button" / "item" (before: no resource id to show; after: never, each gets its
  resource-id words, else its place); *by id words* = named by meaningful resource-id words;
- *blind regions*: regions perception would OCR (big unlabelled pictures, canvases), before → after
  (after leaves out photos and regions under a cover); *lost* = lines of the full-screen OCR inside
  the regions left unread that the hierarchy does not already say (what skipping gives up), for the
  regions left as photos and for those left as covered.

| app | screens | hierarchy recall (exact) | OCR recall: all texts / visible | covered text views | covered described (before → after) | visible wrongly dropped | wrong element | right element, repeated labels | highlight IoU >= 0.5 | quotes grounded (after) | description tokens, median | ms per screen (parse + occlusion + describe), median | unlabelled clickables: bare "button"/"item" | blind regions OCR'd (new lines lost: photos / covered) |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(table_rows(groups))}

Reading it: most quotes are unique on their screen, so the overall wrong-element rate was low before
too; the repeated-label column is where covered duplicates did harm (Reuters' drawer over its story
list). The highlight is now the box of the recorded view that carries the quote, the
box the ground truth uses, so IoU >= 0.5 holds for every right element: it shows the carrier is found,
not that a view's box hugs its glyphs (a full-width text view stays full-width). QQ Music dumps the
page under the current one (both are in the hierarchy): its covered views are many and its OCR-based
ground truth is noisier there (its "visible" views dropped are mostly texts of the page underneath
that OCR matched by chance at the same place), and most OCR lines it gives up are under covers, not
in photos.

All English apps, time per screen before → after: {summarize_ms([r.seconds['before'] for r in english])} →
{summarize_ms([r.seconds['after'] for r in english])} (occlusion decodes a quarter-size screenshot only on
screens with candidates). OCR reads came from the stored full-screen reads (`--ocr-store`); their time is
in the `perception` section.

{picture}
"""
    path = write_section("real-screens", "Perception on real screens", "python -m bench.real_screens", body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
