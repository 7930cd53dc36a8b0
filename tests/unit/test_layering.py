"""The import graph follows the layering: every import of every module (function-level ones included) points
to its own floor or one below, and the packages import each other without cycles.

Floors, bottom to top (docs/design.md, review §7): the ground floor, then knowledge/models/attribution, judges,
metrics, tasks, {generate, evaluate, datasets, bench}, runs, report, cli. A new top-level module or package must be
given its floor in FLOORS below.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "vericite"

FLOORS: dict[str, int] = {}
for _floor, _units in enumerate(
    [
        # "vericite" is the package itself (its __init__: __version__)
        ["vericite", "_builtins", "types", "protocols", "jsonl", "normalise", "progress", "totals", "outputs", "printable", "errors", "paths", "registry", "guard", "guard_results", "stats", "threads", "versions"],
        # distributed: pools of workers (Ray actors, threads) and the per-batch checkpoint; knows nothing above it
        ["knowledge", "models", "attribution", "distributed"],
        ["judges"],
        ["metrics"],
        # tasks declare what a benchmark reads and which metric families score it; evaluate, run and report serve them
        ["tasks"],
        # fakes: the deterministic stand-ins of every Protocol (tests, contract suites, plugin authors); nothing
        # in production imports them, and _builtins registers them by name only
        ["generate", "evaluate", "datasets", "bench", "fakes"],
        ["runs"],
        ["report"],
        # __main__: `python -m vericite`, the cli itself
        ["cli", "__main__"],
    ]
):
    FLOORS.update(dict.fromkeys(_units, _floor))

# Known upward imports, each with what removes it; any other upward import fails the test, and so does an entry
# here whose import is gone (delete it then). (importing module, imported module)
ALLOWED_UPWARD: set[tuple[str, str]] = set()


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _exists(module: str) -> bool:
    rel = Path(*module.split("."))
    return (SRC.parent / rel).with_suffix(".py").is_file() or (SRC.parent / rel / "__init__.py").is_file()


def imports_of(path: Path) -> list[tuple[str, int]]:
    """(imported vericite module, line) for every import in the file, at any depth (functions, TYPE_CHECKING)."""
    module, is_package = _module_name(path)
    package = module.split(".") if is_package else module.split(".")[:-1]
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{base}.{a.name}"
                out.append((sub if _exists(sub) else base, node.lineno))
    return sorted({(m, line) for m, line in out if m == "vericite" or m.startswith("vericite.")}, key=lambda x: (x[1], x[0]))


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "vericite"


def edges() -> list[tuple[str, str, str, int]]:
    """(importing module, imported module, file, line) for every import between two different units."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module, _ = _module_name(path)
        for target, line in imports_of(path):
            if unit(target) != unit(module):
                found.append((module, target, str(path.relative_to(SRC.parent)), line))
    return found


def test_every_unit_has_a_floor():
    units = {unit(_module_name(p)[0]) for p in SRC.rglob("*.py")}
    missing = sorted(units - set(FLOORS))
    assert not missing, f"give these modules or packages a floor in FLOORS: {missing}"


def test_no_import_runs_up_the_layering():
    upward = [
        f"{where}:{line}: {module} (floor {FLOORS.get(unit(module))}) imports {target} (floor {FLOORS.get(unit(target))})"
        for module, target, where, line in edges()
        if FLOORS.get(unit(target), -1) > FLOORS.get(unit(module), -1) and (module, target) not in ALLOWED_UPWARD
    ]
    assert not upward, "imports that run back up:\n" + "\n".join(upward)
    present = {(m, t) for m, t, _, _ in edges()}
    gone = sorted(ALLOWED_UPWARD - present)
    assert not gone, f"these allowed upward imports are gone; delete them from ALLOWED_UPWARD: {gone}"


def test_no_cycles_between_packages():
    graph: dict[str, set[str]] = {}
    for module, target, _, _ in edges():
        if (module, target) not in ALLOWED_UPWARD:
            graph.setdefault(unit(module), set()).add(unit(target))
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        path.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return path[path.index(v) :] + [v]
            if v not in state and (cycle := visit(v)):
                return cycle
        path.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state and (cycle := visit(u)):
            raise AssertionError("packages import each other in a cycle: " + " -> ".join(cycle))


def test_the_checker_sees_function_level_and_relative_imports():
    """The parser itself: imports inside functions count, and relative imports resolve to modules."""
    assert "vericite.progress" in {m for m, _ in imports_of(SRC / "evaluate" / "pipeline.py")}  # only imported inside functions
    rundir = {m for m, _ in imports_of(SRC / "runs" / "rundir.py")}  # from .. import __version__, jsonl
    assert {"vericite", "vericite.jsonl", "vericite.errors"} <= rundir
    assert unit("vericite.metrics.kalma") == "metrics" and unit("vericite") == "vericite"


def test_the_layout_doc_puts_every_unit_on_its_floor():
    """docs/layout.md's table of floors says what FLOORS says."""
    import re

    doc = (SRC.parents[1] / "docs" / "layout.md").read_text(encoding="utf-8")
    documented: dict[str, int] = {}
    for row in re.findall(r"^\| (ground|\d) \| ([^|]+) \|", doc, flags=re.M):
        floor = 0 if row[0] == "ground" else int(row[0])
        for name in re.findall(r"`([\w/.]+)`", row[1]):
            documented[name.removesuffix("/").removesuffix(".py")] = floor
    assert documented == {u: f for u, f in FLOORS.items() if u != "vericite"}
