"""What the copilot loop works with: the request, the phone and its helpers, where events go.

Also :class:`ObjectStoreBlobs`, route memory's blob store over the project's
object store (the Celery task, tests and benchmarks build route memory on it).

Public through :mod:`tasks.navigate` (``from tasks.navigate import Copilot,
NavigateRequest``); kept here so the loop's modules can share the types
without importing each other in a circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from core.config import BudgetSettings
from core.models import AppMap, RunEvent, SubTask
from device_farm.driver import Driver
from inference.llm import LLMClient, ModelClock, ModelMeter
from inference.maps import MapGuide, render_manual
from inference.memory import RouteMemory
from inference.perception import Perceiver
from inference.policies import (
    ExplorePolicy,
    LLMNavigatorPolicy,
    MapRoutePolicy,
    Policy,
    PolicyChain,
    RouteMemoryPolicy,
    SkillsPolicy,
    UnfamiliarScreenPolicy,
)
from storage import MapStore, ObjectStore
from tasks.control import ControlChannel

__all__ = ["Copilot", "EventSink", "NavigateRequest", "ObjectStoreBlobs"]


class EventSink(Protocol):
    """Where run events go (``storage.RunEventPublisher`` in production)."""

    def publish(self, event: RunEvent) -> RunEvent:
        """Publish ``event``; returns it with its sequence number."""
        ...


class NavigateRequest(BaseModel):
    """One sub-task to navigate, as the Celery message carries it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    subtask: SubTask
    delivery: int = Field(default=1, ge=1)  # > 1 when redelivered: captures are overwritten
    # Reflections from earlier failed tries of this sub-task (orchestration-level retries),
    # shown to the first try of this delivery as MobileSteward's reflect-and-retry does.
    tips: tuple[str, ...] = ()
    # How often a person has had the phone for this sub-task (it paused, they continued). On
    # the first delivery after that, the first try goes on from the screen they left, so what
    # they did there (a login, a page they opened) counts.
    resumed: int = Field(default=0, ge=0)


@dataclass
class Copilot:
    """What the loop works with: the phone, perception, storage and the optional models."""

    driver: Driver
    perceiver: Perceiver
    store: ObjectStore
    budgets: BudgetSettings
    events: EventSink | None = None
    control: ControlChannel | None = None
    memory: RouteMemory | None = None
    navigator: LLMClient | None = None
    evaluator: LLMClient | None = None
    maps: MapStore | None = None  # app maps explored on the farm (droidretriever map build)
    skills: bool = True
    explore: bool = True  # goal-directed exploration (lexicon concepts, bounded DFS) after the skills
    unfamiliar: bool = True  # last: try an unknown screen's elements rather than end the try
    use_ocr: bool = False  # OCR while navigating (captures always read blind regions)
    max_repeats: int = 3
    pause_poll_s: float = 1.0
    restart_app: bool = True  # False: the first try starts on whatever the phone shows
    help_document: str | None = None  # an app manual for the LLM navigator (UICOMPASS)
    evaluator_pages: Literal["targets", "every_page"] = "targets"  # settings.llm.evaluator_pages
    # The run's model time, shared by all its roles (budgets.model_s_per_run); None: not bounded.
    model_clock: ModelClock | None = None

    def build_chain(self, meter: ModelMeter | None = None, guide: MapGuide | None = None
                    ) -> tuple[PolicyChain, RouteMemoryPolicy | None]:
        """Route memory -> skills -> app map -> explorer -> LLM navigator -> unfamiliar screens,
        each present when configured.

        ``meter``: the sub-task's model-time budget and record of model requests; ``guide``: the
        sub-task's way over the app's map (None when the app has no map).
        """
        policies: list[Policy] = []
        memory = RouteMemoryPolicy(self.memory) if self.memory is not None else None
        if memory is not None:
            policies.append(memory)
        if self.skills:
            policies.append(SkillsPolicy())
        if guide is not None:
            # After the skills (pop-ups, the search, a query form, a result to open): the map leads
            # where they have nothing to do, before the lexicon's explorer guesses.
            policies.append(MapRoutePolicy(guide))
        if self.explore:
            policies.append(ExplorePolicy())
        if self.navigator is not None:
            manual = render_manual(guide) if guide is not None else None
            policies.append(LLMNavigatorPolicy(
                self.navigator, perception=self.perceiver.settings,
                help_document=self.help_document or manual, meter=meter, ocr=self.perceiver.ocr,
            ))
        if self.unfamiliar:
            policies.append(UnfamiliarScreenPolicy(guide.map if guide is not None else None))
        return PolicyChain(policies), memory

    def load_map(self, package: str) -> AppMap | None:
        """The app map of ``package`` at the phone's installed version, else its latest one (an
        older version's map still helps; a replay patches what changed); None without maps."""
        if self.maps is None:
            return None
        version = self.driver.app_version(package) or "unknown"
        return self.maps.load(package, version) or self.maps.latest(package)


class ObjectStoreBlobs:
    """Route memory's two-call ``BlobStore`` over the project's object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        return self._store.get_bytes(key) if self._store.exists(key) else None

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``."""
        self._store.put_bytes(key, data, "application/json")
