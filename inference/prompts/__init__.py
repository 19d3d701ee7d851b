"""Prompt templates for the four roles, as versioned Jinja2 files.

Each ``<name>.j2`` starts with a ``{# version: <name>/<n> #}`` line (the version
is recorded with every model call) and defines two blocks, ``system`` and
``user``. Rendering uses ``StrictUndefined``: a missing variable is an error,
never an empty string in a prompt.

Screen text and capture text are untrusted DATA: templates insert them through
the ``data`` filter inside ``<screen_data>`` style delimiters, and the filter
turns angle brackets into look-alikes so no screen can close the delimiter and
speak as the instruction.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict

__all__ = ["PROMPT_NAMES", "RenderedPrompt", "neutralize_data", "prompt_version", "render_prompt"]

PROMPT_NAMES = ("decomposer", "navigator", "evaluator", "synthesizer")
_DIR = Path(__file__).resolve().parent
_VERSION_RE = re.compile(r"^\{#\s*version:\s*(\S+)\s*#\}")


class RenderedPrompt(BaseModel):
    """A prompt ready to send: its two parts and the template version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str
    system: str
    user: str


def neutralize_data(value: object) -> str:
    """Text from a screen, made inert inside the prompt's data delimiters."""
    return str(value).replace("<", "‹").replace(">", "›")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_DIR),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,  # plain-text prompts, not HTML
    )
    env.filters["data"] = neutralize_data
    return env


def prompt_version(name: str) -> str:
    """The version line of ``name``.j2, e.g. ``navigator/3``."""
    source = _template_source(name)
    match = _VERSION_RE.match(source)
    if match is None:
        raise ValueError(f"prompt {name}.j2 has no '{{# version: ... #}}' first line")
    return match.group(1)


def render_prompt(name: str, **variables: Any) -> RenderedPrompt:
    """Render the ``system`` and ``user`` blocks of ``name``.j2 with ``variables``."""
    if name not in PROMPT_NAMES:
        raise ValueError(f"unknown prompt {name!r}: choose one of {', '.join(PROMPT_NAMES)}")
    template = _environment().get_template(f"{name}.j2")
    context = template.new_context(variables)
    parts = {
        block: "".join(template.blocks[block](context)).strip() for block in ("system", "user")
    }
    return RenderedPrompt(
        name=name, version=prompt_version(name), system=parts["system"], user=parts["user"]
    )


@lru_cache(maxsize=len(PROMPT_NAMES))
def _template_source(name: str) -> str:
    return (_DIR / f"{name}.j2").read_text(encoding="utf-8")
