"""One try of the loop: a fresh app start, then steps until a target, a dead end or the budget.

A step: observe -> perceive -> control channel -> evaluate (rules, then LLM3)
-> decide (policy chain) -> preview event -> confirm window -> act. The next
step's observation verifies the last action: a submitted search that left
the page as it was is marked not applied, so the policies type it again.
"""

from __future__ import annotations

import time
from collections import Counter

from device_farm.models import DeviceObservation, Key
from droidretriever.models import (
    Back,
    Evaluation,
    Finish,
    PageType,
    RunEventKind,
    Screen,
    StepRecord,
    StepTimings,
    SubTaskStatus,
)
from inference.llm_roles import RoleOutcome, evaluate
from inference.perception import Perception, describe_screen
from inference.policies import (
    SKILLS,
    Decision,
    ExplorePolicy,
    PolicyContext,
    TakenAction,
    compact_history,
)
from storage import RunKeys
from tasks.navigate.act import digest_elements, execute_action, preview_for
from tasks.navigate.run import SubTaskRun, TryEnd, to_observation
from tasks.navigate.steer import obey, poll_command, wait_confirm_window
from tasks.navigate.targets import TargetPages, opens_result, search_took_effect

__all__ = ["EXPLORATION_MAP", "NavigationTry"]

EXPLORATION_MAP = "exploration map"  # the LOG message's first words; one ExplorationEdge JSON per line

_SYSTEM_DIALOG_PACKAGES = ("permissioncontroller", "packageinstaller")


class NavigationTry:
    """One try: fresh app start, up to ``budgets.steps_per_subtask`` steps."""

    def __init__(self, run: SubTaskRun, attempt: int, reflection: str | None) -> None:
        self.run = run
        self.copilot = run.copilot
        self.subtask = run.subtask
        self.attempt = attempt
        self.reflection = reflection
        self.chain, memory_policy = self.copilot.build_chain()
        self.targets = TargetPages(run, attempt, memory_policy)
        self.history: list[TakenAction] = []  # what the policies see (cleared after a takeover)
        self.taken: list[tuple[TakenAction, Screen]] = []  # every action, for route memory
        self.seen: Counter[str] = Counter()  # screen fingerprints in this try
        self.pairs: Counter[tuple[str, str]] = Counter()  # (fingerprint, instruction): loops

    def execute(self) -> TryEnd:
        """Run the try's steps; how it ended (the exploration map, if any, is published)."""
        try:
            return self._run_steps()
        finally:
            self._publish_exploration_map()

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
        keep_screen = not self.copilot.restart_app or (request.resumed > 0 and request.delivery == 1)
        if not keep_screen or self.attempt > 1:
            driver.force_stop(self.subtask.package)
            driver.key(Key.HOME)
        for _ in range(self.copilot.budgets.steps_per_subtask):
            end = self._step()
            if end is not None:
                return end
        return TryEnd(None, f"step budget of {self.copilot.budgets.steps_per_subtask} spent")

    def _step(self) -> TryEnd | None:
        step_no = len(self.run.steps) + 1
        started = time.perf_counter()
        observation = self.copilot.driver.observe()
        observe_ms = (time.perf_counter() - started) * 1000.0
        tick = time.perf_counter()
        perception = self.copilot.perceiver.perceive(
            to_observation(observation, step_no), use_ocr=self.copilot.use_ocr
        )
        perceive_ms = (time.perf_counter() - tick) * 1000.0
        screen = perception.screen
        command = poll_command(self.copilot, self.run)
        if command is not None:
            return obey(self, command, observation)
        tick = time.perf_counter()
        verdict = self._evaluate(perception)
        evaluation = verdict.value
        self._verify_last_action(screen, evaluation.page_type)
        base = StepRecord(
            step=step_no, subtask_id=self.subtask.id, screen_key=self._store_screen(step_no, observation),
            elements_digest=digest_elements(screen), evaluation=evaluation,
            tokens=verdict.usage, intervention=self.run.intervened,
        )
        if evaluation.risk:
            self.run.record(base.model_copy(update={"timings": StepTimings(
                observe_ms=observe_ms, perceive_ms=perceive_ms,
                decide_ms=(time.perf_counter() - tick) * 1000.0)}))
            self.run.publish(RunEventKind.NEEDS_USER, evaluation.reason)
            return TryEnd(SubTaskStatus.NEEDS_USER, evaluation.reason, risk=evaluation)
        repeats = self.seen[screen.fingerprint]
        self.seen[screen.fingerprint] += 1
        decision: Decision | None
        if self.targets.is_target(evaluation, screen, self.history):
            done = self.targets.capture(observation, screen, self.taken)
            if done is not None:
                self.run.record(base.model_copy(update={"action": Finish(reason=done.reason),
                                                        "policy": "evaluator"}))
                return done
            decision = Decision(action=Back(reason="back to the results for the next one"),
                                policy=SKILLS, skill="back_to_branch")
        else:
            decision = self.chain.decide(PolicyContext(
                subtask=self.subtask, perception=perception, page_type=evaluation.page_type,
                step=step_no, attempt=self.attempt, history=tuple(self.history),
                visited=frozenset(self.run.visited), repeats=repeats, reflection=self.reflection,
                screenshot_png=observation.screenshot_png,
            ))
        decide_ms = (time.perf_counter() - tick) * 1000.0
        if decision is None:
            return TryEnd(None, f"no policy knew what to do on this {evaluation.page_type.value} page")
        if isinstance(decision.action, Finish):
            done = self.targets.capture(observation, screen, self.taken, force=True)
            # The model's "finish" cost tokens too: they belong on this step.
            self.run.record(base.model_copy(update={
                "action": decision.action, "policy": decision.policy,
                "tokens": base.tokens + decision.usage, "exposed_elements": decision.exposed_elements,
            }))
            return done or TryEnd(SubTaskStatus.COMPLETED, decision.action.reason or "the navigator finished")
        preview = preview_for(step_no, decision, screen, self.copilot.budgets.confirm_window_s)
        pair = (screen.fingerprint, preview.instruction)
        self.pairs[pair] += 1
        if self.pairs[pair] > self.copilot.max_repeats:
            return TryEnd(None, f"{preview.instruction!r} repeated {self.copilot.max_repeats} times "
                                "on the same screen without progress")
        self.run.publish(RunEventKind.PREVIEW, preview.instruction, preview=preview)
        window = wait_confirm_window(self)
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
            "tokens": base.tokens + decision.usage, "exposed_elements": decision.exposed_elements,
            "timings": StepTimings(observe_ms=observe_ms, perceive_ms=perceive_ms,
                                   decide_ms=decide_ms, act_ms=outcome.act_ms),
        }))
        if outcome.problem:
            self.run.publish(RunEventKind.LOG, f"{preview.instruction}: {outcome.problem}")
        return None

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

    def _evaluate(self, perception: Perception) -> RoleOutcome[Evaluation]:
        screen = perception.screen
        if screen.package != self.subtask.package and not _is_system_dialog(screen):
            # The launcher or another app: not the sub-task's screen, nothing to judge yet.
            other = Evaluation(complete=False, page_type=PageType.OTHER, evaluator="rules",
                               reason=f"{screen.package or 'the home screen'} is in front")
            return RoleOutcome[Evaluation](value=other, policy="rules")
        evaluator = self.copilot.evaluator
        return evaluate(
            self.subtask, screen, client=evaluator,
            description=describe_screen(screen, perception.blocks).text if evaluator else "",
            previous_actions=compact_history(t.instruction for t in self.history),
        )

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
