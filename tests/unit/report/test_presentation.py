"""The report draws metrics and experiments from what results.json says about them (family, range, short name;
level order, curves), not from a list of KaLMA's metrics; evaluate and run write those fields; the report package
imports no metric module, ships its assets, and renders each citation kind with its own renderer.

Old files, which say none of this, render as they always did: tests/unit/report/test_report.py builds its run
folders that way.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from vericite.report import write_report

from tests.support.paths import SRC
from tests.support.pipeline import citing_reply, make_samples
from tests.support.report import Dom



def entry(value, family, rng, short, ci=None):
    return {"value": value, "n": 10, "ci": ci, "higher_is_better": True, "judge": None, "reason": None,
            "family": family, "range": rng, "short_name": short}


def write_run(tmp_path: Path, doc: dict) -> Dom:
    run = tmp_path / "r"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    return Dom(write_report(run).read_text(encoding="utf-8"))


def test_families_ranges_and_order_come_from_results_json(tmp_path):
    dom = write_run(tmp_path, {"kind": "evaluate", "metrics": {
        "zeta_score": entry(7.5, "Zeta family", [0, 10], "zeta", [6.0, 9.0]),
        "alpha_score": entry(2.0, "Zeta family", [0, 10], "alpha"),
        "citation_correctness": entry(0.5, None, None, "citation_correctness"),  # a known name, declared in no family
    }})
    # the file's own order, not a built-in one
    assert [r.attrs["data-metric"] for r in dom.find_all("tr", cls="metric")] == ["zeta_score", "alpha_score", "citation_correctness"]
    charts = dom.find_all("svg", cls="bar-chart")
    assert [c.attrs["aria-label"] for c in charts] == ["Zeta family", "Other metrics"]
    ticks = [n.all_text() for n in charts[0].iter() if "tick" in n.classes]
    assert ticks[0] == "0" and ticks[-1] == "10"  # the family's declared range
    labels = [n.all_text() for n in charts[1].iter() if "bar-label" in n.classes]
    assert labels == ["citation_correctness"]


def test_experiment_declares_level_order_curves_and_legend_names(tmp_path):
    def row(level, z, a):
        return {"level": level, "metrics": {"zeta_score": entry(z, "Zeta family", [0, 1], "zeta"),
                                            "alpha_score": entry(a, "Zeta family", [0, 1], "alpha")}}

    dom = write_run(tmp_path, {"kind": "run", "metrics": {}, "experiments": {
        "noise": {"x": "noise level", "descending": True, "curves": [{"title": "Zeta curve", "metrics": ["zeta_score"]}],
                  "rows": [row(1, 0.2, 0.3), row(3, 0.4, 0.5), row(2, 0.3, 0.4)]},
        "accuracy up": {"x": "retrieval accuracy (%)", "descending": False, "curves": [],
                        "rows": [row(100, 0.2, 0.3), row(20, 0.4, 0.5)]},
    }})
    exps = {e.attrs["data-experiment"]: e for e in dom.find_all("div", cls="experiment")}
    svgs = [n for n in exps["noise"].iter() if n.tag == "svg"]
    assert [s.attrs["aria-label"] for s in svgs] == ["Zeta curve", "Other metrics"]
    ticks = [n.all_text() for n in svgs[0].iter() if "tick" in n.classes and n.attrs.get("text-anchor") == "middle"]
    assert ticks == ["3", "2", "1"]  # declared descending, though the label says nothing of it
    assert [n.all_text() for n in svgs[0].iter() if "legend" in n.classes] == ["zeta"]
    svgs = [n for n in exps["accuracy up"].iter() if n.tag == "svg"]
    assert [s.attrs["aria-label"] for s in svgs] == ["Other metrics"]  # no curve declared
    ticks = [n.all_text() for n in svgs[0].iter() if "tick" in n.classes and n.attrs.get("text-anchor") == "middle"]
    assert ticks == ["20", "100"]  # declared ascending, though the label says "accuracy"


@pytest.mark.parametrize("geval", [False, True])
def test_evaluate_writes_how_each_metric_is_shown(tmp_path, geval):
    from vericite.cli.main import cli
    from vericite.runs.config import GenerateConfig
    from vericite.runs.loop import generate_run
    from vericite.metrics.base import MetricSpec
    from vericite.models.fake import FakeBackend

    generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "gen", samples=make_samples(),
                 backend=FakeBackend(replies=citing_reply), progress=False)
    args = ["evaluate", "-i", str(tmp_path / "gen" / "samples.jsonl"), "-o", str(tmp_path / "ev"), "-q"]
    r = CliRunner().invoke(cli, args + (["--geval-model", "fake"] if geval else []))
    assert r.exit_code == 0, r.output
    metrics = json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]
    assert len(metrics) == 21 and all({"family", "range", "short_name"} <= set(m) for m in metrics.values())
    assert metrics["citation_f1_micro"]["family"] == "Citation quality" and metrics["citation_f1_micro"]["short_name"] == "F1"
    assert metrics["na_recall"]["range"] == [0.0, 1.0] and metrics["na_recall"]["short_name"] == "[NA] recall"
    assert metrics["alignment_macro"]["short_name"] == "alignment_macro"  # no short name declared: the name
    g = metrics["geval_fluency"]
    assert (g["value"] is not None) == geval
    assert g["family"] == "Text quality (G-Eval, 1–5)" and g["range"] == [1.0, 5.0]
    a = metrics["attribution_contradictory"]  # the four-class diagnosis, not computed without --attribution-judge
    assert a["value"] is None and a["family"] == "Attribution classes (four-class judge)" and a["short_name"] == "contradictory"
    # a result whose metric declared nothing says so, rather than leaving the fields out
    assert MetricSpec("x", ()).presentation() == {"family": None, "range": None, "short_name": "x"}


def test_experiments_declare_direction_and_curves():
    from vericite.bench.experiments.kalma import CONSCIOUS_INCOMPETENCE, RETRIEVAL_ACCURACY
    from vericite.metrics.kalma import METRIC_NAMES

    assert RETRIEVAL_ACCURACY.presentation()["descending"] is True
    assert CONSCIOUS_INCOMPETENCE.presentation()["descending"] is False
    for exp in (CONSCIOUS_INCOMPETENCE, RETRIEVAL_ACCURACY):
        curves = exp.presentation()["curves"]
        assert [c["title"] for c in curves] == ["[NA] precision / recall / F1", "Citation quality (micro)"]
        assert all(n in METRIC_NAMES for c in curves for n in c["metrics"])


def test_run_writes_the_experiment_presentation(tmp_path, shared_data):
    from vericite.models.fake import FakeBackend
    from vericite.runs.runner import load_run_config, run_config

    cfg = tmp_path / "ra.yaml"
    cfg.write_text("name: t\ndataset: biokalma-gold\nmodel: fake\nlimit: 2\nexperiment: retrieval-accuracy\nlevels: [100, 20]\nresamples: 10\n")
    res = run_config(load_run_config(cfg, {}), tmp_path / "out", progress=False, backend=FakeBackend(replies=citing_reply))
    exp = json.loads((tmp_path / "out" / "results.json").read_text())["experiments"]["retrieval-accuracy"]
    assert exp["descending"] is True and exp["curves"][1]["title"] == "Citation quality (micro)"
    assert res["experiments"]["retrieval-accuracy"]["rows"][0]["metrics"]["citation_f1_micro"]["short_name"] == "F1"


def test_the_report_imports_no_metric_module():
    for path in sorted((SRC / "report").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                mod = ("." * node.level) + (node.module or "")
                assert "metrics" not in mod.split("."), f"{path.name} imports {mod}"
            elif isinstance(node, ast.Import):
                assert not any("vericite.metrics" in a.name for a in node.names), path.name


def test_assets_are_package_data():
    patterns = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["vericite"]
    assets = [p for p in (SRC / "report" / "assets").iterdir() if p.is_file() and p.suffix != ".py"]
    assert {p.name for p in assets} >= {"report.css", "chart.css", "report.js"}
    for p in assets:
        rel = p.relative_to(SRC).as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), f"{rel} is not in pyproject's package-data"


def test_page_inlines_the_asset_files_and_hashes_the_script(tmp_path):
    import base64
    import hashlib
    import html

    from vericite.report.assets import read_asset

    run = tmp_path / "r"
    run.mkdir()
    (run / "results.json").write_text(json.dumps({"kind": "evaluate", "metrics": {}}), encoding="utf-8")
    text = write_report(run).read_text(encoding="utf-8")
    js = read_asset("report.js").rstrip("\n")
    assert f"<script>{js}</script>" in text
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    assert html.escape(f"script-src 'sha256-{digest}'", quote=True) in text  # the CSP, as the page's attribute holds it
    assert read_asset("report.css").splitlines()[0] in text and read_asset("chart.css").splitlines()[0] in text


def test_citation_kinds_dispatch_to_their_renderer(tmp_path):
    from vericite.report import answers

    class Claims:
        def prepare(self, sample):
            return {c["id"] for c in sample.get("claims") or []}

        def classify(self, c, prepared):
            return ("cite-correct", "claim found") if c.get("claim") in prepared else ("cite-incorrect", "no such claim")

        def status_text(self, status):
            return f"claim {status}"

        def label(self, c, first):
            return str(c.get("claim"))

        def evidence_html(self, sample):
            return '<div class="claims">claims given</div>' if sample.get("claims") else ""

    out = "A [c1]. B [c9]. C [zz]."
    cits = [{"kind": "claim", "raw": "[c1]", "status": "ok", "claim": "c1", "span": [2, 6]},
            {"kind": "claim", "raw": "[c9]", "status": "ok", "claim": "c9", "span": [10, 14]},
            {"kind": "claim", "raw": "[zz]", "status": "unknown_claim", "span": [18, 22]}]
    sample = {"id": "s", "question": "q", "output": out, "claims": [{"id": "c1"}],
              "answer": {"raw": out, "sentences": [{"text": out, "citations": cits}]}}
    answers.register_renderer("claim", Claims())
    try:
        page = answers.sample_html(1, sample)
    finally:
        del answers.RENDERERS["claim"]
    dom = Dom(page)
    spans = [n for n in dom.root.iter() if n.tag == "span" and "cite" in n.classes]
    assert [(sorted(s.classes - {"cite"}), s.attrs["title"]) for s in spans] == [
        (["cite-correct"], "claim found"), (["cite-incorrect"], "no such claim"),
        (["cite-bad", "st-unknown_claim"], "claim unknown_claim"),
    ]
    assert "claims given" in dom.root.all_text()
    # without its renderer, a kind nobody knows reads as a triple (as before renderers existed)
    assert answers.renderer_for("claim") is answers.RENDERERS["triple"]
