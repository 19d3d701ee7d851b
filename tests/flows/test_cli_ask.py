"""`droidretriever ask` as a person runs it: a subprocess against the test services and phones."""

from __future__ import annotations

import json
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

from prefect.settings import PREFECT_API_URL

from storage import open_object_store
from tests.flows.conftest import FlowFarm
from tests.inference.test_asr import speak

CLI = str(Path(sys.executable).parent / "droidretriever")


def _ask(flow_farm: FlowFarm, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **flow_farm.env, "COLUMNS": "200",
           "DROIDRETRIEVER_PREFECT__API_URL": str(PREFECT_API_URL.value())}
    return subprocess.run([CLI, "ask", *args], env=env, capture_output=True, text=True,
                          timeout=240, check=False)


def test_ask_prints_the_report_with_every_row_of_the_answer_page(flow_farm: FlowFarm) -> None:
    done = _ask(flow_farm, "Which permissions does Meituan have?")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "by rules" in out and "Extractive summary" in out  # says what it used
    assert "The page App permissions" in out
    for row in ("Location | Allowed only while in use", "Microphone | Not allowed",
                "Nearby devices | Not allowed"):
        assert row in out, out
    assert "grounded (score 1.00)" in out
    report = next(line.removeprefix("report: ") for line in out.splitlines()
                  if line.startswith("report: "))
    assert Path(report).read_text(encoding="utf-8").lower().startswith("<!doctype html>")
    # The report is what a run saw: the owner's alone, like everything under the state folder.
    assert stat.S_IMODE(Path(report).stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(report).parent.stat().st_mode) == 0o700
    assert "Prefect run: http" in out
    assert "Traceback" not in out + done.stderr


def test_a_question_no_app_fits_is_one_line_and_its_fix(flow_farm: FlowFarm) -> None:
    done = _ask(flow_farm, "How tall is the Eiffel Tower?")
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: no installed app fits the question"), done.stderr
    assert lines[1].startswith("fix: name the app in the question")
    assert "Traceback" not in done.stdout + done.stderr
    assert "NoAppsError" not in done.stdout  # not repeated in the live view


def test_an_app_no_phone_has_is_refused_before_a_run_is_created(flow_farm: FlowFarm) -> None:
    store = open_object_store(flow_farm.settings)
    runs_before = store.list_objects("runs/")
    done = _ask(flow_farm, "Which permissions does Meituan have?", "--apps", "Meituan,NoSuchApp")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: --apps 'NoSuchApp': no phone of the farm has it; name "
                               "installed apps (labels or packages): "), lines[0]
    assert store.list_objects("runs/") == runs_before  # no manifest, no run


def test_control_characters_in_a_question_never_reach_the_terminal_and_are_escaped_in_reports(
        flow_farm: FlowFarm) -> None:
    question = "Which permissions does Meituan have?\x1b[2J\x1b]0;owned\x07\u202e"
    done = _ask(flow_farm, question, "--json")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    shown = _ask(flow_farm, question)
    assert shown.returncode == 0, shown.stderr
    for text in (shown.stdout, shown.stderr):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    store = open_object_store(flow_farm.settings)
    for key in (outcome["markdown_key"], outcome["html_key"]):
        stored = store.get_bytes(key).decode()
        assert "\x1b" not in stored and "\x07" not in stored and "\u202e" not in stored, key
    html = store.get_bytes(outcome["html_key"]).decode()
    assert "\\x1b[2J" in html and "\\u202e" in html  # shown for what it is, not obeyed


def test_a_recording_that_fails_before_the_run_starts_leaves_nothing_in_the_store(
        flow_farm: FlowFarm, tmp_path: Path) -> None:
    # A WAV container whose samples are MPEG audio: it looks like a recording, so it is
    # uploaded, and the offline transcriber cannot read it: the run fails before its manifest.
    fmt = struct.pack("<HHIIHH", 0x0055, 1, 16_000, 2_000, 1, 0)
    data = b"\xff\xfb" * 1000
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack(
        "<I", len(data)) + data
    recording = tmp_path / "question.wav"
    recording.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    store = open_object_store(flow_farm.settings)
    before = {o.key for o in store.list_objects("runs/")}
    done = _ask(flow_farm, "--audio", str(recording))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("error: "), done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    added = {o.key for o in store.list_objects("runs/")} - before
    assert not [key for key in added if "query" in key], added


def test_a_spoken_question_says_what_was_heard_before_the_plan(flow_farm: FlowFarm,
                                                               tmp_path: Path) -> None:
    recording = tmp_path / "question.wav"
    speak("Which permissions does Meituan have?", recording)
    done = _ask(flow_farm, "--audio", str(recording))
    lines = done.stdout.splitlines()
    heard = next((line for line in lines if line.startswith("heard: “")), None)
    assert heard is not None, done.stdout + done.stderr
    assert heard.endswith("(pocketsphinx:en-us, offline engine: low accuracy)")
    said = heard.removeprefix("heard: “").split("” (", 1)[0]
    assert said.strip(), heard
    if done.returncode != 0:  # the offline engine often mishears: the error says what it heard
        assert f"heard as “{said}”" in done.stderr, done.stderr
    else:
        assert lines.index(heard) < next(i for i, line in enumerate(lines) if "sub-task" in line)
    assert "Traceback" not in done.stdout + done.stderr
