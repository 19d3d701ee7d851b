"""One try of the loop: a fresh app start, then steps until a target, a dead end or the budget.

A step: observe -> perceive -> control channel -> evaluate (rules, then LLM3
where the rules take the page for the target) -> decide (policy chain) -> risk
gate -> a second look by LLM3 when a policy says finish or the navigator's
model is about to tap or type on a pop-up, login wall or settings page ->
preview event -> confirm window -> act. The risk gate
(:func:`inference.rules.check_action`) is the one place every action passes,
whichever policy chose it: one that would pay, log in, delete, agree, send,
post or follow, or that the screen's own text asked for, is not carried out;
the sub-task pauses for the person instead. Screen text that addresses the
agent is reported once per screen as a LOG event (it is data). LLM3 judges a
screen once per try: a screen seen again (the same fingerprint) keeps its
verdict instead of being sent again. The next step's observation verifies the
last action: a submitted search that left the page as it was is marked not
applied, so the policies type it again. Every model request of a step (failed
ones included) and every fallback to the rules is recorded on that step, also
when the step ends the try.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from core.models import (
    Back,
    Evaluation,
    Finish,
    Input,
    PageType,
    RunEventKind,
    Screen,
    StepRecord,
    StepTimings,
    SubTaskStatus,
)
from device_farm.models import DeviceObservation, Key
from inference.llm_roles import Occasion, RoleOutcome, evaluate, guards_action
from inference.perception import Perception, redactor_for
from inference.policies import (
    SKILLS,
    Decision,
    ExplorePolicy,
    PolicyContext,
    TakenAction,
    describe_for_navigator,
    ran_a_search,
    shown_history,
)
from inference.rules import check_action, detect_page_type, find_injection, find_nothing_found
from inference.rules.risk import quote_label
from storage import RunKeys
from tasks.navigate.act import digest_elements, execute_action, preview_for
from tasks.navigate.run import SubTaskRun, TryEnd, to_observation
from tasks.navigate.steer import confirm_window_s, obey, poll_command, wait_confirm_window
from tasks.navigate.targets import TargetPages, opens_result, search_took_effect

__all__ = ["EXPLORATION_MAP", "MAP_ROUTE_LOG", "NavigationTry"]

EXPLORATION_MAP = "exploration map"  # the LOG message's first words; one ExplorationEdge JSON per line
# The LOG message saying which map targets and route a try followed: a line for people, then the
# MapTrail as JSON (screen ids) for the dashboard.
MAP_ROUTE_LOG = "app map"

_SYSTEM_DIALOG_PACKAGES = ("permissioncontroller", "packageinstaller")



@dataclass(frozen=True)
class _Look:
    """What one step saw: the phone's observation and its perception, with their times."""

    step_no: int
    observation: DeviceObservation
    perception: Perception
    observe_ms: float
    perceive_ms: float

    @property
    def screen(self) -> Screen:
        return self.perception.screen

class NavigationTry:
    """One try: fresh app start, up to ``budgets.steps_per_subtask`` steps."""

    def __init__(self, run: SubTaskRun, attempt: int, reflection: str | None) -> None:
        self.run = run
        self.copilot = run.copilot
        self.subtask = run.subtask
        self.attempt = attempt
        self.reflection = reflection
        self.chain, memory_policy = self.copilot.build_chain(run.meter, run.guide)
        self.targets = TargetPages(run, attempt, memory_policy)
        self.history: list[TakenAction] = []  # what the policies see (cleared after a takeover)
        self.taken: list[tuple[TakenAction, Screen]] = []  # every action, for route memory
        self.seen: Counter[str] = Counter()  # screen fingerprints in this try
        self.pairs: Counter[tuple[str, str]] = Counter()  # (fingerprint, instruction): loops
        # LLM3's verdicts in this try, by (fingerprint, opened from a list, searched): a screen is sent once.
        self.verdicts: dict[tuple[str, bool, bool], Evaluation] = {}
        self._base: StepRecord | None = None  # the step being decided, until it is recorded
        self.injections: set[str] = set()  # fingerprints whose hostile text was reported

    def execute(self) -> TryEnd:
        """Run the try's steps; how it ended (the exploration map, if any, is published)."""
        try:
            return self._run_steps()
        finally:
            self._publish_exploration_map()
            recalled = self.targets.memory.describe() if self.targets.memory is not None else ""
            if recalled:
                self.run.publish(RunEventKind.LOG, f"try {self.attempt}: {recalled}")
            if self.run.guide is not None:
                guide = self.run.guide
                self.run.publish(RunEventKind.LOG, f"{MAP_ROUTE_LOG} try {self.attempt}: {guide.describe()}\n"
                                                   f"{guide.trail().model_dump_json()}")

    def _publish_exploration_map(self) -> None:
        """A LOG event whose message is the try's exploration map (JSON lines of edges)."""
        explorer = next((p for p in self.chain.policies if isinstance(p, ExplorePolicy)), None)
        if explorer is None or not explorer.edges:
            return
        lines = "\n".join(edge.model_dump_json() for edge in explorer.edges)
        self.run.publish(RunEventKind.LOG, f"{EXPLORATION_MAP} try {self.attempt}\n{lines}")

    def _run_steps(self) -> TryEnd:
        driver = self.copilot.driver
        # Every try starts from the app's first page, from the home screen (a resumed
        # run's first try keeps the screen the person left).
        request = self.run.request
        act = self.subtask.act
        if act is not None and request.resumed > 0:
            # A request to act paused where it is done; the person has had the phone since: what
            # they did there is theirs, and the agent does not look for the act again.
            return TryEnd(SubTaskStatus.COMPLETED, f"a person took over where to {act.verb}")
        keep_screen = not self.copilot.restart_app or (request.resumed > 0 and request.delivery == 1)
        if not keep_screen or self.attempt > 1:
            driver.force_stop(self.subtask.package)
            driver.key(Key.HOME)
        for _ in range(self.copilot.budgets.steps_per_subtask):
            end = self._step()
            if end is not None:
                return end
        return TryEnd(None, f"step budget of {self.copilot.budgets.steps_per_subtask} spent", budget_spent=True)

    def _step(self) -> TryEnd | None:
        self._base = None
        steps = len(self.run.steps)
        try:
            return self._decide_step()
        finally:
            if self.run.meter.pending and len(self.run.steps) == steps:
                # The step ended the try (or raised) before it was recorded: its model calls
                # still count, on a record of their own.
                self.run.record(self._base or StepRecord(step=steps + 1, subtask_id=self.subtask.id))

    def _decide_step(self) -> TryEnd | None:
        """One step: look, obey a person's command, judge, choose, check, then act (or end)."""
        look = self._look()
        command = poll_command(self.copilot, self.run)
        if command is not None:
            return obey(self, command, look.observation)
        tick = time.perf_counter()
        verdict, page_type, base = self._judge(look)
        if base.evaluation is not None and base.evaluation.risk:
            return self._pause_for_risk(base, base.evaluation, look.observe_ms, look.perceive_ms, tick)
        chosen = self._choose(look, base, page_type)
        if not isinstance(chosen, Decision):
            return chosen
        decision = chosen
        refused = self._gate(decision, look.observation, look.screen, base, page_type)
        if refused is not None:
            return refused
        base = self._second_look(look, decision, verdict, page_type, base)
        if base.evaluation is not None and base.evaluation.risk:
            return self._pause_for_risk(base, base.evaluation, look.observe_ms, look.perceive_ms, tick)
        decide_ms = (time.perf_counter() - tick) * 1000.0
        if isinstance(decision.action, Finish):
            evaluation = base.evaluation
            assert evaluation is not None  # every step's record carries its evaluation (_judge)
            done = self.targets.capture(look.observation, look.screen, self.taken, force=True,
                                        confirmed=self.targets.confirms(evaluation, look.screen, self.history))
            self.run.record(base.model_copy(update={
                "action": decision.action, "policy": decision.policy,
                "exposed_elements": decision.exposed_elements,
            }))
            return done or TryEnd(SubTaskStatus.COMPLETED, decision.action.reason or "the navigator finished")
        return self._act(look, decision, base, decide_ms)

    def _look(self) -> _Look:
        """Observe the phone and perceive its screen, timed."""
        step_no = len(self.run.steps) + 1
        started = time.perf_counter()
        observation = self.copilot.driver.observe()
        observe_ms = (time.perf_counter() - started) * 1000.0
        tick = time.perf_counter()
        perception = self.copilot.perceiver.perceive(
            to_observation(observation, step_no), use_ocr=self.copilot.use_ocr
        )
        return _Look(step_no, observation, perception, observe_ms, (time.perf_counter() - tick) * 1000.0)

    def _judge(self, look: _Look) -> tuple[RoleOutcome[Evaluation], PageType, StepRecord]:
        """The page's evaluation (rules, then LLM3 where they take it for the target), the last
        action verified, and the step's record so far."""
        arrival = Occasion.EVERY_PAGE if self.copilot.evaluator_pages == "every_page" else Occasion.ARRIVAL
        verdict = self._evaluate(look.perception, look.observation.screenshot_png, arrival)
        evaluation = verdict.value
        screen = look.screen
        # The rule-based policies and checks read the rules' page kinds, whoever judged.
        page_type = evaluation.page_type if verdict.policy == "rules" else detect_page_type(screen)
        self._verify_last_action(screen, page_type)
        if self.run.patches is not None and self.taken and self.taken[-1][0].applied:
            taken, before = self.taken[-1]
            self.run.patches.see(before, taken.action, screen, look.observation.screenshot_png)
        base = StepRecord(
            step=look.step_no, subtask_id=self.subtask.id,
            screen_key=self._store_screen(look.step_no, look.observation),
            elements_digest=digest_elements(screen), evaluation=evaluation,
            intervention=self.run.intervened,
        )
        self._base = base
        if evaluation.disagreement:
            self.run.publish(RunEventKind.LOG, f"step {look.step_no}: verdict not accepted: {evaluation.disagreement}")
        self._report_injection(screen)
        return verdict, page_type, base

    def _choose(self, look: _Look, base: StepRecord, page_type: PageType) -> Decision | TryEnd:
        """At a target page: capture it (the try may end). Elsewhere: the policy chain's decision, or
        the try's end when no policy knows what to do."""
        screen, evaluation = look.screen, base.evaluation
        assert evaluation is not None  # set by _judge
        self._note_empty_search(screen)
        repeats = self.seen[screen.fingerprint]
        self.seen[screen.fingerprint] += 1
        decision: Decision | None = None
        target = self.targets.is_target(evaluation, screen, self.history)
        if not target:
            replaying = self.targets.memory is not None and self.targets.memory.replaying
            decision = self.chain.decide(PolicyContext(
                subtask=self.subtask, perception=look.perception, page_type=page_type,
                step=look.step_no, attempt=self.attempt, history=tuple(self.history),
                visited=frozenset(self.run.visited), repeats=repeats, reflection=self.reflection,
                empty_searches=frozenset(self.run.empty_searches),
                screenshot_png=look.observation.screenshot_png,
            ))
            if decision is None and replaying:
                # The remembered route stopped on this page (its next step opened another
                # question's item): the page is judged as if no route had led here.
                target = self.targets.is_target(evaluation, screen, self.history)
        if target:
            done = self.targets.capture(look.observation, screen, self.taken,
                                        confirmed=self.targets.confirms(evaluation, screen, self.history))
            if done is not None:
                self.run.record(base.model_copy(update={"action": Finish(reason=done.reason),
                                                        "policy": "evaluator"}))
                return done
            decision = Decision(action=Back(reason="back to the results for the next one"),
                                policy=SKILLS, skill="back_to_branch")
        if decision is None:
            fallback = self.run.meter.pending_fallback("navigator")
            failed = f" (the navigator's model failed: {fallback.reason})" if fallback else ""
            if self.copilot.unfamiliar:  # the last policy tries every element: all of them were tried
                return TryEnd(None, f"every element of this {page_type.value} page was tried{failed}")
            return TryEnd(None, f"no policy knew what to do on this {page_type.value} page{failed}")
        return decision

    def _second_look(self, look: _Look, decision: Decision, verdict: RoleOutcome[Evaluation],
                     page_type: PageType, base: StepRecord) -> StepRecord:
        """LLM3 confirms the navigator's finish, or looks for a risk before the navigator's model
        taps or types on a guarded page; the step's record carries the newer evaluation."""
        by_model = self.copilot.navigator is not None and decision.policy == self.copilot.navigator.name
        second = (Occasion.FINISH if isinstance(decision.action, Finish)
                  else Occasion.ACTING if by_model and guards_action(decision.action, page_type) else None)
        if second is None or verdict.calls or verdict.fallback is not None:
            return base
        evaluation = self._evaluate(look.perception, look.observation.screenshot_png, second).value
        base = base.model_copy(update={"evaluation": evaluation})
        self._base = base
        return base

    def _act(self, look: _Look, decision: Decision, base: StepRecord, decide_ms: float) -> TryEnd | None:
        """Preview the action, wait out the confirm window, carry it out and record the step."""
        screen = look.screen
        window_s = confirm_window_s(self.copilot, self.run)
        preview = preview_for(look.step_no, decision, screen, window_s)
        pair = (screen.fingerprint, preview.instruction)
        self.pairs[pair] += 1
        if self.pairs[pair] > self.copilot.max_repeats:
            return TryEnd(None, f"{preview.instruction!r} repeated {self.copilot.max_repeats} times "
                                "on the same screen without progress")
        self.run.publish(RunEventKind.PREVIEW, preview.instruction, preview=preview)
        window = wait_confirm_window(self, window_s)
        if isinstance(window, TryEnd):
            return window
        if window == "drop":
            self.run.publish(RunEventKind.LOG, f"{preview.instruction}: not done, a person steered "
                                               "the phone during the confirm window")
            return None
        outcome = execute_action(self.copilot.driver, decision.action, screen)
        if decision.item_signature is not None and not outcome.problem:
            self.run.visited.add(decision.item_signature)
        taken = TakenAction(action=decision.action, instruction=preview.instruction,
                            policy=decision.policy, skill=decision.skill, fingerprint=screen.fingerprint,
                            opened_result=opens_result(decision, screen), applied=not outcome.problem)
        self.history.append(taken)
        self.taken.append((taken, screen))
        self.run.record(base.model_copy(update={
            "action": decision.action, "policy": decision.policy,
            "exposed_elements": decision.exposed_elements,
            "timings": StepTimings(observe_ms=look.observe_ms, perceive_ms=look.perceive_ms,
                                   decide_ms=decide_ms, act_ms=outcome.act_ms),
        }))
        if outcome.problem:
            self.run.publish(RunEventKind.LOG, f"{preview.instruction}: {outcome.problem}")
        return None

    def _note_empty_search(self, screen: Screen) -> None:
        """Remember a term whose submitted search says nothing was found: the skills search a shorter
        form of it next (in this try or the next), never the same words again."""
        last = self.history[-1] if self.history else None
        if (last is not None and last.applied and isinstance(last.action, Input) and last.action.submit
                and find_nothing_found(screen) is not None and last.action.text not in self.run.empty_searches):
            self.run.empty_searches.add(last.action.text)
            self.run.publish(RunEventKind.LOG, f"the search for {last.action.text!r} found nothing: "
                                               "a shorter form of the term is searched next")

    def _gate(self, decision: Decision, observation: DeviceObservation, screen: Screen,
              base: StepRecord, page_type: PageType) -> TryEnd | None:
        """The risk gate: pause for the person instead of an action the agent must not take."""
        perceiver = self.copilot.perceiver
        finding = check_action(
            decision.action, screen, goal=self.subtask.goal,
            read_text=lambda element: perceiver.read_text_in(observation.screenshot_png,
                                                             element.bounds),
        )
        if finding is None:
            return None
        refused = Evaluation(
            complete=False, risk=True, risk_category=finding.category, page_type=page_type,
            reason=f"not done: {finding.reason} (chosen by {decision.policy})", evaluator="gate",
        )
        self.run.record(base.model_copy(update={
            "evaluation": refused, "policy": decision.policy,
            "exposed_elements": decision.exposed_elements,
        }))
        self.run.publish(RunEventKind.NEEDS_USER, refused.reason)
        return TryEnd(SubTaskStatus.NEEDS_USER, refused.reason, risk=refused)

    def _report_injection(self, screen: Screen) -> None:
        """Screen text that addresses the agent goes into the trace once per screen, as data."""
        hostile = find_injection(screen.elements)
        if hostile is None or screen.fingerprint in self.injections:
            return
        self.injections.add(screen.fingerprint)
        self.run.publish(RunEventKind.LOG, "the screen addresses the agent "
                         f"({quote_label(hostile.label, 120)}): treated as data, not followed")

    def _verify_last_action(self, screen: Screen, page_type: PageType) -> None:
        """Mark a submitted search that left the page as it was as not applied."""
        if not self.taken or not self.history:
            return
        last, before = self.taken[-1]
        if not last.applied or self.history[-1] is not last:
            return
        if search_took_effect(last, before, screen, page_type):
            return
        failed = last.model_copy(update={"applied": False})
        self.history[-1] = failed
        self.taken[-1] = (failed, before)
        self.run.publish(RunEventKind.LOG, f"{last.instruction}: the page did not change after submitting")

    def _pause_for_risk(self, base: StepRecord, evaluation: Evaluation, observe_ms: float,
                        perceive_ms: float, tick: float) -> TryEnd:
        """Record the step and hand the risky screen to the person."""
        self.run.record(base.model_copy(update={"timings": StepTimings(
            observe_ms=observe_ms, perceive_ms=perceive_ms,
            decide_ms=(time.perf_counter() - tick) * 1000.0)}))
        self.run.publish(RunEventKind.NEEDS_USER, evaluation.reason)
        return TryEnd(SubTaskStatus.NEEDS_USER, evaluation.reason, risk=evaluation)

    def _evaluate(self, perception: Perception, screenshot_png: bytes,
                  occasion: Occasion) -> RoleOutcome[Evaluation]:
        screen = perception.screen
        if screen.package != self.subtask.package and not _is_system_dialog(screen):
            # The launcher or another app: not the sub-task's screen, nothing to judge yet.
            other = Evaluation(complete=False, page_type=PageType.OTHER, evaluator="rules",
                               reason=f"{screen.package or 'the home screen'} is in front")
            return RoleOutcome[Evaluation](value=other, policy="rules")
        evaluator = self.copilot.evaluator
        opened = self.targets.opened_details(self.history, screen)
        searched = ran_a_search(self.history)
        key = (screen.fingerprint, opened, searched)
        judged = self.verdicts.get(key)
        if judged is not None and evaluator is not None:
            return RoleOutcome[Evaluation](value=judged, policy=evaluator.name)  # not sent again
        perceiver = self.copilot.perceiver
        redactor = redactor_for(evaluator.endpoint, perceiver.settings, ocr=perceiver.ocr) if evaluator else None
        # The navigator's view of the screen (CORE: a large screen cut to the task's blocks):
        # the same evidence for both judgements, and what leaves the device stays small.
        verdict = evaluate(
            self.subtask, screen, client=evaluator,
            description=describe_for_navigator(
                perception, self.subtask, redactor=redactor,
                budget=self.copilot.perceiver.settings.description_token_budget).text if evaluator else "",
            previous_actions=shown_history((t.instruction for t in self.history), redactor),
            screenshot_png=screenshot_png, redactor=redactor, meter=self.run.meter,
            opened_result=opened, occasion=occasion,
            expected_target=self.targets.expects_target(self.history, screen),
            searched=searched,
        )
        if verdict.policy != "rules":
            self.verdicts[key] = verdict.value
        return verdict

    def _store_screen(self, step: int, observation: DeviceObservation) -> str:
        request = self.run.request
        # Step numbers start again on every delivery and after every pause: name those apart,
        # so the screens a person saw before (the map shows them) are not overwritten.
        if request.delivery == 1 and request.resumed == 0:
            key = RunKeys(request.run_id).screen(step, self.subtask.id)
        else:
            name = f"{step:04d}-d{request.delivery}r{request.resumed}.png"
            key = RunKeys(request.run_id).key("screens", self.subtask.id, name)
        self.copilot.store.put_bytes(key, observation.screenshot_png, "image/png")
        return key


def _is_system_dialog(screen: Screen) -> bool:
    return any(p in screen.package for p in _SYSTEM_DIALOG_PACKAGES)
