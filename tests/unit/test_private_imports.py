"""No module of vericite reaches into another's private names: an import of a name starting with one underscore
from another vericite module (``from .meta import _as_pair``, function-level ones included), or a use of one
through a module imported by name (``from . import meta`` then ``meta._as_pair``), fails here. A helper two modules
share has a public name at its definition; dunder names (``__version__``) are public."""

from __future__ import annotations

import ast
from pathlib import Path

import vericite

SRC = Path(vericite.__file__).resolve().parent

#: modules (relative to src/vericite) left out of the check, each with why; keep it empty where possible
EXCEPTIONS: dict[str, str] = {}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of vericite (``_builtins`` is a module, not a private name)."""
    path = SRC.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_uses(source: str, module: str, is_package: bool = False) -> list[str]:
    """Each private name of another vericite module that ``source`` (the text of ``module``) imports or reads
    through a module it imported, as ``line: what``."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    found: list[str] = []
    modules: dict[str, str] = {}  # a local name bound to a vericite module (or a name of one) -> its dotted path
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target != "vericite" and not target.startswith("vericite."):
                continue
            for alias in node.names:
                if _private(alias.name) and target != module and not _is_module(f"{target}.{alias.name}"):
                    found.append(f"{node.lineno}: from {target} import {alias.name}")
                modules[alias.asname or alias.name] = f"{target}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "vericite" or alias.name.startswith("vericite."):
                    if alias.asname:
                        modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name) and node.value.id in modules:
            if modules[node.value.id] != module:
                found.append(f"{node.lineno}: {node.value.id}.{node.attr} ({modules[node.value.id]})")
    return found


def test_the_check_finds_what_it_is_for():
    # each shape it looks for, and what it leaves alone (its own privates, dunders, other packages' privates, a
    # module whose file name starts with an underscore)
    text = """
from .meta import _as_pair, as_pair
from ..registry import __version__
from . import meta_figures as mf
import vericite.report.sections as sections
from os import _exit

def f():
    from .meta import _late
    return mf._auc_statistic, sections._section, mf.public, _own

_own = 1
"""
    found = private_uses(text, "vericite.judges.meta_alce_figures")
    assert [f.split(": ", 1)[1] for f in found] == [
        "from vericite.judges.meta import _as_pair",
        "from vericite.judges.meta import _late",
        "mf._auc_statistic (vericite.judges.meta_figures)",
        "sections._section (vericite.report.sections)",
    ], found
    assert private_uses("from . import _x\nfrom .sub import _y\n", "vericite.pkg", is_package=True) == ["2: from vericite.pkg.sub import _y"]
    assert private_uses("from . import _x, _builtins\n", "vericite.mod") == ["1: from vericite import _x"]  # a module is no private name
    assert private_uses("from .conner import _mine\n", "vericite.metrics.conner") == []  # its own name


def test_no_module_imports_another_modules_private_names():
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in EXCEPTIONS:
            continue
        for use in private_uses(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py"):
            problems.append(f"src/vericite/{rel}:{use}")
    assert not problems, "private names used across modules (give a shared helper a public name):\n" + "\n".join(problems)


def test_the_exceptions_are_still_needed():
    for rel in EXCEPTIONS:
        path = SRC / rel
        assert path.is_file() and private_uses(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py"), rel
