"""Driving apps through adbutils: taps, scrolling, text input, back, login gates, search."""

from __future__ import annotations

import adbutils

from tests.device_farm.sim.conftest import bounds, find, nodes, open_app, tap_node


def test_tap_list_item_opens_details_and_back_returns(device: adbutils.AdbDevice) -> None:
    open_app(device, "com.android.settings")
    tap_node(device, find(device, text="Apps") or {})
    assert device.app_current().activity.endswith("ManageApplications")
    tap_node(device, find(device, text="Meituan", rid="app_name") or {})
    assert find(device, text="Meituan", rid="app_label") is not None
    assert find(device, text="App info") is not None
    tap_node(device, find(device, text="Permissions") or {})
    texts = [n["text"] for n in nodes(device)]
    assert {"Location", "Camera", "Phone"} <= set(texts)
    assert "Allowed only while in use" in texts
    device.keyevent("BACK")
    device.keyevent("BACK")
    assert find(device, text="All apps") is not None


def test_swipe_scrolls_by_the_finger_distance_and_stops_at_the_end(device: adbutils.AdbDevice) -> None:
    open_app(device, "com.sankuai.meituan")
    before = {n["text"]: bounds(n) for n in nodes(device) if n["resource-id"].endswith("store_name")}
    device.swipe(540, 1700, 540, 700, 0.5)
    after = {n["text"]: bounds(n) for n in nodes(device) if n["resource-id"].endswith("store_name")}
    whole = [t for t in before if t in after and before[t][3] - before[t][1] == after[t][3] - after[t][1]]
    moved = [before[t][1] - after[t][1] for t in whole]  # nodes not clipped by the viewport
    assert moved, "some store stays on screen after a 1000 px swipe"
    assert all(m == 1000 - 22 for m in moved)  # finger distance minus the 8 dp touch slop
    for _ in range(20):
        device.swipe(540, 1900, 540, 500, 0.1)  # flings, far past the end
    at_end = [(n["text"], n["bounds"]) for n in nodes(device) if n["resource-id"].endswith("store_name")]
    assert at_end[-1][0] not in before  # only reachable by scrolling
    device.swipe(540, 1900, 540, 500, 0.1)
    assert [(n["text"], n["bounds"]) for n in nodes(device) if n["resource-id"].endswith("store_name")] == at_end
    scroll = next(n for n in nodes(device) if n["resource-id"].endswith("scroll_view"))
    assert scroll["scrollable"] == "true"


def test_input_text_lands_in_focused_field_and_enter_searches(device: adbutils.AdbDevice) -> None:
    open_app(device, "com.mcdonalds.gma.cn")
    tap_node(device, find(device, rid="search_box") or {})
    box = find(device, rid="search_box") or {}
    assert box["focused"] == "true"
    device.shell(["input", "text", "big%smac"])
    assert (find(device, rid="search_box") or {})["text"] == "big mac"
    device.keyevent("ENTER")
    names = [n["text"] for n in nodes(device) if n["resource-id"].endswith("item_name")]
    assert names[:2] == ["Big Mac", "Big Mac Meal"]
    assert find(device, text="Results for big mac") is not None


def test_cjk_input_and_fuzzy_search(device: adbutils.AdbDevice) -> None:
    open_app(device, "com.sankuai.meituan")
    tap_node(device, find(device, rid="search_edit") or {})
    device.shell(["am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "巨无霸"])
    assert (find(device, rid="search_edit") or {})["text"] == "巨无霸"
    device.keyevent("ENTER")
    stores = [n["text"] for n in nodes(device) if n["resource-id"].endswith("store_name")]
    assert stores and all(s.startswith("麦当劳") for s in stores)


def test_login_gated_page_shows_login_then_continues(device: adbutils.AdbDevice) -> None:
    open_app(device, "com.mcdonalds.gma.cn")
    tap_node(device, find(device, text="Orders") or {})
    assert find(device, text="Log in", rid="login_button") is not None
    assert device.app_current().activity.endswith("LoginActivity")
    tap_node(device, find(device, rid="login_button") or {})
    assert find(device, text="Big Mac Meal x1") is not None
    device.app_stop("com.mcdonalds.gma.cn")
    open_app(device, "com.mcdonalds.gma.cn")
    tap_node(device, find(device, text="Orders") or {})
    assert find(device, text="Big Mac Meal x1") is not None  # stays logged in on this phone


def test_launcher_lists_apps_and_opens_them(device: adbutils.AdbDevice) -> None:
    device.keyevent("HOME")
    icon = find(device, text="Meituan")
    assert icon is not None and icon["package"] == "com.android.launcher3"
    tap_node(device, icon)
    assert device.app_current().package == "com.sankuai.meituan"


def test_notification_shade_and_keyboard_back(device: adbutils.AdbDevice) -> None:
    open_app(device, "com.mcdonalds.gma.cn")
    tap_node(device, find(device, rid="search_box") or {})
    device.keyevent("BACK")  # hides the keyboard first
    assert (find(device, rid="search_box") or {})["focused"] == "false"
    assert device.app_current().package == "com.mcdonalds.gma.cn"
    device.swipe(540, 10, 540, 1200, 0.3)
    assert device.app_current().package == "com.android.systemui"
    device.keyevent("BACK")
    assert device.app_current().package == "com.mcdonalds.gma.cn"
