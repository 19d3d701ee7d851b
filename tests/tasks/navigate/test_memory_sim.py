"""Route memory on the virtual phones: a remembered route replays up to the search, and the result
opened is the one for this question's term, never the earlier question's item."""

from __future__ import annotations

from core.config import BudgetSettings
from core.models import Capture, SubTaskResult, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from inference.memory import RouteMemory
from inference.perception import Perceiver
from storage import FakeObjectStore
from tasks.navigate import Copilot, NavigateRequest, ObjectStoreBlobs, navigate_subtask
from tests.tasks.navigate.conftest import Rig, subtask

JD = "com.jingdong.app.mall"


def _ask(rig: Rig, sid: str, term: str) -> SubTaskResult:
    task = subtask(sid, "JD", JD, f"What does the {term} cost on JD?", term)
    return navigate_subtask(rig.copilot, NavigateRequest(run_id=new_id("run"), subtask=task))


def _product(capture: Capture) -> str:
    """The product a details page is about: the first text naming the phone model."""
    return next(e.label for e in capture.elements if e.label.startswith("Xiaomi 14"))


def test_a_remembered_route_does_not_open_the_previous_questions_item(rig: Rig) -> None:
    first = _ask(rig, "jd-first", "Xiaomi 14 Ultra")
    assert first.status is SubTaskStatus.COMPLETED, first.reason
    assert "Ultra" in _product(first.captures[0])
    rig.sim.control.reset("boot")
    # The earlier question's item is on this search's results page too.
    second = _ask(rig, "jd-second", "Xiaomi 14")
    assert second.status is SubTaskStatus.COMPLETED, second.reason
    policies = [s.policy for s in second.trace.steps]
    assert "route_memory" in policies  # the route was replayed up to the search
    assert "Ultra" not in _product(second.captures[0]), _product(second.captures[0])


def test_a_route_whose_page_does_not_answer_the_new_question_is_not_replayed(rig: Rig) -> None:
    """Two questions about the JD cart, no search: the first opened the mouse in the cart; the
    second asks for the dearest item. The remembered route's target page (the mouse's page) shows
    nothing of what the second question asks beyond the first (which item costs the most), so the
    route is not recalled (issue 28: a route replays only where its page answers the question);
    the second question finds the cart by itself, and nothing another question chose is opened."""
    first = navigate_subtask(rig.copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask(
        "jd-mouse", "JD", JD, "In JD: What is the DPI of the mouse (G502) in my JD cart?", None)))
    assert first.status is SubTaskStatus.COMPLETED, first.reason
    assert any("G502" in e.label for c in first.captures for e in c.elements if e.label.startswith("罗技"))
    rig.sim.control.reset("boot")
    second = navigate_subtask(rig.copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask(
        "jd-dearest", "JD", JD, "In JD: Which item in my JD cart costs the most?", None)))
    assert second.status is SubTaskStatus.COMPLETED, second.reason
    assert "route_memory" not in [s.policy for s in second.trace.steps]
    opened = [str(s.action) for s in second.trace.steps if "G502" in str(s.action)]
    assert not opened, opened  # the mouse was the first question's item
    (cart,) = second.captures
    assert sum(1 for e in cart.elements if "x1" in e.label) >= 3, [e.label for e in cart.elements]  # the cart's list



def test_a_route_another_term_of_the_question_found_is_not_this_terms_target(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver) -> None:
    """One question, two terms, one app without search: the first term's notice was opened and
    remembered. For the second term, the replay of that route ends on a page the term is not on
    and the goal names no concept: before, it was captured as the target all the same; now the
    route is not trusted there and the second term's own notice is found."""
    server, driver = catalog_phone
    server.control.reset("boot")
    store = FakeObjectStore()
    copilot = Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                      memory=RouteMemory(ObjectStoreBlobs(store)))
    campus = "com.lantu.MobileCampus"
    question = "In Mobile Campus: 期末考试安排和奖学金评审结果是什么？"
    first = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask(
        "campus-exams", "Mobile Campus", campus, question, "期末考试安排")))
    assert first.status is SubTaskStatus.COMPLETED, first.reason
    assert any("期末考试安排" in e.label for c in first.captures for e in c.elements)
    server.control.reset("boot")
    second = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask(
        "campus-awards", "Mobile Campus", campus, question, "奖学金")))
    assert second.status is SubTaskStatus.COMPLETED, second.reason
    assert "route_memory" in [s.policy for s in second.trace.steps]
    texts = [e.label for c in second.captures for e in c.elements]
    assert any("奖学金" in t for t in texts), texts
    assert not any("期末考试安排" in t for t in texts), texts
