"""What people did in a run, from its events, for the report's "People stepped in" section.

An event with an ``actor`` is a person's: a steering command (``control``: pause, take over,
back to auto, continue or skip a pause, save this screen, stop, a previewed action confirmed
or cancelled) or an input on a phone they took over (a ``step`` marked as an intervention:
"tap at (540, 1200)", "text entered, 12 characters"; what they typed is never in an event).
Each becomes one :class:`~core.models.Intervention` with its time, phone and app.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.models import Intervention, RunEvent, RunEventKind

__all__ = ["list_interventions"]

_PERSON_KINDS = frozenset({RunEventKind.CONTROL, RunEventKind.STEP})


def list_interventions(events: Iterable[RunEvent], apps: Mapping[str, str],
                       phones: Mapping[str, str] | None = None) -> tuple[Intervention, ...]:
    """The people's acts among ``events``, in the order they happened (each event once).

    ``apps``: sub-task id -> app label; ``phones``: sub-task id -> the phone it ran on, for
    an event that does not name its phone (and, the other way, the app of an event that names
    only its phone, when one app ran there).
    """
    phones = phones or {}
    on_phone: dict[str, set[str]] = {}
    for subtask_id, phone in phones.items():
        on_phone.setdefault(phone, set()).add(apps.get(subtask_id, ""))
    seen: set[int] = set()
    found: list[tuple[int, Intervention]] = []
    for event in events:
        if not event.actor or event.kind not in _PERSON_KINDS or (event.seq and event.seq in seen):
            continue
        if event.kind is RunEventKind.STEP and (event.step is None or not event.step.intervention):
            continue
        seen.add(event.seq)
        subtask = event.subtask_id
        serial = event.serial or (phones.get(subtask) if subtask else None)
        there = on_phone.get(serial or "", set())
        app = apps.get(subtask, "") if subtask else (next(iter(there)) if len(there) == 1 else "")
        found.append((event.seq, Intervention(
            at=event.at, actor=event.actor, what=event.message or event.kind.value,
            serial=serial, app_label=app, subtask_id=subtask)))
    found.sort(key=lambda pair: (pair[1].at, pair[0]))
    return tuple(intervention for _, intervention in found)
