"""`droidretriever doctor` and `ask` check the model roles first: one table, or one line and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from droidretriever.testing import RecordingOpenAIServer, ServedModel, free_port

CLI = str(Path(sys.executable).parent / "droidretriever")


@pytest.fixture
def vllm() -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("qwen-vl", vision=True), ServedModel("qwen-text")]) as server:
        yield server


def run(tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None,
        **roles: tuple[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DROIDRETRIEVER_")}
    env |= {"COLUMNS": "220", "DROIDRETRIEVER_STATE_DIR": str(tmp_path),
            # Nothing may be started: the check comes before the stack and the farm.
            "DROIDRETRIEVER_REDIS__URL": f"redis://127.0.0.1:{free_port()}/0"}
    for role, (url, model) in roles.items():
        env[f"DROIDRETRIEVER_LLM__{role.upper()}__BASE_URL"] = url
        env[f"DROIDRETRIEVER_LLM__{role.upper()}__MODEL"] = model
    env |= extra_env or {}
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=120,
                          check=False, cwd=tmp_path)


def test_doctor_prints_each_roles_checks(vllm: RecordingOpenAIServer, tmp_path: Path) -> None:
    done = run(tmp_path, "doctor", navigator=(vllm.base_url, "qwen-vl"),
               evaluator=(vllm.base_url, "Qwen2.5-VL-7B-Instruct"))
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.count("│") > 5}
    assert "ok" in rows["navigator"] and "served, context, json_schema" in rows["navigator"]
    assert "refused" in rows["evaluator"] and "--served-model-name" in done.stdout
    assert "absent" in rows["decomposer"] and "absent" in rows["transcriber"]
    assert "Traceback" not in done.stdout + done.stderr


def test_ask_with_a_wrong_model_name_stops_before_anything_starts(vllm: RecordingOpenAIServer,
                                                                   tmp_path: Path) -> None:
    """Table row 1: a 4xx-to-be is a configuration error, not a run of silent fallbacks."""
    done = run(tmp_path, "ask", "Is a Big Mac cheaper on Meituan or Ele.me?",
               evaluator=(vllm.base_url, "qwen"))
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("error: the evaluator's model 'qwen' at "), done.stderr
    assert "serves qwen-vl, qwen-text, not 'qwen'" in lines[0]
    assert lines[1].startswith("fix: set DROIDRETRIEVER_LLM__EVALUATOR__MODEL to one of: qwen-vl, qwen-text")
    assert len(lines) == 2 and "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "run").exists()  # no service was started


def test_doctor_flags_max_tokens_over_the_served_max_model_len(tmp_path: Path) -> None:
    """Issue 31 item 3: found before a run, not at its end; one line says what to change."""
    with RecordingOpenAIServer([ServedModel("qwen-4k", max_model_len=4096)]) as server:
        env = {"DROIDRETRIEVER_LLM__SYNTHESIZER__MAX_TOKENS": "4096"}
        done = run(tmp_path, "doctor", synthesizer=(server.base_url, "qwen-4k"), extra_env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.count("│") > 5}
    assert "refused" in rows["synthesizer"]
    text = " ".join(done.stdout.split())
    assert "max_model_len 4096" in text and "--max-model-len" in text and "Traceback" not in text
