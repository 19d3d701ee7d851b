"""DroidTask's task files (AutoDroid, MobiCom '24): goals in words, each step resolved to a recorded view.

A DroidTask app folder is one DroidBot recording (``states/``, ``events/``)
plus ``tasks/task<N>.yaml``: ``task_name`` (the goal), ``step_num`` and
``records``, one per step. A record shows the screen as AutoDroid's
simplified HTML (``State``: ``<button id=3 text='<desc>'>text</button>``,
``<checkbox checked=True>``, ``<input>``, ``<p>``; a view's own texts and
those of the views under it joined by ``<br>``, each cut at 50 characters,
and a last ``go back`` button), the element chosen (``Choice``: its ``id``;
-1 = the task is done), the text typed (``Input``, ``'null'`` = none) and
the recorded screen(s) it was decided on (``state_str``: a page and its
scrolled views, as AutoDroid scrolled through each page to read it).

:func:`load_droidtasks` reads an app's tasks with every choice resolved to a
recorded view of the record's screens (:func:`resolve_element` says how);
the target of a task is its last record's screens.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.recordings.droidbot import DroidbotState, DroidbotView, load_droidbot_state
from core.recordings.errors import RecordingError

__all__ = [
    "DroidTask",
    "DroidTaskAction",
    "DroidTaskElement",
    "DroidTaskFile",
    "DroidTaskRecord",
    "DroidTaskStep",
    "load_droidtask_file",
    "load_droidtasks",
    "parse_simplified_html",
    "resolve_element",
]

_ELEMENT = re.compile(r"<(?P<tag>\w+)(?P<attrs>(?:\s+\w+=(?:'[^']*'|[^\s>]+))*)\s*>(?P<body>.*?)</(?P=tag)>",
                      re.DOTALL)
_ATTRIBUTE = re.compile(r"(\w+)=(?:'([^']*)'|([^\s>]+))")
_BREAK = re.compile(r"<br\s*/?>")
_CUT = 50  # AutoDroid cuts each text at 50 characters
_GO_BACK = "go back"


def _norm(text: str) -> str:
    return " ".join(text.split())


def _parts_of(texts: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(n for n in (_norm(t or "") for t in texts) if n)


def _parts(raw: str | None) -> tuple[str, ...]:
    return tuple(p for p in (_norm(part) for part in _BREAK.split(raw or "")) if p)


class DroidTaskAction(StrEnum):
    """What a step does: tap an element, type into one, or go back."""

    TAP = "tap"
    INPUT = "input"
    BACK = "back"


class DroidTaskElement(BaseModel):
    """One element of a record's simplified HTML."""

    model_config = ConfigDict(frozen=True)

    id: int
    tag: str  # button, checkbox, input, p (AutoDroid's names)
    texts: tuple[str, ...] = ()  # the view's texts and its descendants', in order
    descriptions: tuple[str, ...] = ()  # likewise, content descriptions (the ``text='...'`` attribute)
    checked: bool | None = None

    @property
    def label(self) -> str:
        """What a person reads on it: its texts, else its descriptions."""
        return " / ".join(self.texts or self.descriptions)

    @property
    def go_back(self) -> bool:
        """AutoDroid's pseudo-element for the BACK key."""
        return self.tag == "button" and self.texts == (_GO_BACK,) and not self.descriptions


class DroidTaskRecord(BaseModel):
    """One record of a task file, as written."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    state: str = Field(alias="State")
    choice: int = Field(alias="Choice")
    input: str | None = Field(default=None, alias="Input")
    state_str: tuple[str, ...]
    new_state_str: str = ""

    @field_validator("input", mode="before")
    @classmethod
    def _null(cls, value: object) -> object:
        return None if value in (None, "null", "None", "") else str(value)

    @field_validator("state_str", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @property
    def elements(self) -> tuple[DroidTaskElement, ...]:
        return parse_simplified_html(self.state)


class DroidTaskFile(BaseModel):
    """A ``tasks/task<N>.yaml`` as written."""

    model_config = ConfigDict(frozen=True)

    task_name: str
    step_num: int
    records: tuple[DroidTaskRecord, ...] = Field(min_length=1)


class DroidTaskStep(BaseModel):
    """One ground-truth action: on which screens, which element, the recorded view it names."""

    model_config = ConfigDict(frozen=True)

    state_strs: tuple[str, ...]  # the screen the step was decided on, and its scrolled views
    element: DroidTaskElement
    action: DroidTaskAction
    text: str | None = None  # INPUT: what was typed
    state_str: str | None = None  # the recorded screen that shows ``view``
    view: DroidbotView | None = None  # None for BACK, or when no view matches (see ``resolve_element``)
    # The view under the element's first words, ``view`` or one inside it: where a person's
    # tap on the element lands (a row's centre may be empty space).
    touch: DroidbotView | None = None


class DroidTask(BaseModel):
    """A DroidTask task: the goal, its ground-truth steps and the screens it ends on."""

    model_config = ConfigDict(frozen=True)

    app: str  # the app folder's name (``clock``)
    name: str  # the task file's name (``task1``)
    goal: str
    step_num: int  # as written; ``len(steps)`` is what was done (they differ in 13 of 94 files)
    package: str  # the app the first screen shows
    screen_size: tuple[int, int] | None  # the size its screens were recorded at
    steps: tuple[DroidTaskStep, ...]
    final_states: tuple[str, ...]  # the last record's screens
    # The final screens no earlier step was decided on: a page scrolled back to its top may
    # read as it did before the change, and that is not where the task ends.
    target_states: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.app}/{self.name}"


def parse_simplified_html(html: str) -> tuple[DroidTaskElement, ...]:
    """The elements of AutoDroid's simplified HTML, in the order written."""
    out = []
    for match in _ELEMENT.finditer(html):
        attrs = {name: quoted or bare for name, quoted, bare in _ATTRIBUTE.findall(match.group("attrs"))}
        if not attrs.get("id", "").isdigit():
            continue
        checked = attrs.get("checked")
        out.append(DroidTaskElement(
            id=int(attrs["id"]), tag=match.group("tag"), texts=_parts(match.group("body")),
            descriptions=_parts(attrs.get("text")), checked=None if checked is None else checked == "True"))
    return tuple(out)


def _same(written: str, recorded: str) -> bool:
    recorded = _norm(recorded)
    return recorded == written or (len(written) >= _CUT - 5 and recorded.startswith(written))


def _same_parts(written: Sequence[str], recorded: Sequence[str]) -> bool:
    return len(written) == len(recorded) and all(_same(w, r) for w, r in zip(written, recorded, strict=True))


class _Tree:
    """A state's visible views with their subtrees' texts and descriptions, in document order."""

    def __init__(self, state_str: str, state: DroidbotState) -> None:
        self.state_str, self.state = state_str, state
        self.views = state.visible_views()
        shown = {v.temp_id for v in self.views}
        self.by_id = {v.temp_id: v for v in self.views}
        self.children = {v.temp_id: [c for c in v.children if c in shown] for v in self.views}
        self._parts: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def subtree(self, view: DroidbotView) -> list[DroidbotView]:
        out, todo = [], [view.temp_id]
        while todo:
            current = self.by_id[todo.pop()]
            out.append(current)
            todo.extend(reversed(self.children[current.temp_id]))
        return out

    def parts(self, view: DroidbotView) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The texts and the descriptions of ``view`` and the views under it."""
        if view.temp_id not in self._parts:
            under = self.subtree(view)
            self._parts[view.temp_id] = (_parts_of(v.text for v in under),
                                         _parts_of(v.content_description for v in under))
        return self._parts[view.temp_id]

    def ancestors(self, view: DroidbotView) -> Iterable[DroidbotView]:
        current = self.by_id.get(view.parent)
        while current is not None:
            yield current
            current = self.by_id.get(current.parent)


def _fits(tag: str, view: DroidbotView, tree: _Tree) -> bool:
    """Whether AutoDroid would write ``view`` with ``tag``."""
    if tag == "input":
        return view.editable
    if tag == "checkbox":
        return view.checkable or any(v.checkable for v in tree.subtree(view))
    if tag == "button":  # a view inside a clickable one counts as clickable, as AutoDroid reads it
        return not view.editable and any(v.clickable or v.long_clickable or v.checkable
                                         for v in (view, *tree.ancestors(view)))
    return not (view.clickable or view.editable)  # p: a text nobody taps


def _outermost(found: list[tuple[_Tree, DroidbotView]]) -> list[tuple[_Tree, DroidbotView]]:
    """One view per nest: a candidate inside another candidate of its screen is the same element."""
    ids = {(tree.state_str, view.temp_id) for tree, view in found}
    return [(tree, view) for tree, view in found
            if not any((tree.state_str, a.temp_id) in ids for a in tree.ancestors(view))]


def _closest(element: DroidTaskElement, trees: Sequence[_Tree]) -> tuple[str, DroidbotView] | None:
    """The fitting view sharing the most parts with ``element`` (then the fewest others; then the first)."""
    best: tuple[int, int, str, DroidbotView] | None = None
    wanted = {*element.texts, *element.descriptions}
    for tree in trees:
        for view in tree.views:
            texts, descriptions = tree.parts(view)
            shared = sum(any(_same(w, r) for r in (*texts, *descriptions)) for w in wanted)
            extra = len(texts) + len(descriptions) - shared
            if shared and _fits(element.tag, view, tree) and (best is None or (-shared, extra) < best[:2]):
                best = (-shared, extra, tree.state_str, view)
    return (best[2], best[3]) if best is not None else None


def resolve_element(element: DroidTaskElement, elements: Sequence[DroidTaskElement],
                    screens: Sequence[tuple[str, DroidbotState]]) -> tuple[str, DroidbotView] | None:
    """The recorded view ``element`` (one of ``elements``, its record's) names, and its screen's state_str.

    ``screens``: the record's screens in its order, as (state_str, state); None when no view matches.

    A view matches when the texts of it and its visible descendants, in document
    order, are the element's ``<br>`` parts (a part of 45+ characters may be the
    start of a longer text: AutoDroid cut them), likewise the descriptions, and
    its kind fits the tag (input: editable; checkbox: checkable, or holding a
    checkable view; button: clickable itself or inside a clickable view, not
    editable; p: not clickable). A matching view nested
    in another matching view of its screen is the same element: the outermost
    one is kept. When no view matches fully, the view sharing the most parts
    (and no fewer than one) with the element, of a fitting kind, is taken.

    Ambiguous ones (two "OK" buttons, or one element on two scrolled views of a
    page) are resolved by order: AutoDroid writes the views of the record's screens
    in document order, a view seen on an earlier screen once, so the k-th element
    of the record with the same tag, texts and descriptions is the k-th matching
    view, counting screens in the record's order; a k past the last match takes
    the last. Among equals, a checkbox's ``checked`` state decides.
    """
    trees = [_Tree(state_str, state) for state_str, state in screens]
    found = [(tree, view) for tree in trees for view in tree.views
             if _same_parts(element.texts, tree.parts(view)[0])
             and _same_parts(element.descriptions, tree.parts(view)[1]) and _fits(element.tag, view, tree)]
    found = _outermost(found)
    if not found:
        return _closest(element, trees)
    if element.checked is not None and len(found) > 1:
        same_state = [(t, v) for t, v in found
                      if any(u.checked == element.checked for u in t.subtree(v) if u.checkable)]
        found = same_state or found
    twins = [e for e in elements if (e.tag, e.texts, e.descriptions) == (element.tag, element.texts,
                                                                         element.descriptions)]
    rank = next(i for i, e in enumerate(twins) if e.id == element.id)
    tree, view = found[min(rank, len(found) - 1)]
    return tree.state_str, view


def load_droidtask_file(path: Path) -> DroidTaskFile:
    """Read one ``tasks/task<N>.yaml``; raises :class:`RecordingError` when it is not one."""
    try:
        return DroidTaskFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise RecordingError(f"cannot read DroidTask task {path}: {exc}",
                             hint="point at a DroidTask tasks/task<N>.yaml (task_name, step_num, records)") from exc


def _step(record: DroidTaskRecord, screens: Sequence[tuple[str, DroidbotState]]) -> DroidTaskStep:
    elements = record.elements
    element = next((e for e in elements if e.id == record.choice), None)
    if element is None:
        raise RecordingError(f"choice {record.choice} is not an element of its record",
                             hint="the record's State lists the elements a Choice may name")
    if element.go_back:
        return DroidTaskStep(state_strs=record.state_str, element=element, action=DroidTaskAction.BACK)
    resolved = resolve_element(element, elements, screens)
    typed = record.input if element.tag == "input" else None
    action = DroidTaskAction.INPUT if typed is not None else DroidTaskAction.TAP
    if resolved is None:
        return DroidTaskStep(state_strs=record.state_str, element=element, action=action, text=typed)
    state_str, view = resolved
    tree = _Tree(state_str, dict(screens)[state_str])
    words = (*element.texts, *element.descriptions)[:1]
    touch = next((v for v in tree.subtree(view) if words and any(_same(words[0], t) for t in
                  (v.text, v.content_description) if t)), view)
    return DroidTaskStep(state_strs=record.state_str, element=element, action=action, text=typed,
                         state_str=state_str, view=view, touch=touch)


def _size(written: DroidTaskFile, states: Mapping[str, Sequence[DroidbotState]]) -> tuple[int, int] | None:
    """The screen size the task was recorded at: the size most of its screens were saved at.

    A screen recorded on two phones has one ``state_str`` (DroidBot's string ignores
    where views are); ties go to the size of the first screen's earliest recording.
    """
    counted: Counter[tuple[int, int]] = Counter()
    for record in written.records:
        for state_str in dict.fromkeys(record.state_str):
            counted.update({(s.width, s.height) for s in states.get(state_str, ())})
    if not counted:
        return None
    first = next((states[s][0] for r in written.records for s in r.state_str if s in states), None)
    prefer = (first.width, first.height) if first is not None else None
    return max(counted, key=lambda size: (counted[size], size == prefer))


def _read(app: str, path: Path, states: Mapping[str, Sequence[DroidbotState]]) -> DroidTask:
    written = load_droidtask_file(path)
    size = _size(written, states)
    steps = []
    for record in written.records:
        if record.choice == -1:
            break
        screens = []
        for state_str in dict.fromkeys(record.state_str):
            recorded = states.get(state_str, ())
            fitting = [s for s in recorded if (s.width, s.height) == size] or list(recorded)
            if fitting:
                screens.append((state_str, fitting[0]))
        try:
            steps.append(_step(record, screens))
        except RecordingError as exc:
            raise RecordingError(f"{path}: step {len(steps) + 1}: {exc}", hint=exc.hint) from exc
    last = written.records[len(steps)].state_str if len(steps) < len(written.records) else ()
    seen = {s for step in steps for s in step.state_strs}
    final = tuple(dict.fromkeys(last))
    first = next((states[s][0] for s in written.records[0].state_str if s in states), None)
    return DroidTask(app=app, name=path.stem, goal=written.task_name.strip(), step_num=written.step_num,
                     package=first.package if first is not None else "", screen_size=size,
                     steps=tuple(steps), final_states=final,
                     target_states=tuple(s for s in final if s not in seen))


def _task_number(path: Path) -> tuple[int, str]:
    digits = re.sub(r"\D", "", path.stem)
    return (int(digits) if digits else 0, path.stem)


def load_droidtasks(folder: Path) -> tuple[DroidTask, ...]:
    """Every task of a DroidTask app folder (``<app>/tasks/task<N>.yaml``), by number.

    The states are read once, the earliest recording of each screen at each size
    kept; a record's screen missing from ``states/`` leaves its step unresolved
    (``view`` None) rather than failing the folder.
    """
    states: dict[str, list[DroidbotState]] = {}
    for path in sorted((folder / "states").glob("state_*.json")):
        state = load_droidbot_state(path)
        recorded = states.setdefault(state.state_str, [])
        if all((s.width, s.height) != (state.width, state.height) for s in recorded):
            recorded.append(state)
    paths = sorted((folder / "tasks").glob("task*.yaml"), key=_task_number)
    if not paths:
        raise RecordingError(f"no DroidTask tasks under {folder}",
                             hint="point at an app folder of DroidTask (states/, events/, tasks/task<N>.yaml)")
    return tuple(_read(folder.name, path, states) for path in paths)
