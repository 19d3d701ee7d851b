"""Invalid settings fail at start with a message naming the setting and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_settings
from core.errors import ConfigError
from core.secrets import SecretFiles, StackSecret


@pytest.fixture(autouse=True)
def _no_config_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no ./droidretriever.toml from the developer
    monkeypatch.delenv("DROIDRETRIEVER_CONFIG", raising=False)


def test_bad_redis_url_names_the_variable_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_REDIS__URL", "http://127.0.0.1:6390")
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "DROIDRETRIEVER_REDIS__URL" in message
    assert "must start with redis://" in message
    assert "[redis] url" in message  # the TOML spelling too
    assert "docs/configuration.md" in info.value.hint


def test_bad_s3_endpoint_and_negative_budget_are_all_listed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_S3__ENDPOINT", "not a url")
    monkeypatch.setenv("DROIDRETRIEVER_BUDGETS__STEPS_PER_SUBTASK", "-3")
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "DROIDRETRIEVER_S3__ENDPOINT" in message
    assert "DROIDRETRIEVER_BUDGETS__STEPS_PER_SUBTASK" in message
    assert "greater than 0" in message
    assert "(got '-3')" in message


def test_stack_ports_and_unknown_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_STACK__WEED_BASE_PORT", "80")
    with pytest.raises(ConfigError, match="DROIDRETRIEVER_STACK__WEED_BASE_PORT"):
        load_settings()
    monkeypatch.delenv("DROIDRETRIEVER_STACK__WEED_BASE_PORT")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings(stack={"weed_port": 1})


def test_missing_config_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings()


def test_toml_file_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "dr.toml"
    config.write_text('[budgets]\nsteps_per_subtask = 12\n[stack]\nweed_base_port = 20000\n')
    monkeypatch.setenv("DROIDRETRIEVER_CONFIG", str(config))
    settings = load_settings()
    assert settings.budgets.steps_per_subtask == 12
    assert settings.stack.weed_base_port == 20000


def test_generated_secrets_fill_only_what_is_unset_and_only_for_the_local_stack(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    files = SecretFiles(tmp_path)
    files.write(StackSecret.REDIS_PASSWORD, "pw-generated")
    files.write(StackSecret.S3_ACCESS_KEY, "ak-generated")
    files.write(StackSecret.S3_SECRET_KEY, "sk-generated")
    files.write(StackSecret.PREFECT_AUTH, "droidretriever:generated")
    local = load_settings(state_dir=tmp_path)
    assert local.redis.url == "redis://:pw-generated@127.0.0.1:6390/0"
    assert local.redis.masked_url == "redis://:***@127.0.0.1:6390/0"
    assert local.s3.access_key == "ak-generated"
    assert local.s3.secret_key is not None and local.s3.secret_key.get_secret_value() == "sk-generated"
    assert local.prefect.auth_string is not None
    assert local.prefect.client_env()["PREFECT_API_AUTH_STRING"] == "droidretriever:generated"

    # What the environment sets wins; an external service never gets the local stack's secrets.
    monkeypatch.setenv("DROIDRETRIEVER_REDIS__URL", "redis://:mine@127.0.0.1:6390/0")
    monkeypatch.setenv("DROIDRETRIEVER_S3__ENDPOINT", "https://minio.internal:9000")
    monkeypatch.setenv("DROIDRETRIEVER_PREFECT__AUTH_STRING", "ops:theirs")
    chosen = load_settings(state_dir=tmp_path)
    assert chosen.redis.url == "redis://:mine@127.0.0.1:6390/0"
    assert chosen.s3.access_key is None and chosen.s3.secret_key is None
    assert chosen.prefect.auth_string is not None
    assert chosen.prefect.auth_string.get_secret_value() == "ops:theirs"


def test_before_the_first_up_there_are_no_keys_and_no_defaults(tmp_path: Path) -> None:
    settings = load_settings(state_dir=tmp_path)
    assert settings.s3.access_key is None and settings.s3.secret_key is None
    assert not settings.redis.has_password and settings.prefect.auth_string is None


def test_the_pause_webhook_must_be_http_or_https(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_API__PAUSE_WEBHOOK", "ftp://hooks.example/pause")
    with pytest.raises(ConfigError) as bad:
        load_settings()
    message = str(bad.value)
    assert "DROIDRETRIEVER_API__PAUSE_WEBHOOK" in message and "'http' or 'https'" in message
    monkeypatch.setenv("DROIDRETRIEVER_API__PAUSE_WEBHOOK", "https://hooks.example/pause")
    assert str(load_settings().api.pause_webhook) == "https://hooks.example/pause"


def test_the_dashboard_url_comes_from_host_and_port_unless_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_API__PORT", "8711")
    assert load_settings().api.base_url == "http://127.0.0.1:8711"
    monkeypatch.setenv("DROIDRETRIEVER_API__PUBLIC_URL", "https://farm.example/dr/")
    assert load_settings().api.base_url == "https://farm.example/dr"
