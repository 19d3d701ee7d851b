"""Grounding cited quotes to boxes on a capture drawn with known text at known boxes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from rapidocr_onnxruntime import RapidOCR

from core.models import Bounds, ElementSource, UIElement
from droidretriever.testing import DrawnCapture, draw_capture
from tasks.synthesis.citations import CitationRef
from tasks.synthesis.evidence import FolderStore, store_highlight_crops
from tasks.synthesis.grounding import ground_citation, ground_citations, normalize_text

THRESHOLD = 0.8


def ground(quote: str, drawn: DrawnCapture, capture_id: str | None = None):  # type: ignore[no-untyped-def]
    ref = CitationRef(capture_id=capture_id or drawn.capture.id, quote=quote)
    return ground_citation(ref, [drawn.capture], THRESHOLD)


def test_exact_quote_grounds_on_its_element(meituan: DrawnCapture) -> None:
    citation = ground("¥25.5", meituan)
    assert citation.grounded and citation.score == 1.0
    assert citation.box == meituan.boxes["¥25.5"]


def test_short_quote_inside_a_long_element(eleme: DrawnCapture) -> None:
    citation = ground("¥26.0", eleme)
    assert citation.grounded and 0.8 <= citation.score < 1.0
    assert citation.box == eleme.boxes["Big Mac Meal ¥26.0 Sold 2k+"]
    assert ground("Sold 2k+", eleme).box == eleme.boxes["Big Mac Meal ¥26.0 Sold 2k+"]


def test_full_width_and_case_differences_still_ground(meituan: DrawnCapture) -> None:
    assert normalize_text("￥２５.５") == "¥25.5"
    assert ground("￥25.5", meituan).box == meituan.boxes["¥25.5"]
    assert ground("big mac meal", meituan).box == meituan.boxes["Big Mac Meal"]


def test_a_different_number_never_grounds(meituan: DrawnCapture) -> None:
    for quote in ["¥26.5", "¥125.5", "¥25", "月售 3000+"]:
        citation = ground(quote, meituan)
        assert not citation.grounded, quote
        assert citation.box is None


def test_quote_spanning_two_elements_on_one_row() -> None:
    drawn = draw_capture("cap-row", "com.example", [])
    left = UIElement(id="name", text="Big Mac", bounds=Bounds(left=40, top=100, right=240, bottom=150))
    right = UIElement(id="price", text="¥25.5", bounds=Bounds(left=300, top=102, right=420, bottom=148))
    capture = drawn.capture.model_copy(update={"elements": (left, right)})
    citation = ground_citation(CitationRef(capture_id="cap-row", quote="Big Mac ¥25.5"), [capture], 0.8)
    assert citation.grounded
    assert citation.box == Bounds(left=40, top=100, right=420, bottom=150)


def test_best_match_wins_and_ties_prefer_the_tighter_box() -> None:
    drawn = draw_capture("cap-ocr", "com.example", [])
    hierarchy = UIElement(id="h", text="¥25.5", bounds=Bounds(left=0, top=0, right=300, bottom=80))
    ocr = UIElement(id="o", text="¥25.5", bounds=Bounds(left=10, top=10, right=120, bottom=60),
                    source=ElementSource.OCR)
    near = UIElement(id="n", text="¥25.50 was ¥30", bounds=Bounds(left=0, top=200, right=500, bottom=260))
    capture = drawn.capture.model_copy(update={"elements": (hierarchy, near, ocr)})
    citation = ground_citation(CitationRef(capture_id="cap-ocr", quote="¥25.5"), [capture], 0.8)
    assert citation.element_id == "o"


def test_unknown_capture_and_unmatched_quotes_are_kept_unverified(meituan: DrawnCapture) -> None:
    refs = [CitationRef(capture_id="cap-missing", quote="¥25.5"),
            CitationRef(capture_id=meituan.capture.id, quote="free dessert with every order"),
            CitationRef(capture_id=meituan.capture.id, quote="")]
    citations = ground_citations(refs, [meituan.capture], THRESHOLD)
    assert len(citations) == 3
    assert not any(c.grounded for c in citations)
    assert citations[0].capture_id == "cap-missing"


def test_numeric_interface_id_resolves_by_position(meituan: DrawnCapture, eleme: DrawnCapture) -> None:
    refs = [CitationRef(capture_id="2", quote="Apple Pie")]
    (citation,) = ground_citations(refs, [meituan.capture, eleme.capture], THRESHOLD)
    assert citation.grounded and citation.capture_id == eleme.capture.id


@pytest.fixture(scope="module")
def ocr() -> RapidOCR:
    return RapidOCR()


def test_stored_crop_shows_the_cited_number(meituan: DrawnCapture, eleme: DrawnCapture,
                                            store: FolderStore, ocr: RapidOCR) -> None:
    refs = [CitationRef(capture_id=meituan.capture.id, quote="¥25.5"),
            CitationRef(capture_id=eleme.capture.id, quote="¥26.0")]
    grounded = ground_citations(refs, [meituan.capture, eleme.capture], THRESHOLD)
    stored = store_highlight_crops(store, "run-test", grounded, [meituan.capture, eleme.capture])
    for citation, number in zip(stored, ["25.5", "26.0"], strict=True):
        assert citation.crop_key is not None and citation.crop_key.startswith("runs/run-test/highlights/")
        crop = Image.open(io.BytesIO(store.get_bytes(citation.crop_key))).convert("RGB")
        result, _ = ocr(np.array(crop))
        read = " ".join(line[1] for line in result or [])
        assert number in read, read
