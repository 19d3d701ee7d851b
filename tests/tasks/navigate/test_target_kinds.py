"""Target pages recognised by their kind, not the question's literal words, on the virtual phones."""

from __future__ import annotations

from droidretriever.models import InstalledApp, Query, SubTaskStatus, new_id
from inference.rules import find_goal_concepts
from inference.rules.decomposer import decompose_by_rules
from tasks.navigate import NavigateRequest, navigate_subtask
from tests.tasks.navigate.conftest import Rig

AMAP = InstalledApp(package="com.autonavi.minimap", label="Amap")


def test_a_route_page_is_the_target_of_a_travel_time_question(rig: Rig) -> None:
    # An English question, a Chinese app: the place's name cannot be read on the route page,
    # whose list title ("驾车方案") names what the question asks for.
    plan = decompose_by_rules(Query(text="How long is the drive to Shanghai with Amap?"), [AMAP])
    (task,) = plan.subtasks
    assert task.search_term == "Shanghai"
    result = navigate_subtask(rig.copilot, NavigateRequest(run_id=new_id("run"), subtask=task))
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    texts = " ".join(e.label for e in result.captures[0].elements)
    assert "驾车方案" in texts and "小时" in texts  # the plans with their driving times
    assert not any(s.action is not None and s.action.kind == "back" for s in result.trace.steps)


def test_the_plans_own_goal_wording_names_no_concept() -> None:
    plan = decompose_by_rules(Query(text="How long is the drive to Shanghai with Amap?"), [AMAP])
    goal = find_goal_concepts(plan.subtasks[0].goal, "Shanghai", "Amap")
    assert set(goal.targets) == {"route"}
