"""Errors raised by the inference layer (perception, LLM roles, ASR).

    DroidRetrieverError                    core.errors
     +-- InferenceError                    any inference failure
          +-- PerceptionError              a screen could not be understood
          |    +-- HierarchyError          malformed or unreadable uiautomator dump
          |    +-- ScreenshotError         screenshot bytes are not a readable image
          |    +-- BackendUnavailableError an optional backend (gpu extra, model file) is missing
          |    +-- OcrError                the OCR engine failed on an image
          |    |    +-- OcrServiceError    the host's shared OCR service is down past the retry
          |    |                           window, refused the secret, or answered an error
          |    +-- DetectorError           the UI detector failed or its model is unusable
          |    +-- GroundingError          an element id / text / quote matches nothing on screen
          +-- LLMError                     a model role (LLM1-LLM4) failed (``.calls``: what it cost)
          |    +-- LLMUnavailable          the endpoint refused or dropped the connection, or 5xx / 429
          |    |    +-- LLMTimeout         no answer before the call's deadline (timeout_s, or the
          |    |                           sub-task's model-time budget)
          |    +-- LLMRequestError         the endpoint answered 4xx: wrong model name, key, images to a
          |    |    |                      text-only model: a configuration error, never a fallback
          |    |    +-- LLMContextError    the prompt plus max_tokens exceed the served max_model_len
          |    +-- LLMOutputError          the answer broke its JSON schema even after one repair round,
          |         |                      or was empty or useless (no app, no action)
          |         +-- LLMCutOffError     the answer hit max_tokens twice (finish_reason "length")
          +-- LexiconError                 the UI lexicon or the app names are missing or malformed
          |    +-- VocabularyError         a file of inference/vocabulary is missing or malformed
          |                                (the message names the file and the entry)
          +-- RouteMemoryError             stored routes are unreadable (corrupt JSON, wrong shape)
          +-- TranscriptionError           audio could not be turned into text (inference.asr)
               +-- TranscriberUnavailableError  the endpoint refused, dropped, timed out or failed

Adapters translate foreign exceptions (lxml, onnxruntime, rapidocr, PIL) once,
at the boundary, and re-raise ``from exc``. Every message names the device and
step when it has them, and the hint says what to do.
"""

from __future__ import annotations

from core.errors import DroidRetrieverError
from core.models import ModelCall

__all__ = [
    "BackendUnavailableError",
    "DetectorError",
    "GroundingError",
    "HierarchyError",
    "InferenceError",
    "LLMContextError",
    "LLMCutOffError",
    "LLMError",
    "LLMOutputError",
    "LLMRequestError",
    "LLMTimeout",
    "LLMUnavailable",
    "LexiconError",
    "OcrError",
    "OcrServiceError",
    "PerceptionError",
    "RouteMemoryError",
    "ScreenshotError",
    "TranscriberUnavailableError",
    "TranscriptionError",
    "VocabularyError",
]


class InferenceError(DroidRetrieverError):
    """Root of the inference layer's errors."""


class PerceptionError(InferenceError):
    """A screen could not be turned into elements."""


class HierarchyError(PerceptionError):
    """The uiautomator XML is malformed, empty or has unreadable bounds."""


class ScreenshotError(PerceptionError):
    """The screenshot bytes could not be decoded as an image."""


class BackendUnavailableError(PerceptionError):
    """An optional backend is not installed or its model file is missing."""


class OcrError(PerceptionError):
    """The OCR engine failed while reading an image."""


class OcrServiceError(OcrError):
    """The shared OCR service could not read an image for this client (down, refused, failed)."""


class DetectorError(PerceptionError):
    """The UI element detector failed, or its model has an unexpected shape."""


class GroundingError(PerceptionError):
    """Nothing on the screen matches the element id, text or quote asked for."""


class LLMError(InferenceError):
    """A model role failed; callers fall back to rules (transient faults) or stop (4xx).

    ``calls`` holds every request the failed call made, so its tokens and time are
    counted like a successful call's.
    """

    calls: tuple[ModelCall, ...] = ()

    @property
    def transient(self) -> bool:
        """Whether the rules may decide instead (timeouts, 5xx, bad answers); 4xx is not."""
        return not isinstance(self, LLMRequestError)


class LLMUnavailable(LLMError):  # noqa: N818 -- the name callers were promised (issue 6)
    """The endpoint could not be reached, or it answered 5xx / 429."""


class LLMTimeout(LLMUnavailable):
    """The endpoint gave no answer within the role's ``timeout_s``."""


class LLMRequestError(LLMError):
    """The endpoint refused the request (4xx): model name, API key, images to a text-only model.

    A configuration error: it stops the run with the fix, it is never a per-step fallback.
    """


class LLMContextError(LLMRequestError):
    """The prompt plus ``max_tokens`` exceed the server's context (vLLM's ``--max-model-len``)."""


class LLMOutputError(LLMError):
    """The model's answer did not fit its schema, even after one repair round."""


class LLMCutOffError(LLMOutputError):
    """The answer stopped at ``max_tokens`` (``finish_reason: length``), also with a higher limit."""


class LexiconError(InferenceError):
    """The lexicon file or the app names file is missing or malformed; reinstall the package or fix it."""


class VocabularyError(LexiconError):
    """A word list of ``inference/vocabulary`` is missing or malformed; the message names the file
    and the entry, the hint how to fix it."""


class RouteMemoryError(InferenceError):
    """Stored routes could not be read back (corrupt or foreign JSON)."""


class TranscriptionError(InferenceError):
    """The audio could not be turned into text."""


class TranscriberUnavailableError(TranscriptionError):
    """The transcription endpoint refused, dropped, timed out or failed (5xx / 429)."""
