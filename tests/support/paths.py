"""The checkout's folders, wherever a test module sits below tests/."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

#: the repository root (pyproject.toml, configs/, docs/, src/)
REPO = Path(__file__).resolve().parents[2]
#: the package's source
SRC = REPO / "src" / "vericite"


def load_script(relative: str) -> ModuleType:
    """A script of the checkout that is not a package module (``benchmarks/bench_vtg.py``, ``scripts/...``),
    imported from its file under the name of its stem."""
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
