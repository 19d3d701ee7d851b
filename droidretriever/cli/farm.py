"""``droidretriever farm ...``: the phones and their workers."""

from __future__ import annotations

import typer

from droidretriever.cli._app import app

__all__ = ["farm_app"]

farm_app = typer.Typer(
    help="Phones (virtual, adb-attached or emulators) and their device-bound workers.",
    no_args_is_help=True,
)
app.add_typer(farm_app, name="farm")
