"""``AdbDriver``: the Driver protocol over adbutils alone.

Works with real phones, emulators and the virtual phones alike, because it
only uses what every Android ships: ``screencap`` (raw, encoded to PNG on the
host), ``uiautomator dump``, ``input``, ``am``, ``monkey``, ``pm``,
``dumpsys``, ``wm`` and ``getprop``.
"""

from __future__ import annotations

import base64
import re
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date

from lxml import etree

from core.models import InstalledApp, Point, ScrollDirection
from device_farm.adb_client import NoSpawnAdbClient, parse_focus, parse_wm_size
from device_farm.adb_shell import PhoneShell
from device_farm.driver import plan_scroll
from device_farm.errors import DeviceCommandFailed, InputNotApplied
from device_farm.models import DeviceInfo, DeviceObservation, Key, ObserveTimings, TextEntry
from device_farm.screencap import RawFrame, decode_raw_screencap, encode_png

__all__ = ["ADB_KEYBOARD_IME", "AdbDriver"]

ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
_DUMP_PATH = "/data/local/tmp/uidump.xml"
_PACKAGE_LINE = re.compile(r"^package:(\S+)$", re.MULTILINE)
_VERSION_RE = re.compile(r"versionName=([^\s]+)")
_LABEL_RES = (
    re.compile(r"nonLocalizedLabel=(?!null)(.+)"),
    re.compile(r"^\s*label=\"?([^\"\n]+)\"?\s*$", re.MULTILINE),
    # aapt's form, quotes not escaped (application-label:'McDonald's'): up to the line's last quote.
    re.compile(r"application-label(?:-[a-zA-Z_]+)?:'(.+)'[ \t\r]*$", re.MULTILINE),
)
_GENERIC_PARTS = frozenset({
    "android", "app", "apps", "client", "cn", "com", "global", "gma", "hd", "intl", "lite",
    "main", "mobile", "phone",
})
# Characters `input text` would let the phone's shell interpret.
_SHELL_SPECIAL = re.compile(r"([\\\"'`$&|;<>()\[\]{}*?!~#])")


class AdbDriver:
    """Drive one phone through an adb server (``host:port``) by serial."""

    def __init__(
        self, serial: str, *, host: str = "127.0.0.1", port: int = 5037, timeout_s: float = 30.0,
        adb_serial: str = "",
    ) -> None:
        # ``serial`` is the phone's farm name; adb knows it as ``adb_serial`` (device_farm.serials).
        self._serial = serial
        self._adb_serial = adb_serial or serial
        self._client = NoSpawnAdbClient(host, port, socket_timeout=timeout_s)
        self._shell = PhoneShell(self._client, self._adb_serial, timeout_s)
        self._tty_dump: bool | None = None  # does `uiautomator dump /dev/tty` print the XML?
        self._size: tuple[int, int] | None = None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"observe-{serial}")
        self._has_adb_keyboard: bool | None = None

    @classmethod
    def for_device(cls, info: DeviceInfo, timeout_s: float = 30.0) -> AdbDriver:
        """A driver for a registered phone, through the adb server its worker uses."""
        return cls(info.serial, host=info.adb_host, port=info.adb_port, timeout_s=timeout_s,
                   adb_serial=info.local_serial)

    @property
    def serial(self) -> str:
        return self._serial

    @property
    def adb_serial(self) -> str:
        """The serial the adb server knows the phone by."""
        return self._adb_serial

    @property
    def address(self) -> tuple[str, int]:
        return self._client.host, self._client.port

    def close(self) -> None:
        """Stop the observe threads; the driver holds no other resource."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ low level

    def shell(self, command: str, action: str = "") -> str:
        """Run a shell command and return its text output (right-stripped)."""
        return self._shell.run_text(command, action or command.split(" ", 1)[0])

    # ------------------------------------------------------------------ observe

    def observe(self) -> DeviceObservation:
        """Screenshot, hierarchy and focus side by side: three shell calls, one connection each."""
        started = time.perf_counter()
        shot = self._pool.submit(self._capture_png)
        focus = self._pool.submit(self._timed_focus)
        try:
            xml, hierarchy_ms = self._dump_hierarchy()
        finally:
            # Collect both even when the dump failed, so no thread outlives this call.
            png, width, height, shot_ms, encode_ms = shot.result()
            (package, activity), focus_ms = focus.result()
        timings = ObserveTimings(
            screenshot_ms=shot_ms,
            hierarchy_ms=hierarchy_ms,
            focus_ms=focus_ms,
            encode_ms=encode_ms,
            total_ms=(time.perf_counter() - started) * 1000,
        )
        return DeviceObservation(
            serial=self._serial, package=package, activity=activity, width=width,
            height=height, screenshot_png=png, hierarchy_xml=xml, timings=timings,
        )

    def screenshot(self) -> RawFrame:
        """The raw framebuffer, no hierarchy and no PNG: what a live view needs, fast."""
        raw = self._shell.run("screencap", "screenshot")
        try:
            return decode_raw_screencap(raw)
        except ValueError as exc:
            raise DeviceCommandFailed(
                f"{self._serial}: screenshot unreadable: {exc}", serial=self._serial,
                hint="the phone may be locked or showing a secure window; try wake_and_unlock",
            ) from exc

    def screenshot_png(self) -> bytes:
        """A screenshot as PNG, without the hierarchy or focus of :meth:`observe`."""
        return self._capture_png()[0]

    def _timed_focus(self) -> tuple[tuple[str, str], float]:
        started = time.perf_counter()
        found = self._focused()
        return found, (time.perf_counter() - started) * 1000

    def _capture_png(self) -> tuple[bytes, int, int, float, float]:
        started = time.perf_counter()
        raw = self._shell.run("screencap", "screenshot")
        fetched = time.perf_counter()
        try:
            frame = decode_raw_screencap(raw)
            png = encode_png(frame)
        except ValueError as exc:
            raise DeviceCommandFailed(
                f"{self._serial}: screenshot unreadable: {exc}", serial=self._serial,
                hint="the phone may be locked or showing a secure window; try wake_and_unlock",
            ) from exc
        done = time.perf_counter()
        return png, frame.width, frame.height, (fetched - started) * 1000, (done - fetched) * 1000

    def _dump_hierarchy(self) -> tuple[str, float]:
        started = time.perf_counter()
        xml = None
        if self._tty_dump is not False:
            # One round trip: the XML on stdout, then uiautomator's "dumped to" line.
            xml = _extract_xml(self.shell("uiautomator dump /dev/tty", "hierarchy dump"))
        if xml is None:
            # Some ROMs print nothing for /dev/tty: dump to a file and print it, still one call.
            output = self.shell(
                f"uiautomator dump {_DUMP_PATH} && cat {_DUMP_PATH}", "hierarchy dump"
            )
            xml = _extract_xml(output)
            if xml is None:
                raise DeviceCommandFailed(
                    f"{self._serial}: uiautomator dump gave no XML: {output[:200]!r}",
                    serial=self._serial,
                    hint="an animation or a video can block uiautomator; wait a moment and retry",
                )
            if self._tty_dump is None:
                # /dev/tty never worked here but the file does: use the file from now on.
                self._tty_dump = False
        elif self._tty_dump is None:
            self._tty_dump = True
        return xml, (time.perf_counter() - started) * 1000

    def focused_app(self) -> tuple[str, str]:
        """(package, activity) in front; empty strings on the lock screen."""
        return self._focused()

    def _focused(self) -> tuple[str, str]:
        found = parse_focus(self.shell("dumpsys window windows", "reading the focused window"))
        if found is None:
            found = parse_focus(self.shell("dumpsys activity activities", "reading activities"))
        # The lock screen and some system overlays have no focused app.
        return found if found is not None else ("", "")

    def screen_size(self) -> tuple[int, int]:
        """Width and height from ``wm size`` (cached: it does not change while attached)."""
        if self._size is None:
            output = self.shell("wm size", "reading the screen size")
            size = parse_wm_size(output)
            if size is None:
                raise DeviceCommandFailed(
                    f"{self._serial}: unexpected `wm size` output {output!r}", serial=self._serial
                )
            self._size = size
        return self._size

    def model(self) -> str:
        """``ro.product.model``."""
        return self.shell("getprop ro.product.model", "reading the model")

    def phone_date(self) -> date | None:
        """``date +%Y-%m-%d``: the phone's calendar date."""
        output = self.shell("date +%Y-%m-%d", "reading the phone's date").strip()
        try:
            return date.fromisoformat(output)
        except ValueError:
            return None

    def ping(self) -> None:
        """``echo`` round trip; raises DeviceLost / DeviceTimeout when the phone is gone."""
        output = self.shell("echo ok", "ping")
        if output.strip() != "ok":
            raise DeviceCommandFailed(
                f"{self._serial}: ping answered {output!r}", serial=self._serial
            )

    # ------------------------------------------------------------------ actions

    def tap(self, point: Point) -> None:
        """``input tap``."""
        self.shell(f"input tap {point.x} {point.y}", "tap")

    def long_press(self, point: Point, duration_ms: int = 800) -> None:
        """A swipe that does not move is a long press on every Android version."""
        self.shell(
            f"input swipe {point.x} {point.y} {point.x} {point.y} {duration_ms}", "long press"
        )

    def swipe(self, start: Point, end: Point, duration_ms: int = 300) -> None:
        """``input swipe``."""
        self.shell(f"input swipe {start.x} {start.y} {end.x} {end.y} {duration_ms}", "swipe")

    def scroll(self, direction: ScrollDirection, fraction: float = 0.67) -> None:
        """A slow swipe (no fling) over ``fraction`` of the screen."""
        width, height = self.screen_size()
        start, end = plan_scroll(width, height, direction, fraction)
        self.swipe(start, end, duration_ms=500)

    def key(self, key: Key) -> None:
        """``input keyevent KEYCODE_*``."""
        self.shell(f"input keyevent {key.keycode}", f"key {key.value}")

    def input_text(self, text: str) -> TextEntry:
        """Type into the focused field, then re-read the hierarchy to check it landed.

        ASCII goes through ``input text``. Other text (CJK, emoji) goes through the
        ADB Keyboard broadcast when that IME is installed; otherwise ``input text``
        is tried (virtual phones and some ROMs accept UTF-8) and verified.
        """
        if not text:
            return TextEntry(text=text, method="none", landed=True)
        use_keyboard = not text.isascii() and self._adb_keyboard_available()
        if use_keyboard:
            self.shell(f"ime set {ADB_KEYBOARD_IME}", "selecting ADB Keyboard")
            encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
            self.shell(f"am broadcast -a ADB_INPUT_B64 --es msg {encoded}", "typing text")
            method = "adb keyboard broadcast"
        else:
            escaped = _SHELL_SPECIAL.sub(r"\\\1", text).replace(" ", "%s")
            self.shell(f"input text {escaped}", "typing text")
            method = "input text"
        field_text = self._focused_field_text()
        if field_text is None or text not in field_text:
            shown = "no focused text field" if field_text is None else f"the field shows {field_text!r}"
            raise InputNotApplied(
                f"{self._serial}: typed {text!r} via {method} but {shown}", serial=self._serial
            )
        return TextEntry(text=text, method=method, landed=True, field_text=field_text)

    def _adb_keyboard_available(self) -> bool:
        if self._has_adb_keyboard is None:
            listed = self.shell("ime list -s", "listing input methods")
            self._has_adb_keyboard = ADB_KEYBOARD_IME in listed.split()
        return self._has_adb_keyboard

    def _focused_field_text(self) -> str | None:
        xml, _ = self._dump_hierarchy()
        try:
            root = etree.fromstring(xml.encode("utf-8"))
        except etree.XMLSyntaxError as exc:
            raise DeviceCommandFailed(
                f"{self._serial}: hierarchy XML unreadable: {exc}", serial=self._serial
            ) from exc
        focused = root.xpath("//node[@focused='true']")
        editable = [n for n in focused if "EditText" in n.get("class", "")] or focused
        if not editable:
            return None
        return str(editable[-1].get("text", ""))

    def open_app(self, package: str) -> None:
        """Launch through ``monkey`` (needs no activity name)."""
        output = self.shell(
            f"monkey -p {package} -c android.intent.category.LAUNCHER 1", f"opening {package}"
        )
        if "No activities found" in output or "aborted" in output:
            raise DeviceCommandFailed(
                f"{self._serial}: cannot open {package}: {output.strip()[:200]}",
                serial=self._serial,
                hint=f"is {package} installed? `droidretriever farm status` lists each phone's apps",
            )

    def force_stop(self, package: str) -> None:
        """``am force-stop``."""
        self.shell(f"am force-stop {package}", f"stopping {package}")

    def list_packages(self) -> tuple[str, ...]:
        """``pm list packages``, sorted."""
        output = self.shell("pm list packages", "listing packages")
        return tuple(sorted(set(_PACKAGE_LINE.findall(output.replace("\r", "")))))

    def app_label(self, package: str) -> str:
        """The label from ``dumpsys package``; the package's last word when the phone hides it."""
        output = self.shell(f"dumpsys package {package}", f"reading {package}'s label")
        for pattern in _LABEL_RES:
            match = pattern.search(output)
            if match is not None and match.group(1).strip():
                return match.group(1).strip()
        # Stock Android keeps labels in resources adb cannot read: name it after the
        # last meaningful part of the package (com.mcdonalds.gma.cn -> Mcdonalds).
        parts = [p for p in package.split(".")[1:] if p.lower() not in _GENERIC_PARTS]
        return (parts[-1] if parts else package).replace("_", " ").title()

    def app_version(self, package: str) -> str:
        """``versionName`` from ``dumpsys package`` ("" when the phone does not say)."""
        output = self.shell(f"dumpsys package {package}", f"reading {package}'s version")
        match = _VERSION_RE.search(output)
        return match.group(1).strip() if match is not None else ""

    def list_apps(self) -> tuple[InstalledApp, ...]:
        """Apps a person can launch, with labels: what the phone's worker serves."""
        output = self.shell(
            "cmd package query-activities --brief -a android.intent.action.MAIN "
            "-c android.intent.category.LAUNCHER", "listing launcher apps",
        )
        packages = sorted({line.strip().split("/", 1)[0] for line in output.splitlines()
                           if re.fullmatch(r"\s*[\w.]+/[\w.$]+\s*", line)})
        if not packages:
            # Before Android 7 (and on the virtual phones) there is no query-activities:
            # user-installed packages are the closest honest answer.
            output = self.shell("pm list packages -3", "listing user apps")
            packages = sorted(set(_PACKAGE_LINE.findall(output.replace("\r", ""))))
        return tuple(InstalledApp(package=p, label=self.app_label(p)) for p in packages)

    def wake_and_unlock(self) -> None:
        """Wake, then dismiss a swipe keyguard (a PIN needs a person)."""
        self.key(Key.WAKEUP)
        self.shell("wm dismiss-keyguard", "dismissing the keyguard")


def _extract_xml(output: str) -> str | None:
    """The hierarchy XML inside ``uiautomator dump`` output, or None when there is none."""
    start = output.find("<?xml")
    end = output.rfind("</hierarchy>")
    if start < 0 or end < start:
        return None
    return output[start:end + len("</hierarchy>")]
