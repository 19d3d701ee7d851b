"""What a person typed, checked before anything starts: one :class:`InputError` line each.

Every command validates its arguments and options here first, before the
stack check, before a file is uploaded or a schedule created, so a typo costs
nothing and leaves nothing behind (exit code 2). Messages name the option,
what is wrong with it and what to do; values are shown clipped and stripped of
control characters, and never a secret.
"""

from __future__ import annotations

import io
import os
import re
import stat
import wave
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from core.config import Settings
from core.errors import DroidRetrieverError, InputError
from core.models import PageMode
from core.text import has_letters, mask_url, strip_controls

__all__ = [
    "APPS_MAX",
    "AUDIO_MAX_BYTES",
    "QUESTION_MAX_CHARS",
    "check_apps",
    "check_audio",
    "check_id",
    "check_question",
    "check_webhook",
    "parse_mode",
    "shown",
    "validated",
]

T = TypeVar("T")

QUESTION_MAX_CHARS = 2000  # the models' limit (Query.text); said in the message
APPS_MAX = 20
AUDIO_MAX_BYTES = 25 * 1024 * 1024  # what OpenAI-compatible transcription servers take
_APP_MAX_CHARS = 100
_MB = 1024 * 1024
# First bytes of the audio containers a transcription server reads; pocketsphinx reads WAV only.
_AUDIO_MAGIC: tuple[tuple[str, Callable[[bytes], bool]], ...] = (
    ("wav", lambda b: b[:4] == b"RIFF" and b[8:12] == b"WAVE"),
    ("flac", lambda b: b[:4] == b"fLaC"),
    ("ogg", lambda b: b[:4] == b"OggS"),
    ("mp3", lambda b: b[:3] == b"ID3" or (len(b) > 1 and b[0] == 0xFF and b[1] & 0xE0 == 0xE0)),
    ("m4a", lambda b: b[4:8] == b"ftyp"),
    ("webm", lambda b: b[:4] == b"\x1a\x45\xdf\xa3"),
)


def shown(value: str, limit: int = 40) -> str:
    """A value for an error line: one line, no control characters, URL passwords masked, clipped."""
    text = strip_controls(mask_url(value), keep_newlines=False)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def check_question(text: str, *, required: bool = True) -> str:
    """The question, or InputError: empty (when required), without a word, or too long."""
    if len(text) > QUESTION_MAX_CHARS:
        raise InputError(f"the question is {len(text):,} characters long; the limit is "
                         f"{QUESTION_MAX_CHARS:,}: ask a shorter question")
    if required and not strip_controls(text).strip():
        raise InputError("the question is empty: type what you want to find out, in quotes")
    if text.strip() and not has_letters(text):
        raise InputError(f"the question {shown(text)} has no words, only symbols, emoji or "
                         "invisible characters: type what you want to find out, in words")
    return text


def parse_mode(text: str, option: str = "--mode") -> PageMode | None:
    """``--mode``: empty for the planner's choice, else a page mode (the paper's spellings too)."""
    if not text:
        return None
    try:
        return PageMode.parse(text)
    except ValueError:
        raise InputError(f"{option} {shown(text)} is not a page mode: use focused, list_view "
                         "or multi_page (or leave it out)") from None


def check_apps(text: str) -> tuple[str, ...]:
    """``--apps a,b``: labels or packages, at most :data:`APPS_MAX`, each of sane length."""
    apps = tuple(a.strip() for a in text.split(",") if a.strip())
    if len(apps) > APPS_MAX:
        raise InputError(f"--apps names {len(apps)} apps; the limit is {APPS_MAX}: name fewer")
    for app in apps:
        if len(app) > _APP_MAX_CHARS or strip_controls(app, keep_newlines=False) != app:
            raise InputError(f"--apps {shown(app)} is not an app label or package: give labels "
                             "or packages separated by commas")
    return apps


def check_id(text: str, kind: str, pattern: str) -> str:
    """A run or subscription id as ``ask`` / ``subscribe`` printed it."""
    if not re.fullmatch(pattern, text):
        where = ("`droidretriever subscriptions list` shows them" if kind == "subscription"
                 else "copy the id `droidretriever ask` printed")
        raise InputError(f"{shown(text)} is not a {kind} id: {where}")
    return text


def check_audio(path: Path, settings: Settings) -> bytes:
    """The recording's bytes, or InputError: not a file, empty, too large, or not audio the
    transcriber reads."""
    data = _read_recording(path)
    if not data:
        raise InputError(f"--audio {path} is empty (0 bytes): record the question again")
    kind = next((name for name, matches in _AUDIO_MAGIC if matches(data[:16])), None)
    if kind is None:
        raise InputError(f"--audio {path} is not an audio recording (WAV, FLAC, OGG, MP3, M4A "
                         "or WebM): give the recording itself")
    if kind != "wav" and not settings.llm.transcriber.configured:
        raise InputError(f"--audio {path} is {kind.upper()}; without a transcription server only "
                         "WAV is read: convert it (ffmpeg -i in -ar 16000 out.wav) or configure "
                         "DROIDRETRIEVER_LLM__TRANSCRIBER__BASE_URL")
    if kind == "wav" and _wav_frames(data) == 0:
        raise InputError(f"--audio {path} holds no sound (a WAV header without samples): "
                         "record the question again")
    return data


def _read_recording(path: Path) -> bytes:
    """At most :data:`AUDIO_MAX_BYTES` of the regular file at ``path``, or InputError.

    A device or a pipe reports size 0 and may never end (``/dev/zero``), and opening a
    pipe waits for a writer: the file is opened without waiting, refused unless it is a
    regular file, and read with a cap whatever its size says (it may grow meanwhile).
    """
    limit = f"the limit is {AUDIO_MAX_BYTES / _MB:.0f} MB: record a shorter question"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(f"--audio {path} cannot be read ({exc.strerror}): check the path") from exc
    with os.fdopen(fd, "rb") as recording:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"--audio {path} is not a regular file (a {_kind_of(info.st_mode)}): "
                             "give the recording's file, e.g. question.wav")
        if info.st_size > AUDIO_MAX_BYTES:
            raise InputError(f"--audio {path} is {info.st_size / _MB:.1f} MB; {limit}")
        try:
            data = recording.read(AUDIO_MAX_BYTES + 1)
        except OSError as exc:
            raise InputError(f"--audio {path} cannot be read ({exc.strerror}): "
                             "check the path") from exc
    if len(data) > AUDIO_MAX_BYTES:
        raise InputError(f"--audio {path} grew past the limit while it was read; {limit}")
    return data


def _kind_of(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "folder"), (stat.S_ISFIFO, "pipe"), (stat.S_ISCHR, "character device"),
             (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))
    return next((name for test, name in kinds if test(mode)), "special file")


def _wav_frames(data: bytes) -> int | None:
    """Frames in a WAV recording; None when Python's reader does not know its format."""
    try:
        with wave.open(io.BytesIO(data)) as recording:
            return int(recording.getnframes())
    except (wave.Error, EOFError):
        return None


def check_webhook(url: str, settings: Settings) -> str:
    """``--webhook``: an address this machine may POST to (flows.webhook_targets); reachable
    when ``subscriptions.webhook_check``."""
    from flows.webhook_targets import check_webhook_target

    try:
        check_webhook_target(url, settings, reachable=settings.subscriptions.webhook_check)
    except DroidRetrieverError as exc:
        raise InputError(f"--webhook: {strip_controls(str(exc), keep_newlines=False)}",
                         hint=exc.hint) from exc
    return url


def validated(build: Callable[[], T], options: Mapping[str, str]) -> T:
    """``build()``, its pydantic ValidationError turned into one InputError line.

    ``options`` maps a model field (dotted for nested ones) to the option a
    person typed (``{"cron": "--cron"}``).
    """
    try:
        return build()
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"] if not isinstance(p, int))
        option = next((o for f, o in options.items() if field.startswith(f)), field or "input")
        message = error["msg"].removeprefix("Value error, ")
        given = error.get("input")
        value = f" {shown(given)}" if isinstance(given, str) and given not in message else ""
        raise InputError(f"{option}{value}: {message}") from None
