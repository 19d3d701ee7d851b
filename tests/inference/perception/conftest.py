"""Fixtures over the real DroidBot recordings in ../shared/data (read in place, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_settings
from core.recordings import find_data_dir
from inference.perception import DroidbotState, list_droidbot_states, load_droidbot_state


@pytest.fixture(scope="session")
def data_dir() -> Path:
    found = find_data_dir(load_settings())
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
