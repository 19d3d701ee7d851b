"""The map builder: explore an app on a farm phone, breadth first, behind the risk gate.

    builder = MapBuilder(driver, perceiver, MapStore(store), budget=MapBudget(screens=60))
    app_map = builder.build("com.example.app")          # resumes a build that stopped

From the app's first page, every screen found is *expanded* in breadth-first
order: scrolled through to see all of it, then each actionable element on it
is tried once and the phone brought back (Back, or a fresh launch and the
map's path when Back leads elsewhere). What each element did is its
:class:`~core.models.Effect`; a screen it opened is a new map screen
unless one of the same shape is known (:func:`inference.maps.screen_shape`).

Bounded and systematic:

- a list's items share a template: ``budget.list_samples`` of them are opened,
  and when those open pages of one form (a product page) the rest are more of
  the same and are left; when they open different pages the list is a menu and
  every item is tried;
- the budget counts screens, actions and seconds; what it leaves is ``untried``,
  and a build that stops before its budget (a lost phone, a killed worker)
  goes on from the stored map the next time.

Behind the same gate as every policy (:func:`inference.rules.check_action`):
the only text typed is the probe term, into the app's search field; checkboxes
and switches are never changed; nothing that pays, confirms, sends, deletes,
signs in, orders or adds to a cart is pressed (``refused``, with the reason).
A screen the risk rules call a login, payment or other risky screen is a
*wall*: recorded with its screenshot, never gone through.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from core.models import (
    Action,
    AppMap,
    Bounds,
    Effect,
    Input,
    MapBudget,
    MapElement,
    MapProgress,
    MapScreen,
    MapStats,
    RiskCategory,
    Screen,
    ScrollDirection,
    Tap,
    UIElement,
    WallKind,
)
from device_farm.driver import Driver
from device_farm.models import DeviceObservation, Key
from inference.maps import (
    ScreenShape,
    ScreenSurvey,
    find_element,
    list_members,
    page_title,
    screen_shape,
    text_lines,
)
from inference.memory import content_words
from inference.perception import Observation, Perceiver
from inference.policies import is_dialog_open, is_forbidden_tap
from inference.rules import check_action, detect_page_type, find_risk
from storage import MapStore
from tasks.mapping.pixels import changed_box
from tasks.navigate.act import execute_action

__all__ = ["MapBuilder", "choose_probe"]

_WALLS = {RiskCategory.LOGIN: WallKind.LOGIN, RiskCategory.PAYMENT: WallKind.PAYMENT}
_SWITCH_CLASSES = ("switch", "checkbox", "togglebutton", "radiobutton")
_PROBE_WORD = re.compile(r"^[^\W\d_]{2,}$")
_BEYOND_BUDGET = "beyond the screen budget"
_SAMPLES = 8  # items kept of what a template's pages were
_CHECKPOINT_ACTIONS = 25  # the map is written at least this often while a screen is expanded
_DRAWN_SHARE = 0.4  # a change of the screenshot bigger than this is a new page, not a toast


@dataclass
class _Draft:
    """A map screen while it is explored (:class:`MapScreen` is frozen)."""

    screen: MapScreen
    elements: list[MapElement] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    surveyed: bool = False

    @property
    def id(self) -> str:
        return self.screen.id

    def frozen(self) -> MapScreen:
        return self.screen.model_copy(update={"elements": tuple(self.elements), "samples": tuple(self.samples)})


@dataclass(frozen=True)
class _Look:
    screen: Screen
    shape: ScreenShape
    observation: DeviceObservation


class MapBuilder:
    """Explores one app at a time on one phone and stores the map as it grows."""

    def __init__(self, driver: Driver, perceiver: Perceiver, maps: MapStore, *,
                 budget: MapBudget | None = None,
                 progress: Callable[[MapProgress], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.driver = driver
        self.perceiver = perceiver
        self.maps = maps
        self.budget = budget or MapBudget()
        self.progress = progress
        self.clock = clock

    def build(self, package: str, *, label: str = "", rebuild: bool = False) -> AppMap:
        """The map of ``package`` at its installed version: the stored one when complete, else
        built (or resumed from where a stopped build left it). ``rebuild`` starts afresh."""
        version = self.driver.app_version(package) or "unknown"
        stored = None if rebuild else self.maps.load(package, version)
        if stored is not None and stored.complete:
            return stored
        if rebuild:
            self.maps.delete(package, version)
        exploration = _Exploration(self, package, label or self.driver.app_label(package), version, stored)
        return exploration.explore()


class _Exploration:
    """One build: the drafts, the frontier, the budget spent and what the phone shows."""

    def __init__(self, builder: MapBuilder, package: str, label: str, version: str,
                 stored: AppMap | None) -> None:
        self.builder = builder
        self.driver = builder.driver
        self.package = package
        self.label = label
        self.version = version
        self.budget = builder.budget
        self.drafts: dict[str, _Draft] = {}
        self.start = ""
        self.probe = ""
        stats = MapStats()
        if stored is not None:
            self.start, self.probe, stats = stored.start, stored.probe, stored.stats
            for screen in stored.screens.values():
                self.drafts[screen.id] = _Draft(screen=screen, elements=list(screen.elements),
                                                samples=list(screen.samples),
                                                surveyed=bool(screen.elements) or screen.expanded)
        self.actions, self.relaunches, self.refused = stats.actions, stats.relaunches, stats.refused
        self.spent = stats.seconds
        self.began = builder.clock()
        self.here: ScreenShape | None = None  # the shape the phone shows (at its top), when known
        self.png = b""  # the last screenshot: the gate reads unlabelled buttons' pixels in it
        self.saved_at = self.actions  # actions when the map was last written
        self.looks = 0

    # -- the loop ------------------------------------------------------------------------------

    def explore(self) -> AppMap:
        try:
            return self._explore()
        except BaseException:
            if self.start:
                self._save(complete=False)  # what was found so far: the next build goes on from it
            raise

    def _explore(self) -> AppMap:
        if not self.start:
            first = self._launch()
            if first.screen.package != self.package:
                return self._save(complete=True, stopped=f"{self.package} did not come to the front "
                                                         "when launched: nothing explored")
            self.start = first.shape.id
            self._add(first, depth=0, path=(), parent=None)
        stopped = ""
        while not stopped:
            stopped = self._over_budget()
            draft = self._next()
            if draft is None:
                break
            if not stopped:
                self._expand(draft)
                self._save(complete=False)
        if not stopped:
            beyond = any(e.note == _BEYOND_BUDGET for d in self.drafts.values() for e in d.elements)
            stopped = "screen budget" if beyond else "explored everything"
        return self._save(complete=True, stopped=stopped)

    def _next(self) -> _Draft | None:
        pending = [d for d in self.drafts.values() if not d.screen.expanded]
        return min(pending, key=lambda d: d.screen.depth, default=None)

    def _over_budget(self) -> str:
        if self.actions >= self.budget.actions:
            return "action budget"
        if self._seconds() >= self.budget.seconds:
            return "time budget"
        return ""

    def _seconds(self) -> float:
        return self.spent + (self.builder.clock() - self.began)

    # -- one screen ----------------------------------------------------------------------------

    def _expand(self, draft: _Draft) -> None:
        look = self._arrive(draft)
        if look is None:
            self._update(draft, expanded=True)  # no longer reachable the way it was found
            return
        if not draft.surveyed:
            self._survey(draft, look.screen)
        for index in range(len(draft.elements)):
            if self._over_budget():
                return  # left unexpanded: a resumed build goes on from here
            element = draft.elements[index]
            if element.effect is Effect.UNTRIED and self._worth_trying(draft, element):
                self._try(draft, index)
                if self.actions - self.saved_at >= _CHECKPOINT_ACTIONS:
                    self._save(complete=False)  # a worker killed outright loses at most this much
        self._update(draft, expanded=True)

    def _survey(self, draft: _Draft, screen: Screen) -> None:
        """Scroll through the screen: every text, list and actionable element on it."""
        texts = list(text_lines(screen, skip=list_members(screen)))
        survey = ScreenSurvey()
        pages = 1
        current = screen
        survey.add(current, 0)
        for scrolls in range(1, self.budget.scrolls + 1):
            if not any(e.scrollable for e in current.elements):
                break
            before = current
            self.driver.scroll(ScrollDirection.DOWN)
            self.actions += 1
            current = self._look().screen
            if current.fingerprint == before.fingerprint or current.package != self.package:
                break
            pages += 1
            texts.extend(t for t in text_lines(current, skip=list_members(current)) if t not in texts)
            survey.add(current, scrolls)
        if pages > 1:
            self._to_top(pages - 1)
        draft.elements = survey.elements
        draft.surveyed = True
        self._update(draft, texts=tuple(texts), lists=tuple(survey.lists.values()), scroll_pages=pages)

    def _worth_trying(self, draft: _Draft, element: MapElement) -> bool:
        """A list item is tried until the list's samples have shown it is a template."""
        if not element.list_id:
            return True
        tried = [e for e in draft.elements if e.list_id == element.list_id
                 and e.effect not in (Effect.UNTRIED, Effect.REFUSED)]
        if len(tried) < self.budget.list_samples:
            return True
        forms = {self.drafts[e.leads_to].screen.form for e in tried if e.leads_to in self.drafts}
        # One form for every sample: a template, its other items are more of the same. Samples that
        # open different pages (or none): a menu, each item is its own way on.
        return not (len(forms) == 1 and all(e.effect is Effect.OPENS for e in tried))

    def _try(self, draft: _Draft, index: int) -> None:
        element = draft.elements[index]
        if any(w in element.class_name.casefold() for w in _SWITCH_CLASSES):
            self._set(draft, index, effect=Effect.SWITCH, note="a switch: changing a setting is the person's")
            return
        look = self._arrive(draft)
        if look is None:
            return
        before = self._scroll_down(look, element.scrolls)
        live = find_element(element, before.screen)
        action = self._action_for(element, live, before.screen) if live is not None else None
        refusal = self._refusal(action, live, before.screen) if action is not None and live is not None else ""
        if action is None or refusal:
            if refusal:
                self.refused += 1
            self._set(draft, index, effect=Effect.REFUSED if refusal else Effect.UNTRIED,
                      note=refusal or "not found again on a later visit")
            self._back_to_top(element.scrolls)
            return
        execute_action(self.driver, action, before.screen)
        self.actions += 1
        after = self._look()
        self._record(draft, index, before, after)

    def _record(self, draft: _Draft, index: int, before: _Look, after: _Look) -> None:
        """What the element did; the phone is brought back towards ``draft``."""
        element = draft.elements[index]
        screen = after.screen
        if is_dialog_open(screen):
            added = [t for t in text_lines(screen) if t not in set(text_lines(before.screen))]
            self._set(draft, index, effect=Effect.DIALOG, note=" | ".join(added)[:200])
            self._press_back()
            self._back_to_top(element.scrolls)
        elif screen.package != self.package:
            self._set(draft, index, effect=Effect.LEAVES, note=screen.package or "the home screen")
            self.here = None
        elif after.shape.id in (before.shape.id, draft.id) or screen.fingerprint == before.screen.fingerprint:
            added = [t for t in text_lines(screen) if t not in set(text_lines(before.screen))]
            shown = " | ".join(added) or self._drawn_text(before.observation, after.observation,
                                                          element.bounds)
            self._set(draft, index, effect=Effect.SAME, note=shown[:200])
            self._back_to_top(element.scrolls)
        else:
            target = self._place(draft, element, after)
            self._set(draft, index, effect=Effect.OPENS, leads_to=target,
                      note="" if target else _BEYOND_BUDGET)
            self._press_back()
            self._back_to_top(element.scrolls)

    def _place(self, parent: _Draft, element: MapElement, after: _Look) -> str:
        """The map screen ``after`` is: a known one, a sample of a template, or a new one."""
        shape = after.shape
        if element.list_id:
            # A list's item opened it: a page of a template, whose samples are what the items were.
            opened = {e.leads_to for e in parent.elements if e.list_id == element.list_id and e.leads_to}
            same = self.drafts.get(shape.id) or next(
                (self.drafts[s] for s in opened if s in self.drafts and self.drafts[s].screen.form == shape.form), None)
            if same is not None:
                sample = element.label.split(" | ")[0]
                if sample and sample not in same.samples and len(same.samples) < _SAMPLES:
                    same.samples.append(sample)
                self._update(same, template=True)
                return same.id
        if shape.id in self.drafts:
            return shape.id
        if len(self.drafts) >= self.budget.screens:
            return ""
        path = (*parent.screen.path, parent.elements.index(element))
        self._add(after, depth=parent.screen.depth + 1, path=path, parent=parent,
                  via_search=element.search, template=bool(element.list_id))
        if element.list_id:
            self.drafts[shape.id].samples.append(element.label.split(" | ")[0])
        return shape.id

    # -- moving about --------------------------------------------------------------------------

    def _arrive(self, draft: _Draft) -> _Look | None:
        """The phone on ``draft``, at its top: where it is, else a fresh launch and the map's path."""
        if self.here is not None and (self.here.id == draft.id
                                      or (draft.screen.template and self.here.form == draft.screen.form)):
            return self._look()
        look = self._launch()
        node = self.drafts.get(self.start)
        for index in draft.screen.path:
            if node is None or (look.shape.id != node.id and look.shape.form != node.screen.form):
                return None
            element = node.elements[index]
            look = self._scroll_down(look, element.scrolls)
            live = find_element(element, look.screen)
            if live is None:
                return None
            action = self._action_for(element, live, look.screen)
            if self._refusal(action, live, look.screen):
                return None
            execute_action(self.driver, action, look.screen)
            self.actions += 1
            look = self._look()
            node = self.drafts.get(element.leads_to)
        if node is None or node.id != draft.id or look.shape.form != draft.screen.form:
            return None
        return look

    def _launch(self) -> _Look:
        """A fresh start of the app; a pop-up at launch (an ad, a notice) is closed with Back."""
        self.relaunches += 1
        self.driver.force_stop(self.package)
        self.driver.key(Key.HOME)
        self.driver.open_app(self.package)
        self.actions += 1
        look = self._look()
        for _ in range(2):
            if not is_dialog_open(look.screen):
                break
            self._press_back()
            look = self._look()
        return look

    def _press_back(self) -> None:
        self.driver.key(Key.BACK)
        self.actions += 1
        self._look()

    def _scroll_down(self, look: _Look, scrolls: int) -> _Look:
        for _ in range(scrolls):
            self.driver.scroll(ScrollDirection.DOWN)
            self.actions += 1
            look = self._look()
        return look

    def _back_to_top(self, scrolls: int) -> None:
        """After acting on an element further down, scroll the page back to its top."""
        if scrolls and self.here is not None:
            self._to_top(scrolls)

    def _to_top(self, scrolls: int) -> None:
        for _ in range(scrolls + 1):
            self.driver.scroll(ScrollDirection.UP)
            self.actions += 1
        self._look()

    def _look(self) -> _Look:
        observation = self.driver.observe()
        self.looks += 1
        perception = self.builder.perceiver.perceive(Observation(
            serial=observation.serial, step=self.looks, package=observation.package,
            activity=observation.activity, width=observation.width, height=observation.height,
            screenshot_png=observation.screenshot_png, hierarchy_xml=observation.hierarchy_xml,
        ), use_ocr=False)
        screen = perception.screen
        shape = screen_shape(screen)
        self.png = observation.screenshot_png
        self.here = shape if screen.package == self.package and not is_dialog_open(screen) else None
        return _Look(screen=screen, shape=shape, observation=observation)

    def _drawn_text(self, before: DeviceObservation, after: DeviceObservation, tapped: Bounds) -> str:
        """Text that appeared only in pixels (a toast, a snackbar): read where the screenshot changed,
        the tapped element itself left out."""
        box = changed_box(before.screenshot_png, after.screenshot_png, ignore=tapped)
        if box is None or box.area > _DRAWN_SHARE * after.width * after.height:
            return ""
        return self.builder.perceiver.read_text_in(after.screenshot_png, box)

    # -- what may be done ----------------------------------------------------------------------

    def _action_for(self, element: MapElement, live: UIElement, screen: Screen) -> Action:
        if element.search:
            if not self.probe:
                self.probe = choose_probe((d.screen for d in self.drafts.values()), self.label)
            return Input(target=live.id, text=self.probe, submit=True, reason="the map's probe search")
        return Tap(target=live.id, reason="exploring the app")

    def _refusal(self, action: Action, live: UIElement, screen: Screen) -> str:
        """Why the gate (or the explorer's own rule) refuses ``action``; "" when it may run."""
        png = self.png
        finding = check_action(action, screen, goal="",
                               read_text=lambda e: self.builder.perceiver.read_text_in(png, e.bounds))
        if finding is not None:
            return finding.reason
        if isinstance(action, Tap) and is_forbidden_tap(live, screen):
            return f"{live.label[:40]!r} would change the app's state (an order, a cart, a route started)"
        return ""

    # -- drafts --------------------------------------------------------------------------------

    def _add(self, look: _Look, *, depth: int, path: tuple[int, ...], parent: _Draft | None,
             via_search: bool = False, template: bool = False) -> None:
        screen, shape = look.screen, look.shape
        risk = find_risk(screen)
        wall = _WALLS.get(risk.category, WallKind.OTHER_RISK) if risk is not None else None
        key = self.builder.maps.save_screenshot(self.package, self.version, shape.id,
                                                look.observation.screenshot_png)
        self.drafts[shape.id] = _Draft(screen=MapScreen(
            id=shape.id, form=shape.form, kind=detect_page_type(screen),
            title=page_title(screen), activity=screen.activity,
            texts=tuple(text_lines(screen, skip=list_members(screen))), screenshot_key=key, depth=depth, path=path,
            template=template, wall=wall, wall_reason=risk.reason if risk is not None else "",
            behind_search=via_search or (parent is not None and parent.screen.behind_search),
            expanded=wall is not None,
        ))
        self._progress()

    def _update(self, draft: _Draft, **changes: object) -> None:
        draft.screen = draft.screen.model_copy(update=changes)

    def _set(self, draft: _Draft, index: int, **changes: object) -> None:
        draft.elements[index] = draft.elements[index].model_copy(update=changes)

    def _save(self, *, complete: bool, stopped: str = "") -> AppMap:
        if complete:
            self._mark_behind_search()
        app_map = AppMap(
            package=self.package, label=self.label, version=self.version, start=self.start,
            screens={d.id: d.frozen() for d in self.drafts.values()}, probe=self.probe,
            budget=self.budget, complete=complete, device=self.driver.serial,
            stats=MapStats(actions=self.actions, seconds=round(self._seconds(), 2),
                           relaunches=self.relaunches, refused=self.refused, stopped=stopped),
        )
        self.builder.maps.save(app_map)
        self.saved_at = self.actions
        self._progress(done=complete, message=stopped)
        return app_map

    def _mark_behind_search(self) -> None:
        """A screen is behind a search when every way to it from the first page types the probe."""
        reached = {self.start}
        queue = [self.start]
        while queue:
            draft = self.drafts.get(queue.pop())
            for element in draft.elements if draft is not None else ():
                if element.effect is Effect.OPENS and not element.search and element.leads_to not in reached:
                    reached.add(element.leads_to)
                    queue.append(element.leads_to)
        for draft in self.drafts.values():
            self._update(draft, behind_search=draft.id not in reached)

    def _progress(self, *, done: bool = False, message: str = "") -> None:
        if self.builder.progress is None:
            return
        frontier = sum(1 for d in self.drafts.values() if not d.screen.expanded)
        self.builder.progress(MapProgress(
            package=self.package, screens=len(self.drafts), frontier=frontier, actions=self.actions,
            seconds=round(self._seconds(), 1), budget_screens=self.budget.screens, done=done,
            message=message,
        ))


def choose_probe(screens: Iterable[MapScreen], label: str) -> str:
    """The one text the explorer types: a word the app shows in its own lists, so that the search
    finds something (the most frequent content word of the lists' first lines), else the app's name."""
    words: Counter[str] = Counter()
    name = label.casefold()
    for screen in screens:
        for listed in screen.lists:
            for sample in listed.samples:
                first = sample.split(" | ")[0]
                words.update(w for w in sorted(content_words(first, ignore=(label,)))
                             if _PROBE_WORD.match(w) and w.casefold() not in name)
    if words:
        return words.most_common(1)[0][0]
    return label.split()[0] if label.split() else "a"
