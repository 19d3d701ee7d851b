"""DroidTask's task files: goals, and each ground-truth choice resolved to the recorded view it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_settings
from core.recordings import (
    DroidbotState,
    DroidTaskAction,
    RecordingError,
    find_data_dir,
    load_droidtask_file,
    load_droidtasks,
    parse_simplified_html,
    resolve_element,
)

DATA = find_data_dir(load_settings())
needs_data = pytest.mark.skipif(DATA is None or not (DATA / "droidtask").is_dir(),
                                reason="the DroidTask data (shared/data/droidtask) is not on this machine")


def _state(views: list[dict[str, object]]) -> DroidbotState:
    """A screen of one root holding ``views`` (each with its own children listed)."""
    children = [v["temp_id"] for v in views if v.get("parent", 0) == 0]
    root = {"temp_id": 0, "parent": -1, "children": children, "class": "FrameLayout", "bounds": [[0, 0], [1080, 2280]]}
    return DroidbotState.model_validate({"tag": "t", "state_str": "s", "width": 1080, "height": 2280,
                                         "views": [root, *({"parent": 0, **v} for v in views)]})


def test_simplified_html_keeps_texts_descriptions_and_checked_states() -> None:
    html = ("<input id=0 >Search</input>\n<button id=1 text='0 open tabs.<br>The tab counter'>0</button>\n"
            "<checkbox id=2 checked=True>Start week on Sunday</checkbox>\n"
            "<button id=3>Max reminder duration<br>5 minutes</button>\n<button id=4>go back</button>")
    search, tabs, sunday, reminder, back = parse_simplified_html(html)
    assert (search.tag, search.texts) == ("input", ("Search",))
    assert (tabs.texts, tabs.descriptions) == (("0",), ("0 open tabs.", "The tab counter"))
    assert (sunday.tag, sunday.checked) == ("checkbox", True)
    assert reminder.texts == ("Max reminder duration", "5 minutes")
    assert back.go_back and not reminder.go_back


def test_a_row_resolves_to_the_clickable_view_holding_its_texts_and_is_touched_on_its_label() -> None:
    state = _state([
        {"temp_id": 1, "class": "RelativeLayout", "clickable": True, "children": [2, 3], "bounds": [[0, 300], [1080, 500]]},
        {"temp_id": 2, "parent": 1, "class": "TextView", "text": "Max reminder duration", "bounds": [[60, 320], [450, 380]]},
        {"temp_id": 3, "parent": 1, "class": "TextView", "text": "5 minutes", "bounds": [[60, 400], [250, 460]]},
    ])
    elements = parse_simplified_html("<button id=0>Max reminder duration<br>5 minutes</button>")
    resolved = resolve_element(elements[0], elements, [("s", state)])
    assert resolved is not None and resolved[1].temp_id == 1


def test_twin_elements_resolve_in_order_and_cut_texts_still_match() -> None:
    long_text = "Prevent phone from sleeping while the app is in foreground"
    state = _state([
        {"temp_id": 1, "class": "Button", "text": "OK", "clickable": True, "bounds": [[0, 100], [200, 200]]},
        {"temp_id": 2, "class": "Button", "text": "OK", "clickable": True, "bounds": [[0, 300], [200, 400]]},
        {"temp_id": 3, "class": "CheckBox", "text": long_text, "checkable": True, "bounds": [[0, 500], [1080, 600]]},
    ])
    elements = parse_simplified_html(f"<button id=0>OK</button><button id=1>OK</button>"
                                     f"<checkbox id=2 checked=False>{long_text[:50]}</checkbox>")
    picked = [resolve_element(e, elements, [("s", state)]) for e in elements]
    assert [p[1].temp_id if p else None for p in picked] == [1, 2, 3]


@needs_data
def test_clock_tasks_resolve_their_choices_to_the_recorded_views() -> None:
    assert DATA is not None
    tasks = {t.name: t for t in load_droidtasks(DATA / "droidtask" / "clock")}
    reminder = tasks["task1"]
    assert reminder.goal == "change alarm max reminder duration to 1 minute"
    assert reminder.package == "com.simplemobiletools.clock" and reminder.screen_size == (1080, 2280)
    settings, duration, minute = reminder.steps
    assert settings.view is not None and settings.view.content_description == "Settings"
    assert duration.view is not None and (duration.view.resource_id or "").endswith("settings_alarm_max_reminder_holder")
    assert duration.touch is not None and duration.touch.text == "Max reminder duration"
    assert minute.view is not None and (minute.view.text, minute.view.checkable) == ("1 minute", True)
    assert all(s.action is DroidTaskAction.TAP for s in reminder.steps)
    # The timer's duration is on the page scrolled down: the second recorded view of the record.
    timer = tasks["task11"].steps[1]
    assert timer.state_str == timer.state_strs[1]
    assert timer.touch is not None and (timer.touch.resource_id or "").endswith("settings_timer_max_reminder_label")
    # A settings page scrolled back to its top reads as before the change: not where a task ends.
    assert set(tasks["task11"].target_states) < set(tasks["task11"].final_states)


@needs_data
def test_typed_steps_keep_their_text() -> None:
    assert DATA is not None
    (search, *_rest) = load_droidtasks(DATA / "droidtask" / "applauncher")[0].steps
    assert (search.action, search.text) == (DroidTaskAction.INPUT, "Clock")
    assert search.view is not None and search.view.editable


def test_a_file_that_is_not_a_task_says_so(tmp_path: Path) -> None:
    path = tmp_path / "task1.yaml"
    path.write_text("task_name: x\nrecords: []\n")
    with pytest.raises(RecordingError, match="cannot read DroidTask task"):
        load_droidtask_file(path)
