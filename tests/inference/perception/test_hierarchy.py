"""Hierarchy parser on real dumps: widgets found, ids stable, bad dumps explained."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.models import Bounds
from inference.errors import HierarchyError
from inference.perception import (
    DroidbotState,
    convert_droidbot_state,
    observe_droidbot_state,
    parse_hierarchy,
)

_DUMP = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2160]">
 <node index="0" text="" resource-id="com.x:id/row" class="android.widget.LinearLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,200][1080,400]">
  <node index="0" text="Big Mac" resource-id="com.x:id/title" class="android.widget.TextView" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[20,210][600,290]" />
  <node index="1" text="$5.99" resource-id="com.x:id/price" class="android.widget.TextView" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[20,300][300,390]" />
 </node>
 <node index="1" text="hunter2" resource-id="com.x:id/pw" class="android.widget.EditText" package="com.x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" scrollable="false" long-clickable="false" password="true" selected="false" bounds="[0,500][1080,600]" />
</node>
</hierarchy>
UI hierchary dumped to: /dev/tty"""


def _parse(state: DroidbotState) -> tuple[str, ...]:
    parsed = parse_hierarchy(convert_droidbot_state(state), width=state.width, height=state.height)
    return tuple(e.id for e in parsed.elements)


def test_every_visible_widget_text_is_in_some_element(sample_states: list[DroidbotState]) -> None:
    checked = 0
    for state in sample_states:
        parsed = parse_hierarchy(
            convert_droidbot_state(state), width=state.width, height=state.height
        )
        screen = Bounds(left=0, top=0, right=state.width, bottom=state.height)
        for view in state.visible_views():
            text = (view.text or "").strip()
            box = view.box
            if not text or view.is_password or screen.intersection(box) < box.area or box.area == 0:
                continue
            center = box.center
            owners = [
                e for e in parsed.elements
                if text in e.text.split(" | ") and e.bounds.contains(center)
            ]
            assert owners, f"{state.tag}: widget {text!r} at {box} is missing from the parse"
            checked += 1
    assert checked > 200  # the sample really exercises the parser


def test_every_clickable_visible_widget_becomes_an_element(sample_states: list[DroidbotState]) -> None:
    for state in sample_states:
        parsed = parse_hierarchy(
            convert_droidbot_state(state), width=state.width, height=state.height
        )
        clickable_boxes = {e.bounds for e in parsed.elements if e.clickable}
        for view in state.visible_views():
            if view.clickable and view.box.area > 0 and view.box.right <= state.width:
                clipped = view.box
                if clipped.bottom <= state.height:
                    assert clipped in clickable_boxes, f"{state.tag}: clickable {clipped} lost"


def test_ids_are_identical_across_reparse(sample_states: list[DroidbotState]) -> None:
    for state in sample_states:
        first, second = _parse(state), _parse(state)
        assert first == second
        assert len(set(first)) == len(first), "ids must be unique on a screen"


def test_ids_survive_an_unrelated_node_appearing() -> None:
    before = parse_hierarchy(_DUMP, width=1080, height=2160)
    banner = (
        '<node index="0" text="Ad" resource-id="com.x:id/ad" class="android.widget.ImageView" '
        'package="com.x" content-desc="" clickable="true" bounds="[0,0][1080,100]" />'
    )
    marker = 'bounds="[0,0][1080,2160]">'
    after = parse_hierarchy(_DUMP.replace(marker, marker + banner, 1), width=1080, height=2160)
    before_ids = {e.text or e.resource_id: e.id for e in before.elements}
    after_ids = {e.text or e.resource_id: e.id for e in after.elements}
    for key, element_id in before_ids.items():
        assert after_ids[key] == element_id
    assert len(after.elements) == len(before.elements) + 1


def test_text_children_merge_into_clickable_row_and_password_is_blank() -> None:
    parsed = parse_hierarchy(_DUMP, width=1080, height=2160, where="device s1, step 4")
    row = next(e for e in parsed.elements if e.resource_id == "com.x:id/row")
    assert row.text == "Big Mac | $5.99"
    assert not any(e.resource_id == "com.x:id/title" for e in parsed.elements)
    password = next(e for e in parsed.elements if e.password)
    assert password.text == "" and password.editable
    unmerged = parse_hierarchy(_DUMP, width=1080, height=2160, merge_text=False)
    assert {e.text for e in unmerged.elements} >= {"Big Mac", "$5.99"}
    # the kept tree knows each element's ancestors (for layout blocks)
    assert len(parsed.tree.ancestors[row.id]) == 1


@pytest.mark.parametrize(
    ("xml", "words"),
    [
        ("<hierarchy><node bounds='[0,0][10,10]'>", "malformed XML"),
        ("", "empty"),
        ("<hierarchy><node bounds='0,0,10,10'/></hierarchy>", "unreadable bounds"),
        ("<html><body/></html>", "<html>"),
    ],
)
def test_bad_dumps_raise_errors_naming_device_and_step(xml: str, words: str) -> None:
    with pytest.raises(HierarchyError) as info:
        parse_hierarchy(xml, width=1080, height=2160, where="device emulator-5554, step 7")
    message = str(info.value)
    assert "device emulator-5554, step 7" in message and words in message
    assert info.value.hint


def test_droidbot_conversion_keeps_only_visible_views(sample_paths: list[Path]) -> None:
    from lxml import etree

    from inference.perception import load_droidbot_state

    state = load_droidbot_state(sample_paths[3])
    observation = observe_droidbot_state(sample_paths[3], serial="replay-1", step=2)
    root = etree.fromstring(observation.hierarchy_xml.encode())
    nodes = root.findall(".//node")
    assert len(nodes) == len(state.visible_views())
    assert list(nodes[0].attrib)[:4] == ["index", "text", "resource-id", "class"]
    assert observation.package == state.package and observation.screenshot_png[:2] == b"\xff\xd8"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Verification code", True),  # an empty field's hint names the field
        ("支付密码", True),
        ("hunter2", False),  # a typed value never survives
        ("••••••", False),
        ("password123", False),
        ("opensesame", False),
    ],
)
def test_password_field_keeps_only_its_hint(text: str, kept: bool) -> None:
    dump = _DUMP.replace('text="hunter2"', f'text="{text}"')
    parsed = parse_hierarchy(dump, width=1080, height=2160)
    field = next(e for e in parsed.elements if e.password)
    assert field.text == (text if kept else "")
