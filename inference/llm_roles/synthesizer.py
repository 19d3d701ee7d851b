"""LLM4, the synthesizer: the captures' text in, a cited Markdown report out.

Each capture is one "interface" of the paper's prompt, identified by its
capture id, so the model's citations read ``[capture_id(original text)]``
(nested ``[[id1(a)][id2(b)]]``). Parsing and grounding the citations, and
checking that every key point carries one, is the synthesis step's job
(tasks/), not this role's.

What the model is given is bounded: :func:`fit_captures` keeps the captures
within a token budget, each capture keeping the lines most relevant to the
question (its search terms and words, and lines with numbers: prices, counts,
dates) in reading order. For a ``cloud`` endpoint the text is redacted first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.models import Capture
from inference.llm import ChatMessage, LLMClient, LLMReply
from inference.perception.redact import Redactor
from inference.perception.tokens import count_tokens
from inference.prompts import render_prompt

__all__ = ["CaptureText", "capture_text", "fit_captures", "synthesize_report"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]{2,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}|\d+(?:[.,]\d+)?")
_NUMBER = re.compile(r"\d")
_STOP = frozenset({
    "the", "and", "for", "with", "what", "which", "how", "does", "are", "is", "on", "in", "of", "from",
    "about", "this", "that", "there", "than", "find", "show", "tell", "list", "have", "has",
})


class CaptureText(BaseModel):
    """One capture as the synthesizer reads it: id, app, title and its text lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capture_id: str
    app_label: str
    title: str = ""
    text: str


def capture_text(capture: Capture, app_label: str, *, max_chars: int = 6000,
                 redactor: Redactor | None = None) -> CaptureText:
    """The capture's element texts in reading order (top to bottom, left to right)."""
    ordered = sorted(capture.elements, key=lambda e: (e.bounds.top, e.bounds.left))
    labels = (e.label.strip() for e in ordered)
    if redactor is not None:
        labels = (redactor.redact_text(label).text for label in labels)
    lines = list(dict.fromkeys(label for label in labels if label))
    text = "\n".join(lines)
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + "\n[... truncated]"
    title = redactor.redact_text(capture.title).text if redactor is not None else capture.title
    return CaptureText(capture_id=capture.id, app_label=app_label, title=title, text=text)


def fit_captures(captures: Sequence[CaptureText], budget: int, question: str,
                 terms: Sequence[str] = ()) -> tuple[CaptureText, ...]:
    """``captures`` within ``budget`` tokens of text, each keeping its most relevant lines.

    Each capture gets a share of the budget in proportion to its size (at least an
    equal share of a tenth); inside it, lines naming a search term, then lines
    sharing the question's words, then lines with numbers, then short lines win;
    kept lines stay in reading order, with a marker saying how many were left out.
    """
    sizes = [count_tokens(c.text) for c in captures]
    if sum(sizes) <= budget or not captures:
        return tuple(captures)
    words = {w.casefold() for w in _WORD.findall(question) if w.casefold() not in _STOP}
    wanted = [t.casefold() for t in terms if t.strip()]
    floor = budget / (10 * len(captures))
    shares = [max(floor, budget * size / sum(sizes)) for size in sizes]
    scale = budget / sum(shares)
    return tuple(_keep_relevant(c, int(share * scale), words, wanted) for c, share in zip(captures, shares, strict=True))


def _keep_relevant(capture: CaptureText, budget: int, words: set[str], terms: list[str]) -> CaptureText:
    lines = capture.text.split("\n")
    costs = [count_tokens(line) + 1 for line in lines]
    if sum(costs) <= budget:
        return capture

    def score(index: int) -> tuple[int, int, int, int]:
        line = lines[index].casefold()
        return (
            -sum(term in line for term in terms),
            -len(words & {w.casefold() for w in _WORD.findall(lines[index])}),
            0 if _NUMBER.search(line) else 1,
            costs[index],
        )

    kept: set[int] = set()
    spent = 0
    for index in sorted(range(len(lines)), key=score):
        if spent + costs[index] <= budget:
            kept.add(index)
            spent += costs[index]
    left_out = len(lines) - len(kept)
    text = "\n".join(lines[i] for i in sorted(kept))
    return capture.model_copy(update={"text": f"{text}\n[... {left_out} less relevant lines left out]"})


def synthesize_report(
    client: LLMClient, *, task: str, captures: Sequence[CaptureText], redactor: Redactor | None = None,
    deadline_s: float | None = None,
) -> LLMReply[str]:
    """Ask LLM4 for the Markdown report (a table for comparisons, a narrative otherwise).

    ``deadline_s``: the model time the run has left (caps the call's own deadline).
    """
    shown = redactor.redact_text(task).text if redactor is not None else task
    prompt = render_prompt("synthesizer", task=shown, interfaces=list(captures))
    reply = client.chat_text(
        [
            ChatMessage(role="system", content=prompt.system),
            ChatMessage(role="user", content=prompt.user),
        ],
        deadline_s=deadline_s,
    )
    return reply.model_copy(update={"prompt_version": prompt.version})
