"""The API's errors and how every error a person can act on becomes an HTTP answer.

    core.errors.DroidRetrieverError
     +-- ApiError                   raised by the API itself, with its HTTP status
          +-- NotAuthenticated      401: no or a wrong token / session
          +-- Forbidden             403: a browser request without its CSRF header or from elsewhere
          +-- NotFound              404: no such run, capture, phone or page

Errors of the layers below are answered by kind (:func:`status_for`): a steering
conflict is 409 with its reason, a missing manifest or object 404, a recording
that cannot be heard, an app no phone has (``InputError``) or a webhook this
machine may not call 422, a stored app map this release cannot read 500 (its
hint says how to rebuild it), a device, store, model or service fault 503.
Every body is ``{"error": "<one line>", "hint": "<what to do>"}``;
no traceback, no secret.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from core.errors import ConfigError, DroidRetrieverError, InputError
from device_farm.errors import DeviceBusy, DeviceError
from flows.errors import (
    FlowError,
    NoAppsError,
    NotifierError,
    RunNotPausedError,
    SteeringConflict,
    SubscriptionError,
)
from inference.errors import InferenceError, TranscriberUnavailableError, TranscriptionError
from storage.errors import ManifestError, MapFormatError, ObjectNotFoundError, StorageError

__all__ = ["ApiError", "ErrorBody", "Forbidden", "NotAuthenticated", "NotFound", "status_for"]


class ErrorBody(BaseModel):
    """What every error answer holds."""

    error: str
    hint: str = ""


class ApiError(DroidRetrieverError):
    """An error the API raises itself; ``status`` is its HTTP status."""

    status: ClassVar[int] = 400


class NotAuthenticated(ApiError):  # noqa: N818  (HTTP's own name)
    status = 401
    hint = "send the bearer token (`droidretriever api token`) or log in at /login"


class Forbidden(ApiError):  # noqa: N818
    status = 403


class NotFound(ApiError):  # noqa: N818
    status = 404


def status_for(exc: DroidRetrieverError) -> int:
    """The HTTP status of an error raised anywhere below the API."""
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, SteeringConflict | RunNotPausedError | DeviceBusy):
        return 409
    if isinstance(exc, ManifestError | ObjectNotFoundError):
        return 404
    if isinstance(exc, MapFormatError):
        return 500  # not a passing fault: the map has to be rebuilt (the error's hint says how)
    if isinstance(exc, TranscriberUnavailableError):
        return 503
    if isinstance(exc, NoAppsError | SubscriptionError | ConfigError | TranscriptionError
                  | InputError | NotifierError):
        # The request's content cannot be used: a recording that is not one, no such app, a
        # webhook this machine may not call.
        return 422
    if isinstance(exc, DeviceError | StorageError | FlowError | InferenceError):
        return 503
    return 500
