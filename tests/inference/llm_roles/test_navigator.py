"""LLM2 against the stub: element ids are checked, actions typed, previews worded."""

from __future__ import annotations

import json

import pytest

from core.config import LLMEndpoint
from core.models import (
    Action,
    Back,
    Finish,
    Input,
    OpenApp,
    Point,
    Scroll,
    ScrollDirection,
    Swipe,
    Tap,
)
from droidretriever.testing import OpenAIStub
from inference.errors import LLMOutputError
from inference.llm import LLMClient, LLMReply
from inference.llm_roles.navigator import ShowMore, choose_action, describe_action
from inference.prompts import prompt_version
from tests.inference.screens import element, screen_of

SCREEN = screen_of(
    element("e1", "", top=150, class_name="android.widget.EditText", resource_id="app:id/search", editable=True),
    element("e2", "Texas", top=400, clickable=True),
    element("e3", "", top=600, class_name="android.widget.EditText", editable=True, password=True),
)


def run(
    *answers: dict[str, object], help_document: str | None = None
) -> tuple[LLMReply[Action | ShowMore], OpenAIStub]:
    with OpenAIStub() as stub:
        stub.enqueue(*(json.dumps(a) for a in answers))
        client = LLMClient(LLMEndpoint(base_url=stub.base_url, model="nav"), role="navigator")
        reply = choose_action(
            client, goal="find Texas", screen=SCREEN, description="e1 search\ne2 Texas",
            previous_actions=["Open app [com.example.app]"], help_document=help_document,
        )
    return reply, stub


def test_tap_on_a_known_element() -> None:
    reply, stub = run({"reason": "Texas is the target", "action": "Tap", "element_id": "e2"},
                      help_document="Cities are listed on the home page.")
    assert reply.value == Tap(target="e2", reason="Texas is the target")
    assert reply.prompt_version == prompt_version("navigator") and not reply.repaired
    assert "Cities are listed on the home page." in stub.requests[0]["messages"][1]["content"]


def test_unknown_element_id_gets_one_repair_round_listing_real_ids() -> None:
    reply, stub = run(
        {"reason": "r", "action": "tap", "element_id": "e99"},
        {"reason": "r", "action": "input", "element_id": "e1", "text": "Texas", "submit": True},
    )
    assert reply.value == Input(text="Texas", target="e1", submit=True, reason="r") and reply.repaired
    repair = stub.requests[1]["messages"][-1]["content"]
    assert "'e99' is not on the screen" in repair and "e1, e2, e3" in repair


def test_typing_into_a_password_field_is_refused() -> None:
    with pytest.raises(LLMOutputError, match="password field"):
        run({"reason": "log in", "action": "input", "element_id": "e3", "text": "hunter2"},
            {"reason": "log in", "action": "input", "element_id": "e3", "text": "hunter2"})


def test_more_is_an_answer_only_where_blocks_were_left_out() -> None:
    """CORE's accumulation: "more" on a cut screen; on a whole one it is repaired like a wrong id."""
    with OpenAIStub() as stub:
        stub.enqueue(*(json.dumps(a) for a in (
            {"reason": "the list is not among the blocks", "action": "more"},
            {"reason": "r", "action": "more"}, {"reason": "r", "action": "back"})))
        client = LLMClient(LLMEndpoint(base_url=stub.base_url, model="nav"), role="navigator")
        cut = choose_action(client, goal="find Texas", screen=SCREEN, description="e1 search", partial=True)
        whole = choose_action(client, goal="find Texas", screen=SCREEN, description="e1 search\ne2 Texas")
    assert cut.value == ShowMore(reason="the list is not among the blocks") and not cut.repaired
    assert whole.value == Back(reason="r") and whole.repaired
    assert "the whole screen is shown, there is no more" in stub.requests[2]["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"reason": "", "action": "scroll", "direction": "Down"}, Scroll(direction=ScrollDirection.DOWN)),
        ({"reason": "", "action": "back"}, Back()),
        ({"reason": "", "action": "open app", "package": "me.ele"}, OpenApp(package="me.ele")),
        ({"action": "finish", "reason": "details shown"}, Finish(reason="details shown")),
        ({"reason": "", "action": "swipe", "direction": "left"},
         Swipe(start=Point(x=756, y=1170), end=Point(x=324, y=1170))),
    ],
)
def test_every_action_kind_maps_to_the_typed_action(answer: dict[str, object], expected: object) -> None:
    reply, _ = run(answer)
    assert reply.value == expected


def test_preview_instructions_name_the_element() -> None:
    assert describe_action(Tap(target="e2"), SCREEN) == "Tap [Texas]"
    assert describe_action(Input(text="McDonald", target="e1"), SCREEN) == "Enter [McDonald] in [search]"
    assert describe_action(Tap(point=Point(x=5, y=6))) == "Tap (5, 6)"
    assert describe_action(Back()) == "Press Back"
