"""VTG's configs and experiments through ``vericite run`` with fakes: each configs/vtg-*.yaml is a valid run
config naming a registered experiment; an experiment's levels change the method's options (vtg-ablation,
vtg-trials) and every level answers the same questions and is scored by ALCE's metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.bench.experiments.vtg import EXPERIMENTS
from vericite.cli.main import cli
from vericite.runs.runner import load_run_config

from tests.support.vtg import DOCS, script_model, vtg_experiment_config  # noqa: F401  (a fixture)

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [{"question": "Which cities are capitals?", "answer": "Paris and Rome.", "claims": ["Paris is a capital."], "docs": [{"title": d.title, "text": d.text} for d in DOCS]}]


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("vtg-*.yaml")), ids=lambda p: p.name)
def test_every_vtg_config_loads(path):
    cfg = load_run_config(str(path), {})
    assert cfg.method == "vtg" and cfg.task == ("kalma" if "-kg" in path.name else "alce")
    if cfg.experiment:
        exp = registry.create("experiments", cfg.experiment)
        assert set(cfg.levels or ()) <= set(exp.levels)
        for level in exp.levels:
            gen = {"method": cfg.method, "method_args": cfg.method_args, **(exp.generation_at(level, cfg.method_args) or {})}
            assert gen["method"] in ("vtg", "vanilla", "summ", "snippet", "rerank")
            opts = registry.methods.get(gen["method"]).options_model(**gen["method_args"])  # valid options of that method
            assert opts is not None


def test_methods_levels_give_the_baselines_their_options():
    exp = EXPERIMENTS["vtg-methods"]
    args = {"k": 3, "trials": 1, "verifier_judge": "llm:x"}
    assert exp.generation_at(0, args) == {"method": "vanilla", "method_args": {"ndoc": 3, "shot": 2}}
    assert exp.generation_at(3, args)["method_args"]["rerank_judge"] == "llm:x"
    assert exp.generation_at(4, args) == {"method": "vtg", "method_args": args}
    assert EXPERIMENTS["vtg-trials"].generation_at(2, args)["method_args"]["trials"] == 2


def test_run_the_ablation_experiment(tmp_path, script_model):
    cfg = vtg_experiment_config(tmp_path, ITEMS, script_model, "vtg-ablation", "levels: [0, 2]\n")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    outputs = {}
    for level in (0, 2):
        rec = json.loads((tmp_path / "run" / f"level-{level}" / "samples.jsonl").read_text().splitlines()[0])
        outputs[level] = rec["output"]
        man = json.loads((tmp_path / "run" / f"level-{level}" / "manifest.json").read_text())
        assert man["method"] == "vtg@1" and man["ablation"]["verifier"] is (level != 2)
    assert outputs[0] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    assert outputs[2] == "Paris is the capital of France [2]. Rome is the capital of Italy."  # no verifier: as cited
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    rows = res["experiments"]["vtg-ablation"]["rows"]
    assert [row["level"] for row in rows] == [0, 2]
    assert rows[0]["metrics"]["alce_citation_recall"]["value"] == 1.0 > rows[1]["metrics"]["alce_citation_recall"]["value"]
    # the report's VTG trace section: a row per level, read from the levels' answers
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "run" / "report.html").read_text()
    section = page[page.index('<section id="vtg-trace">') :]
    section = section[: section.index("</section>")]
    assert "vtg-ablation = 0" in section and "vtg-ablation = 2" in section
    assert 'href="#vtg-trace"' in page


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("vtg-*.yaml")), ids=lambda p: p.name)
def test_judge_flag_overrides_the_verifiers_judge_that_names_the_configs_judge(path):
    # `vericite run configs/vtg-x.yaml --model M --judge llm:M` kept method_args.verifier_judge (the embedded Qwen)
    cfg = load_run_config(str(path), {"model": "smollm2-135m", "judge": "llm:smollm2-135m"})
    written = load_run_config(str(path), {})
    if "verifier_judge" not in written.method_args:
        return  # the verifiers' judge is VTG's default, llm:<--model> (vtg-kg-removal)
    if written.method_args["verifier_judge"] != written.judge:  # a verifiers' judge of its own (vtg-kg-removal-llm3): kept
        assert cfg.judge == "llm:smollm2-135m" and cfg.method_args["verifier_judge"] == written.method_args["verifier_judge"]
        return
    assert cfg.judge == "llm:smollm2-135m" and cfg.method_args["verifier_judge"] == "llm:smollm2-135m"
    if cfg.experiment == "vtg-methods":
        assert registry.create("experiments", cfg.experiment).generation_at(3, cfg.method_args)["method_args"]["rerank_judge"] == "llm:smollm2-135m"
    assert load_run_config(str(path), {}).method_args["verifier_judge"] == "llm:qwen2.5-coder-1.5b"  # no flag: as written


def test_a_verifiers_judge_of_its_own_is_kept(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("name: x\ndataset: demo\nmethod: vtg\nmethod_args: {verifier_judge: 'llm:a'}\ntask: alce\njudge: 'llm:b'\n")
    assert load_run_config(str(f), {"judge": "fake"}).method_args["verifier_judge"] == "llm:a"


def test_the_methods_config_runs_end_to_end_with_fakes(tmp_path):
    from tests.contract.impls import require_alce_prompts

    require_alce_prompts()
    r = CliRunner().invoke(cli, ["run", str(ROOT / "configs" / "vtg-methods.yaml"), "--model", "fake", "--judge", "fake", "--limit", "1", "--no-cache", "-q", "-o", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    for level, method in enumerate(("vanilla", "summ", "snippet", "rerank", "vtg")):
        man = json.loads((tmp_path / "run" / f"level-{level}" / "manifest.json").read_text())
        assert man["method"].startswith(method) and man["model"]["name"] == "fake"
        if method in ("rerank", "vtg"):
            assert man["config"].get("rerank_judge" if method == "rerank" else "verifier_judge") == "fake"
    assert json.loads((tmp_path / "run" / "results.json").read_text())["experiments"]["vtg-methods"]["token_figure"] == "alce_citation_f1"


def test_vtg_kg_removal_scores_vtgs_na_as_kalmas(tmp_path):
    # issue 12 part 3: VTG-KG against KaLMA with [NA] precision/recall: the removed triples are the absent set
    r = CliRunner().invoke(cli, ["run", str(ROOT / "configs" / "vtg-kg-removal.yaml"), "--model", "fake", "--limit", "2", "--no-cache", "-q", "-o", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "run" / "results.json").read_text())["experiments"]["conscious-incompetence"]["rows"]
    assert [row["level"] for row in rows] == [0, 1, 2, 3]
    assert rows[1]["metrics"]["na_precision"]["n"] > 0  # [NA] scored against the removed triples
    man = json.loads((tmp_path / "run" / "level-1" / "manifest.json").read_text())
    assert man["method"] == "vtg@1" and man["judge"].startswith("llm:fake")
    # the simplifier by halving (the config's deviation from the paper: 14-73 triples each a judge call otherwise)
    assert man["simplifier_strategy"] == "halving" and man["config"]["simplifier_strategy"] == "halving"
