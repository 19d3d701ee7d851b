"""Honest scoring of a report against a task's scoring points: coverage, accuracy, redundancy.

A scoring point counts only where the report states it as an answer: in a
**claim**, that is a sentence, list item or table row that carries a citation
(``[capture_id(quote)]``), outside the report's page dumps
(:attr:`core.models.Report.page_dumps`: pages copied as they are
because nothing matched the question). Text inside a citation's quote is not
part of the claim: a reader of the report does not see it. A task's
``wrong_points`` are values a report must not state as the answer (a record a
filter excludes, another product's price): stated in a claim, they count
against accuracy.

The metrics follow the DroidRetriever paper's Study 1:

    coverage    scoring points stated / scoring points of the task
    accuracy    scoring points stated / (scoring points stated + wrong values stated);
                None when the report states neither (omitted points do not count)
    redundancy  claims that state no scoring point and no wrong value / all claims

A point matches a claim when, after normalising both (NFKC, case, spaces,
Markdown emphasis, thousands separators and trailing decimal zeros), the
point's text is in the claim's, not glued to a Latin letter or digit
(``G7371`` is not in ``G73711``, ``25.5`` not in ``125.5``); or when the point
holds one value with a unit (``¥25.5``, ``15小时12分``, ``3.1M``; also inside
words, ``约28分钟送达``, ``过路费¥712``) and the claim states a value of the same
kind and unit within the point's tolerance (exact by default), however it is
written (``25.50元``, ``15 h 12 min``, ``310万``, ``28分钟``): see
:mod:`suites.quantities`. A bare number inside words
(``月售3200``) is compared as text only. A point listed k times (two records
with the same value) needs k different claims; a point stated twice counts once.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from core.models import LineSpan, Report
from suites.errors import SuiteError
from suites.quantities import Quantity, QuantityKind, read_quantities, read_quantity
from suites.task import SuiteTask
from tasks.synthesis.citations import iter_citation_marks, parse_citations, replace_citations

__all__ = [
    "Claim",
    "PointMatcher",
    "ReportScore",
    "iter_claims",
    "normalise_text",
    "score_report",
    "score_task_report",
]

_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A sentence ends at 。！？!? or at ". " (not inside a number such as 25.5).
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+(?=\S)")
_END_BEFORE_MARK = re.compile(r"([。！？!?；;]|\.(?!\d))\s*$")
_EMPHASIS = re.compile(r"\*\*|__|`|\\(?=[\\`*_{}\[\]()#+\-.!|>~])")
_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3})((?:,\d{3})+)(?![\d])")
_TRAILING_ZEROS = re.compile(r"(?<![\d.])(\d+)\.(\d*?)0+(?![\d.])")
_SPACE = re.compile(r"\s+")
# Spaces matter only between two Latin letters or digits ("G7371 13:05" is not "G737113:05").
_LOOSE_SPACE = re.compile(r"(?<![0-9a-z])\s+|\s+(?![0-9a-z])")


class Claim(BaseModel):
    """One statement of a report's answer: its text as a reader sees it, and its line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int  # 0-based line of the report's Markdown
    text: str  # citations removed


def normalise_text(text: str) -> str:
    """The form points and claims are compared in (see the module docstring)."""
    text = _EMPHASIS.sub("", unicodedata.normalize("NFKC", text)).casefold()
    text = _THOUSANDS.sub(lambda m: m[1] + m[2].replace(",", ""), text)
    text = _TRAILING_ZEROS.sub(lambda m: m[1] + ("." + m[2] if m[2] else ""), text)
    return _LOOSE_SPACE.sub("", _SPACE.sub(" ", text).strip())


def _is_word(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _contains(text: str, part: str) -> bool:
    """``part`` in ``text``, not glued to a Latin letter or digit ("25.5" is not in "125.5")."""
    start = text.find(part)
    while start != -1:
        end = start + len(part)
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        after_glued = _is_word(after) or (after in ".," and end + 1 < len(text) and text[end + 1].isdigit())
        if not ((_is_word(part[0]) and _is_word(before)) or (_is_word(part[-1]) and after_glued)):
            return True
        start = text.find(part, start + 1)
    return False


def _attach_citations(line: str) -> str:
    """Move a sentence's end after the citations that follow it: "¥25. [c1(x)] Next" -> "¥25 [c1(x)]. Next"."""
    pieces: list[str] = []
    cursor = 0
    for mark in iter_citation_marks(line):
        before = line[cursor:mark.start]
        match = _END_BEFORE_MARK.search(before)
        if match:
            pieces += [before[:match.start()], " ", line[mark.start:mark.end], match[1]]
        else:
            pieces += [before, line[mark.start:mark.end]]
        cursor = mark.end
    return "".join(pieces) + line[cursor:]


def _sentences(line: str) -> list[str]:
    """A table row or list item is one claim; a paragraph line is split into sentences."""
    stripped = line.strip()
    if stripped.startswith("|") or _LIST_MARK.match(line) or stripped.startswith("#"):
        return [line]
    return [part for part in _SENTENCE_END.split(_attach_citations(line)) if part.strip()]


def iter_claims(markdown: str, page_dumps: Sequence[LineSpan] = ()) -> list[Claim]:
    """The report's claims, in reading order: cited sentences, items and rows outside page dumps."""
    claims: list[Claim] = []
    for number, line in enumerate(markdown.splitlines()):
        if any(number in span for span in page_dumps) or _TABLE_RULE.match(line.strip()):
            continue
        for sentence in _sentences(line):
            if parse_citations(sentence):
                text = replace_citations(sentence, lambda _mark: " ")
                claims.append(Claim(line=number, text=_SPACE.sub(" ", text).strip()))
    return claims


class PointMatcher:
    """Decides whether a claim states one point (by text, or by value for a one-value point)."""

    def __init__(self, point: str, tolerance: str | None = None) -> None:
        self.point = point
        self.text = normalise_text(point)
        if not self.text:
            raise SuiteError(f"the scoring point {point!r} is empty once normalised",
                             hint="write the value as the phone shows it")
        self.quantity = read_quantity(point) or self._one_unit_value(point)
        self.tolerance = self._read_tolerance(tolerance)

    @staticmethod
    def _one_unit_value(point: str) -> Quantity | None:
        """The value of a point that holds one value with a unit among words (``约28分钟送达``)."""
        found = read_quantities(point)
        if len(found) == 1 and found[0].kind is not QuantityKind.COUNT:
            return found[0]
        return None

    def _read_tolerance(self, tolerance: str | None) -> tuple[float, bool]:
        """(amount, relative): ``±1小时`` -> (60, False); ``5%`` on a price -> (0.05, True)."""
        if tolerance is None:
            return 0.0, False
        spec = tolerance.strip().lstrip("±+")
        amount = read_quantity(spec)
        if self.quantity is None or amount is None:
            raise SuiteError(f"the tolerance {tolerance!r} of {self.point!r} cannot apply",
                             hint="give a tolerance only to a one-value point, in its unit or in %")
        if amount.kind is QuantityKind.PERCENT and self.quantity.kind is not QuantityKind.PERCENT:
            return amount.value / 100.0, True
        if not amount.same_kind(self.quantity) and amount.kind is not QuantityKind.COUNT:
            raise SuiteError(f"the tolerance {tolerance!r} is not in the unit of {self.point!r}",
                             hint="write it in the point's unit, e.g. '±1小时' for a drive time")
        return amount.value, False

    def _close(self, wanted: Quantity, found: Quantity) -> bool:
        if not (found.same_kind(wanted)
                or {found.kind, wanted.kind} == {QuantityKind.SCORE, QuantityKind.COUNT}):
            return False
        amount, relative = self.tolerance
        allowed = amount * abs(wanted.value) if relative else amount
        return abs(found.value - wanted.value) <= allowed + 1e-9 * max(1.0, abs(wanted.value))

    def matches(self, claim_text: str) -> bool:
        """Whether the claim states this point."""
        if _contains(normalise_text(claim_text), self.text):
            return True
        wanted = self.quantity
        return wanted is not None and any(self._close(wanted, q) for q in read_quantities(claim_text))


class ReportScore(BaseModel):
    """How a report answers one task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    points_total: int = Field(ge=1)
    found: tuple[str, ...] = ()  # scoring points stated (a point listed twice and stated twice: twice)
    missed: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()  # wrong values stated, each once
    claims: int = 0
    redundant_claims: int = 0

    @property
    def coverage(self) -> float:
        return len(self.found) / self.points_total

    @property
    def accuracy(self) -> float | None:
        stated = len(self.found) + len(self.wrong)
        return len(self.found) / stated if stated else None

    @property
    def redundancy(self) -> float | None:
        return self.redundant_claims / self.claims if self.claims else None

    @property
    def fully_answered(self) -> bool:
        """Every scoring point stated, and no wrong value."""
        return not self.missed and not self.wrong


def score_report(
    markdown: str,
    points: Sequence[str],
    wrong_points: Sequence[str] = (),
    *,
    page_dumps: Sequence[LineSpan] = (),
    tolerances: Mapping[str, str] | None = None,
) -> ReportScore:
    """Score a report's Markdown against a task's points (see the module docstring)."""
    if not points:
        raise SuiteError("a task needs at least one scoring point to be scored",
                         hint="list the values a correct report states under scoring_points")
    tolerances = tolerances or {}
    claims = iter_claims(markdown, page_dumps)
    tied = [False] * len(claims)
    found: list[str] = []
    missed: list[str] = []
    for point, wanted in Counter(points).items():
        matcher = PointMatcher(point, tolerances.get(point))
        hits = [i for i, claim in enumerate(claims) if matcher.matches(claim.text)]
        for i in hits:
            tied[i] = True
        found += [point] * min(wanted, len(hits))
        missed += [point] * max(0, wanted - len(hits))
    wrong: list[str] = []
    for value in dict.fromkeys(wrong_points):
        matcher = PointMatcher(value, tolerances.get(value))
        hits = [i for i, claim in enumerate(claims) if matcher.matches(claim.text)]
        for i in hits:
            tied[i] = True
        if hits:
            wrong.append(value)
    return ReportScore(points_total=len(points), found=tuple(found), missed=tuple(missed),
                       wrong=tuple(wrong), claims=len(claims), redundant_claims=tied.count(False))


def score_task_report(task: SuiteTask, report: Report) -> ReportScore:
    """Score ``report`` against ``task``'s points, wrong values and tolerances."""
    return score_report(report.markdown, task.scoring_points, task.wrong_points,
                        page_dumps=report.page_dumps, tolerances=task.tolerances)
