"""Is every key point of a written report backed by a grounded citation?

A key point is a line that states something: a list item, a table row (not its
header or separator), a paragraph line. Headings, quotes (banners), rules,
code fences and lead-in lines ending with a colon are not. A key point is
cited when at least one citation on its line was grounded on a capture.

A model's report whose key points are all uncited is not published (the
extractive report replaces it, saying why); one with some uncited points is
published with those points marked ``*(uncited)*`` and a warning above it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.models import Citation
from tasks.synthesis.citations import iter_citation_marks

__all__ = ["UNCITED_MARK", "KeyPointCheck", "check_key_points", "mark_uncited"]

UNCITED_MARK = "*(uncited)*"
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")
_RULE = re.compile(r"^([-*_])(\s*\1){2,}$")
_WORDY = re.compile(r"[A-Za-z0-9\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


class KeyPointCheck(BaseModel):
    """Key points found (line numbers), which of them no grounded citation backs, and citation counts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    points: tuple[int, ...] = ()
    uncited: tuple[int, ...] = ()
    grounded: int = 0
    citations: int = 0

    def warning(self) -> str:
        """One sentence for the report's top and footer ('' when every point is cited)."""
        if not self.uncited:
            return ""
        return (f"{len(self.uncited)} of {len(self.points)} key points carry no grounded citation "
                f"(marked {UNCITED_MARK}): check them against the screenshots")


def check_key_points(markdown: str, citations: Sequence[Citation]) -> KeyPointCheck:
    """Check ``markdown`` against its grounded ``citations`` (the i-th ref in it is ``citations[i]``)."""
    lines = markdown.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    grounded_lines: set[int] = set()
    index = 0
    line_no = 0
    for mark in iter_citation_marks(markdown):
        while starts[line_no + 1] <= mark.start:
            line_no += 1
        for _ in mark.refs:
            if index < len(citations) and citations[index].grounded:
                grounded_lines.add(line_no)
            index += 1
    points = tuple(i for i in range(len(lines)) if _is_key_point(lines, i))
    return KeyPointCheck(points=points, uncited=tuple(i for i in points if i not in grounded_lines),
                         grounded=sum(1 for c in citations if c.grounded), citations=len(citations))


def mark_uncited(markdown: str, check: KeyPointCheck) -> str:
    """``markdown`` with each uncited key point marked, and the warning above it."""
    if not check.uncited:
        return markdown
    lines = markdown.split("\n")
    for i in check.uncited:
        line = lines[i].rstrip()
        if line.startswith("|") and line.endswith("|") and len(line) > 1:
            lines[i] = f"{line[:-1].rstrip()} {UNCITED_MARK} |"
        else:
            lines[i] = f"{line} {UNCITED_MARK}"
    return f"> **{check.warning()}.**\n\n" + "\n".join(lines)


def _is_key_point(lines: Sequence[str], i: int) -> bool:
    line = lines[i].strip()
    if not line or not _WORDY.search(line):
        return False
    if line.startswith(("#", ">", "```", "~~~")) or _RULE.match(line) or _SEPARATOR.match(line):
        return False
    if line.endswith(":") or line.endswith("："):
        return False  # a lead-in ("The prices:") introduces key points, it is not one
    if line.startswith("|"):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        return not _SEPARATOR.match(following)  # a table's header row names columns
    return True
