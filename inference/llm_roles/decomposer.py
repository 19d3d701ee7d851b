"""LLM1, the decomposer: question -> apps, search terms, page mode -> ``Plan``.

The answer schema accepts the paper's own key spellings (``"search terms"``
with a space, ``"Multi-page"``, a one-element list for the mode) because
models trained on the paper's prompt write them. Every field is required (vLLM
enforces the schema, the prompt names each field), and an answer that names no
installed app is a failed call (one repair round, then the rules), never an
empty plan. ``decompose`` is the chain a caller uses: the model when
configured, the rules when not or when it fails transiently (said in the plan's
notes and ``fallback``); a refused request (4xx) is a configuration error and
is raised. For a ``cloud`` endpoint the question is redacted first.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from core.models import (
    InstalledApp,
    ModelCall,
    ModelFallback,
    PageMode,
    Plan,
    Query,
    TokenUsage,
)
from inference.errors import LLMError
from inference.llm import ChatMessage, LLMClient, LLMReply
from inference.llm_roles.outcome import RoleOutcome, describe_failure
from inference.perception.redact import Redactor
from inference.prompts import render_prompt
from inference.rules.apps import resolve_app
from inference.rules.decomposer import decompose_by_rules
from inference.rules.plan import MAX_APPS, MAX_TERMS, AppFlow, build_plan

__all__ = [
    "DecompositionAnswer",
    "InformationFlow",
    "decompose",
    "decompose_with_model",
    "plan_from_answer",
]

_NONE = {"", "none", "null", "n/a", "无"}


def _names(value: object) -> object:
    """A list of names without the paper's ``none`` placeholders; a lone string -> list."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip().lower() not in _NONE]
    return value


class InformationFlow(BaseModel):
    """One app's answer feeding another app's search (MobileSteward)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    from_app: str
    to_app: str
    info: str = ""


class DecompositionAnswer(BaseModel):
    """LLM1's JSON, in the paper's shape (Appendix B.1); every field required."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    mentioned_apps: tuple[str, ...]
    installed_related_apps: tuple[str, ...]
    uninstalled_related_apps: tuple[str, ...]
    search_terms: tuple[str, ...] = Field(
        validation_alias=AliasChoices("search terms", "search_terms", "searchTerms", "search term"),
    )
    search_mode: PageMode = Field(
        validation_alias=AliasChoices("search_mode", "search mode", "query_mode", "page_mode", "mode"),
    )
    information_flow: tuple[InformationFlow, ...]

    _clean_names = field_validator(
        "mentioned_apps", "installed_related_apps", "uninstalled_related_apps", "search_terms",
        mode="before",
    )(_names)

    @field_validator("search_mode", mode="before")
    @classmethod
    def _paper_mode(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            value = value[0] if value else PageMode.FOCUSED.value
        return PageMode.parse(value) if isinstance(value, str) else value


def decompose_with_model(
    client: LLMClient, query: Query, installed: Sequence[InstalledApp],
    *, redactor: Redactor | None = None,
) -> LLMReply[Plan]:
    """Ask LLM1 and turn its answer into a plan over the installed apps."""
    text = redactor.redact_text(query.text).text if redactor is not None else query.text
    prompt = render_prompt(
        "decomposer",
        task=text,
        installed_apps=[app.label for app in installed],
        max_apps=MAX_APPS,
        max_terms=MAX_TERMS,
        modes=[mode.value for mode in PageMode],
    )
    reply = client.chat_json(
        [
            ChatMessage(role="system", content=prompt.system),
            ChatMessage(role="user", content=prompt.user),
        ],
        DecompositionAnswer,
        check=lambda answer: _useless(answer, installed),
    )
    plan = plan_from_answer(reply.value, query, installed, decomposer=client.name)
    plan = plan.model_copy(update={"calls": reply.calls})
    return reply.converted(plan, prompt_version=prompt.version)


def decompose(
    query: Query, installed: Sequence[InstalledApp], client: LLMClient | None,
    *, redactor: Redactor | None = None,
) -> RoleOutcome[Plan]:
    """The plan from LLM1 when configured and working, else from the rules (said in notes)."""
    if client is None:
        return RoleOutcome[Plan](value=decompose_by_rules(query, installed), policy="rules")
    try:
        reply = decompose_with_model(client, query, installed, redactor=redactor)
    except LLMError as exc:
        if not exc.transient:
            raise  # a configuration error (4xx) stops the run with its fix
        why = describe_failure(exc)
        fallback = ModelFallback(role="decomposer", reason=why)
        plan = decompose_by_rules(query, installed, because=f"the decomposer model failed: {why}")
        plan = plan.model_copy(update={"calls": exc.calls, "fallback": fallback})
        return RoleOutcome[Plan](value=plan, policy="rules", calls=exc.calls,
                                 usage=_sum(exc.calls), fallback=fallback)
    return RoleOutcome[Plan](
        value=reply.value,
        policy=client.name,
        usage=reply.usage,
        calls=reply.calls,
        latency_ms=reply.latency_ms,
        prompt_version=reply.prompt_version,
    )


def _useless(answer: DecompositionAnswer, installed: Sequence[InstalledApp]) -> str | None:
    """An answer naming no installed app plans nothing: a failed call, not an empty plan."""
    named = (*answer.mentioned_apps, *answer.installed_related_apps)
    if any(resolve_app(name, installed) is not None for name in named):
        return None
    labels = ", ".join(app.label for app in installed)
    return ("installed_related_apps names none of the installed apps; choose at least one of: "
            f"{labels}, spelled as listed")


def _sum(calls: Sequence[ModelCall]) -> TokenUsage:
    total = TokenUsage()
    for call in calls:
        total = total + call.usage
    return total


def plan_from_answer(
    answer: DecompositionAnswer,
    query: Query,
    installed: Sequence[InstalledApp],
    *,
    decomposer: str,
) -> Plan:
    """Map the model's app names onto installed apps and build the plan."""
    notes: list[str] = []
    apps: list[InstalledApp] = []
    for name in (*answer.mentioned_apps, *answer.installed_related_apps):
        app = resolve_app(name, installed)
        if app is None:
            notes.append(f"the model named {name!r}, which is not installed")
        elif app not in apps:
            apps.append(app)
    if answer.uninstalled_related_apps:
        notes.append(
            "also relevant but not installed: " + ", ".join(answer.uninstalled_related_apps)
        )
    flows = []
    for flow in answer.information_flow:
        source, target = resolve_app(flow.from_app, installed), resolve_app(flow.to_app, installed)
        if source is not None and target is not None:
            flows.append(AppFlow(source=source, target=target, info=flow.info))
    return build_plan(
        query,
        apps,
        answer.search_terms,
        answer.search_mode,
        decomposer=decomposer,
        notes=notes,
        flows=flows,
    )
