"""Issue 15's failure kinds on the virtual phones, one test each (no model).

Questions nobody tuned the rules for met screens the rules misread: a sign-in
wall without a password field (typed into), a home page linking to a top-up
page (paused as "a payment screen"), typed text left in a field from an earlier
run (read back as a button label), a remembered route opening the previous
question's item, a route page rejected as the target of a travel-time question.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.config import BudgetSettings
from core.models import Input, PageMode, SubTask, SubTaskResult, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.models import Key
from device_farm.sim import SimServer, load_catalog
from inference.memory import RouteMemory
from inference.perception import Observation, Perceiver
from inference.policies import is_dialog_open
from inference.rules import find_risk
from storage import FakeObjectStore
from tasks.navigate import Copilot, NavigateRequest, ObjectStoreBlobs, navigate_subtask

CATALOG = load_catalog()
UBER_EATS = "com.ubercab.eats"
CHINA_MOBILE = "com.greenpoint.android.mc10086.activity"


def package_of(label: str) -> str:
    spec = CATALOG.find_label(label)
    assert spec is not None, label
    return spec.package


@pytest.fixture(scope="module")
def phone(perceiver: Perceiver) -> Iterator[tuple[SimServer, Copilot]]:
    with SimServer(phones=1, port=0, seed=7, catalog=CATALOG) as server:
        driver = AdbDriver(server.serials[0], port=server.port)
        store = FakeObjectStore()
        copilot = Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                          memory=RouteMemory(ObjectStoreBlobs(store)))
        try:
            yield server, copilot
        finally:
            driver.close()


def ask(copilot: Copilot, label: str, goal: str, term: str | None,
        mode: PageMode = PageMode.FOCUSED) -> SubTaskResult:
    task = SubTask(id=f"{label.lower().replace(' ', '-')}-1", app_label=label, package=package_of(label),
                   goal=goal, search_term=term, page_mode=mode)
    return navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=task))


def typed(result: SubTaskResult) -> list[str]:
    return [s.action.text for s in result.trace.steps if isinstance(s.action, Input)]


def test_a_sign_in_wall_by_phone_or_email_pauses_and_is_never_typed_into(
        phone: tuple[SimServer, Copilot]) -> None:
    server, copilot = phone
    server.control.reset("boot")
    server.control.set_logged_in(server.serials[0], UBER_EATS, False)
    result = ask(copilot, "Uber Eats", 'In Uber Eats, search for "boba": boba tea for pickup?', "boba")
    assert result.status is SubTaskStatus.NEEDS_USER, result.reason
    assert "sign-in" in result.reason
    assert typed(result) == []  # the search term never went into the phone-or-email field


def test_a_home_page_linking_to_a_top_up_page_is_not_a_payment_screen(
        phone: tuple[SimServer, Copilot]) -> None:
    server, copilot = phone
    server.control.reset("boot")
    copilot.driver.open_app(CHINA_MOBILE)
    home = copilot.perceiver.perceive(_observation(copilot)).screen
    if is_dialog_open(home):  # the app's pop-up, by chance
        copilot.driver.key(Key.BACK)
        home = copilot.perceiver.perceive(_observation(copilot)).screen
    assert any(e.label == "充值" and e.clickable for e in home.elements)
    assert find_risk(home) is None
    # The top-up page itself, whose purpose is paying, still pauses.
    recharge = next(e for e in home.elements if e.label == "充值")
    copilot.driver.tap(recharge.bounds.center)
    finding = find_risk(copilot.perceiver.perceive(_observation(copilot)).screen)
    assert finding is not None and finding.category.value == "payment"
    server.control.reset("boot")
    result = ask(copilot, "China Mobile", "What is my phone balance on China Mobile?", None)
    assert result.status is not SubTaskStatus.NEEDS_USER, result.reason
    assert not any(s.evaluation is not None and s.evaluation.risk for s in result.trace.steps)


def _observation(copilot: Copilot) -> Observation:
    raw = copilot.driver.observe()
    return Observation(serial=raw.serial, step=1, package=raw.package, activity=raw.activity, width=raw.width,
                       height=raw.height, screenshot_png=raw.screenshot_png, hierarchy_xml=raw.hierarchy_xml)
