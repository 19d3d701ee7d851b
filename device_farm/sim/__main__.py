"""``python -m device_farm.sim``: serve virtual phones, check app specs, or render one screen.

    python -m device_farm.sim --phones 4 --port 15037
    python -m device_farm.sim --phones 2 --recordings ../shared/data/droidbot-real
    python -m device_farm.sim --check
    python -m device_farm.sim --render com.sankuai.meituan/home out.png
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from core.config import LatencyProfile, load_settings
from device_farm.sim.catalog import Catalog, load_app, load_catalog
from device_farm.sim.errors import SimError
from device_farm.sim.phone import Phone, PhoneIdentity
from device_farm.sim.replay import load_recordings
from device_farm.sim.server import SimServer
from device_farm.sim.state import Page

__all__ = ["main", "render_screen", "serve_forever"]


def serve_forever(server: SimServer, announce: bool = True) -> None:
    """Start ``server``, print its port and serials, and block until Ctrl-C."""
    with server:
        if announce:
            print(f"ADB server: {server.host}:{server.port}", flush=True)
            print("phones: " + " ".join(server.serials), flush=True)
            print(f"use: adbutils.AdbClient(host={server.host!r}, port={server.port})", flush=True)
            print(f"or:  ADB_SERVER_SOCKET=tcp:{server.host}:{server.port} adb devices", flush=True)
            print("     (this user only: the port refuses every other user)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopping", flush=True)


def render_screen(target: str, out: Path) -> Path:
    """Render ``package/screen_id`` of the catalog to a PNG (for app authors)."""
    package, _, screen = target.partition("/")
    catalog = load_catalog()
    app = catalog.get(package)
    if app is None or (screen and screen not in app.screens):
        raise SimError(f"no screen {target!r} in the catalog",
                       hint="use <package>/<screen id> as written in the app's YAML file")
    phone = Phone(PhoneIdentity("emulator-5554"), catalog)
    phone.state.foreground = package
    phone.state.stacks[package] = [Page(screen or app.home)]
    phone.touch()
    phone.screenshot_image().save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    settings = load_settings().sim
    parser = argparse.ArgumentParser(prog="python -m device_farm.sim", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phones", type=int, default=settings.phones)
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.adb_port, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=settings.seed)
    parser.add_argument("--first-index", type=int, default=settings.first_index,
                        help="number the phones from this index (emulator-5554 is 0): farm hosts "
                             "sharing one Redis need distinct serials")
    parser.add_argument("--latency", choices=[p.value for p in LatencyProfile], default=settings.latency.value)
    parser.add_argument("--apps", nargs="+", type=Path, metavar="APP_YAML",
                        help="serve only these app files (default: every app in device_farm/sim/apps)")
    parser.add_argument("--recordings", nargs="+", type=Path, metavar="DIR",
                        default=[settings.recordings] if settings.recordings else None,
                        help="DroidBot recordings to serve as installed apps of replay phones "
                             "(one phone per recorded screen size, after the --phones ones)")
    parser.add_argument("--check", action="store_true", help="validate every app spec and exit")
    parser.add_argument("--render", nargs=2, metavar=("PACKAGE/SCREEN", "OUT_PNG"))
    args = parser.parse_args(argv)
    try:
        if args.check:
            for app in sorted(load_catalog().apps.values(), key=lambda a: a.package):
                print(f"ok  {app.package:<40} {app.label}  ({len(app.screens)} screens)")
            return 0
        if args.render:
            print(render_screen(args.render[0], Path(args.render[1])))
            return 0
        catalog: Catalog | None = None
        if args.apps:
            apps = [load_app(path) for path in args.apps]
            catalog = Catalog(apps={a.package: a for a in apps})
        replays = load_recordings(args.recordings) if args.recordings else ()
        for recorded in replays:
            print(f"recorded {recorded.package} ({recorded.label}, {recorded.width}x{recorded.height}): "
                  f"{len(recorded.screens)} screens, {recorded.edge_count} recorded events", flush=True)
        serve_forever(SimServer(args.phones, args.host, args.port, args.seed, LatencyProfile(args.latency),
                                catalog=catalog, replays=replays, first_index=args.first_index))
    except SimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"fix: {exc.hint}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
