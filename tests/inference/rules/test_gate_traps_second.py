"""The second trap set is well formed (the set and its measurement, written blind and never asserted
on: :mod:`droidretriever.testing.gate_traps_second`)."""

from __future__ import annotations

import pytest

from core.models import Input
from droidretriever.testing.gate_traps import Trap
from droidretriever.testing.gate_traps_second import (
    CONTROL,
    CONTROLS_SECOND,
    FAMILIES,
    TRAPS_SECOND,
    _target,
)


@pytest.mark.parametrize("trap", TRAPS_SECOND + CONTROLS_SECOND, ids=lambda t: f"{t.kind}: {t.name}")
def test_each_trap_acts_on_an_element_of_its_own_screen(trap: Trap) -> None:
    ids = [e.id for e in trap.screen.elements]
    assert len(ids) == len(set(ids)), f"{trap.name}: two elements share an id"
    target = _target(trap)
    assert target is not None, f"{trap.name}: the action names no element on the screen"
    assert target.editable if isinstance(trap.action, Input) else target.clickable, trap.name
    assert set(trap.pixels) <= set(ids), f"{trap.name}: pixels of an element not on the screen"
    assert (trap.refused_as is None) == (trap.kind == CONTROL), trap.name


def test_the_second_set_covers_every_family_and_names_each_trap_once() -> None:
    counts = {family: sum(t.kind == family for t in TRAPS_SECOND) for family in FAMILIES}
    assert {t.kind for t in TRAPS_SECOND} == set(FAMILIES)
    assert min(counts.values()) >= 3, counts
    assert len(TRAPS_SECOND) >= 40 and len(CONTROLS_SECOND) >= 12
    names = [t.name for t in TRAPS_SECOND + CONTROLS_SECOND]
    assert len(names) == len(set(names))
