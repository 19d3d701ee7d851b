"""Route memory: routes that reached the target before, replayed with a screen check.

MobileSteward keeps a Task Guideline Memory of successful executions and
retrieves the top-3 by BM25 over the task text; this is that memory for one
app at a time. A route is recalled only when it is ``confirmed``: its target
was judged by more than one model's word (the caller decides, see
:mod:`tasks.navigate.targets`); an unconfirmed one is kept, for a later run to
confirm, but never replayed. A route whose replay ended on a page judged not
the target is forgotten with every copy of it (:meth:`RouteMemory.forget_copies`:
the same steps remembered for another wording of the question, or another way
to the same last step for the same question), so one wrong verdict is not
remembered at all. A :class:`Route` is a list of steps, each an action plus what
the screen looked like when it was taken (fingerprint and anchor texts) and
the target element described by its label / resource id rather than by an id
that changes between runs. The search term a route typed is stored as a slot,
so a route learnt for "Big Mac" replays for "McFlurry", up to the search: the result it
opened is opened again only for the same term, and for another the copilot chooses
the result afresh (it would be the earlier question's item).

Routes live in an object store under ``memory/routes/<package>.json``, through
the two-method :class:`BlobStore` protocol (the storage layer's ObjectStore
fits it). :class:`RouteReplay` is what the navigation loop calls each step: it
returns the next action when the screen matches the step, or ``None`` to hand
over to the next policy.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

import bm25s
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.models import (
    Action,
    Input,
    LongPress,
    PageMode,
    Screen,
    Scroll,
    Tap,
    UIElement,
    utcnow,
)
from inference.errors import RouteMemoryError
from inference.rules.page_type import shows_content
from inference.rules.segment import is_function_word, split_words

__all__ = [
    "SEARCH_SLOT",
    "BlobStore",
    "ElementAnchor",
    "Route",
    "RouteMatch",
    "RouteMemory",
    "RouteReplay",
    "RouteStep",
    "anchor_for",
    "content_words",
    "shows_goal",
    "tokenize_goal",
]

SEARCH_SLOT = "{search_term}"
_ANCHOR_SHARE = 0.6  # share of a step's anchor texts that must be on the screen
_MAX_ROUTES_PER_APP = 200
_TARGET_LINES = 120  # text lines of a route's target page kept to judge later questions by
_ANSWERED_SHARE = 0.75  # of a new goal's content words its target page must show
_TOKEN_RE = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_LATIN_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'’\-]+")
_CJK_RUN_RE = re.compile(r"[\u3400-\u9fff]+")
# The goal's frame ('In <app>, search for "..."') and English grammar: never what a goal asks.
_FRAME_TEXT = """
    a an the in on at of for to from by with about and or but is are was were be been do does did
    has have had can could should would will how what which who whom whose when where why much many
    search open find show tell me my i you your it its this that these those there here please
    some any all each every just only also than then so not no yes get give most more less least
    check see look list
"""
_FRAME_WORDS = frozenset(_FRAME_TEXT.split())


class BlobStore(Protocol):
    """The two calls route memory needs from an object store."""

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or None when there is no such key."""
        ...

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what was there."""
        ...


class ElementAnchor(BaseModel):
    """How to find the same element again on a later run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str = ""
    resource_id: str = ""
    class_name: str = ""


class RouteStep(BaseModel):
    """One step: the action, and the screen it is valid on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Action
    target: ElementAnchor | None = None
    fingerprint: str = ""
    anchors: tuple[str, ...] = ()  # texts that identify the screen the step starts on
    # The search term this tap chose a result for (the first tap after the search is submitted):
    # replayed only for that very term; for another the copilot chooses the result afresh.
    result_of: str = ""


class Route(BaseModel):
    """A sequence of steps that reached a sub-task's target page in one app."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str
    goal: str  # the goal with its search term replaced by the slot
    page_mode: PageMode = PageMode.FOCUSED
    steps: tuple[RouteStep, ...]
    successes: int = Field(default=1, ge=1)
    # Replays that ended on a page judged not the target, counted before such a replay forgot
    # the route (files written before issue 31): a route that failed as often as it worked is
    # not recalled.
    failures: int = Field(default=0, ge=0)
    # Its target was confirmed beyond the evaluator model's word (the rules agreed, or the page
    # passed the answer checks): only a confirmed route is recalled.
    confirmed: bool = True
    last_used: datetime = Field(default_factory=utcnow)
    # What its target page showed (text lines): a route is recalled only for a question that page
    # answers. And the app map's screens it went through (ids), for the map's version.
    target_texts: tuple[str, ...] = ()
    map_path: tuple[str, ...] = ()
    map_version: str = ""

    @property
    def id(self) -> str:
        """A short stable name of the route (its goal and actions), for ``droidretriever memory``."""
        text = self.goal + "\x1f" + "\x1f".join(f"{s.action.kind}:{s.target}" for s in self.steps)
        return hashlib.blake2b(text.encode(), digest_size=4).hexdigest()


class RouteMatch(BaseModel):
    """A retrieved route and its BM25 score against the new goal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    route: Route
    score: float


class _RouteFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str
    routes: tuple[Route, ...] = ()


def tokenize_goal(text: str) -> list[str]:
    """Lower-case words and single CJK characters (CJK has no spaces to split on)."""
    return _TOKEN_RE.findall(text.lower())


def content_words(goal: str, ignore: Sequence[str] = ()) -> set[str]:
    """The words of ``goal`` that say what it asks: Latin words but the frame's and grammar's,
    Chinese words (jieba) that are no function words; the search slot and ``ignore`` (the app's
    names) left out."""
    text = goal.lower().replace(SEARCH_SLOT, " ")
    for name in sorted((n.lower() for n in ignore if n.strip()), key=len, reverse=True):
        text = text.replace(name, " ")
    latin = {w for w in _LATIN_WORD_RE.findall(text) if w not in _FRAME_WORDS}
    chinese = {w for run in _CJK_RUN_RE.findall(text) for w in split_words(run)
               if len(w) >= 2 and not is_function_word(w, run)}
    return latin | chinese


def shows_goal(texts: Sequence[str], goal: str, *, search_term: str | None = None,
               ignore: Sequence[str] = ()) -> bool:
    """Whether a page's ``texts`` show most of what ``goal`` asks: its content words, the search
    term, the app's names (``ignore``) and the question's frame left out (true when it asks none)."""
    return _shows_most(texts, content_words(_slot(goal, search_term), ignore))


def _answers(target_texts: Sequence[str], wanted: set[str]) -> bool:
    """Whether a route's target page, by what it showed, answers a new goal that asks ``wanted``
    beyond what the route's own goal asked (content words, the search term left out): most of them
    are on it. A route kept before pages were remembered (no texts) is judged by its goal alone."""
    return not target_texts or _shows_most(target_texts, wanted)


def _shows_most(texts: Sequence[str], wanted: set[str]) -> bool:
    if not wanted:
        return True
    shown = " ".join(texts).casefold()
    found = sum(1 for word in wanted if word in shown)
    return found >= _ANSWERED_SHARE * len(wanted)


def _alike(words: set[str], wanted: set[str]) -> bool:
    """Two goals ask alike: they share a word of content, or neither has one besides its term."""
    return bool(words & wanted) if wanted else not words


def anchor_for(screen: Screen, element_id: str | None) -> ElementAnchor | None:
    """The anchor of ``element_id`` on ``screen`` (None when it is not there)."""
    element = screen.element(element_id) if element_id else None
    if element is None:
        return None
    return ElementAnchor(
        label=element.label, resource_id=element.resource_id, class_name=element.class_name
    )


class RouteMemory:
    """Per-app memory of successful routes, retrieved by BM25 over goal text."""

    def __init__(self, store: BlobStore, *, prefix: str = "memory/routes") -> None:
        self._store = store
        self._prefix = prefix.rstrip("/")

    def load(self, package: str) -> tuple[Route, ...]:
        """Every stored route for ``package`` (empty when none)."""
        key = self._key(package)
        data = self._store.get(key)
        if data is None:
            return ()
        try:
            return _RouteFile.model_validate_json(data).routes
        except ValidationError as exc:
            raise RouteMemoryError(
                f"stored routes at {key} are unreadable: {exc.error_count()} problems",
                hint=f"delete {key} to start this app's route memory afresh",
            ) from exc

    def record(
        self,
        package: str,
        goal: str,
        steps: Sequence[RouteStep],
        *,
        search_term: str | None = None,
        page_mode: PageMode = PageMode.FOCUSED,
        target_texts: Sequence[str] = (),
        map_path: Sequence[str] = (),
        map_version: str = "",
        confirmed: bool = True,
    ) -> Route:
        """Remember a route that succeeded; the same route again only counts a success.

        ``target_texts``: what its target page showed; ``map_path``: the app map's screens it went
        through (with the map's version); ``confirmed``: its target was confirmed (else it is kept,
        never recalled, until a run confirms it)."""
        slotted_goal = _slot(goal, search_term)
        slotted_steps = tuple(_slot_step(step, search_term) for step in _mark_result(steps, search_term))
        seen = {"target_texts": tuple(target_texts)[:_TARGET_LINES], "map_path": tuple(map_path),
                "map_version": map_version}
        routes = list(self.load(package))
        for index, known in enumerate(routes):
            if known.goal == slotted_goal and _same_actions(known.steps, slotted_steps):
                updated = known.model_copy(update={
                    "successes": known.successes + 1, "last_used": utcnow(),
                    "confirmed": known.confirmed or confirmed, **seen})
                routes[index] = updated
                self._save(package, routes)
                return updated
        route = Route(package=package, goal=slotted_goal, page_mode=page_mode, steps=slotted_steps,
                      confirmed=confirmed, **seen)
        routes.append(route)
        # Keep the most useful routes when an app's memory grows large.
        routes.sort(key=lambda r: (r.successes, r.last_used), reverse=True)
        self._save(package, routes[:_MAX_ROUTES_PER_APP])
        return route

    def recall(
        self,
        package: str,
        goal: str,
        *,
        search_term: str | None = None,
        page_mode: PageMode | None = None,
        k: int = 3,
        ignore: Sequence[str] = (),
    ) -> tuple[RouteMatch, ...]:
        """Up to ``k`` confirmed routes for ``package`` whose goals best match ``goal`` (BM25,
        score > 0) among those sharing a word of content with it; ``ignore``: the app's names."""
        # A route is for the same kind of question only when the goals share a word of content
        # (not the goal's frame "In Taobao, search for", the app's names or grammar), or when
        # neither has one: "How much is {term} on Meituan?" asked for another term. Otherwise any
        # two questions about one app recall each other's routes through those words alone.
        slotted = _slot(goal, search_term)
        wanted = content_words(slotted, ignore)
        routes = [r for r in self.load(package)
                  if r.confirmed and (page_mode is None or r.page_mode == page_mode) and r.failures < r.successes
                  and _alike(content_words(r.goal, ignore), wanted)
                  and _answers(r.target_texts, wanted - content_words(r.goal, ignore))]
        query = tokenize_goal(slotted)
        if not routes or not query:
            return ()
        corpus = [tokenize_goal(r.goal) for r in routes]
        vocabulary = {token for tokens in corpus for token in tokens}
        query = [t for t in query if t in vocabulary]
        if not query:
            return ()  # nothing in common with any stored goal
        index = bm25s.BM25()
        index.index(corpus, show_progress=False)
        ids, scores = index.retrieve([query], k=min(k, len(routes)), show_progress=False)
        return tuple(
            RouteMatch(route=routes[int(i)], score=float(s))
            for i, s in zip(ids[0], scores[0], strict=True)
            if s > 0
        )

    def forget(self, package: str, route_id: str | None = None) -> int:
        """Forget one route of ``package`` (by :attr:`Route.id`), or all of them; how many went."""
        routes = list(self.load(package))
        kept = [r for r in routes if route_id is not None and r.id != route_id]
        self._save(package, kept)
        return len(routes) - len(kept)

    def forget_copies(self, route: Route) -> int:
        """Forget ``route``, whose replay ended on a page judged not the target, and every copy of
        it: the same steps remembered for another question (another wording, another mode), and
        for the same question any route ending in the same step. How many went."""
        routes = list(self.load(route.package))
        kept = [r for r in routes if not _copies(r, route)]
        if len(kept) < len(routes):
            self._save(route.package, kept)
        return len(routes) - len(kept)

    def _key(self, package: str) -> str:
        return f"{self._prefix}/{package}.json"

    def _save(self, package: str, routes: Sequence[Route]) -> None:
        data = _RouteFile(package=package, routes=tuple(routes)).model_dump_json(indent=1)
        self._store.put(self._key(package), data.encode("utf-8"))


class RouteReplay:
    """Replays one route step by step; any mismatch ends it (``None``) for the next policy."""

    def __init__(self, route: Route, *, search_term: str | None = None, goal: str | None = None) -> None:
        """``goal``: the sub-task's goal; a route learnt for another goal replays up to the item it
        opened, unless it searched (the search's result is checked against the term instead)."""
        self.route = route
        self._search_term = search_term
        self._same_goal = goal is None or _slot(goal, search_term) == route.goal
        # Whether the route types a search (its slot) on the way.
        self._searches = any(isinstance(s.action, Input) and SEARCH_SLOT in s.action.text for s in route.steps)
        self._position = 0
        self.stopped_reason = ""

    @property
    def finished(self) -> bool:
        return self._position >= len(self.route.steps) or bool(self.stopped_reason)

    def next_action(self, screen: Screen) -> Action | None:
        """The route's next action if ``screen`` is the screen it expects, else None."""
        if self.finished:
            return None
        step = self.route.steps[self._position]
        if not _screen_matches(step, screen):
            self.stopped_reason = f"step {self._position + 1}: the screen is not the one the route expects"
            return None
        action = self._resolve(step, screen)
        if action is None:
            self.stopped_reason = (self.stopped_reason
                                   or f"step {self._position + 1}: its target element is not on the screen")
            return None
        self._position += 1
        return action

    def _resolve(self, step: RouteStep, screen: Screen) -> Action | None:
        action = step.action
        if step.result_of and _fold(step.result_of) != _fold(self._search_term or ""):
            # The route replays up to the search: the result it opened was another search's.
            self.stopped_reason = (f"step {self._position + 1} opened the result of another search; "
                                   "the result for this one is chosen afresh")
            return None
        if isinstance(action, Input) and SEARCH_SLOT in action.text:
            if self._search_term is None:
                return None  # the route types a search term, and this task has none
            action = action.model_copy(
                update={"text": action.text.replace(SEARCH_SLOT, self._search_term)}
            )
        if step.target is None or not isinstance(action, Tap | LongPress | Input | Scroll):
            return action
        element_id = _find_anchor(step.target, screen)
        if element_id is None:
            return None
        element = screen.element(element_id)
        if (isinstance(action, Tap | LongPress) and not self._searches and element is not None
                and shows_content(element, screen)
                and not (self._same_goal and not self._search_term)
                and not (self._search_term and _fold(self._search_term) in _fold(element.label))):
            # A route that searched nothing opened an item of content for another question (the
            # newest mail, for "the mails about credit cards"; the RAM in the cart, for "the dearest
            # item in the cart"): the replay ends there and the item is chosen afresh.
            self.stopped_reason = (f"step {self._position + 1} opens an item another question chose; "
                                   "the item is chosen afresh")
            return None
        return action.model_copy(update={"target": element_id})


def _find_anchor(anchor: ElementAnchor, screen: Screen) -> str | None:
    """The id of the element matching ``anchor``: resource id and label, then either."""
    candidates = [e for e in screen.elements if anchor.class_name in ("", e.class_name)]
    keys: list[Callable[[UIElement], bool]] = [
        lambda e: e.resource_id == anchor.resource_id and e.label == anchor.label,
        lambda e: bool(anchor.label) and e.label == anchor.label,
        lambda e: bool(anchor.resource_id) and e.resource_id == anchor.resource_id,
    ]
    for wanted in keys:
        match = next((e for e in candidates if wanted(e)), None)
        if match is not None:
            return match.id
    return None


def _screen_matches(step: RouteStep, screen: Screen) -> bool:
    if step.fingerprint and step.fingerprint == screen.fingerprint:
        return True
    if not step.anchors:
        return not step.fingerprint  # nothing to check against: trust the route
    labels = {e.label for e in screen.elements if e.label}
    present = sum(1 for text in step.anchors if text in labels)
    return present >= _ANCHOR_SHARE * len(step.anchors)


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _mark_result(steps: Sequence[RouteStep], term: str | None) -> list[RouteStep]:
    """``steps`` with the tap that opened a search result marked with the term it was chosen for.

    That tap is the first one after the term is typed and submitted (with the typing,
    or by the tap right after it: the search button).
    """
    marked = list(steps)
    if not term:
        return marked
    typed = next((i for i, s in enumerate(marked) if isinstance(s.action, Input) and term in s.action.text), None)
    if typed is None:
        return marked
    taps = [i for i in range(typed + 1, len(marked)) if isinstance(marked[i].action, Tap | LongPress)]
    typing = marked[typed].action
    submitted = isinstance(typing, Input) and typing.submit
    pick = taps[0] if submitted and taps else taps[1] if len(taps) > 1 else None
    if pick is not None:
        marked[pick] = marked[pick].model_copy(update={"result_of": term})
    return marked


def _slot(text: str, term: str | None) -> str:
    return text.replace(term, SEARCH_SLOT) if term else text


def _slot_step(step: RouteStep, term: str | None) -> RouteStep:
    if not term:
        return step
    # The search term is data of this run, not part of the route: the typed text
    # becomes the slot, and anchors that show it (the search box, the results
    # header) would not match the next run's term, so they are dropped.
    action = step.action
    if isinstance(action, Input) and term in action.text:
        action = action.model_copy(update={"text": _slot(action.text, term)})
    return step.model_copy(
        update={"action": action, "anchors": tuple(a for a in step.anchors if term not in a)}
    )


def _copies(a: Route, b: Route) -> bool:
    """Whether ``a`` leads where ``b`` does: the same steps, or for the same question the same last step."""
    if _same_actions(a.steps, b.steps):
        return True
    last_a, last_b = a.steps[-1:], b.steps[-1:]
    return a.goal == b.goal and bool(last_a) and _same_actions(last_a, last_b)


def _same_actions(a: Sequence[RouteStep], b: Sequence[RouteStep]) -> bool:
    return len(a) == len(b) and all(
        x.action.kind == y.action.kind and x.target == y.target for x, y in zip(a, b, strict=True)
    )
