"""Fail when modules import each other in a circle, TYPE_CHECKING and function-level imports included.

    python scripts/find_import_cycles.py      # run by scripts/test.sh after lint-imports

The packages are import-linter's ``root_packages`` (pyproject.toml). The graph
is grimp's (the library under import-linter); each strongly connected group of
two or more modules is a circle, printed with one shortest path around it.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def find_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Groups of modules that reach each other by imports (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    group: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == module:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def describe(graph: grimp.ImportGraph, group: list[str]) -> str:
    """The group's modules and one way around the circle from the first of them."""
    first, rest = group[0], group[1:]
    back = min((graph.find_shortest_chain(importer=m, imported=first) or () for m in rest),
               key=lambda chain: len(chain) or 10**6)
    onward = graph.find_shortest_chain(importer=first, imported=back[0]) if back else None
    path = [*(onward or (first,)), *back[1:]]
    return f"{len(group)} modules: " + " -> ".join(path)


def main() -> int:
    """Print every circle and return 1, or say there are none and return 0."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*config["root_packages"], cache_dir=None)
    groups = find_cycles(graph)
    for group in groups:
        print(f"import circle: {describe(graph, group)}")
    if groups:
        print(f"{len(groups)} import circles: move what both sides need into a module they both "
              "import, or pass it in (a Protocol); see docs/decisions.md 'Layout'.")
        return 1
    print(f"no import circles among {len(graph.modules)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
