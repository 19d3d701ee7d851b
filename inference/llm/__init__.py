"""The model roles' client: chat with an OpenAI-compatible server (vLLM), checked and counted.

    client   LLMClient (json_schema guided decoding, repair round, cut-off retry, one deadline
             per call, every request counted), ChatMessage, LLMReply, Role, client_for
    images   fit_image / estimate_image_tokens: screenshots downscaled to max_pixels, tokens known
    meter    ModelMeter: a sub-task's model budgets (time, requests; the run's time through a
             ModelClock) and the calls / fallbacks of each step
    probe    probe_role / check_roles: is each configured role served, does max_tokens plus its
             prompt_budget fit the served max_model_len, does it answer JSON, take images
"""

from __future__ import annotations

from inference.llm.client import (
    DEFAULT_MAX_TOKENS,
    ChatMessage,
    JsonCheck,
    LLMClient,
    LLMReply,
    Role,
    client_for,
)
from inference.llm.images import FittedImage, estimate_image_tokens, fit_dimensions, fit_image
from inference.llm.meter import (
    LocalModelClock,
    ModelClock,
    ModelMeter,
    describe_failure,
    describe_slow_calls,
    run_exhausted_reason,
    run_time_left_s,
)
from inference.llm.probe import (
    ALL_ROLES,
    ProbeResult,
    ProbeStatus,
    check_roles,
    probe_role,
    probe_roles,
    prompt_budget,
)

__all__ = [
    "ALL_ROLES",
    "DEFAULT_MAX_TOKENS",
    "ChatMessage",
    "FittedImage",
    "JsonCheck",
    "LLMClient",
    "LLMReply",
    "LocalModelClock",
    "ModelClock",
    "ModelMeter",
    "ProbeResult",
    "ProbeStatus",
    "Role",
    "check_roles",
    "client_for",
    "describe_failure",
    "describe_slow_calls",
    "estimate_image_tokens",
    "fit_dimensions",
    "fit_image",
    "probe_role",
    "probe_roles",
    "prompt_budget",
    "run_exhausted_reason",
    "run_time_left_s",
]
