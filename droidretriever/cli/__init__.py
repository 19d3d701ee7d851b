"""The ``droidretriever`` command line (typer + rich).

Each area adds its commands in its own module here and is registered once
below. Errors a person can act on (:class:`DroidRetrieverError`) print one
readable line and the fix; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from droidretriever.cli._app import app, state
from droidretriever.errors import DroidRetrieverError

__all__ = ["app", "main"]

# Command modules register themselves on import (order = order in --help).
from droidretriever.cli import farm as _farm  # noqa: F401
from droidretriever.cli import stack as _stack  # noqa: F401


def main() -> None:
    """Console-script entry point."""
    err = Console(stderr=True)
    try:
        app(standalone_mode=False)
    except DroidRetrieverError as exc:
        if state.debug:
            raise
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        if exc.hint:
            err.print(f"[yellow]fix:[/] {exc.hint}", highlight=False)
        sys.exit(1)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except (typer.Exit, SystemExit) as exc:
        code = exc.exit_code if isinstance(exc, typer.Exit) else exc.code
        sys.exit(code if isinstance(code, int) else 0)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
