"""A deployment's conditions for ``python -m bench.tokens``: what each adds to a run's tokens.

Four conditions the per-task figures used to leave out, each measured at the
recording server (a test double, :class:`droidretriever.testing.RecordingOpenAIServer`):

- **the farm's app list**: the decomposer is shown what the product sends, the
  farm's installed apps as a device worker reads them at start
  (:meth:`device_farm.adb_driver.AdbDriver.list_apps`; the registry's union over
  phones), here from one virtual phone with every catalog app installed;
- **readiness probes**: the real probe code (:func:`inference.llm.check_roles`)
  run as ``droidretriever ask`` runs it before a typed question (every chat
  role) and as a device worker runs it at start (:func:`check_copilot_models`);
- **a written report**: the synthesizer's scripted answer is the report the
  extractive writer builds from the task's captures, cut to a written answer's
  length (:func:`scripted_report`): the items that match the question, each with
  its ``[capture_id(original text)]`` citation;
- **a disagreeing evaluator**: :func:`never_agrees` answers "not complete" on
  every page it is asked about, the target included, where the rules say
  complete, and the navigator (:func:`looking_on`: the same model, agreeing
  with its evaluator) scrolls on where it would have finished, until
  ``budgets.model_calls_per_subtask`` stops the sub-task's model requests
  (:func:`stopped_by_call_budget` tells which were). A navigator's "finish"
  ends a try whatever the evaluator says, so an evaluator disagreeing alone
  costs one navigator call; it takes a navigator that goes on looking to loop.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bench.results import percentile
from bench.token_counts import NAVIGATION, ROLES, TaskTokens, describe_stats
from core.config import Settings, load_settings
from core.models import AppStatus, Capture, InstalledApp, Query, SubTaskResult
from device_farm.adb_driver import AdbDriver

# A test double, used as one: the recording server stands in for vLLM and counts what it is sent.
from droidretriever.testing import RecordedRequest, RecordingOpenAIServer, ServedModel
from inference.llm import ALL_ROLES, check_roles
from inference.perception import count_tokens
from tasks.synthesis import write_extractive
from tasks.synthesis.extractive import EXTRACTIVE_BANNER
from tasks.worker.device_worker import check_copilot_models

__all__ = [
    "ASK_ROLES", "ITEMS_PER_APP", "Deployment", "ProbeCost", "describe_conditions", "looking_on", "measure_deployment", "measure_probes",
    "never_agrees", "probe_settings", "scripted_report", "stopped_by_call_budget",
]

# The roles `droidretriever ask` probes before a typed question (a spoken one adds the transcriber).
ASK_ROLES = tuple(role for role in ALL_ROLES if role != "transcriber")
_CALL_BUDGET = "budgets.model_calls_per_subtask"
ITEMS_PER_APP = 5  # items a scripted written report keeps per app


@dataclass(frozen=True)
class ProbeCost:
    """What one round of readiness probes sent: chat requests, model listings, tokens."""

    requests: int  # chat completions (billed)
    listings: int  # GET /v1/models (no tokens)
    prompt: int  # text and image tokens
    completion: int

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion


@dataclass(frozen=True)
class Deployment:
    """The conditions measured once per benchmark run: the farm's app list and the probes."""

    farm_apps: tuple[InstalledApp, ...]
    ask: ProbeCost  # probes of one `droidretriever ask` (a typed question)
    worker: ProbeCost  # probes of one device worker's start


def probe_settings(vllm: RecordingOpenAIServer, models: Mapping[str, ServedModel]) -> Settings:
    """Settings whose chat ``roles`` use ``models`` (role -> served model) on the recording server."""
    return load_settings(llm={role: {"base_url": vllm.base_url, "model": served.name, "vision": served.vision,
                                     "max_pixels": served.max_pixels}
                              for role, served in models.items()})


def measure_probes(vllm: RecordingOpenAIServer, settings: Settings) -> tuple[ProbeCost, ProbeCost]:
    """The probes of one ``ask`` and of one worker start, counted at the server."""
    return (_count(vllm, lambda: check_roles(settings, ASK_ROLES)),
            _count(vllm, lambda: check_copilot_models(settings)))


def measure_deployment(vllm: RecordingOpenAIServer, driver: AdbDriver,
                       models: Mapping[str, ServedModel]) -> Deployment:
    """The farm's app list as ``driver``'s phone gives it, and the probes of roles using ``models``."""
    ask, worker = measure_probes(vllm, probe_settings(vllm, models))
    return Deployment(farm_apps=driver.list_apps(), ask=ask, worker=worker)


def _count(vllm: RecordingOpenAIServer, probe: Callable[[], object]) -> ProbeCost:
    mark, listed = len(vllm.requests), vllm.listings
    probe()
    sent = vllm.requests[mark:]
    refused = [r.model for r in sent if r.status != 200]
    if refused:
        raise RuntimeError(f"a probe was refused by the recording server ({', '.join(refused)}): "
                           "its figures would not be a working deployment's")
    return ProbeCost(requests=len(sent), listings=vllm.listings - listed,
                     prompt=sum(r.text_tokens + r.image_tokens for r in sent),
                     completion=sum(r.completion_tokens for r in sent))


def scripted_report(query: Query, captures: Sequence[Capture], apps: Sequence[AppStatus],
                    search_terms: Sequence[str]) -> str:
    """The synthesizer's scripted answer: the extractive report over ``captures``, cut to a written answer.

    Built by the product's extractive writer, so what it cites is what the captures
    show, as ``[capture_id(original text)]``; then cut as a model's answer is shorter
    than a list of every match: the banner ("no language model is configured") and
    sub-items dropped, at most :data:`ITEMS_PER_APP` items per app (a comparison table
    and its verdicts kept whole).
    """
    markdown = write_extractive(query, captures, apps, search_terms).markdown
    kept: list[str] = []
    items = 0
    comparison = False
    for line in markdown.replace(f"{EXTRACTIVE_BANNER}\n\n", "", 1).splitlines():
        if line.startswith("## "):
            comparison, items = line == "## Comparison", 0
        elif line.startswith("  - "):
            continue
        elif line.startswith("- ") and not comparison:
            items += 1
            if items > ITEMS_PER_APP:
                continue
        kept.append(line)
    return "\n".join(kept).strip()


def never_agrees(request: RecordedRequest) -> str:
    """An evaluator that disagrees with the rules on every page: never the target, never risky."""
    return json.dumps({"completion_reason": "this page does not answer the task", "complete": False,
                       "page_type": "other", "risk_reason": "an ordinary page", "risk": False,
                       "risk_category": None})


def looking_on(navigator: Callable[[RecordedRequest], str]) -> Callable[[RecordedRequest], str]:
    """``navigator``'s answers, from a model that agrees with its disagreeing evaluator: where it
    would say "finish" it scrolls on, looking for what the evaluator says is missing."""
    def answer(request: RecordedRequest) -> str:
        said = navigator(request)
        if json.loads(said).get("action") != "finish":
            return said
        return json.dumps({"reason": "the evaluator says the answer is not here yet: look further down",
                           "action": "scroll", "direction": "down", "element_id": None})
    return answer


def stopped_by_call_budget(result: SubTaskResult) -> bool:
    """Whether ``budgets.model_calls_per_subtask`` ended the sub-task's model calls (the rules went on)."""
    return any(_CALL_BUDGET in f.reason for step in result.trace.steps for f in step.fallbacks)


def _former(task: TaskTokens) -> TaskTokens:
    if task.former is None:
        raise ValueError(f"{task.id}: the decomposer and synthesizer were not measured (not a full setup)")
    return task.former


def _same_tasks(normal: Sequence[TaskTokens], measured: Sequence[TaskTokens]) -> list[TaskTokens]:
    """The runs of ``normal`` of the tasks ``measured`` has, in its order."""
    by_id = {t.id: t for t in normal}
    return [by_id[t.id] for t in measured]


def _ratios(tasks: Sequence[TaskTokens], normal: Sequence[TaskTokens]) -> list[float]:
    """Whole-run tokens of each of ``tasks`` over the same task's run in ``normal``."""
    return [a.total(ROLES) / b.total(ROLES) for a, b in zip(tasks, _same_tasks(normal, tasks), strict=True)]


def _row(name: str, values: list[int], before: str) -> str:
    return f"| {name} | {describe_stats(values)} | {before} |"


def _role_rows(tasks: Sequence[TaskTokens]) -> list[str]:
    formers = [_former(t) for t in tasks]
    listed, former_listed = (sorted({t.listed_apps for t in ts}) for ts in (tasks, formers))
    return [
        _row(f"decomposer, shown the farm's {', '.join(map(str, listed))} installed apps",
             [t.total(("decomposer",)) for t in tasks],
             f"{describe_stats([t.total(('decomposer',)) for t in formers])}, shown the task's "
             f"{min(former_listed)}-{max(former_listed)} apps"),
        _row("decomposer, prompt text", [t.text["decomposer"] for t in tasks],
             describe_stats([t.text["decomposer"] for t in formers])),
        _row("synthesizer, answering with a written cited report", [t.total(("synthesizer",)) for t in tasks],
             f"{describe_stats([t.total(('synthesizer',)) for t in formers])}, a one-line answer per capture"),
        _row("synthesizer, completion", [t.completion["synthesizer"] for t in tasks],
             describe_stats([t.completion["synthesizer"] for t in formers])),
        _row("synthesizer, citations in its answer", [t.citations for t in tasks],
             describe_stats([t.citations for t in formers])),
        _row("navigator (unchanged conditions)", [t.total(("navigator",)) for t in tasks], "the same"),
        _row("evaluator (unchanged conditions)", [t.total(("evaluator",)) for t in tasks], "the same"),
    ]


def _run_rows(tasks: Sequence[TaskTokens], disagreeing: Sequence[TaskTokens], deployment: Deployment) -> list[str]:
    formers = [t.total(NAVIGATION) + _former(t).total(("decomposer", "synthesizer")) for t in tasks]
    ask, worker = deployment.ask, deployment.worker
    ratios = _ratios(disagreeing, tasks)
    stopped = sum(t.stopped for t in disagreeing)
    subtasks = sum(len(t.subtask_calls) for t in disagreeing)
    same = _same_tasks(tasks, disagreeing)
    return [
        f"| readiness probes of one `droidretriever ask` | {ask.requests} chat requests "
        f"(+{ask.listings} model listings), {ask.tokens:,} tokens ({ask.completion} completion) | not counted |",
        f"| readiness probes of one device worker's start | {worker.requests} chat requests "
        f"(+{worker.listings} model listings), {worker.tokens:,} tokens ({worker.completion} completion) "
        "| not counted |",
        _row("whole run (all four roles)", [t.total(ROLES) for t in tasks], describe_stats(formers)),
        _row("whole run and its `ask`'s probes", [t.total(ROLES) + ask.tokens for t in tasks], ""),
        _row("disagreeing evaluator: whole run (all four roles)", [t.total(ROLES) for t in disagreeing],
             f"normal runs: {describe_stats([t.total(ROLES) for t in same])}; ratio to the same task's "
             f"normal run: median {statistics.median(ratios):.1f}x, p95 {percentile(ratios, 0.95):.1f}x, "
             f"max {max(ratios):.1f}x"),
        _row("disagreeing evaluator: navigation tokens per sub-task", [a for t in disagreeing for a in t.apps],
             f"normal runs: {describe_stats([a for t in same for a in t.apps])}"),
        _row("disagreeing evaluator: model requests per sub-task", [c for t in disagreeing for c in t.subtask_calls],
             f"stopped by the call budget: {stopped}/{subtasks} sub-tasks; normal runs: "
             f"{describe_stats([c for t in same for c in t.subtask_calls])}"),
        _row("disagreeing evaluator: evaluator requests per task", [t.calls["evaluator"] for t in disagreeing],
             f"normal runs: {describe_stats([t.calls['evaluator'] for t in same])}"),
        _row("disagreeing evaluator: navigator requests per task", [t.calls["navigator"] for t in disagreeing],
             f"normal runs: {describe_stats([t.calls['navigator'] for t in same])}"),
    ]


def _which(measured: Sequence[TaskTokens], tasks: Sequence[TaskTokens]) -> str:
    if len(measured) == len(tasks):
        return "the same tasks"
    return f"{len(measured)} of the {len(tasks)} tasks (one in {len(tasks) // len(measured)}, to keep the run short)"


def describe_conditions(tasks: Sequence[TaskTokens], disagreeing: Sequence[TaskTokens], deployment: Deployment,
                        call_budget: int) -> str:
    """The benchmark's section on a deployment's conditions: how each is measured, the table, before and now."""
    farm_list = count_tokens(", ".join(a.label for a in deployment.farm_apps))
    whole = [t.total(ROLES) for t in tasks]
    ratios = _ratios(disagreeing, tasks)
    table = "\n".join([*_role_rows(tasks), *_run_rows(tasks, disagreeing, deployment)])
    decomposer = [t.total(("decomposer",)) for t in tasks]
    report = [t.completion["synthesizer"] for t in tasks]
    return f"""
### Under a deployment's conditions (issue 31 item 6)

The documented setup again, with what a deployment sends that the rows above used to leave out
(`bench/token_conditions.py`), every request counted at the recording server:

- **The farm's app list.** The decomposer is shown the list the product sends: the apps a device
  worker reads from its phone at start (`AdbDriver.list_apps`, the registry's union over phones),
  here one virtual phone with every catalog app installed: {len(deployment.farm_apps)} apps, whose
  names alone are {farm_list} tokens. "Before" shows it only the task's own apps.
- **A written report.** The synthesizer answers with the report the extractive writer builds from
  the task's captures (`scripted_report`), cut as a written answer is shorter than a list of
  every match: its banner and sub-items dropped, at most {ITEMS_PER_APP} items per app, a comparison
  table (when apps share attributes) and its verdicts kept whole; every item and cell carries
  its `[capture_id(original text)]` citation. "Before" it answered the recording server's
  default: one cited line per capture.
- **Readiness probes**, by the real probe code (`inference.llm.check_roles`): as
  `droidretriever ask` runs it before a typed question (decomposer, navigator, evaluator,
  synthesizer; a spoken question adds the transcriber's, not counted here) and as a device worker
  runs it at start (navigator and evaluator, `check_copilot_models`). A vision role's probe sends a
  second request with a 56x56 image. Model listings (`GET /v1/models`) carry no tokens.
- **A disagreeing evaluator**: one more pass, over {_which(disagreeing, tasks)}, in which the evaluator answers
  "not complete" on every page it is asked about, the target included, where the rules say
  complete, and the navigator (the same model, agreeing with it) scrolls on where the path would
  finish, on the target page and on every page after (a later try included), until
  `budgets.model_calls_per_subtask` = {call_budget} (the default) stops the sub-task's model
  requests; the rules then decide. (A navigator's "finish" ends a try whatever the evaluator says,
  so an evaluator disagreeing alone costs one more navigator call; it takes a navigator that goes
  on looking to loop. The evaluator is asked once per screen, so the navigator makes most of the
  calls.)

| per Study 2 task (n={len(tasks)}) | measured | before (the former conditions, measured in this run) |
|---|---|---|
{table}

Compared with the figures published before this revision (same command, the former conditions):
the decomposer's median was 534 tokens (p95 583; prompt text 490), now {statistics.median(decomposer):,.0f}
(p95 {percentile([float(v) for v in decomposer], 0.95):,.0f}); the synthesizer's completion median was
24 tokens, now {statistics.median(report):,.0f} (p95 {percentile([float(v) for v in report], 0.95):,.0f});
the whole run's median was 5,684 and p95 14,447 with no probes, now {statistics.median(whole):,.0f}
and {percentile([float(v) for v in whole], 0.95):,.0f}, plus {deployment.ask.tokens:,} tokens of probes per `ask`
({deployment.ask.requests} requests) and {deployment.worker.tokens:,} per worker start
({deployment.worker.requests} requests). The disagreeing evaluator was not shown; issue 31 measured one
at 22 calls and 23,998 tokens, 6.1x a normal run, with nothing to stop it. With the call budget, a
disagreeing run costs a median {statistics.median(ratios):.1f}x (p95 {percentile(ratios, 0.95):.1f}x) its normal run.
"""
