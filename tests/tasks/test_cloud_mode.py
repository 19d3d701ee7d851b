"""Cloud mode (``locality = "cloud"``): no personal data leaves for a model, in text or in pixels.

A virtual phone shows a profile page with an e-mail address, a phone number, a
street address and a card number (test data in ``tests/tasks/data``). Every
role is pointed at the recording server (a test double) as a cloud endpoint,
the navigator and evaluator with vision on at full resolution: the loop
navigates there, the question names the e-mail and the phone number, the
synthesizer reads the capture. Every request's text is searched, and every
image it carried is read back with OCR, for any of the four. A second app
(issue 31) puts personal data in the question as typed, in the label of the
entry the navigator taps and in text drawn only in pixels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import BudgetSettings, PerceptionSettings, Settings, load_settings
from core.models import (
    AppStatus,
    InstalledApp,
    PageMode,
    Query,
    Step,
    StepKind,
    SubTask,
    SubTaskStatus,
    new_id,
)
from device_farm.adb_driver import AdbDriver
from device_farm.sim import Catalog, SimServer, load_app
from droidretriever.testing import RecordingOpenAIServer, ServedModel
from inference.llm import LLMClient
from inference.perception import Perceiver
from inference.perception.image import decode_screenshot
from inference.perception.ocr import RapidOcrEngine
from storage import FakeObjectStore
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    navigate_subtask,
    navigator_answers,
    play_scripted_path,
)
from tasks.run_steps import plan_query
from tasks.synthesis import synthesize_report, writer_for

APP = load_app(Path(__file__).parent / "data" / "address_book.yaml")
PERSONAL = {"email": "jane.roe@example.org", "phone": "+1 415 555 0134", "address": "221 Baker Street",
            "card": "4111 1111 1111 1111"}
FULL_SIZE = 2_700_000  # pixels: the 1080x2340 screen is sent unscaled, so OCR reads it as a model would
GOAL = SubTask(id="profile", app_label=APP.label, package=APP.package, goal="Show my profile in Address Book",
               page_mode=PageMode.FOCUSED)


def cloud_models() -> list[ServedModel]:
    """The navigator's and evaluator's vision models (full resolution) and a text model."""
    return [*(ServedModel(name, vision=True, max_pixels=FULL_SIZE) for name in ("cloud-nav", "cloud-eval")),
            ServedModel("cloud-text")]


def cloud_settings(server: RecordingOpenAIServer) -> Settings:
    """Every role pointed at ``server`` as a cloud endpoint; the navigator and evaluator see screenshots."""
    cloud = {"base_url": server.base_url, "locality": "cloud", "timeout_s": 20}
    vl = {**cloud, "vision": True, "max_pixels": FULL_SIZE}
    return load_settings(llm={"navigator": {**vl, "model": "cloud-nav"}, "evaluator": {**vl, "model": "cloud-eval"},
                              "decomposer": {**cloud, "model": "cloud-text"},
                              "synthesizer": {**cloud, "model": "cloud-text"}})


def leaked(text: str) -> list[str]:
    """Which of the planted values ``text`` holds (digits compared without spaces)."""
    digits = re.sub(r"\D", "", text)
    return [kind for kind, value in PERSONAL.items()
            if value.lower() in text.lower() or (kind in ("phone", "card") and re.sub(r"\D", "", value) in digits)]


@pytest.fixture
def phone() -> Iterator[tuple[SimServer, AdbDriver]]:
    with SimServer(phones=1, port=0, seed=7, catalog=Catalog(apps={APP.package: APP})) as sim:
        driver = AdbDriver(sim.serials[0], port=sim.port)
        try:
            yield sim, driver
        finally:
            driver.close()


@pytest.mark.slow
def test_no_personal_data_reaches_a_cloud_model(phone: tuple[SimServer, AdbDriver]) -> None:
    sim, driver = phone
    perceiver = Perceiver(PerceptionSettings())  # OCR checks each screenshot's pixels before it is sent
    with RecordingOpenAIServer(cloud_models()) as server:
        settings = cloud_settings(server)
        # LLM1: the question itself names the e-mail address and the phone number.
        server.script("cloud-text", '{"mentioned_apps": ["Address Book"], "installed_related_apps": ["Address Book"], '
                      '"uninstalled_related_apps": [], "search terms": [], "search_mode": "focused", '
                      '"information_flow": []}')
        query = Query(text=f"Is {PERSONAL['email']} still the e-mail on my profile, and {PERSONAL['phone']} "
                           "my number?")
        plan = plan_query(settings, query, [InstalledApp(label=APP.label, package=APP.package)])
        assert plan.decomposer == "llm:cloud-text"
        # LLM2 and LLM3 on the phone: the navigator follows a person's path to the profile page,
        # the evaluator answers what the double builds from its schema.
        sim.control.reset("boot")
        moves = play_scripted_path(driver, perceiver, APP.package,
                                   [Step(kind=StepKind.OPEN_APP, text=APP.label),
                                    Step(kind=StepKind.TAP_TEXT, text="My profile")])
        navigator = settings.llm.navigator
        server.script("cloud-nav", *navigator_answers(moves, GOAL, navigator, perceiver.settings))
        store = FakeObjectStore()
        copilot = Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                          skills=False, explore=False, navigator=LLMClient(navigator, role="navigator"),
                          evaluator=LLMClient(settings.llm.evaluator, role="evaluator"))
        sim.control.reset("boot")
        result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=GOAL))
        assert result.status is SubTaskStatus.COMPLETED, result.reason
        (capture,) = result.captures
        assert all(v in " ".join(e.label for e in capture.elements) for v in PERSONAL.values())  # it is there
        # LLM4 reads the capture.
        report = synthesize_report(run_id="run-cloud", query=query, captures=[capture], store=store,
                                   apps=[AppStatus(app_label=APP.label, package=APP.package,
                                                   status=SubTaskStatus.COMPLETED)],
                                   threshold=0.8, writer=writer_for(settings))
        requests = list(server.requests)
    assert report.synthesizer == "llm:cloud-text"
    assert {r.model for r in requests} == {"cloud-nav", "cloud-eval", "cloud-text"} and server.problems == []
    for request in requests:
        assert leaked(str(request.body)) == [], request.body
    engine = RapidOcrEngine()
    images = [image for r in requests for image in r.images]
    assert len(images) >= 3  # the evaluator and the navigator on the app's screens
    read = ["\n".join(line.text for line in engine.read(decode_screenshot(image))) for image in images]
    assert any("My profile" in text for text in read)  # OCR reads what the model sees ...
    assert all(leaked(text) == [] for text in read), read  # ... and none of the personal data


CARDS = load_app(Path(__file__).parent / "data" / "contact_cards.yaml")
# Planted personal data, where it reaches the run: the question as typed, the label of the list
# entry the navigator taps (then in "Done so far:"), and text drawn only in a picture's pixels
# (one picture labelled, so perception never reads it; one unlabelled, read by perception's OCR).
PLANTED = {
    "question phone": "13800138000", "question e-mail": "me.chen@example.com",
    "question address": "742 Evergreen Terrace",
    "tapped label phone": "13912345678",
    "pixel-only phone": "(415)555-0132", "pixel-only e-mail": "li.na@example.net",
}
# Names are not a kind the redactor masks (docs/models.md says so): counted, never asserted.
NAME = "李娜"


def found_in(text: str) -> list[str]:
    """Which planted values ``text`` holds; phone numbers compared by their digits, per line."""
    lines = [re.sub(r"\D", "", line) for line in text.splitlines()]
    return [what for what, value in PLANTED.items()
            if value.lower() in text.lower()
            or ("phone" in what and any(re.sub(r"\D", "", value) in digits for digits in lines))]


@pytest.mark.slow
def test_the_question_history_and_pixel_only_text_never_reach_a_cloud_model() -> None:
    """Issue 31: every role cloud, OCR on; the planted values are in no request's text and in no
    sent image as OCR reads it (the name, not a redacted kind, is only counted)."""
    with (SimServer(phones=1, port=0, seed=7, catalog=Catalog(apps={CARDS.package: CARDS})) as sim,
          RecordingOpenAIServer(cloud_models()) as server):
        driver = AdbDriver(sim.serials[0], port=sim.port)
        perceiver = Perceiver(PerceptionSettings())  # OCR on (rapidocr), as deployed
        settings = cloud_settings(server)
        server.script("cloud-text", json.dumps({
            "mentioned_apps": [CARDS.label], "installed_related_apps": [], "uninstalled_related_apps": [],
            "search terms": [], "search_mode": "focused", "information_flow": []}))
        query = Query(text=f"My phone is {PLANTED['question phone']}, my e-mail is {PLANTED['question e-mail']} "
                           f"and I live at {PLANTED['question address']}: what is {NAME}'s office number?")
        plan = plan_query(settings, query, [InstalledApp(label=CARDS.label, package=CARDS.package)])
        (task,) = plan.subtasks
        assert PLANTED["question phone"] in task.goal  # the goal carries the question as typed
        moves = play_scripted_path(driver, perceiver, CARDS.package,
                                   [Step(kind=StepKind.OPEN_APP, text=CARDS.label),
                                    Step(kind=StepKind.TAP_TEXT, text=NAME)])
        server.script("cloud-nav", *navigator_answers(moves, task, settings.llm.navigator, perceiver.settings))
        store = FakeObjectStore()
        copilot = Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                          skills=False, explore=False,
                          navigator=LLMClient(settings.llm.navigator, role="navigator"),
                          evaluator=LLMClient(settings.llm.evaluator, role="evaluator"))
        sim.control.reset("boot")
        result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=task))
        driver.close()
        assert result.status is SubTaskStatus.COMPLETED, result.reason
        report = synthesize_report(run_id="run-cards", query=query, captures=list(result.captures), store=store,
                                   apps=[AppStatus(app_label=CARDS.label, package=CARDS.package,
                                                   status=SubTaskStatus.COMPLETED)],
                                   threshold=0.8, writer=writer_for(settings))
        requests = list(server.requests)
    assert report.synthesizer == "llm:cloud-text" and server.problems == []
    assert {r.model for r in requests} == {"cloud-nav", "cloud-eval", "cloud-text"}
    engine = RapidOcrEngine()
    images = [image for r in requests for image in r.images]
    assert len(images) >= 3
    read = ["\n".join(line.text for line in engine.read(decode_screenshot(image))) for image in images]
    assert any("Last call" in text for text in read)  # OCR reads what the model sees of the contact page
    in_text = [what for r in requests for what in found_in(r.text)]
    in_pixels = [what for text in read for what in found_in(text)]
    names = sum(NAME in r.text for r in requests) + sum(NAME in text for text in read)
    counts = f"{len(requests)} requests, {len(images)} images: text {in_text}, pixels {in_pixels}, name {names}x"
    print(counts)
    assert in_text == [] and in_pixels == [], counts
    # The tapped entry is in "Done so far:", its number masked.
    assert any(f"Tap [{NAME} | [phone]]" in r.text for r in requests if "Done so far:\n" in r.text)
