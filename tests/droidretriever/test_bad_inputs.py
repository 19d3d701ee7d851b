"""Every bad input is one line saying what is wrong and what to do, exit 2, nothing started or written.

The CLI runs in this process (``droidretriever.cli.run``) with its settings
pointing at a state folder and ports nothing uses: a command that got past its
checks would start services there, so "nothing written" is that folder not
existing afterwards.
"""

from __future__ import annotations

import wave
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


def test_a_cron_expression_out_of_range(capsys: pytest.CaptureFixture[str], state: Path) -> None:
    line = _refused(capsys, state, "subscribe", "Big Mac price on Ele.me", "--cron", "61 25 * * *")
    assert "--cron" in line and "'61 25 * * *' is not a cron expression" in line
    _refused(capsys, state, "subscribe", "Big Mac price", "--every", "soon")


def test_a_webhook_must_be_http_or_https(capsys: pytest.CaptureFixture[str], state: Path) -> None:
    line = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook", "ftp://example.com/x")
    assert "--webhook 'ftp://example.com/x'" in line and "http" in line


def test_a_webhook_to_a_refusing_port_or_a_link_local_address(
        capsys: pytest.CaptureFixture[str], state: Path) -> None:
    refused = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                       f"http://127.0.0.1:{free_port()}/hook")
    assert "nothing answers" in refused and "WEBHOOK_CHECK" in refused
    metadata = _refused(capsys, state, "subscribe", "Big Mac price", "--webhook",
                        "http://169.254.169.254/latest/meta-data")
    assert "link-local" in metadata


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
