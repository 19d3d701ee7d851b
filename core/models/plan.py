"""What is asked and how it is split: the query, and the plan's DAG of per-app sub-tasks."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Self

from pydantic import Field, field_validator, model_validator

from core.models.base import Frozen
from core.models.evaluation import RiskCategory
from core.models.usage import ModelCall, ModelFallback

__all__ = ["ActKind", "ActRequest", "Edge", "Heard", "PageMode", "Plan", "Query", "SubTask"]


class PageMode(StrEnum):
    """Where a sub-task ends (DroidRetriever section 4.4)."""

    FOCUSED = "focused"  # one result details page
    LIST_VIEW = "list_view"  # the search results list itself
    MULTI_PAGE = "multi_page"  # several details pages in turn, up to a browsing limit

    @classmethod
    def parse(cls, text: str) -> PageMode:
        """Accept the paper's spellings: ``Multi-page``, ``list-view``, ``list``, ``Focused``."""
        key = re.sub(r"[\s\-]+", "_", text.strip().lower())
        aliases = {"list": cls.LIST_VIEW, "listview": cls.LIST_VIEW, "multipage": cls.MULTI_PAGE}
        if key in aliases:
            return aliases[key]
        try:
            return cls(key)
        except ValueError:
            raise ValueError(
                f"unknown page mode {text!r}: use focused, list_view or multi_page"
            ) from None


class ActKind(StrEnum):
    """A kind of act a request may ask for in the person's name; the agent does none of them."""

    PAY = "pay"
    TOP_UP = "top_up"
    ORDER = "order"  # order or buy
    BOOK = "book"
    SEND = "send"  # a message, or money to someone
    TRANSFER = "transfer"
    POST = "post"
    DELETE = "delete"

    @property
    def verb(self) -> str:
        """The act as a verb a sentence can use: "top up", "order"."""
        return self.value.replace("_", " ")

    @property
    def risk(self) -> RiskCategory:
        """The risk criterion the act falls under (what the pause for the person names)."""
        if self in (ActKind.SEND, ActKind.POST):
            return RiskCategory.SENDING
        return RiskCategory.DELETION if self is ActKind.DELETE else RiskCategory.PAYMENT


_NEVER_DONE = "pays, orders, books, sends, transfers, posts or deletes"


class ActRequest(Frozen):
    """A question that asks the agent to act ("top up my phone by 50 yuan", "帮我下单") rather than
    to find something out. The agent does not do it: it opens where the act is done and pauses
    there for the person; ``notice`` says so in one line (:meth:`of` writes it)."""

    kind: ActKind
    words: str = Field(min_length=1, max_length=200)  # the words that ask for it: "top up", "充值"
    notice: str = Field(min_length=1)

    @classmethod
    def of(cls, kind: ActKind, words: str) -> ActRequest:
        """The request to ``kind``, asked in ``words``, with its notice."""
        verb = kind.verb
        return cls(kind=kind, words=words, notice=(
            f"A request to {verb}: the agent never {_NEVER_DONE} in your name, so it does not "
            f"{verb}; it opens where to {verb} and pauses there for you."))

    def not_done(self, *, reached: bool, why: str = "") -> str:
        """What the report says of an app of the request: never that it was done."""
        verb = self.kind.verb
        where = ("the page is open for you" if reached
                 else f"it did not reach the page to {verb}" + (f" ({why})" if why else ""))
        return f"the agent does not {verb}; {where}"


class Heard(Frozen):
    """What a speech engine heard in a spoken question, shown so a person can correct it."""

    text: str = Field(max_length=2000)
    engine: str  # "pocketsphinx:en-us", "http:<model>"
    low_accuracy: bool = False  # the offline engine: say so next to what it heard


class Query(Frozen):
    """What a person (or a schedule, or a benchmark) asks."""

    text: str = Field(min_length=1, max_length=2000)
    apps: tuple[str, ...] = ()  # labels or packages allowed; empty = any installed
    mode: PageMode | None = None  # force a page mode for every sub-task
    browsing_limit: int = Field(default=3, ge=1, le=20)
    audio_key: str | None = None  # object-store key of the recording it was transcribed from
    heard: Heard | None = None  # what the engine heard; ``text`` is the question as corrected
    language: str | None = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty: type what you want to find out")
        return value.strip()


class SubTask(Frozen):
    """One app, one goal: a node of the plan."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    app_label: str
    package: str
    goal: str  # natural-language goal for this app, rewritten with upstream facts
    search_term: str | None = None  # None = direct navigation (no in-app search)
    page_mode: PageMode = PageMode.FOCUSED
    browsing_limit: int = Field(default=3, ge=1, le=20)
    # A request to act: the sub-task opens where it is done and pauses there, never does it.
    act: ActKind | None = None


class Edge(Frozen):
    """Information that flows from one sub-task's answer into another's goal."""

    source: str
    target: str
    info: str  # what is carried, e.g. "the restaurant's address"


class Plan(Frozen):
    """The decomposition: a DAG of sub-tasks (MobileSteward's scheduling graph)."""

    query: Query
    subtasks: tuple[SubTask, ...]
    edges: tuple[Edge, ...] = ()
    decomposer: str  # which policy produced it: "llm:<model>" or "rules"
    notes: tuple[str, ...] = ()  # honest remarks, e.g. apps asked for but not installed
    calls: tuple[ModelCall, ...] = ()  # the decomposer's requests, failed ones included
    fallback: ModelFallback | None = None  # set when the configured decomposer failed
    act_request: ActRequest | None = None  # the question asks the agent to act, not to find out

    @model_validator(mode="after")
    def _is_dag(self) -> Self:
        ids = [s.id for s in self.subtasks]
        if len(set(ids)) != len(ids):
            raise ValueError("sub-task ids must be unique")
        known = set(ids)
        for edge in self.edges:
            if edge.source not in known or edge.target not in known:
                raise ValueError(f"edge {edge.source}->{edge.target} names an unknown sub-task")
        self.topological_order()  # raises on a cycle
        return self

    def topological_order(self) -> tuple[SubTask, ...]:
        """Sub-tasks ordered so every edge's source precedes its target (stable)."""
        by_id = {s.id: s for s in self.subtasks}
        indegree = {s.id: 0 for s in self.subtasks}
        for edge in self.edges:
            indegree[edge.target] += 1
        ready = [s.id for s in self.subtasks if indegree[s.id] == 0]
        order: list[SubTask] = []
        while ready:
            current = ready.pop(0)
            order.append(by_id[current])
            for edge in self.edges:
                if edge.source == current:
                    indegree[edge.target] -= 1
                    if indegree[edge.target] == 0:
                        ready.append(edge.target)
        if len(order) != len(self.subtasks):
            raise ValueError("the plan's edges form a cycle")
        return tuple(order)

    def upstream(self, subtask_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.target == subtask_id)

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.package for s in self.subtasks))
