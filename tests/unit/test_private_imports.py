"""No module of vericite reaches into another's private names: an import of a name starting with one underscore
from another vericite module (``from .meta import _as_pair``, function-level ones included), or a use of one
through a module imported by name (``from . import meta`` then ``meta._as_pair``; ``import vericite.report.sections``
then ``vericite.report.sections._section``; ``models.openai_wire._snippet``; ``getattr(meta, "_as_pair")``), fails
here. An instance's private attributes (``obj._x``) are not looked at. A helper two modules
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
                    # ``import vericite.a.b`` binds ``vericite``; ``import vericite.a.b as m`` binds ``m``
                    modules[alias.asname or "vericite"] = alias.name if alias.asname else "vericite"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _owner(node.value, modules)  # the dotted vericite path the attribute is read off, if any
            if owner and owner[1] != module and not _is_module(f"{owner[1]}.{node.attr}"):
                found.append(f"{node.lineno}: {owner[0]}.{node.attr} ({owner[1]})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr"):
            args = node.args
            if len(args) >= 2 and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str) and _private(args[1].value):
                owner = _owner(args[0], modules)
                if owner and owner[1] != module and not _is_module(f"{owner[1]}.{args[1].value}"):
                    found.append(f"{node.lineno}: {node.func.id}({owner[0]}, {args[1].value!r}) ({owner[1]})")
    return found


def _owner(node: ast.expr, modules: dict[str, str]) -> tuple[str, str] | None:
    """(the source text, the dotted vericite path) of ``node`` when it is a name bound to an imported vericite module
    (or a name of one) or a chain of public attributes off one (``vericite.report.sections``, ``models.openai_wire``);
    None otherwise: an instance's attributes (``obj._x``) are not looked at, and a chain through a private attribute
    is reported at that attribute."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        if _private(node.attr):
            return None
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in modules:
        return None
    attrs.reverse()
    return ".".join([node.id, *attrs]), ".".join([modules[node.id], *attrs])


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
    # attributes read off a module through a chain of modules, and getattr's strings (not an instance's attributes)
    chains = """
import vericite.report.sections
import vericite.models as vm
from vericite import models
from .. import _builtins

def g(obj):
    return (vericite.report.sections._section, vm.openai_wire._snippet, models.openai_wire.snippet, vm._priv.inner._z,
            getattr(models.openai_wire, "_snippet"), getattr(models, "snippet"), vericite._builtins, _builtins.x, obj._x, obj.meta._y)
"""
    assert sorted(f.split(": ", 1)[1] for f in private_uses(chains, "vericite.judges.x")) == [
        "getattr(models.openai_wire, '_snippet') (vericite.models.openai_wire)",
        "vericite.report.sections._section (vericite.report.sections)",
        "vm._priv (vericite.models)",
        "vm.openai_wire._snippet (vericite.models.openai_wire)",
    ]
    assert private_uses("import vericite.judges.x\nvericite.judges.x._mine\n", "vericite.judges.x") == []  # its own, by its full name


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
