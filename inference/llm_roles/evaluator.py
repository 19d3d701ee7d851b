"""LLM3, the evaluator: is the sub-task complete, and is this screen risky?

``evaluate`` is the chain: the rules run first and a risk they find pauses the
run whatever a model would say (text on a screen cannot talk a model out of a
payment page); otherwise LLM3 judges when configured, and the rules' verdict
stands when it is not or when it fails.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from droidretriever.models import Evaluation, PageType, RiskCategory, Screen, SubTask
from inference.errors import LLMError
from inference.llm import ChatMessage, LLMClient, LLMReply
from inference.llm_roles.outcome import RoleOutcome
from inference.prompts import render_prompt
from inference.rules.evaluator import evaluate_by_rules

__all__ = ["EvaluatorAnswer", "evaluate", "evaluate_with_model"]


class EvaluatorAnswer(BaseModel):
    """LLM3's JSON: reasons first, so the model reasons before it decides."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    completion_reason: str = ""
    complete: bool
    page_type: PageType = PageType.OTHER
    risk_reason: str = ""
    risk: bool = False
    risk_category: RiskCategory | None = None


def evaluate_with_model(
    client: LLMClient,
    *,
    subtask: SubTask,
    description: str,
    previous_actions: Sequence[str] = (),
    screenshot_png: bytes | None = None,
) -> LLMReply[Evaluation]:
    """Ask LLM3 about the current screen (given as perception's description)."""
    prompt = render_prompt(
        "evaluator",
        goal=subtask.goal,
        page_mode=subtask.page_mode.value,
        search_term=subtask.search_term,
        previous_actions=list(previous_actions),
        screen=description,
    )
    reply = client.chat_json(
        [
            ChatMessage(role="system", content=prompt.system),
            ChatMessage(role="user", content=prompt.user, image_png=screenshot_png),
        ],
        EvaluatorAnswer,
        check=_problem,
    )
    answer = reply.value
    reason = answer.completion_reason
    if answer.risk:
        reason = f"{answer.risk_reason} ({reason})" if reason else answer.risk_reason
    evaluation = Evaluation(
        complete=answer.complete and not answer.risk,
        risk=answer.risk,
        risk_category=answer.risk_category if answer.risk else None,
        page_type=answer.page_type,
        reason=reason,
        evaluator=client.name,
    )
    return reply.converted(evaluation, prompt_version=prompt.version)


def evaluate(
    subtask: SubTask,
    screen: Screen,
    *,
    description: str,
    client: LLMClient | None,
    previous_actions: Sequence[str] = (),
    screenshot_png: bytes | None = None,
) -> RoleOutcome[Evaluation]:
    """Rules first (a risk they find stands), then LLM3 when configured and working."""
    by_rules = evaluate_by_rules(subtask, screen)
    if by_rules.risk or client is None:
        return RoleOutcome[Evaluation](value=by_rules, policy="rules")
    try:
        reply = evaluate_with_model(
            client,
            subtask=subtask,
            description=description,
            previous_actions=previous_actions,
            screenshot_png=screenshot_png,
        )
    except LLMError as exc:
        return RoleOutcome[Evaluation](
            value=by_rules,
            policy="rules",
            fallback_reason=f"the evaluator model failed ({exc}); used the rules' verdict",
        )
    return RoleOutcome[Evaluation](
        value=reply.value,
        policy=client.name,
        usage=reply.usage,
        latency_ms=reply.latency_ms,
        prompt_version=reply.prompt_version,
    )


def _problem(answer: EvaluatorAnswer) -> str | None:
    if answer.risk and answer.risk_category is None:
        return 'risk is true, so risk_category must name one of the seven criteria'
    return None
