"""Fixtures over the real DroidBot recordings in ../shared/data (read in place, never copied)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from inference.perception import DroidbotState, list_droidbot_states, load_droidbot_state

_REPO = Path(__file__).resolve().parents[2]


def _data_dir() -> Path | None:
    candidates = [
        os.environ.get("DROIDRETRIEVER_DATA_DIR", ""),
        str(_REPO.parent / "shared" / "data"),
        "/work/shared/data",
    ]
    return next((Path(c) for c in candidates if c and Path(c).is_dir()), None)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    found = _data_dir()
    if found is None:
        pytest.skip("the real screens (shared/data) are not beside this checkout")
    return found


@pytest.fixture(scope="session")
def state_paths(data_dir: Path) -> list[Path]:
    return list_droidbot_states(data_dir)


@pytest.fixture(scope="session")
def sample_paths(state_paths: list[Path]) -> list[Path]:
    """Every 12th recorded screen: ~60 screens over all eight apps."""
    return state_paths[::12]


@pytest.fixture(scope="session")
def sample_states(sample_paths: list[Path]) -> list[DroidbotState]:
    return [load_droidbot_state(p) for p in sample_paths]
