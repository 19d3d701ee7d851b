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
environment variable a person would set) and the fix, one line per bad
setting, with no secret in it. Nothing here reads a module-global: call
:func:`load_settings` and pass the result down.

Secrets the settings leave unset are filled from the files ``droidretriever up``
generates (:mod:`core.secrets`), for the services of the local stack
only (loopback URLs): the Redis password, the S3 keys, Prefect's API auth
string, the OCR service's token. An explicitly set secret (environment, TOML) always wins.
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, get_args, get_origin
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from core.errors import ConfigError
from core.secrets import SecretFiles, StackSecret
from core.text import mask_url

__all__ = [
    "ENV_PREFIX",
    "LOOPBACK_HOSTS",
    "MAX_PIXELS",
    "ApiSettings",
    "BudgetSettings",
    "FarmSettings",
    "LLMEndpoint",
    "LLMSettings",
    "LatencyProfile",
    "MapSettings",
    "PerceptionSettings",
    "PrefectSettings",
    "RedisSettings",
    "S3Settings",
    "Settings",
    "SimSettings",
    "StackSettings",
    "SubscriptionSettings",
    "config_file_path",
    "fill_generated_secrets",
    "is_loopback",
    "load_settings",
]

ENV_PREFIX = "DROIDRETRIEVER_"
_NESTED = "__"
MAX_PIXELS = 200_704  # 256 patches of 28x28: a 1080x2340 screenshot is sent as 280x644, 230 tokens
# A service on one of these hosts is the local stack's own: started by `up`, given generated secrets.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# Settings whose values are never shown in an error, whatever they hold.
_SECRET_FIELDS = frozenset({"secret_key", "access_key", "api_key", "api_token", "auth_string",
                            "password", "ocr_service_token"})


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is this machine's loopback (a service of the local stack)."""
    return host in LOOPBACK_HOSTS


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RedisSettings(_Section):
    """Broker, live run state and the device registry."""

    # May hold a password (redis://:password@host:port/db); the local stack's is filled in
    # from the generated secret when the URL names none. Shown only through masked_url.
    url: str = "redis://127.0.0.1:6390/0"
    # How long a client keeps retrying a Redis that does not answer (a restart) before it
    # gives up: a restart of up to a minute is ridden out.
    retry_window_s: float = Field(default=90.0, ge=0, le=600)

    @field_validator("url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018  # raises ValueError on a port that is no number
        except ValueError:
            raise ValueError("is not a valid Redis URL such as redis://127.0.0.1:6390/0") from None
        if value.startswith("redis") and not parts.hostname:
            raise ValueError("names no host: write it as redis://HOST:PORT/DB")
        return value

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 6379

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def managed(self) -> bool:
        """A TCP Redis on loopback: the local stack's, started by ``up``."""
        return self.url.startswith("redis") and is_loopback(self.host)

    @property
    def has_password(self) -> bool:
        return urlsplit(self.url).password is not None

    @property
    def masked_url(self) -> str:
        """The URL to show: its password replaced by ``***``."""
        return mask_url(self.url)

    def with_password(self, password: str) -> RedisSettings:
        """These settings with ``password`` in the URL (the user name, if any, is kept)."""
        parts = urlsplit(self.url)
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        url = urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}"))
        return self.model_copy(update={"url": url})


class S3Settings(_Section):
    """Object store: SeaweedFS locally, MinIO in production; same code."""

    endpoint: AnyHttpUrl = AnyHttpUrl("http://127.0.0.1:8333")
    bucket: str = Field(default="droidretriever", min_length=3, max_length=63)
    # Unset: the local stack's generated keys (``up`` makes them); never a built-in default.
    access_key: str | None = Field(default=None, min_length=1)
    secret_key: SecretStr | None = None
    region: str = "us-east-1"
    retries: int = Field(default=3, ge=0, le=10)
    timeout_s: float = Field(default=10.0, gt=0)
    # How long a read keeps retrying an unreachable store (a restart) before it gives up;
    # writes go to the spool after ``retries`` instead.
    retry_window_s: float = Field(default=90.0, ge=0, le=600)

    @field_validator("bucket")
    @classmethod
    def _bucket_name(cls, value: str) -> str:
        if value != value.lower() or "_" in value:
            raise ValueError("S3 bucket names are lower case, digits, '-' and '.'")
        return value

    @field_validator("secret_key")
    @classmethod
    def _secret_not_empty(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("is empty: unset it to use the key `droidretriever up` generates, "
                             "or set the store's secret key")
        return value

    @property
    def secure(self) -> bool:
        return self.endpoint.scheme == "https"

    @property
    def managed(self) -> bool:
        """An endpoint on loopback: the local stack's SeaweedFS, started by ``up``."""
        return is_loopback(self.endpoint.host)

    @property
    def has_credentials(self) -> bool:
        return self.access_key is not None and self.secret_key is not None

    @property
    def host_port(self) -> str:
        return f"{self.endpoint.host}:{self.endpoint.port}"


class PrefectSettings(_Section):
    api_url: AnyHttpUrl = AnyHttpUrl("http://127.0.0.1:4200/api")
    # ``user:password`` for the server's basic auth (Prefect's PREFECT_API_AUTH_STRING);
    # unset on loopback: the one `droidretriever up` generated.
    auth_string: SecretStr | None = None

    @field_validator("auth_string")
    @classmethod
    def _user_and_password(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and ":" not in value.get_secret_value():
            raise ValueError("must be USER:PASSWORD (Prefect's basic auth)")
        return value

    @property
    def managed(self) -> bool:
        """An API on loopback: the local stack's Prefect server, started by ``up``."""
        return is_loopback(self.api_url.host)
    # How long Prefect clients keep retrying an API that does not answer (a restart).
    retry_window_s: float = Field(default=90.0, ge=0, le=600)
    # Where the stack's own Prefect server keeps flow runs, deployments and schedules:
    # PostgreSQL (`up` runs it, on 127.0.0.1:database_port), or a SQLite file for a small
    # laptop (a few phones; the sub-flows' state writes of 16 phones overload it).
    database: Literal["postgres", "sqlite"] = "postgres"
    database_port: int = Field(default=5442, gt=0, lt=65536)

    @property
    def port(self) -> int:
        return self.api_url.port or 4200

    @property
    def ui_url(self) -> str:
        """The Prefect UI: the API URL without its ``/api`` path."""
        return str(self.api_url).rstrip("/").removesuffix("/api")

    def flow_run_url(self, flow_run_id: object) -> str:
        """A flow run in the Prefect UI, through the UI's login when the server has basic auth.

        Prefect's UI keeps the auth string in the browser once a person has typed it; a deep
        link opened before that shows "Authentication failed" and "Page not found". Its login
        page takes the run as where to go next, so the link works for a first visit too.
        """
        path = f"/runs/flow-run/{flow_run_id}"
        if self.auth_string is None:
            return f"{self.ui_url}{path}"
        return f"{self.ui_url}/login?redirect={quote(path, safe='/')}"

    @property
    def client_max_retries(self) -> int:
        """Prefect client retries that wait out ``retry_window_s``.

        Prefect waits 2, 4, 8, ... s between tries, each within 20 % either way
        (its default jitter); count the shortest draws so the window is a lower bound.
        """
        retries = 0
        while 0.8 * (2 ** (retries + 1) - 2) < self.retry_window_s:
            retries += 1
        return retries

    def client_env(self) -> dict[str, str]:
        """Environment for a process that runs Prefect code against this server.

        Prefect's default profile falls back to a temporary in-process server when
        no API URL is set; ours names the stack's server and forbids that fallback,
        so a misconfigured process fails instead of serving or running nothing.
        """
        env = {
            "PREFECT_API_URL": str(self.api_url).rstrip("/"),
            "PREFECT_CLIENT_MAX_RETRIES": str(self.client_max_retries),
            "PREFECT_SERVER_ALLOW_EPHEMERAL_MODE": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
        }
        if self.auth_string is not None:
            env["PREFECT_API_AUTH_STRING"] = self.auth_string.get_secret_value()
        return env


class LLMEndpoint(_Section):
    """One model role. An empty ``base_url`` means the role has no model (not faked)."""

    base_url: AnyHttpUrl | None = None
    model: str = ""
    api_key: SecretStr = SecretStr("EMPTY")  # vLLM accepts any key unless started with one
    # The deadline of one model call: every request of it (a retry after a dropped
    # connection or a 5xx, a cut-off answer asked again, the repair round) fits in it.
    # A call that must generate more tokens gets more time: each request is given at least the
    # time its max_tokens take at ``tokens_per_s`` (the server's stated decode speed), so a
    # cut-off retry at twice the limit is not killed by a deadline its first try set.
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    tokens_per_s: float = Field(default=60.0, gt=0.0, le=10_000.0)
    # A request slower than this plus its completion tokens at tokens_per_s is counted slow;
    # slow requests are warned about (an event, the log, the report's footer).
    slow_call_s: float = Field(default=15.0, gt=0.0, le=600.0)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    # None: the role's default (inference.llm.DEFAULT_MAX_TOKENS: the synthesizer's is
    # several thousand, a navigator's action a few hundred).
    max_tokens: int | None = Field(default=None, gt=0, le=32768)
    locality: Literal["local", "cloud"] = "local"  # cloud = redact text and black out pixels first
    vision: bool = False  # send the screenshot too
    # Screenshots are downscaled to at most this many pixels before sending (the server
    # ignores a per-request value); Qwen2.5-VL spends one token per 28x28 pixels of it.
    max_pixels: int = Field(default=MAX_PIXELS, ge=28 * 28 * 4, le=16384 * 28 * 28)

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
    # Where the evaluator's model is asked: "targets" where its verdict can change what happens
    # (a page the rules take for the target, a finish, before the navigator's model taps or
    # types on a pop-up, login wall or settings page); "every_page" wherever its "complete"
    # could count (issue 14's loop).
    evaluator_pages: Literal["targets", "every_page"] = "targets"


class BudgetSettings(_Section):
    steps_per_subtask: int = Field(default=20, gt=0, le=200)
    retries: int = Field(default=3, ge=1, le=10)  # tries per sub-task, reflection between
    browsing_limit: int = Field(default=3, ge=1, le=20)
    swipes_per_capture: int = Field(default=4, ge=0, le=20)
    swipe_fraction: float = Field(default=0.67, gt=0.1, le=0.95)
    # Seconds a planned action waits for a person to stop it, only while a run page watches the
    # run (tasks.navigate.steer.confirm_window_s): enough to read the preview and press cancel.
    confirm_window_s: float = Field(default=3.0, ge=0.0, le=10.0)
    pause_timeout_s: float = Field(default=600.0, gt=0)
    grounding_threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    # Model time (navigator + evaluator calls, failed ones included) one sub-task may spend;
    # past it the steps are decided by the rules, visibly, instead of waiting on a model.
    model_s_per_subtask: float = Field(default=300.0, gt=0.0, le=7200.0)
    # Model time of the whole run, every role's calls added (sub-tasks side by side add up):
    # past it no role calls its model; the rules (the extractive report) decide, visibly.
    model_s_per_run: float = Field(default=900.0, gt=0.0, le=36_000.0)
    # Requests (every role, failed ones included) one sub-task may send; past it the rules
    # decide, visibly: it stops a model that keeps disagreeing with the rules on every page.
    model_calls_per_subtask: int = Field(default=16, ge=1, le=1000)
    # Tokens of capture text the synthesizer is given; above it, each capture keeps its
    # lines most relevant to the question (search terms, goal words, numbers).
    synthesis_input_tokens: int = Field(default=6000, ge=500, le=100_000)


class MapSettings(_Section):
    """App maps (``droidretriever map build``, docs/maps.md): how far an app is explored, and whether
    navigation uses the maps."""

    use: bool = True  # navigation follows an app's map when one was built
    screens: int = Field(default=60, ge=1, le=2000)  # screens per app
    actions: int = Field(default=600, ge=1, le=20_000)  # taps, scrolls, Backs and launches per app
    minutes: float = Field(default=10.0, gt=0.0, le=600.0)  # phone time per app
    list_samples: int = Field(default=2, ge=1, le=10)  # items of one list opened
    # `up` keeps maps fresh: every this many hours it builds the apps whose map is missing or was
    # made for another version, on phones with nothing else to do (0: never by itself).
    refresh_hours: float = Field(default=24.0, ge=0.0, le=24 * 30)


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
    # The phones are numbered from this index (emulator-5554 is 0, emulator-5556 is 1, ...):
    # adb serials on this host; farm serials carry the host name (device_farm.serials).
    first_index: int = Field(default=0, ge=0, le=10_000)
    # DroidBot recordings served as installed apps of replay phones (``farm up --recordings``).
    recordings: Path | None = None


class FarmSettings(_Section):
    """The device farm (device_farm/, tasks/ workers): heartbeats, leases, health."""

    adb_host: str = "127.0.0.1"  # the adb server real phones and emulators hang off
    # This host's name in its phones' farm serials (`<host>.emulator-5554`, device_farm.serials);
    # empty: the machine's short host name. Give each farm host sharing one Redis its own.
    host_name: str = Field(default="", pattern=r"^([A-Za-z0-9][A-Za-z0-9-]{0,23})?$")
    adb_port: int = Field(default=5037, gt=0, lt=65536)
    heartbeat_s: float = Field(default=2.0, gt=0.0, le=60.0)
    heartbeat_missed: int = Field(default=3, ge=1, le=20)  # beats missed before "offline"
    lease_ttl_s: float = Field(default=30.0, gt=0.0, le=3600.0)
    max_failed_observes: int = Field(default=3, ge=1, le=20)  # in a row, then quarantine
    rejoin_after_ok: int = Field(default=2, ge=1, le=20)  # healthy probes before rejoining
    # A delivery nobody keeps visible goes back to its queue after this: a worker renews the
    # ones it holds with every heartbeat (a long or paused sub-task keeps its message), so one
    # whose worker died, even before the task's first line, is redelivered within seconds.
    visibility_timeout_s: float = Field(default=30.0, ge=2.0)
    emulator_boot_timeout_s: float = Field(default=240.0, gt=0.0)
    android_sdk_root: Path | None = None  # else $ANDROID_SDK_ROOT / $ANDROID_HOME
    # `farm up` gives the host's workers one shared OCR engine (the OCR service at
    # perception.ocr_service_url, holding perception.ocr_backend's engine) instead of one each:
    # a worker then imports no engine (docs/benchmarks.md, "Worker memory").
    shared_ocr: bool = True

    @model_validator(mode="after")
    def _visibility_outlives_heartbeats(self) -> FarmSettings:
        # The broker must not hand a message on before the worker holding it could have been
        # seen dead: a worker that missed a beat or two still keeps its sub-task.
        least = 2 * self.heartbeat_s * self.heartbeat_missed
        if self.visibility_timeout_s < least:
            raise ValueError(
                f"visibility_timeout_s ({self.visibility_timeout_s:g}) must be at least twice the "
                f"heartbeat TTL (heartbeat_s * heartbeat_missed = {least / 2:g} s): raise "
                "DROIDRETRIEVER_FARM__VISIBILITY_TIMEOUT_S or beat more often")
        return self


class PerceptionSettings(_Section):
    """Screen perception (inference/perception): OCR, detector, redaction, description."""

    # rapidocr / paddle: an engine in this process (paddle needs the gpu extra); service: ask
    # the host's shared OCR service at ocr_service_url (one engine per host, not per worker).
    ocr_backend: Literal["rapidocr", "paddle", "service", "none"] = "rapidocr"
    ocr_cache_size: int = Field(default=256, ge=0, le=100_000)  # images, LRU by content hash
    ocr_min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    # The shared OCR service (python -m inference.perception.ocr_service; `farm up` starts one
    # per host, see farm.shared_ocr). Its bearer token: unset on loopback = the generated
    # <state_dir>/secrets/ocr-token.
    ocr_service_url: AnyHttpUrl = AnyHttpUrl("http://127.0.0.1:8710")
    ocr_service_token: SecretStr | None = None
    # What the service reads with when ocr_backend is "service" (else ocr_backend's engine).
    ocr_service_engine: Literal["rapidocr", "paddle"] = "rapidocr"
    ocr_service_concurrency: int = Field(default=1, ge=1, le=64)  # reads at once (engines held)
    ocr_service_max_request_mb: int = Field(default=64, ge=1, le=1024)  # raw RGB: a screen is 7.6 MB
    # A client keeps retrying a service that does not answer (a restart) this long, then fails.
    ocr_service_retry_s: float = Field(default=30.0, ge=0.0, le=600.0)
    # Longest wait for one read's answer: reads queue behind the other workers' on a busy host.
    ocr_service_timeout_s: float = Field(default=300.0, gt=0.0, le=3600.0)
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
    # Leave out elements covered by a drawer, dialog or bar drawn over them (z-order + pixels).
    occlusion: bool = True
    # Skip OCR on blind regions that are photos (decided on a thumbnail), unless the screen
    # has no other text at all.
    skip_photo_ocr: bool = True
    # Screen description tokens per navigator or evaluator call: a larger screen is cut to the
    # blocks the task needs (CORE), and the navigator may ask for more.
    description_token_budget: int = Field(default=600, ge=100, le=32_000)


class StackSettings(_Section):
    """The embedded local stack (deploy/local): ports the service URLs do not name.

    SeaweedFS needs seven loopback ports besides its S3 port: master, volume and
    filer HTTP plus four gRPC ports. They are a contiguous block starting here
    (master, master gRPC, volume, volume gRPC, filer, filer gRPC, S3 gRPC).
    """

    weed_base_port: int = Field(default=18330, ge=1024, le=65535 - 6)
    start_timeout_s: float = Field(default=90.0, gt=0, le=600)
    # Addresses of this machine, besides loopback, on which `up` runs the stack's services
    # itself when their URLs name one: the services host of a lab, whose farm hosts point
    # their URLs at it. Their secrets are then set, not generated (every host needs them).
    serve_hosts: tuple[str, ...] = ()


class SubscriptionSettings(_Section):
    """Scheduled questions (flows/subscriptions): where their changes may be sent."""

    # Check that a webhook's host answers when subscribing (a refused port is an error then).
    webhook_check: bool = True
    # Webhooks may go to this machine (loopback) and private networks: a receiver on the LAN.
    # Link-local and metadata addresses and the stack's own ports stay refused either way.
    webhook_private: bool = False


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
    # Recorded real-app data (DroidBot recordings) tests and benchmarks read; unset means
    # ``../shared/data`` beside the repository (core.recordings.find_data_dir).
    data_dir: Path | None = None
    redis: RedisSettings = RedisSettings()
    s3: S3Settings = S3Settings()
    prefect: PrefectSettings = PrefectSettings()
    llm: LLMSettings = LLMSettings()
    budgets: BudgetSettings = BudgetSettings()
    sim: SimSettings = SimSettings()
    perception: PerceptionSettings = PerceptionSettings()
    farm: FarmSettings = FarmSettings()
    stack: StackSettings = StackSettings()
    subscriptions: SubscriptionSettings = SubscriptionSettings()
    api: ApiSettings = ApiSettings()
    maps: MapSettings = MapSettings()
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

    @property
    def secrets(self) -> SecretFiles:
        """The generated secrets of the local stack (``<state_dir>/secrets``)."""
        return SecretFiles(self.state_dir)

    def serves_here(self, host: str | None) -> bool:
        """Whether ``up`` runs a service bound to ``host`` itself (loopback or ``stack.serve_hosts``)."""
        return is_loopback(host) or host in self.stack.serve_hosts


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


def _shown(loc: tuple[int | str, ...], given: object) -> str:
    """`` (got ...)`` for an error line: never a secret, URLs with their password masked."""
    if isinstance(given, dict):
        return ""
    if any(str(part) in _SECRET_FIELDS for part in loc):
        return " (the value given is not shown: it is a secret)"
    if isinstance(given, str):
        given = mask_url(given)  # a malformed URL too: "redis:/:password@host" has no "//"
        if len(given) > 80:
            given = given[:77] + "..."
    return f" (got {given!r})"


def fill_generated_secrets(settings: Settings) -> Settings:
    """``settings`` with the local stack's generated secrets where they leave one unset.

    Only services on loopback get them (an external server has its own); a
    secret set in the environment or the TOML file is never replaced. Missing
    files (before the first ``droidretriever up``) leave the setting unset.
    """
    files = settings.secrets
    updates: dict[str, Any] = {}
    redis_settings = settings.redis
    if redis_settings.managed and not redis_settings.has_password:
        password = files.read(StackSecret.REDIS_PASSWORD)
        if password is not None:
            updates["redis"] = redis_settings.with_password(password)
    s3 = settings.s3
    if s3.managed and not s3.has_credentials:
        access = s3.access_key or files.read(StackSecret.S3_ACCESS_KEY)
        secret = s3.secret_key or _secret(files.read(StackSecret.S3_SECRET_KEY))
        updates["s3"] = s3.model_copy(update={"access_key": access, "secret_key": secret})
    perception = settings.perception
    if is_loopback(perception.ocr_service_url.host) and perception.ocr_service_token is None:
        token = _secret(files.read(StackSecret.OCR_TOKEN))
        if token is not None:
            updates["perception"] = perception.model_copy(update={"ocr_service_token": token})
    prefect = settings.prefect
    if prefect.managed and prefect.auth_string is None:
        auth = _secret(files.read(StackSecret.PREFECT_AUTH))
        if auth is not None:
            updates["prefect"] = prefect.model_copy(update={"auth_string": auth})
    return settings.model_copy(update=updates) if updates else settings


def _secret(value: str | None) -> SecretStr | None:
    return None if value is None else SecretStr(value)


def _is_complex(annotation: Any) -> bool:
    """Whether pydantic-settings reads this field's environment value as JSON."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    origin = get_origin(annotation)
    if origin in (list, tuple, dict, set, frozenset):
        return True
    return any(_is_complex(arg) for arg in get_args(annotation) if arg is not type(None))


def _field_of(env_name: str) -> Any | None:
    """The annotation of the setting an environment variable names, or None if it names none."""
    model: Any = Settings
    annotation: Any = None
    for part in env_name.removeprefix(ENV_PREFIX).lower().split(_NESTED):
        fields = getattr(model, "model_fields", None)
        if fields is None or part not in fields:
            return None
        annotation = fields[part].annotation
        model = annotation
    return annotation


def _unreadable_env_lines() -> list[str]:
    """One line per ``DROIDRETRIEVER_*`` variable whose JSON value cannot be read."""
    lines = []
    for name, value in sorted(os.environ.items()):
        if not name.startswith(ENV_PREFIX) or name == f"{ENV_PREFIX}CONFIG":
            continue
        annotation = _field_of(name)
        if annotation is None or not _is_complex(annotation):
            continue
        try:
            json.loads(value)
        except ValueError:
            shown = mask_url(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            lines.append(f"{name}: cannot be read as JSON (got {shown!r}); write a list as "
                         '\'["phone", "email"]\' and a table as \'{"key": "value"}\'')
    return lines


def load_settings(**overrides: Any) -> Settings:
    """Read settings (generated secrets filled in), or raise :class:`ConfigError` listing every
    bad one and its fix, one line each."""
    path = config_file_path()
    if path is not None and not path.is_file():
        raise ConfigError(
            f"config file {path} does not exist",
            hint=f"create it, or unset {ENV_PREFIX}CONFIG to use defaults and the environment",
        )
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            shown = _shown(loc, err.get("input"))
            if err["type"] == "extra_forbidden":
                lines.append(
                    f"{_env_name(loc)}: unknown setting{shown}; check the spelling "
                    "against docs/configuration.md"
                )
                continue
            message = err["msg"].removeprefix("Value error, ")
            lines.append(
                f"{_env_name(loc)}: {message}{shown}; fix it in the environment "
                f"or in {path or 'droidretriever.toml'} as {_toml_name(loc)}"
            )
        raise ConfigError(
            "\n".join(lines), hint="see docs/configuration.md for every setting and its default"
        ) from exc
    except SettingsError as exc:  # an environment variable holding JSON that is not
        lines = _unreadable_env_lines()
        if not lines:
            raise ConfigError(f"cannot read the settings: {exc}",
                              hint="see docs/configuration.md for every setting") from exc
        raise ConfigError("\n".join(lines), hint="see docs/configuration.md") from exc
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        if path is None:
            raise ConfigError(f"cannot read the settings: {exc}",
                              hint="see docs/configuration.md for every setting") from exc
        raise ConfigError(
            f"cannot read config file {path}: {exc}",
            hint=f"fix the TOML syntax or point {ENV_PREFIX}CONFIG elsewhere",
        ) from exc
    _check_cloud_screenshots(settings)
    return fill_generated_secrets(settings)


def _check_cloud_screenshots(settings: Settings) -> None:
    """A cloud role that sees screenshots needs OCR: text drawn only in pixels is found by it."""
    if settings.perception.ocr_backend != "none":
        return
    roles = [name for name in ("navigator", "evaluator")
             if getattr(settings.llm, name).locality == "cloud" and getattr(settings.llm, name).vision]
    if roles:
        raise ConfigError(
            f"{_env_name(('perception', 'ocr_backend'))}: none, but the {' and '.join(roles)} send "
            "screenshots to a cloud model, and only OCR finds the personal data drawn in their pixels",
            hint="set perception.ocr_backend to rapidocr, paddle or service, or vision to false for "
            f"the cloud role ({_env_name(('llm', roles[0], 'vision'))}=false)",
        )
