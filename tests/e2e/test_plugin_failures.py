"""A plugin's model backend or judge that raises something other than a ``BackendError`` (a bug of the plugin):
the call fails as a model call that could not answer does (``PluginError``, naming the plugin, the exception's
class and message), never as a traceback. ``vericite generate`` records the question as failed and goes on; when
every call fails it ends with one line and a non-zero exit. ``evaluate`` with a plugin judge that raises ends in
one line, as with a judge whose server fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.fakes.judges import KeywordJudge
from vericite.models.fake import FakeBackend

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from vericite.models.fake import FakeBackend


class Flaky(FakeBackend):
    def generate(self, prompts, params):
        return 1 / 0


def from_spec(arg, *, ctx, **options):
    return Flaky("flaky")
'''


def test_an_installed_plugin_backend_that_always_raises_ends_generate_in_one_line(tmp_path):
    site = tmp_path / "site"
    info = site / "vericite_flaky-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vericite-flaky\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[vericite.plugins]\nbackends.flaky = vericite_flaky:from_spec\n", encoding="utf-8")
    (site / "vericite_flaky.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src"), str(ROOT)])}
    out = tmp_path / "g"
    p = subprocess.run([sys.executable, "-m", "vericite", "generate", "--method", "fake", "--model", "flaky:x", "--dataset", "demo",
                        "--out", str(out), "-q", "--no-cache"], env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode != 0 and "Traceback" not in p.stderr + p.stdout, p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, p.stderr
    assert "backend 'flaky:x' (plugin vericite-flaky) failed: ZeroDivisionError: division by zero" in lines[0]
    errors = [json.loads(x) for x in (out / "errors.jsonl").read_text().splitlines()]
    assert errors and all(e["error"] == "backend 'flaky:x' (plugin vericite-flaky) failed: ZeroDivisionError: division by zero" for e in errors)


class EveryOther(FakeBackend):
    """A plugin backend whose every other call raises (never three in a row)."""

    def __init__(self) -> None:
        super().__init__("every-other")
        self.n = 0

    def generate(self, prompts, params):
        self.n += 1
        if self.n % 2:
            raise ValueError(f"bad call {self.n}")
        return super().generate(prompts, params)


def test_a_plugin_backend_that_sometimes_raises_fails_those_questions_and_the_run_goes_on(tmp_path):
    registry.backends.register("every-other", lambda arg, *, ctx, **o: EveryOther(), replace=True)
    try:
        out = tmp_path / "g"
        r = CliRunner().invoke(cli, ["generate", "--method", "fake", "--model", "every-other", "--dataset", "demo", "--out", str(out),
                                     "-q", "--no-cache", "--max-failures", "60%"])  # fmt: skip
    finally:
        registry.backends.unregister("every-other")
    assert r.exit_code == 0 and r.exception is None, r.output
    errors = [json.loads(x) for x in (out / "errors.jsonl").read_text().splitlines()]
    answered = (out / "samples.jsonl").read_text().splitlines()
    assert len(errors) == 3 and len(answered) == 2
    assert errors[0]["error"] == "backend 'every-other' (plugin) failed: ValueError: bad call 1"
    assert json.loads((out / "manifest.json").read_text())["summary"]["failed_calls"] == 3


class Broken(KeywordJudge):
    def judge(self, pairs):
        raise AttributeError("'NoneType' object has no attribute 'score'")


def test_evaluate_with_a_plugin_judge_that_raises_ends_in_one_line(tmp_path):
    knowledge = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]
    rec = {"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome].", "knowledge": knowledge}
    (tmp_path / "in.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    registry.judges.register("broken", lambda arg, *, ctx, **o: Broken(), replace=True)
    try:
        r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "-q", "--judge", "broken"])
    finally:
        registry.judges.unregister("broken")
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit) and "Traceback" not in r.output, (r.output, r.exception)
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "judge 'broken' (plugin) failed: AttributeError: 'NoneType' object has no attribute 'score'" in lines[0], r.output
