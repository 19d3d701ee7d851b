"""LLM3, the evaluator: is the sub-task complete, and is this screen risky?

``evaluate`` is the chain: the rules run first and a risk they find pauses the
run whatever a model would say (text on a screen cannot talk a model out of a
payment page); otherwise LLM3 judges when configured. Its "complete" counts
only when the rules' page type does not contradict the sub-task's page mode (a
results list is not a focused details page), unless the page was opened from
a results list (the rules' structural view of a details page): otherwise the
verdict is "not complete" with the disagreement recorded. So the model is not
asked at all on a browsing page whose kind contradicts the mode (a home,
search or results page for a focused sub-task): its verdict could not count
there, and the rules have judged its risk already. The rules' verdict stands
when no model is configured, when the model fails transiently (timeout, 5xx, a
bad answer) and when the sub-task's model time is spent; each such fallback is
noted on the meter. A refused request (4xx) is a configuration error: raised.

With ``vision`` on, the screenshot goes along; for a ``cloud`` endpoint the
caller redacts the description and the screenshot's personal data is blacked
out here.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from droidretriever.models import Evaluation, PageType, RiskCategory, Screen, SubTask
from inference.errors import LLMError
from inference.llm import ChatMessage, LLMClient, LLMReply, ModelMeter
from inference.llm_roles.outcome import RoleOutcome, describe_failure
from inference.perception.redact import Redactor
from inference.prompts import render_prompt
from inference.rules.evaluator import contradicts_mode, evaluate_by_rules

__all__ = ["EvaluatorAnswer", "check_verdict", "evaluate", "evaluate_with_model"]


class EvaluatorAnswer(BaseModel):
    """LLM3's JSON: reasons first, so the model reasons before it decides; every field required."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    completion_reason: str
    complete: bool
    page_type: PageType
    risk_reason: str
    risk: bool
    risk_category: RiskCategory | None


def evaluate_with_model(
    client: LLMClient,
    *,
    subtask: SubTask,
    description: str,
    previous_actions: Sequence[str] = (),
    screenshot_png: bytes | None = None,
    deadline_s: float | None = None,
) -> LLMReply[Evaluation]:
    """Ask LLM3 about the current screen (given as perception's description)."""
    prompt = render_prompt(
        "evaluator",
        goal=subtask.goal,
        page_mode=subtask.page_mode.value,
        search_term=subtask.search_term,
        previous_actions=list(previous_actions),
        screen=description,
        page_types=[p.value for p in PageType],
    )
    reply = client.chat_json(
        [
            ChatMessage(role="system", content=prompt.system),
            ChatMessage(role="user", content=prompt.user, image_png=screenshot_png),
        ],
        EvaluatorAnswer,
        check=_problem,
        deadline_s=deadline_s,
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


# Page kinds the model is still asked about when they contradict the mode: a pop-up or a
# login wall may hold a risk the rules' words miss.
_RISK_KINDS = (PageType.DIALOG, PageType.LOGIN)


def check_verdict(evaluation: Evaluation, by_rules: Evaluation, subtask: SubTask, *,
                  opened_result: bool = False) -> Evaluation:
    """A model's "complete" stands only when the rules' page type does not contradict the mode.

    ``opened_result``: the page was opened from a results list, so the rules see a
    details page whatever its layout (a store with its dishes looks like a list).
    """
    if not evaluation.complete or opened_result:
        return evaluation
    contradiction = contradicts_mode(by_rules.page_type, subtask)
    if contradiction is None:
        return evaluation
    disagreement = f"the model said complete, but {contradiction}"
    return evaluation.model_copy(update={
        "complete": False, "disagreement": disagreement,
        "reason": f"{disagreement} (model: {evaluation.reason})" if evaluation.reason else disagreement,
    })


def evaluate(
    subtask: SubTask,
    screen: Screen,
    *,
    description: str,
    client: LLMClient | None,
    previous_actions: Sequence[str] = (),
    screenshot_png: bytes | None = None,
    redactor: Redactor | None = None,
    meter: ModelMeter | None = None,
    opened_result: bool = False,
) -> RoleOutcome[Evaluation]:
    """Rules first (a risk they find stands), then LLM3 when configured, useful, working and in time."""
    by_rules = evaluate_by_rules(subtask, screen)
    if by_rules.risk or client is None:
        return RoleOutcome[Evaluation](value=by_rules, policy="rules")
    if (not opened_result and by_rules.page_type not in _RISK_KINDS
            and contradicts_mode(by_rules.page_type, subtask) is not None):
        return RoleOutcome[Evaluation](value=by_rules, policy="rules")  # a model's "complete" could not count
    meter = meter if meter is not None else ModelMeter()
    if meter.exhausted:
        fallback = meter.fall_back("evaluator", meter.exhausted_reason())
        return RoleOutcome[Evaluation](value=by_rules, policy="rules", fallback=fallback)
    if screenshot_png is not None and client.endpoint.vision and redactor is not None:
        screenshot_png = redactor.black_out_screenshot(screenshot_png, screen.elements)
    try:
        reply = evaluate_with_model(
            client,
            subtask=subtask,
            description=description,
            previous_actions=previous_actions,
            screenshot_png=screenshot_png if client.endpoint.vision else None,
            deadline_s=meter.time_left_s(),
        )
    except LLMError as exc:
        meter.record(exc.calls)
        if not exc.transient:
            raise  # a configuration error (4xx) stops the run with its fix
        fallback = meter.fall_back("evaluator", describe_failure(exc))
        return RoleOutcome[Evaluation](value=by_rules, policy="rules", calls=exc.calls,
                                       fallback=fallback)
    meter.record(reply.calls)
    return RoleOutcome[Evaluation](
        value=check_verdict(reply.value, by_rules, subtask, opened_result=opened_result),
        policy=client.name,
        usage=reply.usage,
        calls=reply.calls,
        latency_ms=reply.latency_ms,
        prompt_version=reply.prompt_version,
    )


def _problem(answer: EvaluatorAnswer) -> str | None:
    if answer.risk and answer.risk_category is None:
        return 'risk is true, so risk_category must name one of the seven criteria'
    return None
