"""DroidTask on replay phones, scored with the UICOMPASS paper's metrics (SR, ACP, OSR, SPL).

``python -m bench.droidtask`` takes the 94 tasks of ``shared/data/droidtask``
(8 apps of AutoDroid's DroidTask; :mod:`core.recordings.droidtask`
reads them), serves each app's DroidBot recording on a replay phone (screens
drawn from the recorded views: the dataset has no screenshots), starts the app
fresh, and runs the copilot loop (``tasks.navigate.navigate_subtask``) with the
task's goal in words: one try, page mode focused, no search term unless the
ground truth types into the app's search field, and a budget of twice the
ground truth's steps plus 2 actions. Rows (:data:`ROWS`): **skills + explorer**
(no model), and **navigator (scripted test double)**: the LLM navigator talking
to the shipped OpenAI-compatible stub scripted with the ground truth's moves;
it shows the model path can act on these screens, not what a model would do.
Another row is a name and a Copilot factory (:func:`run_row`).

What is counted, per task (the paper, section 4.1; its SR was judged by people
who accepted any path that does the task, and its OSR exceeds its SR, so OSR is
a rate among the completed tasks):

- an **action** is a tap, long press, text entry (a tap on the field, the text,
  ENTER: one action, as in the ground truth), BACK or an app restart. Scrolls
  are not actions: the ground truth has none (AutoDroid scrolled through each
  page to read it, and a record lists the page's scrolled views as one screen);
  the copilot's step budget counts them all the same. Only the first ``budget``
  actions are scored.
- an action **matches** a ground-truth step when it is of the same kind, done on
  one of the step's screens (its state string, or one of its kind: same
  content-free signature and activity), on the view the step names (the view a
  tap there reaches is the one a tap on the step's element reaches: class,
  resource id and box), typing the same text (case aside).
- **SR** (completed): the phone shows one of the task's target screens (the last
  record's screens that no earlier step showed: the task's effect is on them),
  or every ground-truth step was matched, in order, with detours allowed, and
  the last match left the phone on one of the last record's screens or one of
  their kind. Stopping for a person is not completing.
- **ACP**: the longest prefix of the ground truth that the run's actions match
  one for one from the first, over the ground truth's length; averaged.
- **OSR**: among completed tasks, those whose run ended with the agent saying it
  was done (status completed, not a spent budget) on a last-record screen.
- **SPL**: per task, completed x ground truth's length / max(actions to the
  completion, ground truth's length); averaged over all tasks, as the paper does.
- **navigation**: the phone showed one of the last record's screens, or one of
  their kind, after at least one action (reached the screen, whatever it shows).
- **hand-over**: the project's risk gate (``inference.rules.check_action``) never
  deletes, sends, calls, pays, signs in or types into a form. A task whose
  ground truth has such a step (judged by the gate on the step's recorded screen)
  and whose run stopped for a person (``needs_user``) is a correct hand-over,
  listed apart; it counts as not completed in SR.

The package, by feature: :mod:`~bench.droidtask.scoring` (screens, actions, the
metrics), :mod:`~bench.droidtask.cases` (each task's ground truth on its replay
graph, its hand-over and search term), :mod:`~bench.droidtask.runs` (the rows and
one task's run), :mod:`~bench.droidtask.report` (the docs section and ``main``).
"""

from __future__ import annotations

from bench.droidtask.cases import DroidTaskCase, HandOver, load_cases
from bench.droidtask.report import PAPER, Figures, main, report
from bench.droidtask.runs import (
    ROWS,
    CopilotFactory,
    DroidTaskBench,
    RunSetup,
    TaskResult,
    run_row,
    run_task,
    scripted_navigator,
    skills_and_explorer,
    subtask_for,
)
from bench.droidtask.scoring import (
    Move,
    Shown,
    agent_moves,
    completion,
    matched_prefix,
    same_move,
    spl,
)

__all__ = [
    "PAPER",
    "ROWS",
    "CopilotFactory",
    "DroidTaskBench",
    "DroidTaskCase",
    "Figures",
    "HandOver",
    "Move",
    "RunSetup",
    "Shown",
    "TaskResult",
    "agent_moves",
    "completion",
    "load_cases",
    "main",
    "matched_prefix",
    "report",
    "run_row",
    "run_task",
    "same_move",
    "scripted_navigator",
    "skills_and_explorer",
    "spl",
    "subtask_for",
]
