"""``droidretriever farm sim``: serve virtual phones behind an ADB server until Ctrl-C."""

from __future__ import annotations

import typer

from droidretriever.cli.farm import farm_app
from droidretriever.config import LatencyProfile, load_settings

__all__ = ["sim"]


@farm_app.command("sim")
def sim(
    phones: int | None = typer.Option(None, "--phones", "-n", help="Number of phones (default: settings.sim.phones)."),
    port: int | None = typer.Option(None, "--port", help="ADB port; 0 picks a free one (default: settings)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed for pop-ups and daily variation."),
    latency: LatencyProfile | None = typer.Option(None, "--latency", help="zero or realistic."),
) -> None:
    """Start N virtual phones; prints the ADB port and serials, runs until interrupted."""
    from device_farm.sim.__main__ import serve_forever
    from device_farm.sim.server import SimServer

    settings = load_settings().sim
    server = SimServer(
        phones=phones if phones is not None else settings.phones,
        host=settings.host,
        port=port if port is not None else settings.adb_port,
        seed=seed if seed is not None else settings.seed,
        latency=latency or settings.latency,
    )
    serve_forever(server)
