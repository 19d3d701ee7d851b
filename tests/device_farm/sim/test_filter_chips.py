"""Filter chips (``action: select``): a tapped chip shows as selected, in the dump and in the pixels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import adbutils
import numpy as np
import pytest

from device_farm.sim import AppSpecError, Catalog, SimServer, load_app
from tests.device_farm.sim.conftest import bounds, find, open_app, tap_node

PACKAGE = "com.example.chips"
CHIPS_APP = """\
package: com.example.chips
label: Chips
home: home
screens:
  home:
    title: Library
    back_button: false
    body:
      - type: row
        children:
          - {type: button, id: chip_playlists, text: Playlists, action: select}
          - {type: button, id: chip_artists, text: Artists, action: select}
      - {type: button, id: plain, text: Refresh, action: toast, toast: Refreshed}
      - type: list
        source: items
        item: {type: card, children: [{type: text, text: "{name}"}]}
data:
  items:
    - {id: a, name: Chill Study Beats}
"""
ACCENT = np.array([25, 118, 210])


@pytest.fixture(scope="module")
def chips_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimServer]:
    path: Path = tmp_path_factory.mktemp("apps") / "chips.yaml"
    path.write_text(CHIPS_APP, encoding="utf-8")
    app = load_app(path)
    with SimServer(phones=1, port=0, seed=7, catalog=Catalog(apps={app.package: app})) as server:
        yield server


@pytest.fixture()
def phone(chips_sim: SimServer) -> adbutils.AdbDevice:
    chips_sim.control.reset("boot")
    device = adbutils.AdbClient("127.0.0.1", chips_sim.port).device(chips_sim.serials[0])
    open_app(device, PACKAGE)
    return device


def _selected(d: adbutils.AdbDevice) -> dict[str, bool]:
    chips = {}
    for text in ("Playlists", "Artists", "Refresh"):
        node = find(d, text=text)
        assert node is not None, f"{text} is not on screen"
        chips[text] = node["selected"] == "true"
    return chips


def _accent_share(d: adbutils.AdbDevice, text: str) -> float:
    """The share of the chip's pixels painted in the accent colour (a selected chip is filled)."""
    node = find(d, text=text)
    assert node is not None
    left, top, right, bottom = bounds(node)
    shot = np.asarray(d.screenshot().convert("RGB"))[top:bottom, left:right]
    return float((np.abs(shot.astype(int) - ACCENT).sum(axis=2) < 30).mean())


def test_a_tapped_chip_is_selected_and_the_other_chips_of_its_row_are_not(phone: adbutils.AdbDevice) -> None:
    assert _selected(phone) == {"Playlists": False, "Artists": False, "Refresh": False}
    assert _accent_share(phone, "Playlists") < 0.1

    node = find(phone, text="Playlists")
    assert node is not None
    tap_node(phone, node)
    assert _selected(phone) == {"Playlists": True, "Artists": False, "Refresh": False}
    assert _accent_share(phone, "Playlists") > 0.5
    assert _accent_share(phone, "Artists") < 0.1

    node = find(phone, text="Artists")
    assert node is not None
    tap_node(phone, node)
    assert _selected(phone) == {"Playlists": False, "Artists": True, "Refresh": False}


def test_a_second_tap_unselects_the_chip(phone: adbutils.AdbDevice) -> None:
    for _ in range(2):
        node = find(phone, text="Playlists")
        assert node is not None
        tap_node(phone, node)
    assert _selected(phone)["Playlists"] is False


def test_select_belongs_to_buttons(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CHIPS_APP.replace("{type: text, text: \"{name}\"}",
                                      "{type: text, text: \"{name}\", action: select}"), encoding="utf-8")
    with pytest.raises(AppSpecError, match="select"):
        load_app(path)
