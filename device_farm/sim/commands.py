"""Android's own shell commands, with the output formats drivers parse.

``uiautomator dump``, ``screencap``, ``input``, ``am``, ``monkey``, ``pm``,
``dumpsys``, ``wm``, ``getprop``, ``settings``, ``cmd statusbar``, ``date``.
Each takes (device, args, stdin) and returns a :class:`CommandResult`;
``delay_s`` is the phone's latency for that command.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

from device_farm.sim.errors import ShellCommandError
from device_farm.sim.farm import VirtualDevice
from device_farm.sim.gestures import KEYCODES

__all__ = ["COMMANDS", "Command", "CommandResult", "error_result", "ok_result"]

_DUMP_DEFAULT = "/sdcard/window_dump.xml"
_SYSTEM_PACKAGES = ("android", "com.android.systemui", "com.android.launcher3", "com.android.permissioncontroller",
                    "com.google.android.inputmethod.latin", "com.android.shell")


@dataclass
class CommandResult:
    stdout: bytes = b""
    stderr: bytes = b""
    code: int = 0
    delay_s: float = 0.0


Command = Callable[[VirtualDevice, list[str], bytes], CommandResult]


def ok_result(text: str = "", delay_s: float = 0.0) -> CommandResult:
    """Success with ``text`` on stdout."""
    return CommandResult(stdout=text.encode("utf-8"), delay_s=delay_s)


def error_result(text: str, code: int = 1) -> CommandResult:
    """Failure with ``text`` on stderr."""
    return CommandResult(stderr=text.encode("utf-8"), code=code)


def _int(value: str, what: str) -> int:
    try:
        return int(float(value))
    except ValueError as exc:
        raise ShellCommandError(f"Error: Invalid {what}: {value}") from exc


def _uiautomator(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    if not args or args[0] != "dump":
        return error_result("Usage: uiautomator <subcommand> [options]\n  dump [--compressed] [file]\n")
    paths = [a for a in args[1:] if not a.startswith("--")]
    path = paths[0] if paths else _DUMP_DEFAULT
    xml = dev.phone.dump_xml()
    delay = dev.latency.dump_s
    if path == "/dev/tty":
        return ok_result(xml + "UI hierchary dumped to: /dev/tty\n", delay)
    dev.phone.write_file(path, xml.encode("utf-8"))
    return ok_result(f"UI hierchary dumped to: {path}\n", delay)  # sic: Android's own spelling


def _screencap(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    png = "-p" in args
    paths = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] != "-d")]
    delay = dev.latency.screenshot_s + dev.faults.slow_screenshot_s
    if paths:
        path = paths[0]
        data = dev.phone.screenshot_png() if png or path.endswith(".png") else dev.phone.screenshot_raw()
        dev.phone.write_file(path, data)
        return CommandResult(delay_s=delay)
    data = dev.phone.screenshot_png() if png else dev.phone.screenshot_raw()
    return CommandResult(stdout=data, delay_s=delay)


_INPUT_USAGE = ("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
                "The commands and default sources are:\n      text <string> (Default: keyboard)\n"
                "      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n"
                "      tap <x> <y> (Default: touchscreen)\n"
                "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n")
_SOURCES = {"keyboard", "touchscreen", "touchpad", "mouse", "dpad", "gamepad", "stylus", "trackball"}


def _keycode(name: str) -> int:
    if name.isdigit():
        return int(name)
    code = KEYCODES.get(name.upper().removeprefix("KEYCODE_"))
    if code is None:
        raise ShellCommandError(f"Error: Unknown keycode: {name}")
    return code


def _input(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    while args and (args[0] in _SOURCES or args[0] == "-d"):
        args = args[2:] if args[0] == "-d" else args[1:]
    if not args:
        return error_result(_INPUT_USAGE)
    verb, rest = args[0], args[1:]
    g = dev.gestures
    if verb == "tap" and len(rest) == 2:
        g.tap(_int(rest[0], "x"), _int(rest[1], "y"))
    elif verb in ("swipe", "draganddrop") and len(rest) in (4, 5):
        x1, y1, x2, y2 = (_int(v, "coordinate") for v in rest[:4])
        duration = _int(rest[4], "duration") if len(rest) == 5 else 300
        g.swipe(x1, y1, x2, y2, duration if verb == "swipe" else max(duration, 1000))
    elif verb == "text" and rest:
        g.type_text(" ".join(rest).replace("%s", " "))
    elif verb == "keyevent" and rest:
        for name in (r for r in rest if not r.startswith("--")):
            g.keyevent(_keycode(name))
    else:
        return error_result(_INPUT_USAGE)
    return CommandResult(delay_s=dev.latency.settle_s)


def _option(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def _am(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    if not args:
        return error_result("usage: am [start|force-stop|broadcast] ...\n")
    verb = args[0]
    if verb in ("start", "start-activity"):
        component = _option(args, "-n")
        if component is None:
            action = _option(args, "-a") or "android.intent.action.MAIN"
            return ok_result(f"Starting: Intent {{ act={action} }}\n", dev.latency.settle_s)
        package, _, activity = component.partition("/")
        dev.gestures.start_app(package, activity or None)
        return ok_result(f"Starting: Intent {{ cmp={component} }}\n", dev.latency.settle_s)
    if verb == "force-stop" and len(args) > 1:
        dev.gestures.force_stop(args[1])
        return ok_result()
    if verb == "broadcast":
        return _broadcast(dev, args[1:])
    return error_result(f"Error: unknown command '{verb}'\n")


def _broadcast(dev: VirtualDevice, args: list[str]) -> CommandResult:
    """ADB Keyboard's intents type Unicode text the way real drivers do."""
    action = _option(args, "-a") or ""
    message = _option(args, "--es")
    text = args[args.index("--es") + 2] if message is not None and args.index("--es") + 2 < len(args) else ""
    if action == "ADB_INPUT_TEXT":
        dev.gestures.type_text(text)
    elif action == "ADB_INPUT_B64":
        dev.gestures.type_text(base64.b64decode(text).decode("utf-8", "replace"))
    elif action == "ADB_CLEAR_TEXT":
        state = dev.phone.state
        player = dev.phone.replay_player()
        if player is not None:
            player.clear_text()
            dev.phone.touch()
        elif state.focused and state.foreground:
            state.inputs[f"{state.foreground}/{state.focused}"] = ""
            dev.phone.touch()
    return ok_result(f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\n"
                     "Broadcast completed: result=0\n", dev.latency.settle_s)


def _monkey(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    package = _option(args, "-p")
    if package is None or dev.phone.app(package) is None:
        return CommandResult(stdout=b"  bash arg: -p\n",
                             stderr=b"** No activities found to run, monkey aborted.\n", code=251)
    dev.gestures.start_app(package)
    echoed = "".join(f"  bash arg: {a}\n" for a in args)
    return ok_result(echoed + "Events injected: 1\n## Network stats: elapsed time=14ms (0ms mobile, 0ms wifi, "
                     "14ms not connected)\n", dev.latency.settle_s)


def _pm(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    apps = dev.phone.catalog.apps
    if args[:2] == ["list", "packages"]:
        wanted = [a for a in args[2:] if not a.startswith("-")]
        third_party = "-3" in args
        names = sorted(apps) if third_party else sorted({*apps, *_SYSTEM_PACKAGES})
        names = [n for n in names if not wanted or wanted[0] in n]
        return ok_result("".join(f"package:{n}\n" for n in names))
    if args[:1] == ["path"] and len(args) > 1:
        if args[1] not in apps and args[1] not in _SYSTEM_PACKAGES:
            return CommandResult(code=1)
        return ok_result(f"package:/data/app/~~sim/{args[1]}-1/base.apk\n")
    if args[:1] == ["uninstall"] and len(args) > 1:
        return ok_result("Success\n") if dev.phone.uninstall(args[-1]) else error_result(
            "Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
    if args[:1] == ["clear"] and len(args) > 1 and args[1] in apps:
        dev.gestures.force_stop(args[1])
        state = dev.phone.state
        state.inputs = {k: v for k, v in state.inputs.items() if not k.startswith(args[1] + "/")}
        state.logged_in[args[1]] = apps[args[1]].logged_in
        return ok_result("Success\n")
    if args[:1] in (["install"], ["install-create"]):
        # An APK's bytes mean nothing to a virtual phone: its apps come from the catalog.
        # pm writes its verdict on stdout, where `adb install` reads it
        return CommandResult(stdout=b"Failure [INSTALL_FAILED_INVALID_APK: a virtual phone installs only "
                                    b"its catalog's apps (device_farm/sim/apps); it cannot run an APK]\n", code=1)
    return error_result(f"Unknown command: {' '.join(args[:1])}\n" if args else "usage: pm list packages\n")


def _record(package: str, activity: str) -> str:
    short = activity.removeprefix(package) if activity.startswith(package + ".") else activity
    return f"{package}/{short}"


def _dumpsys(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    phone = dev.phone
    d = phone.display
    package, activity = phone.focused_activity()
    name = _record(package, activity)
    service = args[0] if args else ""
    if service == "window":
        return ok_result(
            "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
            f"  Window #0 Window{{7f3a2c1 u0 {name}}}:\n"
            f"  mCurrentFocus=Window{{7f3a2c1 u0 {name}}}\n"
            f"  mFocusedApp=ActivityRecord{{5e1b9d0 u0 {name} t{dev.transport_id + 10}}}\n"
            f"  mDisplayInfo: app={d.width}x{d.height} cur={d.width}x{d.height} rotation=0\n")
    if service == "activity":
        return ok_result(
            "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
            f"  mResumedActivity: ActivityRecord{{5e1b9d0 u0 {name} t{dev.transport_id + 10}}}\n"
            f"  ResumedActivity: ActivityRecord{{5e1b9d0 u0 {name} t{dev.transport_id + 10}}}\n"
            f"TASK {package} id={dev.transport_id + 10}\n"
            f"  ACTIVITY {name} 5e1b9d0 pid=4{dev.transport_id:03d}\n")
    if service == "display":
        return ok_result(
            f"  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, "
            f"uniqueId='local:0', physicalPort=0, orientation=0, logicalFrame=Rect(0, 0 - {d.width}, {d.height}), "
            f"physicalFrame=Rect(0, 0 - {d.width}, {d.height}), deviceWidth={d.width}, deviceHeight={d.height}}}]\n")
    if service == "power":
        return ok_result("  mWakefulness=Awake\n  mHoldingDisplaySuspendBlocker=true\n")
    if service == "battery":
        return ok_result("Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
                         "  Wireless powered: false\n  status: 2\n  health: 2\n  present: true\n"
                         "  level: 76\n  scale: 100\n  voltage: 4123\n  temperature: 290\n"
                         "  technology: Li-ion\n")
    if service == "package" and len(args) > 1:
        app = phone.app(args[1])
        if app is None:
            return ok_result("")
        return ok_result(f"Packages:\n  Package [{app.package}] (5a1c):\n    versionCode=1 minSdk=24 "
                         f"targetSdk=34\n    versionName={app.version}\n    application-label:'{app.label}'\n"
                         "    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n"
                         "    firstInstallTime=2025-06-01 10:00:00\n    lastUpdateTime=2025-06-20 10:00:00\n")
    return ok_result("")


def _wm(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    d = dev.phone.display
    if args[:1] == ["size"]:
        return ok_result(f"Physical size: {d.width}x{d.height}\n")
    if args[:1] == ["density"]:
        return ok_result(f"Physical density: {d.density}\n")
    return error_result("usage: wm [size|density]\n")


def _props(dev: VirtualDevice) -> dict[str, str]:
    phone = dev.phone
    return {
        "ro.product.model": phone.identity.model, "ro.product.name": "sdk_gphone64_x86_64",
        "ro.product.device": "emu64x", "ro.product.brand": "google", "ro.product.manufacturer": "Google",
        "ro.build.version.release": "14", "ro.build.version.sdk": "34", "ro.serialno": phone.serial,
        "ro.product.cpu.abi": "x86_64", "sys.boot_completed": "1", "ro.sf.lcd_density": str(phone.display.density),
        "ro.kernel.qemu": "1", "persist.sys.locale": "zh-CN", "persist.sys.timezone": "Asia/Shanghai",
    }


def _getprop(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    props = _props(dev)
    if args:
        return ok_result(props.get(args[0], "") + "\n")
    return ok_result("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))


def _settings(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    if len(args) >= 3 and args[0] == "get":
        values = {"screen_brightness": "128", "screen_brightness_mode": "0", "airplane_mode_on": "0"}
        return ok_result(values.get(args[2], "null") + "\n")
    return ok_result()


def _cmd(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    if args[:1] == ["package"]:  # `adb install` streams through `cmd package install -S N`
        return _pm(dev, args[1:], stdin)
    if args[:1] == ["statusbar"] and len(args) > 1:
        dev.phone.state.shade_open = args[1] in ("expand-notifications", "expand-settings")
        dev.phone.touch()
        return ok_result()
    return ok_result()


def _date(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    now = dev.phone.clock.now()
    if args[:1] == ["+%s"]:
        return ok_result(f"{int(now.timestamp())}\n")
    if args and args[0].startswith("+"):
        return ok_result(now.strftime(args[0][1:]) + "\n")  # toybox date +FORMAT
    return ok_result(now.strftime("%a %b %d %H:%M:%S CST %Y") + "\n")


def _logcat(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    """A few lines of the log (threadtime format); it ends at once, with or without ``-d``."""
    if "-c" in args:
        return ok_result()
    stamp = dev.phone.clock.now().strftime("%m-%d %H:%M:%S.000")
    front = dev.phone.state.foreground or "com.android.launcher3"
    lines = [
        "--------- beginning of main",
        f"{stamp}  1000  1000 I ActivityManager: Displayed {front}",
        f"{stamp}  1000  1000 I WindowManager: focus is {front}",
        f"{stamp}  2000  2000 D adbd    : shell session opened for {dev.serial}",
    ]
    return ok_result("".join(f"{line}\n" for line in lines))


def _pidof(dev: VirtualDevice, args: list[str], stdin: bytes) -> CommandResult:
    running = [a for a in args if a in dev.phone.state.stacks]
    if not running:
        return CommandResult(code=1)
    return ok_result(" ".join(str(4000 + sorted(dev.phone.catalog.apps).index(a)) for a in running) + "\n")


COMMANDS: dict[str, Command] = {
    "uiautomator": _uiautomator, "screencap": _screencap, "input": _input, "am": _am, "monkey": _monkey,
    "pm": _pm, "dumpsys": _dumpsys, "wm": _wm, "getprop": _getprop, "settings": _settings, "cmd": _cmd,
    "date": _date, "pidof": _pidof,
    "svc": lambda dev, args, stdin: ok_result(),
    "ime": lambda dev, args, stdin: ok_result(),
    "logcat": _logcat,
}
