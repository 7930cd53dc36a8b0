"""A method option a run folder was *given* (VTG's ``repeat_overlap``, conner-knowledge's ``demo_draw``: options the
method keeps on resume, ``resumed_options``) and that ``--resume`` leaves out is the folder's: the run goes on as it
began, said in one line on stderr, the local loop, a pool and ``vericite run``'s levels alike; another value given
to ``--resume`` is refused in one line, the folder untouched."""

from __future__ import annotations

import functools
import json

import pytest

from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.runs.loop import generate_run
from vericite.types import Sample

from tests.support.vtg_cli import level_configs, registered, repeating, samples, write_items
from tests.support.vtg_cli import generate as vtg_generate
from tests.support.vtg_cli import run as run_cli

EXACT = ("--method-arg", "repeat_overlap=1.0", "--method-arg", "strip_preamble=false")  # not the defaults (0.8, true)
generate = functools.partial(vtg_generate, model="vtg-given")


@pytest.fixture
def model():
    with registered("vtg-given", repeating) as name:
        yield name


def files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".lock"}


def test_a_vtg_folder_given_options_resumes_with_them_when_they_are_left_out(tmp_path, model):
    generate(tmp_path, "exact", *EXACT)  # given throughout
    generate(tmp_path, "given", *EXACT, "--limit", 1)
    r = generate(tmp_path, "given", "--limit", 2, "--resume")  # left out: the folder's
    assert "resuming" in r.output and "with the folder's repeat_overlap=1.0, strip_preamble=false" in r.output, r.output
    generate(tmp_path, "given", "--resume", "--method-arg", "repeat_overlap=1.0")  # given as it was: the same run
    assert samples(tmp_path / "given") == samples(tmp_path / "exact")
    assert "The capital of France is Paris [1]." in samples(tmp_path / "given")  # 1.0: the near repeat kept
    manifest = json.loads((tmp_path / "given" / "manifest.json").read_text())
    assert manifest["config"]["repeat_overlap"] == 1.0 and manifest["config"]["strip_preamble"] is False and manifest["repeat_overlap"] == 1.0
    before = files(tmp_path / "given")
    r = generate(tmp_path, "given", "--resume", "--method-arg", "repeat_overlap=0.8", code=2)
    assert r.output.startswith("error: cannot resume") and len(r.output.strip().splitlines()) == 1, r.output
    assert "repeat_overlap: 1.0 -> 0.8" in r.output and files(tmp_path / "given") == before


def test_a_pool_resumes_a_given_option_left_out(tmp_path, model, capsys):
    data = write_items(tmp_path)
    args = {"k": 4, "docs_per_query": 1, "trials": 0, "verifier_judge": "fake"}
    given = GenerateConfig(dataset=str(data), method="vtg", model="vtg-given", cache=False, method_args={**args, "repeat_overlap": 1.0})
    pool = {"ray": None, "workers": 2, "backend_factory": repeating, "progress": False, "batch_size": 1}
    generate_pooled(given, tmp_path / "exact", **pool)
    generate_pooled(given.model_copy(update={"limit": 1}), tmp_path / "given", **pool)
    capsys.readouterr()
    generate_pooled(given.model_copy(update={"method_args": args}), tmp_path / "given", resume=True, **pool)
    assert "with the folder's repeat_overlap=1.0" in capsys.readouterr().err
    assert samples(tmp_path / "given") == samples(tmp_path / "exact")


def test_run_resumes_levels_given_an_option_the_config_now_leaves_out(tmp_path, model):
    exact, plain = level_configs(tmp_path, "vtg-given", "repeat_overlap: 1.0,")
    run = functools.partial(run_cli, tmp_path)
    run(exact, "exact")
    run(exact, "given", "--limit", "1")
    assert "with the folder's repeat_overlap=1.0" in run(plain, "given", "--resume").output
    for level in (0, 3):
        assert samples(tmp_path / "given" / f"level-{level}") == samples(tmp_path / "exact" / f"level-{level}")


SAMPLES = [Sample(id=f"s{i}", question=f"question {i}?", meta={"topic": f"T{i}", "reference_knowledge": f"knowledge {i}."}) for i in range(12)]


def test_a_conner_folder_given_demo_draw_resumes_with_it(tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in SAMPLES), encoding="utf-8")

    def run(out, limit, resume=False, **args):
        cfg = GenerateConfig(dataset=str(data), model="fake", method="conner-knowledge", shot=3, seed=7, limit=limit, cache=False, **args)
        generate_run(cfg, tmp_path / out, resume=resume, backend=FakeBackend(default="K."), progress=False)
        return [json.loads(x)["demonstrations"] for x in (tmp_path / out / "samples.jsonl").read_text().splitlines()]

    run("given", 4, demo_draw="run")
    capsys.readouterr()
    drawn = run("given", 8, resume=True)  # left out: the run's questions, as its first items were drawn
    assert "with the folder's demo_draw=run" in capsys.readouterr().err
    assert drawn[4:] == run("fresh", 8, demo_draw="run")[4:]  # the items drawn now: by the rule the folder began with
    assert drawn[4:] != run("dataset", 8)[4:]
    assert json.loads((tmp_path / "given" / "manifest.json").read_text())["config"]["demo_draw"] == "run"
