"""The root typer app and the global options every command sees."""

from __future__ import annotations

from dataclasses import dataclass

import typer

__all__ = ["app", "state"]


@dataclass
class _State:
    debug: bool = False


state = _State()

app = typer.Typer(
    name="droidretriever",
    help="Find information that lives inside phone apps, with cited screenshots as evidence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
) -> None:
    state.debug = debug
