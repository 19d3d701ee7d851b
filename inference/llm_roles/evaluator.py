"""LLM3, the evaluator: is the sub-task complete, and is this screen risky?

``evaluate`` is the chain: the rules run first on every screen and a risk they
find pauses the run whatever a model would say (text on a screen cannot talk a
model out of a payment page); otherwise LLM3 judges when configured and its
verdict can change what happens next (:func:`model_is_asked`):

- a screen just reached (``Occasion.ARRIVAL``) that the rules take for the
  target: their words see it (the mode's kind of page, about the task), or
  its structure does (``expected_target``: a result just opened from a list,
  what a submitted search brought up in ``list_view``, the page a remembered
  route ends on);
- the navigator says ``finish`` (``Occasion.FINISH``) where a "complete" could
  count: the model confirms the target (only a confirmed route is remembered);
- the navigator's model is about to tap or type on a pop-up, a login wall or
  a settings page (``Occasion.ACTING``): a risk the rules' words miss stops it
  first (the rule-based policies never tap an accepting, paying or signing-in
  button: the rules' own words guard them).

Elsewhere (a page the agent only passes through) the rules' verdict stands:
their risk check runs on every screen, and a target they do not see is the
navigator's to propose (its ``finish``), which the model then confirms. ``Occasion.EVERY_PAGE`` asks on every page where
a "complete" could count, and on pop-ups and login walls (issue 14's loop, the
paper's LLM3 at each step; ``llm.evaluator_pages = "every_page"``).

A model's "complete" counts only when the rules' page type does not
contradict the sub-task's page mode (a results list is not a focused details
page), unless the page was opened from a results list (the rules' structural
view of a details page): otherwise the verdict is "not complete" with the
disagreement recorded. The rules' verdict stands when no model is configured,
when the model fails transiently (timeout, 5xx, a bad answer) and when the
sub-task's model time is spent; each such fallback is noted on the meter. A
refused request (4xx) is a configuration error: raised.

With ``vision`` on, the screenshot goes along. For a ``cloud`` endpoint the
caller redacts the description and the past actions
(:func:`inference.policies.llm_navigator.shown_history`); the task line (the
question as typed) is redacted here, and the screenshot's personal data is
blacked out, found in the view tree and by OCR in its pixels (no OCR engine:
no screenshot).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from core.models import (
    Action,
    Evaluation,
    Input,
    LongPress,
    PageType,
    RiskCategory,
    Screen,
    SubTask,
    Tap,
)
from inference.errors import LLMError
from inference.llm import ChatMessage, LLMClient, LLMReply, ModelMeter
from inference.llm_roles.outcome import RoleOutcome, describe_failure
from inference.perception.redact import Redactor
from inference.prompts import render_prompt
from inference.rules.evaluator import contradicts_mode, evaluate_by_rules

__all__ = [
    "EvaluatorAnswer", "Occasion", "check_verdict", "evaluate", "evaluate_with_model", "guards_action",
    "model_is_asked",
]


class Occasion(StrEnum):
    """Why the evaluator looks at a screen; where its model is asked depends on it."""

    ARRIVAL = "arrival"  # a screen just reached: the model only where the rules take it for the target
    EVERY_PAGE = "every_page"  # a screen just reached, the model wherever a "complete" could count
    FINISH = "finish"  # the navigator says the target is on the screen
    ACTING = "acting"  # the navigator's model is about to tap or type on a pop-up, login wall or settings page


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


# Page kinds where tapping or typing may commit something a risk the rules' words miss
# is about (agreeing, signing in, switching a permission): the model looks before acting.
_GUARDED_KINDS = (PageType.DIALOG, PageType.LOGIN, PageType.SETTINGS)


def guards_action(action: Action, page: PageType) -> bool:
    """Whether ``action`` on a page of kind ``page`` waits for the model's risk verdict.

    Tapping or typing on a pop-up, a login wall or a settings page; going back,
    scrolling or finishing commit nothing.
    """
    return isinstance(action, Tap | LongPress | Input) and page in _GUARDED_KINDS


def model_is_asked(by_rules: Evaluation, subtask: SubTask, occasion: Occasion, *,
                   expected_target: bool = False) -> bool:
    """Whether LLM3's verdict can change what happens next on this screen (else the rules' stands).

    ``expected_target``: the rules' structure takes the page for the target whatever
    its words (opened from a results list, a submitted search's list, a remembered
    route's end).
    """
    could_count = expected_target or contradicts_mode(by_rules.page_type, subtask) is None
    match occasion:
        case Occasion.ARRIVAL:
            return expected_target or by_rules.complete
        case Occasion.EVERY_PAGE:
            return could_count or by_rules.page_type in (PageType.DIALOG, PageType.LOGIN)
        case Occasion.FINISH:
            return could_count
        case Occasion.ACTING:
            return True


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
    expected_target: bool = False,
    occasion: Occasion = Occasion.ARRIVAL,
    searched: bool = False,
) -> RoleOutcome[Evaluation]:
    """Rules first (a risk they find stands), then LLM3 when configured, useful, working and in time.

    ``opened_result``: the page was opened from a results list (the rules' view of a
    details page); ``expected_target``: that, or a remembered route ends here; ``searched``:
    the sub-task ran its search (or the app's query form) in this try.
    """
    by_rules = evaluate_by_rules(subtask, screen, searched=searched)
    if by_rules.risk or client is None:
        return RoleOutcome[Evaluation](value=by_rules, policy="rules")
    if not model_is_asked(by_rules, subtask, occasion, expected_target=expected_target or opened_result):
        return RoleOutcome[Evaluation](value=by_rules, policy="rules")  # its verdict would change nothing
    meter = meter if meter is not None else ModelMeter()
    if meter.exhausted:
        fallback = meter.fall_back("evaluator", meter.exhausted_reason())
        return RoleOutcome[Evaluation](value=by_rules, policy="rules", fallback=fallback)
    if screenshot_png is not None and client.endpoint.vision and redactor is not None:
        screenshot_png = redactor.mask_screenshot(screenshot_png, screen.elements)
    try:
        reply = evaluate_with_model(
            client,
            subtask=redactor.redact_subtask(subtask) if redactor is not None else subtask,
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
