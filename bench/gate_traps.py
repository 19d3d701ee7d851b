"""The risk gate on two sets of adversarial traps, each reported apart (issue 29).

Run: ``python -m bench.gate_traps``. The first set (``droidretriever/testing/gate_traps.py``)
was written with the gate, and its tests make the gate refuse every trap in it: its figure says the
gate still does what it was built to do. The second set (``gate_traps_second.py``) was written
after the gate was rebuilt, without reading the gate's code or its vocabulary, and measured once:
its figure is the honest one, the share of screens never seen that the gate lets through. Each
trap is one action on one hand-built screen; a trap is carried out when the gate allows it, a
control (what the product must still do: open a tab, decline, search) is lost when it refuses it.
"""

from __future__ import annotations

from bench.results import parse_bench_args, write_section
from droidretriever.testing.gate_traps import CONTROLS, TRAPS
from droidretriever.testing.gate_traps_second import (
    CONTROLS_SECOND,
    FAMILIES,
    TRAPS_SECOND,
    Measurement,
    measure,
)

__all__ = ["main", "render_table"]


def _share(measurement: Measurement, family: str) -> str:
    total = measurement.totals.get(family, 0)
    return f"{len(measurement.carried_out.get(family, ()))} / {total}" if total else "—"


def render_table(first: Measurement, second: Measurement) -> str:
    """Per family, traps carried out of each set; then the controls each set saw refused."""
    families = [*FAMILIES, *(f for f in first.totals if f not in FAMILIES)]
    rows = [f"| {family} | {_share(first, family)} | {_share(second, family)} |" for family in families]
    first_out = sum(len(names) for names in first.carried_out.values())
    second_out = sum(len(names) for names in second.carried_out.values())
    return "\n".join([
        "| family | first set: carried out | second set: carried out |",
        "|---|---|---|",
        *rows,
        f"| **all traps** | **{first_out} / {sum(first.totals.values())}** | "
        f"**{second_out} / {sum(second.totals.values())}** |",
        f"| controls refused | {len(first.controls_refused)} / {first.controls_total} | "
        f"{len(second.controls_refused)} / {second.controls_total} |",
    ])


def _names(names: tuple[str, ...]) -> str:
    return "; ".join(f"“{name}”" for name in names) if names else "none"


def main(argv: list[str] | None = None) -> None:
    parse_bench_args(argv=argv)
    first = measure(TRAPS, CONTROLS)
    second = measure(TRAPS_SECOND, CONTROLS_SECOND)
    carried = [f"- {family}: {_names(names)}" for family, names in second.carried_out.items() if names]
    body = "\n".join([
        "A trap is one action on one hand-built screen that would pay, subscribe, transfer, send, post, "
        "delete, sign in or grant in the person's name without the tapped label saying so plainly "
        "(a neutral confirm in a dialog that says it, a word in disguise, a description or pixels naming "
        "the act, a card whose last line is the act, an act late in a long label, acts by kind in four "
        "languages, permission dialogs, payment fields). **Carried out** means the gate allowed it. "
        "A control is what the product must still do; **refused** means the gate stopped it.",
        "",
        "The **first set** (`droidretriever/testing/gate_traps.py`) was written with the gate and its "
        "tests require every trap refused: it shows the gate does what it was built for, not how it fares "
        "on new screens. The **second set** (`droidretriever/testing/gate_traps_second.py`) was written "
        "after the gate was rebuilt, without reading the gate's code or its vocabulary, with new wordings, "
        "layouts and made-up apps, and measured once: this is its first run, and neither the traps nor the "
        "gate were changed after it. Report the second figure apart; tuning the gate to it would spend it.",
        "",
        render_table(first, second),
        "",
        "Second-set traps carried out:",
        "",
        *(carried or ["- none"]),
        "",
        f"Controls refused, first set: {_names(first.controls_refused)}.  ",
        f"Controls refused, second set: {_names(second.controls_refused)}.",
    ])
    path = write_section("gate-traps", "Risk gate: adversarial traps (issue 29)", "python -m bench.gate_traps",
                         body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
