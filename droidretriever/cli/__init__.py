"""The ``droidretriever`` command line (typer + rich).

Each area adds its commands in its own module here and is registered once
below. Errors a person can act on (:class:`DroidRetrieverError`) print one
readable line and the fix; ``--debug`` shows the traceback instead. What was
typed or set wrong (a usage error, :class:`InputError`, :class:`ConfigError`)
is one ``error:`` line per fault, saying what to do, with exit code 2 and
nothing started; a failure while working exits 1.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape
from typer.exceptions import TyperException

from core.errors import DroidRetrieverError
from core.text import strip_controls
from droidretriever.cli._app import app, state

__all__ = ["app", "main", "run"]

# Command modules register themselves on import (order = order in --help).
from droidretriever.cli import api as _api  # noqa: F401
from droidretriever.cli import ask as _ask  # noqa: F401
from droidretriever.cli import bench as _bench  # noqa: F401
from droidretriever.cli import doctor as _doctor  # noqa: F401
from droidretriever.cli import farm as _farm  # noqa: F401
from droidretriever.cli import maps as _maps  # noqa: F401
from droidretriever.cli import memory as _memory  # noqa: F401
from droidretriever.cli import stack as _stack  # noqa: F401
from droidretriever.cli import subscriptions as _subscriptions  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the command, print errors as lines, exit with their code."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default: the process's arguments); the exit code.

    Click's own error output (a usage box over several lines) is replaced by one
    line naming the fault and where help is; our errors print their message and
    fix. Exceptions that are neither are bugs and keep their traceback.
    """
    err = Console(stderr=True)
    try:
        code = app(args=argv, prog_name="droidretriever", standalone_mode=False)
    except TyperException as exc:  # typer's (vendored click's) usage and file errors
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command group: its help
            Console().print(exc.format_message(), markup=False, highlight=False)
            return 2
        context = getattr(exc, "ctx", None)
        command = getattr(context, "command_path", "") or "droidretriever"
        where = f" (see `{command} --help`)" if exc.exit_code == 2 else ""
        _print_error(err, exc.format_message() + where)
        return exc.exit_code
    except typer.Abort:
        err.print("aborted")
        return 130
    except DroidRetrieverError as exc:
        if state.debug:
            raise
        lines = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
        if exc.exit_code == 2:  # typed or set wrong: one line per fault, the fix on the last
            for line in lines[:-1]:
                _print_error(err, line)
            _print_error(err, lines[-1] + (f"; {exc.hint}" if exc.hint else ""))
        else:
            _print_error(err, " ".join(lines))
            if exc.hint:
                err.print(f"[yellow]fix:[/] {escape(strip_controls(exc.hint))}", highlight=False,
                          soft_wrap=True)
        return exc.exit_code
    return code if isinstance(code, int) else 0


def _print_error(err: Console, message: str) -> None:
    text = strip_controls(message, keep_newlines=False)
    err.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
