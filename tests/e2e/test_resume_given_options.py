"""A method option a run folder was *given* (VTG's ``repeat_overlap``, conner-knowledge's ``demo_draw``: options the
method keeps on resume, ``resumed_options``) and that ``--resume`` leaves out is the folder's: the run goes on as it
began, said in one line on stderr, the local loop, a pool and ``vericite run``'s levels alike; another value given
to ``--resume`` is refused in one line, the folder untouched."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.runs.loop import generate_run
from vericite.types import Sample

from tests.support.ray_runs import without_timings
from tests.support.vtg import DOCS, scripted, vtg_experiment_config

PARIS, PARIS_AGAIN, ROME = "Paris is the capital of France.", "The capital of France is Paris.", "Rome is the capital of Italy."
ITEMS = [
    {"question": q, "answer": "Paris and Rome.", "claims": ["Paris is a capital."], "docs": [{"title": d.title, "text": d.text} for d in DOCS]}
    for q in ("Which cities are capitals?", "Name two capitals.", "Which capitals are in Europe?")
]  # fmt: skip
EXACT = ("--method-arg", "repeat_overlap=1.0", "--method-arg", "strip_preamble=false")  # not the defaults (0.8, true)


def repeating():
    """Paris, Paris again in other words (a near repeat under the default 0.8, not under 1.0), Rome."""
    return scripted([PARIS, PARIS_AGAIN, ROME], cites={"Rome": "title:Rome"})


@pytest.fixture
def model():
    registry.backends.register("vtg-given", lambda arg, *, ctx, **o: repeating(), replace=True)
    yield "vtg-given"
    registry.backends.unregister("vtg-given")


def generate(tmp_path, out, *extra, code=0):
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    args = ["generate", "--method", "vtg", "--dataset", data, "--model", "vtg-given", "--judge", "fake", "--k", 4,
            "--docs-per-query", 1, "--trials", 0, "--out", tmp_path / out, "-q", "--no-cache", *extra]  # fmt: skip
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == code, r.output
    return r


def samples(folder):
    return without_timings((folder / "samples.jsonl").read_text(encoding="utf-8"))


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
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
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
    exact = vtg_experiment_config(tmp_path, ITEMS, "vtg-given", "vtg-ablation", "levels: [0, 3]\n")
    text = exact.read_text().replace("trials: 1, verifier_judge: fake}", "trials: 0, verifier_judge: fake, k: 4}").replace("{k: 2, ", "{")
    exact.write_text(text.replace("verifier_judge: fake,", "verifier_judge: fake, repeat_overlap: 1.0,"), encoding="utf-8")
    plain = tmp_path / "plain.yaml"
    plain.write_text(text, encoding="utf-8")

    def run(cfg, out, *extra):
        r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / out), "--no-cache", "-q", *extra])
        assert r.exit_code == 0, r.output
        return r

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
