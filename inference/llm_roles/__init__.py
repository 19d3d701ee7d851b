"""The four model-backed roles (LLM1-LLM4), each a chain that falls back to ``inference.rules``.

    decompose / decompose_with_model        LLM1: question -> Plan
    choose_action / describe_action         LLM2: screen description -> Action
    evaluate / evaluate_with_model          LLM3: screen -> Evaluation (rules first; model where it counts)
    synthesize_report / capture_text        LLM4: captures -> Markdown with citations
"""

from __future__ import annotations

from inference.llm_roles.decomposer import decompose, decompose_with_model
from inference.llm_roles.evaluator import (
    Occasion,
    check_verdict,
    evaluate,
    evaluate_with_model,
    guards_action,
    model_is_asked,
)
from inference.llm_roles.navigator import ShowMore, choose_action, describe_action
from inference.llm_roles.outcome import RoleOutcome, describe_failure
from inference.llm_roles.synthesizer import CaptureText, capture_text, synthesize_report

__all__ = [
    "CaptureText",
    "Occasion",
    "RoleOutcome",
    "ShowMore",
    "capture_text",
    "check_verdict",
    "choose_action",
    "decompose",
    "decompose_with_model",
    "describe_action",
    "describe_failure",
    "evaluate",
    "evaluate_with_model",
    "guards_action",
    "model_is_asked",
    "synthesize_report",
]
