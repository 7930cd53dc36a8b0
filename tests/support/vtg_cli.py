"""VTG through ``vericite generate`` for the resume tests: three ELI5-like questions over :data:`~tests.support.vtg.DOCS`
written as an ALCE-format file, one call of the CLI with a registered fake model (k 4, one document per query, no
evidence rounds, the fake judge, no cache), and what the run folder holds."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Callable, Iterator

from click.testing import CliRunner, Result

from vericite import registry
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend

from tests.support.ray_runs import without_timings
from tests.support.vtg import DOCS, PARIS, PARIS_AGAIN, ROME, scripted, vtg_experiment_config

ITEMS = [
    {"question": q, "answer": "Paris and Rome.", "claims": ["Paris is a capital."], "docs": [{"title": d.title, "text": d.text} for d in DOCS]}
    for q in ("Which cities are capitals?", "Name two capitals.", "Which capitals are in Europe?")
]  # fmt: skip


def repeating() -> FakeBackend:
    """Paris, Paris again in other words (a near repeat under the default ``repeat_overlap`` 0.8, not under 1.0), Rome."""
    return scripted([PARIS, PARIS_AGAIN, ROME], cites={"Rome": "title:Rome"})


@contextlib.contextmanager
def registered(name: str, make: Callable[[], FakeBackend]) -> Iterator[str]:
    """The backend name ``name``, each build a fresh ``make()``, registered while the block runs."""
    registry.backends.register(name, lambda arg, *, ctx, **o: make(), replace=True)
    try:
        yield name
    finally:
        registry.backends.unregister(name)


def write_items(tmp_path: Path) -> Path:
    """:data:`ITEMS` written as ``tmp_path/eli5_eval.json`` (ALCE's format), its path."""
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    return data


def generate(tmp_path: Path, out: str, *extra: Any, model: str, code: int = 0) -> Result:
    """``vericite generate --method vtg`` over :data:`ITEMS` with ``model`` into ``tmp_path/out``, ``extra`` appended;
    the exit code must be ``code``."""
    args = ["generate", "--method", "vtg", "--dataset", write_items(tmp_path), "--model", model, "--judge", "fake", "--k", 4,
            "--docs-per-query", 1, "--trials", 0, "--out", tmp_path / out, "-q", "--no-cache", *extra]  # fmt: skip
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == code, r.output
    return r


def samples(folder: Path) -> str:
    """The folder's ``samples.jsonl``, timings left out."""
    return without_timings((folder / "samples.jsonl").read_text(encoding="utf-8"))


def records_of(folder: Path) -> list[dict]:
    """The folder's answers, as written."""
    return [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def level_configs(tmp_path: Path, model: str, given: str) -> tuple[Path, Path]:
    """Two ``vericite run`` configs over :data:`ITEMS` with ``model`` (VTG's ablation, levels 0 and 3, k 4, no
    evidence rounds): the first with ``given`` (YAML method args, each followed by a comma), the second without."""
    exact = vtg_experiment_config(tmp_path, ITEMS, model, "vtg-ablation", "levels: [0, 3]\n")
    text = exact.read_text().replace("trials: 1, verifier_judge: fake}", "trials: 0, verifier_judge: fake, k: 4}").replace("{k: 2, ", "{")
    exact.write_text(text.replace("verifier_judge: fake,", f"verifier_judge: fake, {given}"), encoding="utf-8")
    plain = tmp_path / "plain.yaml"
    plain.write_text(text, encoding="utf-8")
    return exact, plain


def run(tmp_path: Path, cfg: Path, out: str, *extra: str) -> Result:
    """``vericite run cfg -o tmp_path/out`` (no cache, quiet), ``extra`` appended; it must succeed."""
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / out), "--no-cache", "-q", *extra])
    assert r.exit_code == 0, r.output
    return r
