"""Privacy redaction: what may leave the device for a model marked ``cloud``.

Password fields never carry their value (the parser already blanks it); here
phone numbers, ID numbers, card numbers (Luhn-checked, so order numbers
survive), e-mail addresses and street addresses are masked as ``[phone]``,
``[email]`` ... in element texts, in the question and in the action history
(:meth:`Redactor.redact_subtask`, :meth:`Redactor.redact_lines`), and optionally
blurred in stored screenshots. Which kinds are masked is a setting
(``perception.redact_kinds``); names are not a kind (nothing tells a name from
a shop's or a dish's).

A screenshot for a cloud model (:meth:`Redactor.mask_screenshot`) has the boxes
of those elements blacked out, and of every line OCR reads in its pixels that
holds personal data: text drawn only in pixels (a picture of a card, a canvas,
a web page) is not in the view tree. Without an OCR engine, or when it fails,
the pixels cannot be checked and the screenshot is not sent (None).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from PIL import Image, ImageDraw, ImageFilter
from pydantic import BaseModel, ConfigDict

from core.config import LLMEndpoint, PerceptionSettings
from core.models import Bounds, SubTask, UIElement
from inference.errors import OcrError
from inference.perception.image import decode_screenshot
from inference.perception.ocr import OcrEngine
from inference.vocabulary import load_vocabulary

__all__ = ["REDACTION_KINDS", "Redaction", "RedactionKind", "Redactor", "redactor_for"]

RedactionKind = Literal["phone", "email", "id_number", "card", "address"]
REDACTION_KINDS: tuple[RedactionKind, ...] = ("phone", "email", "id_number", "card", "address")

_log = logging.getLogger(__name__)
_OCR_PAD = 6  # pixels around an OCR line's box: its glyphs' edges lie a little outside it
_STREET = f"(?:{load_vocabulary('street_types').alternation('street')})"  # "Ave", "Road"
# Order matters: long digit runs (cards, IDs) before phones, e-mails before anything with digits.
_PATTERNS: tuple[tuple[RedactionKind, re.Pattern[str]], ...] = (
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    ("card", re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")),
    (
        "id_number",
        re.compile(
            # Chinese resident ID (18), US SSN
            r"(?<!\d)\d{6}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![\dA-Za-z])"
            r"|(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)"
        ),
    ),
    (
        "phone",
        re.compile(
            r"(?<![\d\w])(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)"  # CN mobile
            r"|(?<![\d\w])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?!\d)"  # international
            r"|(?<![\d\w])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)"  # NANP
            r"|(?<!\d)\(\d{3}\)\s?\d{3}[ .-]?\d{4}(?!\d)"  # NANP written "(415)555-0132" (OCR drops spaces)
            r"|(?<![\d\w])0\d{2,3}-\d{7,8}(?!\d)"  # CN landline
        ),
    ),
    (
        "address",
        re.compile(
            rf"\b\d{{1,5}}\s+(?:[A-Z][A-Za-z]*\.?\s+){{1,4}}{_STREET}\b\.?"
            r"(?:,?\s*(?:Apt|Suite|Unit|#)\s*\w+)?"
            r"|[\u4e00-\u9fff]{1,12}(?:路|街|大道|巷|胡同)\s*\d{1,5}\s*(?:号|弄)(?:\s*[\u4e00-\u9fff\d]{0,10}(?:室|楼|层))?"
        ),
    ),
)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


class Redaction(BaseModel):
    """A text after masking, and which kinds were found in it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    kinds: tuple[RedactionKind, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


class Redactor:
    """Masks personal data in texts and elements; blurs it in screenshots."""

    def __init__(self, kinds: tuple[RedactionKind, ...] = REDACTION_KINDS, *, ocr: OcrEngine | None = None) -> None:
        """``ocr``: what reads a screenshot's pixels for :meth:`mask_screenshot` (None: it cannot)."""
        self.kinds = tuple(k for k in REDACTION_KINDS if k in kinds)
        self.ocr = ocr

    @classmethod
    def from_settings(cls, settings: PerceptionSettings, *, ocr: OcrEngine | None = None) -> Redactor:
        """A redactor masking the kinds ``perception.redact_kinds`` names."""
        return cls(tuple(settings.redact_kinds), ocr=ocr)

    def redact_text(self, text: str) -> Redaction:
        """``text`` with every enabled kind of personal data replaced by ``[kind]``."""
        found: list[RedactionKind] = []
        for kind, pattern in _PATTERNS:
            if kind not in self.kinds:
                continue
            text = pattern.sub(self._masker(kind, found), text)
        return Redaction(text=text, kinds=tuple(dict.fromkeys(found)))

    @staticmethod
    def _masker(kind: RedactionKind, found: list[RedactionKind]) -> Callable[[re.Match[str]], str]:
        def mask(match: re.Match[str]) -> str:
            value = match.group(0)
            if kind == "card" and not _luhn_ok(re.sub(r"\D", "", value)):
                return value  # an order or tracking number, not a card
            found.append(kind)
            return f"[{kind}]"

        return mask

    def redact_lines(self, lines: Iterable[str]) -> list[str]:
        """Each line masked (the action history: a tapped entry's label can hold a number)."""
        return [self.redact_text(line).text for line in lines]

    def redact_subtask(self, subtask: SubTask) -> SubTask:
        """``subtask`` with its goal (the question as typed) and search term masked."""
        term = self.redact_text(subtask.search_term).text if subtask.search_term else subtask.search_term
        return subtask.model_copy(update={"goal": self.redact_text(subtask.goal).text, "search_term": term})

    def redact_element(self, element: UIElement) -> tuple[UIElement, bool]:
        """The element with masked text and description; True when it held personal data."""
        text = "" if element.password else element.text
        redacted_text = self.redact_text(text)
        redacted_desc = self.redact_text(element.content_desc)
        sensitive = element.password or redacted_text.changed or redacted_desc.changed
        if not sensitive and text == element.text:
            return element, False
        return (
            element.model_copy(update={"text": redacted_text.text, "content_desc": redacted_desc.text}),
            sensitive,
        )

    def redact_elements(
        self, elements: tuple[UIElement, ...]
    ) -> tuple[tuple[UIElement, ...], frozenset[str]]:
        """Masked elements and the ids of those that carried personal data."""
        out, sensitive = [], set()
        for element in elements:
            masked, hit = self.redact_element(element)
            out.append(masked)
            if hit:
                sensitive.add(element.id)
        return tuple(out), frozenset(sensitive)

    def blur_screenshot(self, image_bytes: bytes, elements: tuple[UIElement, ...]) -> bytes:
        """PNG of the screenshot with sensitive elements' boxes blurred beyond reading."""
        def blur(image: Image.Image, box: tuple[int, int, int, int]) -> None:
            radius = max(8, (box[3] - box[1]) // 2)
            image.paste(image.crop(box).filter(ImageFilter.GaussianBlur(radius)), box)

        return self._paint(image_bytes, elements, blur, "blur")

    def mask_screenshot(self, image_bytes: bytes, elements: tuple[UIElement, ...]) -> bytes | None:
        """What a cloud model may see of a screenshot; None when its pixels cannot be checked.

        Blacked out: the sensitive elements' boxes (view tree) and every line OCR reads in
        the pixels that holds personal data (text drawn only in pixels). Without an OCR
        engine, or when it fails, nothing says what the pixels show: None, not sent.
        """
        if self.ocr is None:
            return None
        image = decode_screenshot(image_bytes, where="a screenshot for a cloud model")
        try:
            lines = self.ocr.read(image)
        except OcrError as exc:
            _log.warning("a screenshot was not sent to a cloud model: OCR could not check it (%s)", exc)
            return None
        drawn = [_padded(line.box) for line in lines if self.redact_text(line.text).changed]
        return self._paint(image_bytes, elements, _black, "black out", extra=drawn)

    def _paint(self, image_bytes: bytes, elements: tuple[UIElement, ...],
               paint: Callable[[Image.Image, tuple[int, int, int, int]], None], verb: str,
               extra: Sequence[Bounds] = ()) -> bytes:
        _, sensitive = self.redact_elements(elements)
        image = Image.fromarray(decode_screenshot(image_bytes, where=f"a screenshot to {verb}"))
        boxes = [*(e.bounds for e in elements if e.id in sensitive and e.bounds.area > 0), *extra]
        for b in boxes:
            box = (max(0, b.left), max(0, b.top), min(image.width, b.right), min(image.height, b.bottom))
            if box[2] > box[0] and box[3] > box[1]:
                paint(image, box)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()


def _padded(box: Bounds) -> Bounds:
    return Bounds(left=box.left - _OCR_PAD, top=box.top - _OCR_PAD, right=box.right + _OCR_PAD,
                  bottom=box.bottom + _OCR_PAD)


def _black(image: Image.Image, box: tuple[int, int, int, int]) -> None:
    ImageDraw.Draw(image).rectangle((box[0], box[1], box[2] - 1, box[3] - 1), fill=(0, 0, 0))


def redactor_for(endpoint: LLMEndpoint, settings: PerceptionSettings, *,
                 ocr: OcrEngine | None = None) -> Redactor | None:
    """The redactor to apply before sending to ``endpoint``: None for a local model.

    ``ocr`` reads the pixels of the screenshots it masks (a role that sends none needs none).
    """
    return Redactor.from_settings(settings, ocr=ocr) if endpoint.locality == "cloud" else None
