"""``vericite compare``: the paired statistics on data whose answer is known, micro metrics recomputed from sums
on each draw, the refusals, the command end to end on real evaluate outputs, and the comparison page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import DataError, VericiteError
from vericite.evaluate import EvaluateConfig
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import generate_run
from vericite.metrics.base import resample_weights
from vericite.metrics.kalma import KalmaCounts, kalma_statistics
from vericite.metrics.paired import paired_difference, per_item
from vericite.models.fake import FakeBackend, last_user_message
from vericite.runs.compare import compare_runs, load_evaluated_run, run_statistics
from vericite.runs.results import evaluate_file
from vericite.report import write_report
from vericite.types import Sample, Triple

from tests.support.pipeline import ENTITY_LINE, citing_reply
from tests.support.report import Dom

# --------------------------------------------------------------------------- the statistics


def counts(cits_correct: list[tuple[int, int]]) -> list[KalmaCounts]:
    return [KalmaCounts(id=f"s{i}", citations=c, correct=k) for i, (c, k) in enumerate(cits_correct)]


def joint(a: list[KalmaCounts], b: list[KalmaCounts]) -> dict:
    return kalma_statistics(a + b).live


def test_identical_runs_differ_by_zero_with_p_one():
    a = counts([(3, 1), (2, 2), (4, 0), (1, 1), (5, 3)])
    r = paired_difference(joint(a, a), len(a), resamples=500, seed=3)["citation_correctness"]
    assert r.a == r.b == pytest.approx(7 / 15) and r.diff == 0.0
    assert (r.ci_low, r.ci_high) == (0.0, 0.0)
    assert r.p_value == 1.0 and r.resamples_used == 500 and r.permutations_used == 500


def test_a_clearly_better_run_has_a_ci_above_zero_and_a_small_p():
    rng = np.random.default_rng(0)
    n = 40
    cits = rng.integers(2, 6, size=n)
    a = counts([(int(c), int(c) // 2) for c in cits])  # about half correct
    b = counts([(int(c), int(c)) for c in cits])  # all correct
    r = paired_difference(joint(a, b), n, resamples=1000, seed=0)["citation_correctness"]
    assert r.diff == pytest.approx(1 - sum(int(c) // 2 for c in cits) / cits.sum())
    assert r.ci_low > 0.3 and r.ci_high <= r.diff + 0.2
    assert r.p_value < 0.01 and r.p_value == pytest.approx(1 / 1001)
    # and the other way round: the same numbers with the sign turned
    back = paired_difference(joint(b, a), n, resamples=1000, seed=0)["citation_correctness"]
    assert back.diff == pytest.approx(-r.diff) and back.ci_low == pytest.approx(-r.ci_high) and back.p_value == r.p_value


def test_p_value_stays_honest_on_two_samples():
    # both samples improved alike: a bootstrap p would be tiny; with two items the permutation test cannot be
    # more certain than 1 in 2 (swapping none or both pairs gives |d| as large as observed)
    a, b = counts([(2, 1), (2, 1)]), counts([(2, 2), (2, 2)])
    r = paired_difference(joint(a, b), 2, resamples=2000, seed=1)["citation_correctness"]
    assert r.diff == 0.5 and 0.4 < r.p_value < 0.6


def test_micro_metrics_are_ratios_of_sums_on_every_draw():
    # per-sample ratios: A = 1/1 and 0/9, B = 0/1 and 9/9: the means of per-sample ratios are equal (0.5 vs 0.5;
    # mean per-sample difference 0) but the micro correctness is 1/10 vs 9/10
    a, b = counts([(1, 1), (9, 0)] * 10), counts([(1, 0), (9, 9)] * 10)
    n = len(a)
    r = paired_difference(joint(a, b), n, resamples=400, seed=7)
    assert r["citation_correctness"].diff == pytest.approx(0.8)
    # the CI is the quantiles of ratio-of-sums differences on the very draws resample_weights makes
    ca, ka = np.array([c.citations for c in a], float), np.array([c.correct for c in a], float)
    cb, kb = np.array([c.citations for c in b], float), np.array([c.correct for c in b], float)
    d = np.concatenate([(w @ kb) / (w @ cb) - (w @ ka) / (w @ ca) for w in resample_weights(n, resamples=400, seed=7)])
    lo, hi = np.quantile(d, [0.025, 0.975])
    assert (r["citation_correctness"].ci_low, r["citation_correctness"].ci_high) == pytest.approx((lo, hi))
    assert r["citation_correctness"].ci_low > 0.5  # a mean of per-sample differences would sit around 0


def test_compare_gets_each_metric_from_the_metric_code(tmp_path):
    # run_statistics reads the counts and G-Eval scores of samples.jsonl records; its point values are the
    # evaluation's own (kalma_statistics / geval_statistic)
    recs = [
        {"scores": {**KalmaCounts(citations=2, correct=1, precise=1, gold=2, gold_hit=1).to_dict(), "geval": {"fluency": {"score": 4.0}}}},
        {"scores": {**KalmaCounts(citations=0, correct=0, precise=0, gold=1, gold_hit=0).to_dict(), "geval": {"fluency": {"score": None}}}},
    ]
    cs = run_statistics(recs)
    one = np.ones((1, 2))
    assert cs.live["citation_correctness"](one)[0] == 0.5
    assert cs.live["citation_precision_macro"](one)[0] == 0.25  # no citation = precision 0
    assert cs.live["geval_fluency"](one)[0] == 4.0 and cs.ns["geval_fluency"] == 1
    assert "geval_coherence" in cs.reasons


# --------------------------------------------------------------------------- real runs


def better_reply(messages, params) -> str:
    """Cite the first two facts of each entity correctly; no [NA]."""
    out = []
    for m in ENTITY_LINE.finditer(last_user_message(messages)):
        for p, v in [f.split(": ", 1) for f in m["body"].split(", ") if ": " in f][:2]:
            out.append(f"{m['name']} has {p} {v} [{m['qid']}, {p}: {v}].")
    return " ".join(out)


def hostile_reply(messages, params) -> str:
    return citing_reply(messages, params) + " <script>document.title='pwned'</script>"


def make_samples(n: int = 12) -> list[Sample]:
    out = []
    for i in range(n):
        k = [Triple(f"Q{i}", "occupation", f"job{i}", f"P{i}"), Triple(f"Q{i}", "place of birth", f"town{i}", f"P{i}")]
        out.append(Sample(f"s{i:02d}", f"What did P{i} do?", k, gold=[k[0]], absent=[Triple(f"Q{i}", "breakfast", "eggs")]))
    return out


def evaluated(tmp_path: Path, name: str, reply, samples=None, **cfg) -> Path:
    gen = tmp_path / f"gen-{name}"
    generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), gen, samples=samples or make_samples(),
                 backend=FakeBackend(replies=reply), progress=False)  # fmt: skip
    evaluate_file(gen / "samples.jsonl", tmp_path / name, EvaluateConfig(resamples=100, **cfg))
    return tmp_path / name


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    return {"a": evaluated(tmp, "a", hostile_reply), "b": evaluated(tmp, "b", better_reply), "tmp": tmp}


def invoke(*args: str):
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


def test_cli_json_end_to_end(runs):
    a, b = runs["a"], runs["b"]
    r = invoke(a, b, "--json", "--resamples", "500", "--seed", "2")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)  # stdout is the JSON and nothing else
    res_a, res_b = (json.loads((x / "results.json").read_text())["metrics"] for x in (a, b))
    m = cmp["metrics"]
    for name in ("citation_correctness", "citation_precision_micro", "citation_f1_micro", "alignment_micro"):
        assert m[name]["a"] == pytest.approx(res_a[name]["value"]) and m[name]["b"] == pytest.approx(res_b[name]["value"])
    c = m["citation_correctness"]
    assert c["a"] == 0.5 and c["b"] == 1.0 and c["diff"] == 0.5
    assert c["ci"] == [0.5, 0.5] and c["p_value"] < 0.01 and c["verdict"] == "B better"
    assert c["n_a"] == c["n_b"] == 12 and cmp["samples"] == {"paired": 12, "only_a": 0, "only_b": 0, "intersect": False}
    assert m["geval_fluency"]["diff"] is None and "--geval-model" in m["geval_fluency"]["reason"]
    # computed in A only: said so, A's value over the paired samples, and no n for B (not a 0)
    na = m["na_precision"]
    assert na["diff"] is None and na["reason"].startswith("only in A; not computed in B: ") and na["only_in"] == "A"
    assert na["a"] == pytest.approx(res_a["na_precision"]["value"]) and na["b"] is None and na["n_a"] > 0 and na["n_b"] is None
    assert c["only_in"] is None
    assert cmp["bootstrap"]["resamples"] == 500 and cmp["bootstrap"]["seed"] == 2 and "permutation" in cmp["bootstrap"]["p_value"]
    assert cmp["differences"] == []  # same judge, same model name
    # seeded: the same command gives the same numbers
    again = json.loads(invoke(a, b, "--format", "json", "--resamples", "500", "--seed", "2").stdout)
    assert again["metrics"] == cmp["metrics"]


def test_cli_identical_runs_table_and_markdown(runs):
    r = invoke(runs["a"], runs["a"])
    assert r.exit_code == 0, r.output
    assert "citation_correctness" in r.output and "12 paired samples" in r.output and "permutation" in r.output
    r = invoke(runs["a"], runs["a"], "--format", "markdown")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("| metric | A | B | B − A |")
    row = next(x for x in lines if x.startswith("| citation_correctness "))
    assert row.split(" | ")[3:6] == ["+0.000", "[0.000, 0.000]", "1.000"]
    # KaLMA runs without G-Eval or a four-class judge: those metrics are two lines under the table, not nine rows
    assert "- not computed in A and B: geval_coherence, geval_consistency, geval_fluency, geval_relevance (no G-Eval scores (--geval-model))" in lines
    assert sum(x.startswith("- not computed in A and B: attribution_supportive, ") for x in lines) == 1
    assert not [x for x in lines if x.startswith(("| geval_", "| attribution_"))]


def test_different_judge_is_allowed_and_listed(runs, tmp_path):
    gen = runs["tmp"] / "gen-a" / "samples.jsonl"
    evaluate_file(gen, tmp_path / "nojudge", EvaluateConfig(judge="none", resamples=0))
    r = invoke(runs["a"], tmp_path / "nojudge", "--json")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert {"what": "alignment / [NA] judge", "a": "triple@1", "b": None} in cmp["differences"]
    assert cmp["metrics"]["citation_correctness"]["diff"] == 0.0
    assert "B: no judge given" in cmp["metrics"]["alignment_micro"]["reason"]


def test_refuses_different_sample_sets_unless_intersect(runs, tmp_path):
    fewer = evaluated(tmp_path, "fewer", better_reply, samples=make_samples(9))
    r = invoke(runs["a"], fewer)
    assert r.exit_code != 0 and r.output.count("\n") == 1
    assert "3 ids only in A, 0 only in B" in r.output and "--intersect" in r.output and "Traceback" not in r.output
    r = invoke(runs["a"], fewer, "--intersect", "--json")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["samples"] == {"paired": 9, "only_a": 3, "only_b": 0, "intersect": True}
    assert cmp["metrics"]["citation_correctness"]["a"] == 0.5  # recomputed on the 9 common samples
    assert "--intersect: 3 only in A and 0 only in B left out" in invoke(runs["a"], fewer, "--intersect").output


def test_refuses_same_id_with_other_inputs(runs, tmp_path):
    samples = make_samples()
    samples[4].knowledge = samples[4].knowledge[:1]
    other = evaluated(tmp_path, "other", better_reply, samples=samples)
    r = invoke(runs["a"], other)
    assert r.exit_code != 0 and "1 samples have the same id but different inputs" in r.output and "'s04', its knowledge" in r.output
    # the order of the triples is not an input difference
    shuffled = make_samples()
    for s in shuffled:
        s.knowledge = list(reversed(s.knowledge))
    assert invoke(runs["a"], evaluated(tmp_path, "shuffled", better_reply, samples=shuffled)).exit_code == 0


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda r: r["evaluation"].update(match="normalised"), "match 'exact' vs 'normalised'"),
        (lambda r: r["metric_versions"].update(kalma="2"), "kalma metric version 1 vs 2"),
        (lambda r: r["evaluation"].update(hypothesis="{entity} {property}: {value}"), "hypothesis"),
    ],
)
def test_refuses_runs_scored_differently(runs, tmp_path, edit, message):
    b = tmp_path / "b"
    shutil.copytree(runs["b"], b)
    res = json.loads((b / "results.json").read_text())
    edit(res)
    (b / "results.json").write_text(json.dumps(res))
    r = invoke(runs["a"], b)
    assert r.exit_code != 0 and "scored differently" in r.output and message in r.output


def test_a_bare_version_written_before_name_at_n_compares_with_its_new_form(runs, tmp_path):
    """A results.json written before the name@N scheme holds evaluation.metrics "1"; a new one "kalma@1": one
    version, so the runs compare. "kalma@2" does not."""
    b = tmp_path / "b"
    shutil.copytree(runs["b"], b)
    res = json.loads((b / "results.json").read_text())
    new = res["evaluation"]["metrics"]
    assert "@" in new
    res["evaluation"]["metrics"] = new.rpartition("@")[2]
    (b / "results.json").write_text(json.dumps(res))
    assert invoke(runs["a"], b).exit_code == 0
    res["evaluation"]["metrics"] = new.rpartition("@")[0] + "@2"
    (b / "results.json").write_text(json.dumps(res))
    r = invoke(runs["a"], b)
    assert r.exit_code != 0 and "scored differently" in r.output and "metrics" in r.output


def test_refuses_broken_folders(runs, tmp_path):
    b = tmp_path / "dup"
    shutil.copytree(runs["b"], b)
    lines = (b / "samples.jsonl").read_text().splitlines(keepends=True)
    (b / "samples.jsonl").write_text("".join(lines + lines[:1]))
    r = invoke(runs["a"], b)
    assert r.exit_code != 0 and "1 sample ids appear more than once (first: 's00')" in r.output

    (b / "samples.jsonl").write_text("".join(lines[:-1] + [json.dumps({**json.loads(lines[-1]), "scores": {**json.loads(lines[-1])["scores"], "correct": 0}}) + "\n"]))
    r = invoke(runs["a"], b)
    assert r.exit_code != 0 and "samples.jsonl gives citation_correctness" in r.output and "results.json says 1" in r.output

    (b / "samples.jsonl").unlink()
    assert "has no samples.jsonl" in invoke(runs["a"], b).output
    assert "has no results.json" in invoke(runs["a"], runs["tmp"] / "gen-a").output  # a generate folder
    assert "run folder not found" in invoke(runs["a"], tmp_path / "nothing").output
    (tmp_path / "je").mkdir()
    (tmp_path / "je" / "results.json").write_text(json.dumps({"kind": "judge-eval", "metrics": {}}))
    assert "B is a judge-eval folder and A is not" in invoke(runs["a"], tmp_path / "je").output  # a mix (tests/unit/runs/test_compare_judge_evals.py)
    with pytest.raises(DataError, match="is not an evaluation"):
        load_evaluated_run(tmp_path / "je")


def test_out_is_checked_before_the_work(runs, tmp_path):
    r = invoke(runs["a"], runs["b"], "--out", runs["b"])
    assert r.exit_code != 0 and "holds a run (results.json)" in r.output
    (tmp_path / "file").write_text("x")
    assert "is a file" in invoke(runs["a"], runs["b"], "--out", tmp_path / "file").output


def test_load_and_compare_from_python(runs):
    cmp, rows = compare_runs(load_evaluated_run(runs["a"] / "results.json"), load_evaluated_run(runs["b"]), resamples=0)
    assert cmp["metrics"]["citation_correctness"]["ci"] is None and cmp["metrics"]["citation_correctness"]["p_value"] is None
    assert [r["id"] for r in rows] == [f"s{i:02d}" for i in range(12)]
    assert rows[0]["metrics"]["citation_correctness"] == {"a": 0.5, "b": 1.0, "diff": 0.5}
    with pytest.raises(VericiteError):
        compare_runs(load_evaluated_run(runs["a"]), load_evaluated_run(runs["b"]), resamples=-1)


# --------------------------------------------------------------------------- the page


def test_out_folder_and_html_page(runs, tmp_path):
    out = tmp_path / "cmp"
    r = invoke(runs["a"], runs["b"], "--out", out, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == json.loads((out / "compare.json").read_text())
    rows = [json.loads(x) for x in (out / "compare_samples.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and rows[0]["metrics"]["citation_correctness"]["diff"] == 0.5
    assert "<script>" in rows[0]["output_a"]

    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    text = (out / "report.html").read_text(encoding="utf-8")
    dom = Dom(text)
    assert "<script" not in text and "script-src" not in text  # the page has no script; the answer's is escaped
    assert "&lt;script&gt;document.title" in text
    assert dom.find_all("title")[0].all_text().startswith("vericite comparison")
    header = dom.by_id("header").all_text()
    assert str(runs["a"]) in header and "12" in header and "permutation" in header
    rows = {tr.attrs["data-metric"]: tr for tr in dom.find_all("tr", cls="metric")}
    cells = [td.all_text() for td in rows["citation_correctness"].children]
    assert cells[:5] == ["citation_correctness", "0.500", "1.000", "+0.500", "[0.500, 0.500]"]
    assert cells[5] == "<0.001" or float(cells[5]) < 0.01
    assert cells[7] == "B better" and "better" in rows["citation_correctness"].classes
    # the metrics neither run computed, for one reason, are one line under the table (as in the terminal and markdown)
    assert not [name for name in rows if name.startswith("geval_")]
    folded = [p for p in dom.find_all("p", cls="folded") if "geval_fluency" in p.attrs["data-metrics"].split()]
    assert len(folded) == 1 and "not-computed" in folded[0].classes
    assert folded[0].all_text().startswith("not computed in A and B: geval_") and "--geval-model" in folded[0].all_text()
    assert dom.find_all("svg", cls="bar-chart")
    samples = dom.find_all("details", cls="sample")
    assert len(samples) == 12 and "B ahead on 1 metric" in samples[0].all_text()
    assert len(dom.find_all("div", cls="answer")) == 24

    page = write_report(out, tmp_path / "capped.html", max_samples=3)
    assert len(Dom(page.read_text()).find_all("details", cls="sample")) == 3


def test_per_sample_values_are_the_metric_on_that_sample_alone():
    rng = np.random.default_rng(5)
    cs = []
    for i in range(30):
        c = int(rng.integers(0, 4))
        k = int(rng.integers(0, c + 1))
        cs.append(KalmaCounts(id=str(i), citations=c, correct=k, precise=k, gold=int(rng.integers(0, 3)), gold_hit=0, pairs=c, entailed=k))
    for c in cs:
        c.gold_hit = min(c.gold, c.correct)
    for name, stat in kalma_statistics(cs).live.items():
        fast, dense = per_item(stat, len(cs)), stat(np.eye(len(cs)))
        assert np.array_equal(np.isnan(fast), np.isnan(dense)) and np.allclose(np.nan_to_num(fast), np.nan_to_num(dense)), name


def test_geval_is_compared_from_the_per_sample_scores(runs, tmp_path):
    for name in ("a", "b"):
        evaluate_file(runs["tmp"] / f"gen-{name}" / "samples.jsonl", tmp_path / name, EvaluateConfig(geval_model="fake", resamples=0))
    r = invoke(tmp_path / "a", tmp_path / "b", "--json", "--resamples", "200")
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["metrics"]
    for name in ("a", "b"):
        res = json.loads((tmp_path / name / "results.json").read_text())["metrics"]
        for g in ("geval_coherence", "geval_fluency"):
            assert m[g][name] == pytest.approx(res[g]["value"])
    assert m["geval_fluency"]["diff"] == pytest.approx(m["geval_fluency"]["b"] - m["geval_fluency"]["a"])
    assert m["geval_fluency"]["ci"] is not None and 0 < m["geval_fluency"]["p_value"] <= 1 and m["geval_fluency"]["n_a"] == 12


def test_refuses_unreadable_scores(runs, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(runs["b"], b)
    lines = (b / "samples.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["scores"]["citations"] = "many"
    (b / "samples.jsonl").write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    r = invoke(runs["a"], b)
    assert r.exit_code != 0 and "the per-sample scores cannot be read" in r.output and "Traceback" not in r.output
