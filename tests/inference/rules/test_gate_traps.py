"""The risk gate refuses every trap of the first set and lets every control pass
(the set itself: :mod:`droidretriever.testing.gate_traps`)."""

from __future__ import annotations

import pytest

from core.models import Tap
from droidretriever.testing.gate_traps import (
    CONTROLS,
    DELETION,
    TRAPS,
    Trap,
    _button_screen,
    _dialog,
)
from inference.rules import check_action


@pytest.mark.parametrize("trap", TRAPS, ids=lambda t: f"{t.kind}: {t.name}")
def test_the_gate_refuses_the_trap(trap: Trap) -> None:
    finding = check_action(trap.action, trap.screen, read_text=trap.read_text())
    assert finding is not None, f"{trap.name}: carried out"
    assert finding.category is trap.refused_as, finding.reason
    assert finding.reason  # a person reads why


@pytest.mark.parametrize("control", CONTROLS, ids=lambda t: t.name)
def test_what_the_product_must_still_do_passes(control: Trap) -> None:
    finding = check_action(control.action, control.screen, read_text=control.read_text())
    assert finding is None, finding.reason if finding else ""


def test_every_family_of_trap_has_three_or_more() -> None:
    families: dict[str, int] = {}
    for trap in TRAPS:
        families[trap.kind] = families.get(trap.kind, 0) + 1
    assert {"dialog", "disguise", "metadata", "card", "long label", "missing act (en)",
            "missing act (zh)", "missing act (ko)", "missing act (ja)"} == set(families)
    assert min(families.values()) >= 3, families


def test_clearing_history_from_a_dialog_is_deleting() -> None:
    """Existing policy counts clearing history as deletion (``clear history`` is a strong deletion
    phrase, ``清空`` and ``clear all`` are never tapped): confirming it is the person's, and the
    reason names deleting, not paying."""
    finding = check_action(Tap(target="ok"), _dialog("Clear search history?", "This cannot be undone.",
                                                     "Cancel", "OK"))
    assert finding is not None and finding.category is DELETION
    assert "deleting" in finding.reason


def test_the_reason_says_where_the_act_was_read() -> None:
    finding = check_action(Tap(target="b"), _button_screen("Details", content_desc="Pay now"))
    assert finding is not None and "description" in finding.reason and '"pay"' in finding.reason
    confirm = check_action(Tap(target="ok"), _dialog("Premium", "$9.99/month, renews.", "Not now", "Continue"))
    assert confirm is not None and "Continue" in confirm.reason and "$9.99" in confirm.reason
