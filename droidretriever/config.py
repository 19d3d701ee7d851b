"""Settings: environment (``DROIDRETRIEVER_*``, nested with ``__``) over an optional TOML file.

Precedence, highest first: explicit keyword arguments, environment variables,
the TOML file (``$DROIDRETRIEVER_CONFIG`` or ``./droidretriever.toml``),
defaults. Example::

    DROIDRETRIEVER_REDIS__URL=redis://10.0.0.5:6379/0
    DROIDRETRIEVER_LLM__NAVIGATOR__BASE_URL=http://vllm:8000/v1

    # droidretriever.toml
    [budgets]
    steps_per_subtask = 20

Invalid settings raise :class:`ConfigError` naming the setting (as the
environment variable a person would set) and the fix. Nothing here reads a
module-global: call :func:`load_settings` and pass the result down.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from droidretriever.errors import ConfigError

__all__ = [
    "ENV_PREFIX",
    "ApiSettings",
    "BudgetSettings",
    "FarmSettings",
    "LLMEndpoint",
    "LLMSettings",
    "LatencyProfile",
    "PerceptionSettings",
    "PrefectSettings",
    "RedisSettings",
    "S3Settings",
    "Settings",
    "SimSettings",
    "StackSettings",
    "config_file_path",
    "load_settings",
]

ENV_PREFIX = "DROIDRETRIEVER_"
_NESTED = "__"


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RedisSettings(_Section):
    """Broker, live run state and the device registry."""

    url: str = "redis://127.0.0.1:6390/0"

    @field_validator("url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return value

    @property
    def port(self) -> int:
        from urllib.parse import urlparse

        return urlparse(self.url).port or 6379

    @property
    def host(self) -> str:
        from urllib.parse import urlparse

        return urlparse(self.url).hostname or "127.0.0.1"


class S3Settings(_Section):
    """Object store: SeaweedFS locally, MinIO in production; same code."""

    endpoint: AnyHttpUrl = AnyHttpUrl("http://127.0.0.1:8333")
    bucket: str = Field(default="droidretriever", min_length=3, max_length=63)
    access_key: str = "droidretriever"
    secret_key: SecretStr = SecretStr("droidretriever-local-secret")
    region: str = "us-east-1"
    retries: int = Field(default=3, ge=0, le=10)
    timeout_s: float = Field(default=10.0, gt=0)

    @field_validator("bucket")
    @classmethod
    def _bucket_name(cls, value: str) -> str:
        if value != value.lower() or "_" in value:
            raise ValueError("S3 bucket names are lower case, digits, '-' and '.'")
        return value

    @property
    def secure(self) -> bool:
        return self.endpoint.scheme == "https"

    @property
    def host_port(self) -> str:
        return f"{self.endpoint.host}:{self.endpoint.port}"


class PrefectSettings(_Section):
    api_url: AnyHttpUrl = AnyHttpUrl("http://127.0.0.1:4200/api")

    @property
    def port(self) -> int:
        return self.api_url.port or 4200

    @property
    def ui_url(self) -> str:
        """The Prefect UI: the API URL without its ``/api`` path."""
        return str(self.api_url).rstrip("/").removesuffix("/api")

    def client_env(self) -> dict[str, str]:
        """Environment for a process that runs Prefect code against this server.

        Prefect's default profile falls back to a temporary in-process server when
        no API URL is set; ours names the stack's server and forbids that fallback,
        so a misconfigured process fails instead of serving or running nothing.
        """
        return {
            "PREFECT_API_URL": str(self.api_url).rstrip("/"),
            "PREFECT_SERVER_ALLOW_EPHEMERAL_MODE": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
        }


class LLMEndpoint(_Section):
    """One model role. An empty ``base_url`` means the role has no model (not faked)."""

    base_url: AnyHttpUrl | None = None
    model: str = ""
    api_key: SecretStr = SecretStr("EMPTY")  # vLLM accepts any key unless started with one
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=1024, gt=0, le=32768)
    locality: Literal["local", "cloud"] = "local"  # cloud = redact before sending
    vision: bool = False  # send the screenshot too

    @property
    def configured(self) -> bool:
        return self.base_url is not None and bool(self.model)


class LLMSettings(_Section):
    """The four roles of DroidRetriever (LLM1-LLM4), each its own endpoint."""

    decomposer: LLMEndpoint = LLMEndpoint()
    navigator: LLMEndpoint = LLMEndpoint()
    evaluator: LLMEndpoint = LLMEndpoint()
    synthesizer: LLMEndpoint = LLMEndpoint()
    transcriber: LLMEndpoint = LLMEndpoint()  # /v1/audio/transcriptions (Whisper, SenseVoice)


class BudgetSettings(_Section):
    steps_per_subtask: int = Field(default=20, gt=0, le=200)
    retries: int = Field(default=3, ge=1, le=10)  # tries per sub-task, reflection between
    browsing_limit: int = Field(default=3, ge=1, le=20)
    swipes_per_capture: int = Field(default=4, ge=0, le=20)
    swipe_fraction: float = Field(default=0.67, gt=0.1, le=0.95)
    confirm_window_s: float = Field(default=0.0, ge=0.0, le=10.0)
    pause_timeout_s: float = Field(default=600.0, gt=0)
    grounding_threshold: float = Field(default=0.8, gt=0.0, le=1.0)


class LatencyProfile(StrEnum):
    ZERO = "zero"
    REALISTIC = "realistic"


class SimSettings(_Section):
    """Virtual phones (device_farm/sim)."""

    host: str = "127.0.0.1"
    adb_port: int = Field(default=15037, gt=0, lt=65536)  # not 5037: leave real adb alone
    phones: int = Field(default=2, ge=1, le=64)
    seed: int = 7
    latency: LatencyProfile = LatencyProfile.ZERO


class FarmSettings(_Section):
    """The device farm (device_farm/, tasks/ workers): heartbeats, leases, health."""

    adb_host: str = "127.0.0.1"  # the adb server real phones and emulators hang off
    adb_port: int = Field(default=5037, gt=0, lt=65536)
    heartbeat_s: float = Field(default=2.0, gt=0.0, le=60.0)
    heartbeat_missed: int = Field(default=3, ge=1, le=20)  # beats missed before "offline"
    lease_ttl_s: float = Field(default=30.0, gt=0.0, le=3600.0)
    max_failed_observes: int = Field(default=3, ge=1, le=20)  # in a row, then quarantine
    rejoin_after_ok: int = Field(default=2, ge=1, le=20)  # healthy probes before rejoining
    # Longer than any sub-task (pauses included): the farm monitor redelivers a dead
    # worker's sub-task at once, so the broker's own timer is only a last resort.
    visibility_timeout_s: float = Field(default=7200.0, ge=10.0)
    emulator_boot_timeout_s: float = Field(default=240.0, gt=0.0)
    android_sdk_root: Path | None = None  # else $ANDROID_SDK_ROOT / $ANDROID_HOME


class PerceptionSettings(_Section):
    """Screen perception (inference/perception): OCR, detector, redaction, description."""

    ocr_backend: Literal["rapidocr", "paddle", "none"] = "rapidocr"  # paddle needs the gpu extra
    ocr_cache_size: int = Field(default=256, ge=0, le=100_000)  # images, LRU by content hash
    ocr_min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    # Off until a trained ONNX model is committed (training wants a GPU; docs/perception.md).
    detector_enabled: bool = False
    detector_backend: Literal["onnx", "ultralytics"] = "onnx"
    detector_model: Path | None = None
    detector_confidence: float = Field(default=0.35, gt=0.0, le=1.0)
    # Mask these in anything sent to a model whose endpoint has locality="cloud".
    redact_kinds: tuple[Literal["phone", "email", "id_number", "card", "address"], ...] = (
        "phone", "email", "id_number", "card", "address",
    )
    blur_stored_screenshots: bool = False
    description_token_budget: int = Field(default=1200, ge=100, le=32_000)


class StackSettings(_Section):
    """The embedded local stack (deploy/local): ports the service URLs do not name.

    SeaweedFS needs seven loopback ports besides its S3 port: master, volume and
    filer HTTP plus four gRPC ports. They are a contiguous block starting here
    (master, master gRPC, volume, volume gRPC, filer, filer gRPC, S3 gRPC).
    """

    weed_base_port: int = Field(default=18330, ge=1024, le=65535 - 6)
    start_timeout_s: float = Field(default=90.0, gt=0, le=600)


class ApiSettings(_Section):
    """The HTTP API and dashboard (droidretriever/api), and who hears about pauses."""

    host: str = "127.0.0.1"
    port: int = Field(default=8700, gt=0, lt=65536)
    # Where people reach the dashboard (links in notifications); default http://host:port.
    public_url: AnyHttpUrl | None = None
    session_ttl_s: float = Field(default=8 * 3600.0, ge=60.0, le=7 * 24 * 3600.0)
    login_code_ttl_s: float = Field(default=120.0, ge=10.0, le=3600.0)
    # POSTed (JSON: app, reason, run, dashboard link) whenever a run starts waiting for a person.
    pause_webhook: AnyHttpUrl | None = None
    # Browser origins allowed to call the API from other sites; empty = no CORS at all.
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = Field(default=64 * 1024, ge=1024, le=16 * 1024 * 1024)
    max_audio_bytes: int = Field(default=10 * 1024 * 1024, ge=1024, le=100 * 1024 * 1024)
    concurrent_runs: int = Field(default=4, ge=1, le=64)  # runs the runner executes at once
    live_fps: float = Field(default=15.0, gt=0.0, le=60.0)  # live screen frames per second, at most

    @property
    def base_url(self) -> str:
        """The dashboard's URL, without a trailing slash."""
        if self.public_url is not None:
            return str(self.public_url).rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


class Settings(BaseSettings):
    """Everything DroidRetriever reads from its environment."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=_NESTED,
        extra="forbid",
        frozen=True,
    )

    state_dir: Path = Path.home() / ".droidretriever"
    redis: RedisSettings = RedisSettings()
    s3: S3Settings = S3Settings()
    prefect: PrefectSettings = PrefectSettings()
    llm: LLMSettings = LLMSettings()
    budgets: BudgetSettings = BudgetSettings()
    sim: SimSettings = SimSettings()
    perception: PerceptionSettings = PerceptionSettings()
    farm: FarmSettings = FarmSettings()
    stack: StackSettings = StackSettings()
    api: ApiSettings = ApiSettings()
    api_token: SecretStr | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = config_file_path()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def spool_dir(self) -> Path:
        return self.state_dir / "spool"


def config_file_path() -> Path | None:
    """The TOML file in force: ``$DROIDRETRIEVER_CONFIG``, else ``./droidretriever.toml`` if present."""
    explicit = os.environ.get(f"{ENV_PREFIX}CONFIG")
    if explicit:
        return Path(explicit)
    default = Path("droidretriever.toml")
    return default if default.is_file() else None


def _env_name(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc if not isinstance(p, int)]
    return ENV_PREFIX + _NESTED.join(p.upper() for p in parts)


def _toml_name(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc if not isinstance(p, int)]
    if len(parts) == 1:
        return parts[0]
    return f"[{'.'.join(parts[:-1])}] {parts[-1]}"


def load_settings(**overrides: Any) -> Settings:
    """Read settings, or raise :class:`ConfigError` listing every bad one and its fix."""
    path = config_file_path()
    if path is not None and not path.is_file():
        raise ConfigError(
            f"config file {path} does not exist",
            hint=f"create it, or unset {ENV_PREFIX}CONFIG to use defaults and the environment",
        )
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            given = err.get("input")
            shown = "" if isinstance(given, dict) else f" (got {given!r})"
            if err["type"] == "extra_forbidden":
                lines.append(
                    f"  {_env_name(loc)}: unknown setting{shown}; check the spelling "
                    "against docs/configuration.md"
                )
                continue
            lines.append(
                f"  {_env_name(loc)}: {err['msg']}{shown}; fix it in the environment "
                f"or in {path or 'droidretriever.toml'} as {_toml_name(loc)}"
            )
        raise ConfigError(
            "invalid settings:\n" + "\n".join(lines),
            hint="see docs/configuration.md for every setting and its default",
        ) from exc
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        raise ConfigError(
            f"cannot read config file {path}: {exc}",
            hint="fix the TOML syntax or point DROIDRETRIEVER_CONFIG elsewhere",
        ) from exc
