"""The ``log`` notifier writes each change where docs/operations.md says: one line per change in
``<state_dir>/logs/changes.log`` (0600), read back here from that file."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.config import load_settings
from flows.errors import NotifierError
from flows.notifiers import ChangeNotice, NotifierSpec, notifier_for
from tasks.synthesis.facts import Change, ChangeKind, ChangeSummary
from tasks.synthesis.values import MeasureKind


def _notice(subscription_id: str, before: str, after: str) -> ChangeNotice:
    change = Change(kind=ChangeKind.VALUE_CHANGED, app="McDonald's", entity="Big Mac",
                    attribute=MeasureKind.PRICE, before=before, after=after)
    summary = ChangeSummary(query="How much is a Big Mac?", before_run="run-a", after_run="run-b",
                            changes=(change,))
    return ChangeNotice(subscription_id=subscription_id, query=summary.query, run_id="run-b",
                        summary=summary, report_key=f"subscriptions/{subscription_id}/run-b/report.md")


def test_the_log_notifier_appends_one_line_per_change_to_the_file_the_docs_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_STATE_DIR", str(tmp_path / "state"))
    notifier = notifier_for(NotifierSpec(), load_settings())  # a subscription's default
    notifier.notify(_notice("sub-1", "24.0", "25.5"))
    notifier.notify(_notice("sub-2", "6299", "6499"))

    named = tmp_path / "state" / "logs" / "changes.log"  # docs/operations.md, the state folder
    lines = named.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2, lines
    assert "[sub-1] run run-b:" in lines[0] and "24.0 -> 25.5" in lines[0]
    assert "report: subscriptions/sub-1/run-b/report.md" in lines[0]
    assert "[sub-2]" in lines[1] and "6299 -> 6499" in lines[1]
    assert stat.S_IMODE(named.stat().st_mode) == 0o600


def test_a_change_that_cannot_be_written_says_so(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "logs").write_text("a file where the folder should be")
    monkeypatch.setenv("DROIDRETRIEVER_STATE_DIR", str(state))
    with pytest.raises(NotifierError, match="could not be written"):
        notifier_for(NotifierSpec(), load_settings()).notify(_notice("sub-1", "1", "2"))
