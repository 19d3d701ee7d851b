"""``droidretriever doctor``: is every model role ready for a run? One probe per role, one table.

The same checks run once before ``ask``, at the end of ``up`` and when a device
worker starts (:func:`inference.llm.check_roles`): a role's server answers,
serves the configured model name, has room in the ``max_model_len`` it lists
for the role's ``max_tokens`` plus its prompt budget, returns JSON for a
``json_schema`` ``response_format``, and takes an image when ``vision`` is on;
the transcriber answers ``/v1/audio/transcriptions``. See docs/models.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core.config import load_settings
from droidretriever.cli._app import app

if TYPE_CHECKING:
    from inference.llm import ProbeResult

__all__ = ["doctor", "print_probes"]

console = Console()

_STYLE = {"ok": "green", "absent": "dim", "refused": "red", "unreachable": "red"}


def print_probes(results: Sequence[ProbeResult]) -> None:
    """The probes as a table: role, endpoint, model, result, checks passed, what to do."""
    table = Table(title="Model roles")
    for column in ("role", "endpoint", "model", "result", "checks passed", "detail / fix"):
        table.add_column(column, overflow="fold")
    for result in results:
        style = _STYLE.get(result.status.value, "")
        note = result.detail + (f"\nfix: {result.fix}" if result.fix and not result.usable else "")
        table.add_row(result.role, escape(result.base_url or "-"), escape(result.model or "-"),
                      f"[{style}]{result.status.value}[/]", ", ".join(result.passed) or "-", escape(note))
    console.print(table)


@app.command()
def doctor() -> None:
    """Check each model role's endpoint (served name, context length, JSON output, images) and the speech server."""
    from inference.llm import probe_roles

    settings = load_settings()
    with console.status("probing the model roles..."):
        results = probe_roles(settings)
    print_probes(results)
    if not all(r.usable for r in results):
        raise SystemExit(1)
    if all(r.status.value == "absent" for r in results):
        console.print("No model is configured: the rules decide everything and reports say so. "
                      "docs/models.md shows how to serve the roles with vLLM.", highlight=False)
