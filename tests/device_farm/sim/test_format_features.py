"""The app-format features asked for by the catalog engineers, driven as a driver would.

Date arithmetic in templates and a list filter by date, tabs that keep the
page's record, nested daily variation, YAML-trap errors that say "quote it",
glyph fallback for characters the CJK font lacks, and the one-call
``uiautomator dump /dev/tty``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import adbutils
import pytest
from PIL import Image, ImageDraw

from device_farm.sim import APPS_DIR, AppSpecError, Catalog, SimServer, load_app
from device_farm.sim.fonts import draw_text, font_for, glyph_font, iter_runs, measure
from device_farm.sim.spec import Record, Variation
from device_farm.sim.template import Scope, apply_variation, expand_template
from tests.device_farm.sim.conftest import find, nodes, open_app, tap_node

DEMO_PACKAGE = "com.example.features"
# Day 0 of the simulated clock is Monday 2025-06-23.
DEMO_APP = """\
package: com.example.features
label: Features
home: home
screens:
  home:
    title: "Events {today:%m-%d}"
    back_button: false
    body:
      - {type: text, id: day_after, text: "后天 {today+2:%m月%d日}"}
      - type: list
        id: events
        source: events
        date: today+2
        empty: No events
        item: {type: card, go: event, children: [{type: text, id: event_name, text: "{name}"}]}
  event:
    title: "{name}"
    body:
      - type: tabs
        id: event_tabs
        tabs: [{text: Overview, go: event}, {text: Route, go: event_route}]
      - {type: text, id: overview, text: "{name} ⇀ overview"}
  event_route:
    title: "{name}"
    body:
      - type: tabs
        id: event_tabs
        tabs: [{text: Overview, go: event}, {text: Route, go: event_route}]
      - {type: text, id: route_title, text: "Route to {name}"}
      - type: list
        source: record.routes
        item: {type: text, id: route_minutes, text: "{plan}: {minutes} min"}
data:
  events:
    - {id: e1, name: Jazz night, date: "2025-06-25", routes: [{plan: Metro, minutes: 30}, {plan: Taxi, minutes: 18}]}
    - {id: e2, name: Book fair, date: 2}
    - {id: e3, name: Daily market, date: today+2}
    - {id: e4, name: Old talk, date: "2025-06-22"}
variation:
  - {source: events, field: routes.minutes, spread: 0.2, step: 1}
"""


@pytest.fixture(scope="module")
def demo_app_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("apps") / "features.yaml"
    path.write_text(DEMO_APP, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def features_sim(demo_app_path: Path) -> Iterator[SimServer]:
    apps = [load_app(demo_app_path), *(load_app(APPS_DIR / f"{n}.yaml") for n in ("maoyan", "taopiaopiao"))]
    with SimServer(phones=1, port=0, seed=7, catalog=Catalog(apps={a.package: a for a in apps})) as server:
        yield server


@pytest.fixture()
def phone(features_sim: SimServer) -> adbutils.AdbDevice:
    features_sim.control.reset("boot")
    return adbutils.AdbClient("127.0.0.1", features_sim.port).device(features_sim.serials[0])


def _texts(d: adbutils.AdbDevice) -> set[str]:
    return {n["text"] for n in nodes(d) if n["text"]}


def _tap_text(d: adbutils.AdbDevice, text: str) -> None:
    node = find(d, text=text)
    assert node is not None, f"{text!r} is not on screen: {sorted(_texts(d))}"
    tap_node(d, node)


# ---------------------------------------------------------------- 1. dates


def test_templates_do_date_arithmetic_on_the_simulated_day() -> None:
    scope = Scope(today=date(2025, 6, 30))
    assert expand_template("{today:%m月%d日}", scope) == "06月30日"
    assert expand_template("{today+2:%m-%d}", scope) == "07-02"
    assert expand_template("{today-1:%Y-%m-%d}", scope) == "2025-06-29"
    assert expand_template("{today}", scope) == "2025-06-30"  # as before: ISO date
    assert expand_template("{today+1:weekday} {{today}}", scope) == "Tue {today}"


def test_list_date_filter_and_titles_follow_the_clock(features_sim: SimServer, phone: adbutils.AdbDevice) -> None:
    open_app(phone, DEMO_PACKAGE)
    texts = _texts(phone)
    assert {"Events 06-23", "后天 06月25日"} <= texts
    # an ISO date, a day number (2) and a relative "today+2" all fall on the day after tomorrow
    assert {"Jazz night", "Book fair", "Daily market"} <= texts
    assert "Old talk" not in texts
    features_sim.control.set_day(1)
    texts = _texts(phone)
    assert {"Events 06-24", "后天 06月26日", "Daily market"} <= texts
    assert not {"Jazz night", "Book fair"} & texts


@pytest.mark.parametrize(("package", "buy"), [("com.sankuai.movie", "特惠购票"),
                                              ("com.taobao.movie.android", "选座购票")])
def test_showtime_tabs_show_the_real_date_and_the_movie(
    features_sim: SimServer, phone: adbutils.AdbDevice, package: str, buy: str
) -> None:
    features_sim.control.set_day(3)  # Thursday 06-26: the day after tomorrow is 06-28
    open_app(phone, package)
    _tap_text(phone, "F1：狂飙飞车")
    _tap_text(phone, buy)
    assert "今天 06月26日" in _texts(phone)
    _tap_text(phone, "后天")
    title = find(phone, rid=f"{package}:id/toolbar")
    texts = _texts(phone)
    assert "后天 06月28日" in texts
    assert title is not None and "F1：狂飙飞车" in texts  # the tab kept the movie as its record
    selected = [n["text"] for n in nodes(phone) if n["selected"] == "true"]
    assert selected == ["后天"]


# ---------------------------------------------------------------- 2. tabs keep the record


def test_every_tab_shows_the_record_it_was_opened_with(phone: adbutils.AdbDevice) -> None:
    open_app(phone, DEMO_PACKAGE)
    _tap_text(phone, "Jazz night")
    assert "Jazz night ⇀ overview" in _texts(phone)
    _tap_text(phone, "Route")
    texts = _texts(phone)
    assert {"Jazz night", "Route to Jazz night", "Metro: 30 min", "Taxi: 18 min"} <= texts
    _tap_text(phone, "Overview")
    assert "Jazz night ⇀ overview" in _texts(phone)
    phone.keyevent("BACK")  # tabs replace each other: one BACK returns to the list
    assert "Book fair" in _texts(phone)


# ---------------------------------------------------------------- 3. nested variation


def test_nested_fields_vary_daily_reproducibly_and_only_when_asked(demo_app_path: Path) -> None:
    app = load_app(demo_app_path)
    records = app.data["events"]
    assert apply_variation(records, app.variation, "events", 7, 0) == records
    day1 = apply_variation(records, app.variation, "events", 7, 1)
    assert day1 == apply_variation(records, app.variation, "events", 7, 1)  # same seed, same day
    routes = day1[0]["routes"]
    assert isinstance(routes, list)
    minutes = [r["minutes"] for r in routes if isinstance(r, dict)]
    assert all(isinstance(m, int) for m in minutes)
    assert 24 <= int(str(minutes[0])) <= 36 and 14 <= int(str(minutes[1])) <= 22  # within +-20%
    assert [r["plan"] for r in routes if isinstance(r, dict)] == ["Metro", "Taxi"]
    week = [apply_variation(records, app.variation, "events", 7, d)[0]["routes"] for d in range(1, 8)]
    assert len({str(w) for w in week}) > 1  # the numbers change from day to day
    assert records[0]["routes"] == [{"plan": "Metro", "minutes": 30}, {"plan": "Taxi", "minutes": 18}]
    assert apply_variation(records, (), "events", 7, 1) == records  # opt-in: no rule, no change


def test_numbers_inside_nested_texts_vary_when_in_text_is_set() -> None:
    records: list[Record] = [{"id": "p1", "specs": [{"k": "电池", "v": "5500mAh"},
                                                               {"k": "屏幕", "v": "6.78英寸 120Hz"}]}]
    rule = Variation(source="products", field="specs.v", spread=0.1, step=0.01, in_text="first")
    values = set()
    for day in range(1, 6):
        varied = apply_variation(records, (rule,), "products", 7, day)[0]["specs"]
        assert isinstance(varied, list)
        battery, screen = (str(s["v"]) for s in varied if isinstance(s, dict))
        assert battery.endswith("mAh") and 4950 <= float(battery[:-3]) <= 6050
        assert screen.endswith("英寸 120Hz") and len(screen.split("英寸")[0].split(".")[1]) == 2
        values.add(battery)
    assert len(values) > 1


# ---------------------------------------------------------------- 4. YAML traps


def _write_app(folder: Path, screens_and_data: str) -> Path:
    path = folder / "trap.yaml"
    path.write_text("package: com.example.trap\nlabel: Trap\n" + screens_and_data, encoding="utf-8")
    return path


@pytest.mark.parametrize(("snippet", "line", "expected"), [
    ("    title: Home\n    body: [{type: text, text: \"{when}\"}]\ndata:\n  days:\n    - {id: d1, when: 2025-06-25}\n",
     9, "the unquoted value 2025-06-25 is read by YAML 1.1 as the date object 2025-06-25; quote it"),
    ("    title: Home\n    body: [{type: text, text: x}]\ndata:\n  ratios:\n    - {id: r1, zoom: 1000:1}\n",
     9, "the unquoted value 1000:1 is read by YAML 1.1 as the base-60 number 60001; quote it"),
    ("    title: Home\n    body: [{type: text, text: x}]\ndata:\n  trains:\n    - {id: t1, no: G1234}\n",
     9, "the unquoted key no is read by YAML 1.1 as the boolean false; quote it"),
    ("    title: no\n    body: [{type: text, text: x}]\n",
     5, "Input should be a valid string: "),
])
def test_yaml_traps_are_reported_with_line_and_quote_it(
    tmp_path: Path, snippet: str, line: int, expected: str
) -> None:
    path = _write_app(tmp_path, "screens:\n  home:\n" + snippet)
    with pytest.raises(AppSpecError) as caught:
        load_app(path)
    message = str(caught.value)
    assert expected in message
    assert f"{path} line {line}" in message and "quote it" in message
    assert "YAML traps for app authors" in (caught.value.hint or "")


def test_yaml_traps_in_data_files_name_the_data_file(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    data_file = tmp_path / "data" / "trap_shows.yaml"
    data_file.write_text("- {id: s1, cinema: A}\n- {id: s2, cinema: B, start: 12:15}\n", encoding="utf-8")
    path = _write_app(tmp_path, "screens:\n  home:\n    body: [{type: text, text: x}]\n"
                                "data:\n  shows: data/trap_shows.yaml\n")
    with pytest.raises(AppSpecError, match=rf"{data_file} line 2 \(data\.shows\.1\.start\): the unquoted "
                                           r"value 12:15 is read by YAML 1\.1 as the base-60 number 735"):
        load_app(path)


def test_quoted_values_and_real_booleans_load(tmp_path: Path) -> None:
    path = _write_app(tmp_path, "logged_in: false\nscreens:\n  home:\n    title: \"no\"\n"
                                "    body: [{type: text, text: '12:15'}]\ndata:\n"
                                "  days: [{id: d1, when: '2025-06-25', 'no': G1}]\n")
    app = load_app(path)
    assert app.screens["home"].title == "no"
    assert app.data["days"] == [{"id": "d1", "when": "2025-06-25", "no": "G1"}]


# ---------------------------------------------------------------- 5. glyph fallback


def _draw(text: str, with_fallback: bool) -> bytes:
    image = Image.new("RGB", (200, 80))
    draw = ImageDraw.Draw(image)
    if with_fallback:
        draw_text(draw, (10, 10), text, 40, False, (255, 255, 255))
    else:
        draw.text((10, 10), text, font=font_for(40), fill=(255, 255, 255))
    return image.tobytes()


@pytest.mark.parametrize("char", ["⇀", "⇄", "↺"])
def test_characters_missing_from_the_cjk_font_draw_with_a_font_that_has_them(char: str) -> None:
    box = _draw("\U0010fffd", with_fallback=False)  # the ".notdef" empty box
    assert _draw(char, with_fallback=True) != box
    assert measure(f"A{char}B", 40) > measure("AB", 40)


def test_glyph_fallback_picks_per_character_and_keeps_cjk_in_the_primary_font() -> None:
    primary = glyph_font("中")
    assert glyph_font("a") == primary and glyph_font("→") == primary
    assert glyph_font("⇀") != primary and "DejaVu" in glyph_font("⇀").name
    runs = iter_runs("北京 ⇀ 上海")
    assert [text for text, _ in runs] == ["北京 ", "⇀ ", "上海"]
    assert runs[0][1] == runs[2][1] == primary


# ---------------------------------------------------------------- 6. one-call dump


def test_uiautomator_dump_to_dev_tty_reads_the_hierarchy_in_one_shell_call(
    features_sim: SimServer, phone: adbutils.AdbDevice
) -> None:
    open_app(phone, DEMO_PACKAGE)
    output = phone.shell("uiautomator dump /dev/tty")
    xml, _, tail = output.rpartition("</hierarchy>")
    assert tail.strip() == "UI hierchary dumped to: /dev/tty"  # sic, as Android prints it
    root = ET.fromstring(xml + "</hierarchy>")
    assert "Events 06-23" in {n.get("text") for n in root.iter("node")}
    # a device selected by transport id skips adbutils' extra host:version connection
    client = adbutils.AdbClient("127.0.0.1", features_sim.port)
    transport_id = int(client.list(extended=True)[0].tags["transport_id"])
    by_id = adbutils.AdbDevice(client, transport_id=transport_id)
    assert by_id.shell("uiautomator dump /dev/tty").startswith("<?xml")
