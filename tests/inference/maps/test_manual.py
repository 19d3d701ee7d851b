"""The app map as the navigator's manual: what matters first, within a budget, redacted for the cloud."""

from __future__ import annotations

from core.config import LLMEndpoint, PerceptionSettings
from core.models import PageMode, SubTask
from droidretriever.testing import OpenAIStub
from inference.llm import LLMClient
from inference.maps import MapGuide, render_manual
from inference.perception.tokens import count_tokens
from inference.policies import LLMNavigatorPolicy, PolicyContext
from tests.inference.maps.maps import settings_map
from tests.inference.screens import button, perceived, screen_of


def _guide(goal: str) -> MapGuide:
    subtask = SubTask(id="s1", app_label="Settings", package="com.example.settings", goal=goal,
                      page_mode=PageMode.FOCUSED)
    return MapGuide(settings_map(), subtask, ignore=("Settings",))


def test_the_manual_names_the_targets_and_the_route_first() -> None:
    manual = render_manual(_guide("What is the Android version of my phone?"))
    lines = manual.splitlines()
    assert "'About phone'" in lines[1]  # the target
    assert lines[2].startswith("Route from the first page") and "tap 'About phone'" in lines[2]
    assert "A person must act on: '支付' (payment)" in manual  # the wall
    assert "shows '76% - about 14 hr left'" in manual  # what a tap showed in place


def test_the_manual_stays_within_its_token_budget() -> None:
    guide = _guide("What is the Android version of my phone?")
    assert count_tokens(render_manual(guide, budget=120)) <= 120
    assert len(render_manual(guide, budget=2000)) > len(render_manual(guide, budget=120))


def test_a_cloud_navigator_reads_the_manual_redacted() -> None:
    app_map = settings_map()
    about = app_map.screens["about"].model_copy(update={"texts": ("Owner", "13912345678", "Android version")})
    guide = MapGuide(app_map.model_copy(update={"screens": {**app_map.screens, "about": about}}),
                     SubTask(id="s1", app_label="Settings", package="com.example.settings",
                             goal="What is the Android version?", page_mode=PageMode.FOCUSED))
    manual = render_manual(guide, budget=2000)
    assert "13912345678" in manual
    screen = screen_of(button("b1", "About phone", 300), package="com.example.settings")
    with OpenAIStub() as stub:
        stub.enqueue("{}")
        endpoint = LLMEndpoint(base_url=stub.base_url, model="nav-stub", locality="cloud")
        policy = LLMNavigatorPolicy(LLMClient(endpoint, role="navigator"), perception=PerceptionSettings(),
                                    help_document=manual)
        policy.decide(PolicyContext(subtask=guide.subtask, perception=perceived(screen),
                                    page_type="settings", step=1))
    sent = str(stub.requests[0])
    assert "App manual of Settings" in sent and "13912345678" not in sent
