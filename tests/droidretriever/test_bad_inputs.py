"""Every bad input is one line saying what is wrong and what to do, exit 2, nothing started or written.

The CLI runs in this process (``droidretriever.cli.run``) with its settings
pointing at a state folder and ports nothing uses: a command that got past its
checks would start services there, so "nothing written" is that folder not
existing afterwards.
"""

from __future__ import annotations

import contextlib
import os
import wave
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from droidretriever.cli import run
from droidretriever.testing import free_port


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DROIDRETRIEVER_CONFIG", raising=False)
    monkeypatch.setenv("COLUMNS", "300")
    state_dir = tmp_path / "state"
    for name, value in {
        "STATE_DIR": str(state_dir),
        "REDIS__URL": f"redis://127.0.0.1:{free_port()}/0",
        "S3__ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "PREFECT__API_URL": f"http://127.0.0.1:{free_port()}/api",
    }.items():
        monkeypatch.setenv(f"DROIDRETRIEVER_{name}", value)
    return state_dir


def _refused(capsys: pytest.CaptureFixture[str], state: Path, *argv: str) -> str:
    """Run the CLI; assert exit 2, one ``error:`` line, no traceback, nothing written; the line."""
    code = run(list(argv))
    out = capsys.readouterr()
    lines = [line for line in out.err.splitlines() if line.strip()]
    assert code == 2, (code, out.out, out.err)
    assert len(lines) == 1 and lines[0].startswith("error: "), out.err
    assert "Traceback" not in out.out + out.err
    assert not state.exists(), "something was written before the input was checked"
    return lines[0]


def test_an_unknown_mode_is_refused_before_the_stack_is_checked(
        capsys: pytest.CaptureFixture[str], state: Path) -> None:
    line = _refused(capsys, state, "ask", "--mode", "nonsense", "Which permissions does Meituan have?")
    assert "--mode 'nonsense' is not a page mode" in line and "focused, list_view or multi_page" in line
    _refused(capsys, state, "subscribe", "Big Mac price", "--mode", "nonsense")


def test_a_question_over_the_limit_names_the_limit(capsys: pytest.CaptureFixture[str],
                                                   state: Path) -> None:
    line = _refused(capsys, state, "ask", "x" * 100_000)
    assert "100,000 characters" in line and "the limit is 2,000" in line
    _refused(capsys, state, "subscribe", "y" * 2001, "--every", "1h")


@pytest.mark.parametrize("question", [
    "😀🔥💯", "🇨🇳🍔", "\u202e😀\u2066", "\ufe0f\ufe0f", "\U000e0041\U000e0042", "??? !!!",
    "\u200f\x07?\u200e", "\x1b[2J\x1b]0;title\x07", "42",
])
def test_a_question_without_a_word_is_refused_before_a_run_starts(
        capsys: pytest.CaptureFixture[str], state: Path, question: str) -> None:
    line = _refused(capsys, state, "ask", question)
    assert "has no words" in line and "type what you want to find out, in words" in line
    assert "has no words" in _refused(capsys, state, "subscribe", question, "--every", "1h")


def test_a_cron_expression_out_of_range(capsys: pytest.CaptureFixture[str], state: Path) -> None:
    line = _refused(capsys, state, "subscribe", "Big Mac price on Ele.me", "--cron", "61 25 * * *")
    assert "--cron" in line and "'61 25 * * *' is not a cron expression" in line
    _refused(capsys, state, "subscribe", "Big Mac price", "--every", "soon")


def test_a_webhook_must_be_http_or_https(capsys: pytest.CaptureFixture[str], state: Path) -> None:
    line = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook", "ftp://example.com/x")
    assert "--webhook 'ftp://example.com/x'" in line and "http" in line


def test_a_webhook_to_a_refusing_port_or_a_link_local_address(
        capsys: pytest.CaptureFixture[str], state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    metadata = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                        "http://169.254.169.254/latest/meta-data")
    assert "link-local" in metadata
    for wrapped in ("[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[::169.254.169.254]"):
        line = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                        f"http://{wrapped}/latest/meta-data")
        assert "(169.254.169.254), a link-local or cloud metadata address" in line, line
    loopback = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                        "http://127.0.0.1:9/hook")
    assert "this machine (loopback)" in loopback and "WEBHOOK_PRIVATE=true" in loopback
    monkeypatch.setenv("DROIDRETRIEVER_SUBSCRIPTIONS__WEBHOOK_PRIVATE", "true")
    refused = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                       f"http://127.0.0.1:{free_port()}/hook")
    assert "nothing answers" in refused and "WEBHOOK_CHECK" in refused
    own = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                   "http://[::ffff:127.0.0.1]:18333/")  # a SeaweedFS port of the stack
    assert "a port of the stack's own services" in own


def test_a_malformed_json_env_var_is_named_not_blamed_on_a_file(
        capsys: pytest.CaptureFixture[str], state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_PERCEPTION__REDACT_KINDS", "[phone")
    line = _refused(capsys, state, "status")
    assert "DROIDRETRIEVER_PERCEPTION__REDACT_KINDS" in line and "JSON" in line
    assert "config file" not in line


def test_an_empty_s3_secret_key_then_status(capsys: pytest.CaptureFixture[str], state: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_S3__SECRET_KEY", "")
    line = _refused(capsys, state, "status")
    assert "DROIDRETRIEVER_S3__SECRET_KEY" in line and "is empty" in line


def test_an_invalid_redis_url_never_prints_its_password(
        capsys: pytest.CaptureFixture[str], state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_REDIS__URL", "redis://:hunter2-secret@127.0.0.1:port/0")
    line = _refused(capsys, state, "status")
    assert "DROIDRETRIEVER_REDIS__URL" in line and "redis://:***@" in line
    assert "hunter2" not in line
    monkeypatch.setenv("DROIDRETRIEVER_REDIS__URL", "redis://127.0.0.1:6390/0")
    monkeypatch.setenv("DROIDRETRIEVER_LLM__NAVIGATOR__API_KEY", "")
    monkeypatch.setenv("DROIDRETRIEVER_PREFECT__AUTH_STRING", "no-colon-hunter2")
    assert "hunter2" not in _refused(capsys, state, "status")


@pytest.mark.parametrize("url", [
    "redis:/:hunter2-secret@127.0.0.1:6390/0", "redis:///:hunter2-secret@127.0.0.1:6390/0",
    ":hunter2-secret@127.0.0.1:6390", "redis://:hunter2/secret@127.0.0.1:6390/0",
    "redis://:hunter2?secret@127.0.0.1:6390/0", "redis://:hunter2#secret@127.0.0.1:6390/0",
    "redis://user:hunter2-secret@[::1/0", "redis\\://:hunter2-secret@h/0",
])
def test_a_malformed_redis_url_never_prints_its_password(
        capsys: pytest.CaptureFixture[str], state: Path, monkeypatch: pytest.MonkeyPatch,
        url: str) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_REDIS__URL", url)
    line = _refused(capsys, state, "status")
    assert "DROIDRETRIEVER_REDIS__URL" in line and "***@" in line
    assert "hunter2" not in line and "secret" not in line


def test_status_and_doctor_never_show_a_password_in_a_service_or_model_url(
        capsys: pytest.CaptureFixture[str], state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, url in {
        "S3__ENDPOINT": f"http://user:hunter2@127.0.0.1:{free_port()}",
        "PREFECT__API_URL": f"http://user:hunter2@127.0.0.1:{free_port()}/api",
        "LLM__NAVIGATOR__BASE_URL": f"http://user:hunter2@127.0.0.1:{free_port()}/v1",
    }.items():
        monkeypatch.setenv(f"DROIDRETRIEVER_{name}", url)
    monkeypatch.setenv("DROIDRETRIEVER_LLM__NAVIGATOR__MODEL", "qwen2.5-vl-7b")
    for command in ("status", "doctor"):
        with contextlib.suppress(SystemExit):  # status exits 3: nothing is up
            run([command])
        out = capsys.readouterr()
        assert "user:***@127.0.0.1" in out.out, out.out
        assert "hunter2" not in out.out + out.err, command


def test_a_recording_that_is_empty_or_no_audio_leaves_nothing_behind(
        capsys: pytest.CaptureFixture[str], state: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    assert "is empty (0 bytes)" in _refused(capsys, state, "ask", "--audio", str(empty))
    text = tmp_path / "notes.wav"
    text.write_text("Which permissions does Meituan have?")
    assert "is not an audio recording" in _refused(capsys, state, "ask", "--audio", str(text))
    silent = tmp_path / "header-only.wav"
    with wave.open(str(silent), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
    assert "holds no sound" in _refused(capsys, state, "ask", "--audio", str(silent))
    assert "does not exist" in _refused(capsys, state, "ask", "--audio", str(tmp_path / "nope.wav"))


def test_a_recording_that_is_a_device_or_a_pipe_is_refused_unread(
        capsys: pytest.CaptureFixture[str], state: Path, tmp_path: Path) -> None:
    # Both report size 0: /dev/zero never ends, and opening a pipe waits for its writer.
    line = _refused(capsys, state, "ask", "--audio", "/dev/zero")
    assert "/dev/zero is not a regular file (a character device)" in line
    fifo = tmp_path / "question.wav"
    os.mkfifo(fifo)
    refused = ThreadPoolExecutor(1).submit(_refused, capsys, state, "ask", "--audio", str(fifo))
    assert "is not a regular file (a pipe)" in refused.result(timeout=30)


def test_a_recording_over_the_limit_names_the_limit(
        capsys: pytest.CaptureFixture[str], state: Path, tmp_path: Path) -> None:
    big = tmp_path / "long.wav"
    with big.open("wb") as out:  # sparse: 30 MB that take no room
        out.write(b"RIFF")
        out.truncate(30_000_000)
    line = _refused(capsys, state, "ask", "--audio", str(big))
    assert "is 28.6 MB; the limit is 25 MB: record a shorter question" in line


def test_control_characters_in_a_refused_value_never_reach_the_terminal(
        capsys: pytest.CaptureFixture[str], state: Path) -> None:
    line = _refused(capsys, state, "ask", "--mode", "\x1b[2J\x1b]0;owned\x07nonsense", "q")
    assert "\x1b" not in line and "\x07" not in line
    assert "nonsense" in line


def test_usage_errors_are_one_line_too(capsys: pytest.CaptureFixture[str], state: Path) -> None:
    assert "--limit" in _refused(capsys, state, "ask", "--limit", "0", "q")
    assert "No such command" in _refused(capsys, state, "nosuch")
    assert "not a subscription id" in _refused(capsys, state, "subscriptions", "show", "../../etc")
    assert "not a run id" in _refused(capsys, state, "resume", "run-../x")
