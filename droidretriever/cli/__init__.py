"""The ``droidretriever`` command line (typer + rich).

Each area adds its commands in its own module here and is registered once
below. Errors a person can act on (:class:`DroidRetrieverError`) print one
readable line and the fix; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

from droidretriever.cli._app import app, state
from droidretriever.errors import DroidRetrieverError

__all__ = ["app", "main"]

# Command modules register themselves on import (order = order in --help).
from droidretriever.cli import api as _api  # noqa: F401
from droidretriever.cli import ask as _ask  # noqa: F401
from droidretriever.cli import farm as _farm  # noqa: F401
from droidretriever.cli import stack as _stack  # noqa: F401
from droidretriever.cli import subscriptions as _subscriptions  # noqa: F401


def main() -> None:
    """Console-script entry point.

    Click's standalone mode handles usage errors, aborts and exit codes; only our
    own errors are caught here, to print them as one line plus the fix.
    """
    try:
        app()
    except DroidRetrieverError as exc:
        if state.debug:
            raise
        err = Console(stderr=True)
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        if exc.hint:
            err.print(f"[yellow]fix:[/] {escape(exc.hint)}", highlight=False)
        sys.exit(1)
