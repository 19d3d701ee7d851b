"""LLM4, the synthesizer: the captures' text in, a cited Markdown report out.

Each capture is one "interface" of the paper's prompt, identified by its
capture id, so the model's citations read ``[capture_id(original text)]``
(nested ``[[id1(a)][id2(b)]]``). Parsing and grounding the citations is the
synthesis step's job (tasks/), not this role's.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from droidretriever.models import Capture
from inference.llm import ChatMessage, LLMClient, LLMReply
from inference.prompts import render_prompt

__all__ = ["CaptureText", "capture_text", "synthesize_report"]


class CaptureText(BaseModel):
    """One capture as the synthesizer reads it: id, app, title and its text lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capture_id: str
    app_label: str
    title: str = ""
    text: str


def capture_text(capture: Capture, app_label: str, *, max_chars: int = 6000) -> CaptureText:
    """The capture's element texts in reading order (top to bottom, left to right)."""
    ordered = sorted(capture.elements, key=lambda e: (e.bounds.top, e.bounds.left))
    lines = list(dict.fromkeys(e.label.strip() for e in ordered if e.label.strip()))
    text = "\n".join(lines)
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + "\n[... truncated]"
    return CaptureText(capture_id=capture.id, app_label=app_label, title=capture.title, text=text)


def synthesize_report(
    client: LLMClient, *, task: str, captures: Sequence[CaptureText]
) -> LLMReply[str]:
    """Ask LLM4 for the Markdown report (a table for comparisons, a narrative otherwise)."""
    prompt = render_prompt("synthesizer", task=task, interfaces=list(captures))
    reply = client.chat_text(
        [
            ChatMessage(role="system", content=prompt.system),
            ChatMessage(role="user", content=prompt.user),
        ]
    )
    return reply.model_copy(update={"prompt_version": prompt.version})
