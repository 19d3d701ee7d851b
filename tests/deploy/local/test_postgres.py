"""Which database the stack's Prefect server keeps its runs in, and what a person is told when
an earlier stack's SQLite file is left behind (issue 32).

The service itself (started by ``up``, used by Prefect, stopped by ``down``, its password in
no log or status line) is tested on the real stack: tests/deploy/local/test_no_open_service.py
and test_stack.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Settings, load_settings
from core.errors import ConfigError
from core.secrets import StackSecret
from deploy.local import build_stack, describe_sqlite_left_behind, ensure_stack_secrets
from deploy.local.postgres import prefect_database_env


def _settings(state: Path, **prefect: object) -> Settings:
    return load_settings(state_dir=state, prefect=prefect)


def test_postgres_is_the_default_and_sqlite_a_setting(tmp_path: Path) -> None:
    names = [s.name for s in build_stack(_settings(tmp_path)).services]
    assert names.index("postgres") < names.index("prefect")
    assert "postgres" not in [s.name for s in build_stack(
        _settings(tmp_path, database="sqlite")).services]
    # Prefect elsewhere: its database is not this host's business.
    assert "postgres" not in [s.name for s in build_stack(
        _settings(tmp_path, api_url="http://10.231.0.1:4200/api")).services]
    with pytest.raises(ConfigError, match="DROIDRETRIEVER_PREFECT__DATABASE: Input should be "
                       "'postgres' or 'sqlite'"):
        _settings(tmp_path, database="mysql")


def test_prefect_gets_the_database_in_parts_and_the_password_only_in_its_environment(
        tmp_path: Path) -> None:
    settings = ensure_stack_secrets(_settings(tmp_path, database_port=25442))
    password = settings.secrets.read(StackSecret.POSTGRES_PASSWORD)
    assert password is not None and len(password) >= 40
    env = prefect_database_env(settings, tmp_path / "prefect")
    assert env["PREFECT_SERVER_DATABASE_DRIVER"] == "postgresql+asyncpg"
    assert env["PREFECT_SERVER_DATABASE_PORT"] == "25442"
    assert env["PREFECT_SERVER_DATABASE_PASSWORD"] == password
    assert [k for k, v in env.items() if password in v] == ["PREFECT_SERVER_DATABASE_PASSWORD"]
    service = next(s for s in build_stack(settings).services if s.name == "postgres")
    assert password not in service.url
    sqlite = prefect_database_env(
        ensure_stack_secrets(_settings(tmp_path, database="sqlite")), tmp_path / "prefect")
    assert sqlite == {"PREFECT_API_DATABASE_CONNECTION_URL":
                      f"sqlite+aiosqlite:///{tmp_path / 'prefect' / 'prefect.db'}"}


def test_an_earlier_sqlite_database_is_left_with_one_message(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert describe_sqlite_left_behind(settings) is None  # a new stack: nothing to say
    database = tmp_path / "prefect" / "prefect.db"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"SQLite format 3\x00")
    message = describe_sqlite_left_behind(settings)
    assert message is not None
    assert str(database) in message and "DROIDRETRIEVER_PREFECT__DATABASE=sqlite" in message
    assert describe_sqlite_left_behind(_settings(tmp_path, database="sqlite")) is None
    cluster = tmp_path / "postgres" / "data"
    cluster.mkdir(parents=True)
    (cluster / "PG_VERSION").write_text("15\n")
    assert describe_sqlite_left_behind(settings) is None  # said once, when the cluster is made
    assert database.read_bytes() == b"SQLite format 3\x00"  # left as it was
