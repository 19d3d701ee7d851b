"""Property: no value of a CLI option or a setting produces a traceback (hypothesis).

Any text, control characters and lone surrogates' neighbours included, goes
into the options of ``ask``, ``subscribe``, ``subscriptions`` and ``resume`` and
into the settings' environment variables. The CLI answers with exit code 0, 1
(a clear failure: here the services are unreachable on purpose, 127.0.0.2 is no
stack of ours) or 2 (the input is wrong: exactly one ``error:`` line), and never
a traceback. The settings loader returns settings or raises ``ConfigError``,
and no error shows a secret it was given.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.config import load_settings
from core.errors import ConfigError
from droidretriever.cli import run
from droidretriever.testing import free_port

pytestmark = pytest.mark.slow

SECRET = "s3cr3t-never-shown"
# Text as a person or a script might pass it: any printable, controls, escapes, CJK, huge.
_TEXT = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
    st.sampled_from(["", " ", "\x1b[2J", "focused", "list-view", "0 8 * * *", "61 25 * * *",
                     "http://127.0.0.1:1/x", "ftp://x/y", "https://169.254.169.254/", "30s",
                     "9999999999d", "sub-abcdef12", "run-20260101T000000-abcdef", "a" * 3000]),
)
_EXAMPLES = settings(max_examples=40, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])


@pytest.fixture
def unreachable_stack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Settings naming services on 127.0.0.2 (not loopback to us: never started) that refuse."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DROIDRETRIEVER_CONFIG", raising=False)
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("PREFECT_CLIENT_MAX_RETRIES", "0")
    for name, value in {
        "STATE_DIR": str(tmp_path / "state"),
        "REDIS__URL": f"redis://127.0.0.2:{free_port()}/0",
        "S3__ENDPOINT": f"http://127.0.0.2:{free_port()}",
        "PREFECT__API_URL": f"http://127.0.0.2:{free_port()}/api",
        "STACK__START_TIMEOUT_S": "0.05",
        "SUBSCRIPTIONS__WEBHOOK_CHECK": "false",
    }.items():
        monkeypatch.setenv(f"DROIDRETRIEVER_{name}", value)


def _no_traceback(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    try:
        code = run(argv)
    except SystemExit as exc:  # `status` exits 3 itself
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err, (argv, out.err[-2000:])
    assert code in (0, 1, 2, 3), (argv, code, out.err[-500:])
    if code == 2:
        errors = [line for line in out.err.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 or "invalid" in out.err, (argv, out.err)


@_EXAMPLES
@given(question=_TEXT, mode=_TEXT, apps=_TEXT, limit=_TEXT)
def test_ask_options(capsys: pytest.CaptureFixture[str], unreachable_stack: None,
                     question: str, mode: str, apps: str, limit: str) -> None:
    _no_traceback(capsys, ["ask", "--mode", mode, "--apps", apps, "--limit", limit, "--", question])


@_EXAMPLES
@given(question=_TEXT, cron=_TEXT, every=_TEXT, webhook=_TEXT, mode=_TEXT)
def test_subscribe_options(capsys: pytest.CaptureFixture[str], unreachable_stack: None,
                           question: str, cron: str, every: str, webhook: str, mode: str) -> None:
    argv = ["subscribe", "--mode", mode, "--webhook", webhook]
    argv += ["--every", every] if every else ["--cron", cron]
    _no_traceback(capsys, [*argv, "--", question])


@_EXAMPLES
@given(command=st.sampled_from(["show", "pause", "resume", "delete"]), ident=_TEXT, note=_TEXT)
def test_subscription_and_run_ids(capsys: pytest.CaptureFixture[str], unreachable_stack: None,
                                  command: str, ident: str, note: str) -> None:
    _no_traceback(capsys, ["subscriptions", command, "--", ident])
    _no_traceback(capsys, ["resume", "--note", note, "--", ident])


_SETTINGS = st.sampled_from([
    "REDIS__URL", "S3__ENDPOINT", "S3__BUCKET", "S3__SECRET_KEY", "S3__ACCESS_KEY",
    "PREFECT__API_URL", "PREFECT__AUTH_STRING", "BUDGETS__STEPS_PER_SUBTASK", "SIM__LATENCY",
    "PERCEPTION__REDACT_KINDS", "PERCEPTION", "LLM__NAVIGATOR__BASE_URL", "LLM__NAVIGATOR__API_KEY",
    "STACK__WEED_BASE_PORT", "SUBSCRIPTIONS__WEBHOOK_CHECK", "FARM__ANDROID_SDK_ROOT", "NO_SUCH",
])


@_EXAMPLES
@given(values=st.dictionaries(_SETTINGS, _TEXT, min_size=1, max_size=4))
def test_the_settings_loader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                             values: dict[str, str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DROIDRETRIEVER_CONFIG", raising=False)
    with monkeypatch.context() as patch:
        for name, value in values.items():
            if "\x00" in value:
                continue  # an environment variable cannot hold NUL
            secret = value if not name.endswith(("SECRET_KEY", "AUTH_STRING", "API_KEY")) else (
                f"{value}{SECRET}")
            patch.setenv(f"DROIDRETRIEVER_{name}", secret)
        try:
            load_settings(state_dir=tmp_path)
        except ConfigError as exc:
            assert SECRET not in str(exc) + exc.hint
