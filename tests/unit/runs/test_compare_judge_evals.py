"""``vericite compare A B`` of two ``vericite judge-eval`` folders: paired by pair id, each side's figures those of
judge-eval itself, the CI and p those of the shared paired helpers, the refusals, and the page of ``--out``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import VericiteError
from vericite.judges.meta import run_judge_eval, score_judgements
from vericite.metrics.paired import paired_difference
from vericite.runs.compare_judges import compare_judge_evals, load_judge_eval
from vericite.stats import bootstrap_cis, ratio_of_sums
from vericite.types import Judgement

LABELS = ("supports", "refutes", "not_enough_info")
GOLD = ["supports", "refutes", "not_enough_info"] * 4
# what each judge says of pair i: a three-way label, or None (unparseable)
SAID_A = ["supports", "not_enough_info", "not_enough_info", "supports", "not_enough_info", "supports",
          "refutes", "not_enough_info", "not_enough_info", None, "refutes", "supports"]  # fmt: skip
SAID_B = ["supports", "refutes", "not_enough_info", "supports", "refutes", "refutes",
          "supports", "refutes", "not_enough_info", "supports", "refutes", "not_enough_info"]  # fmt: skip


class ListJudge:
    """A three-way judge that says, of the claim "claim i", ``said[i]`` (P(supports) 0.9 for supports, else 0.2)."""

    labels = LABELS

    def __init__(self, name: str, said: list[str | None]) -> None:
        self.id, self.said = f"list-{name}@1", said

    def judge(self, pairs):
        out = []
        for p in pairs:
            s = self.said[int(p.claim.split()[1])]
            if s is None:
                out.append(Judgement(self.id, p.claim, p.evidence, None, None, "?", "unparseable"))
            else:
                prob = 0.9 if s == "supports" else 0.2
                out.append(Judgement(self.id, p.claim, p.evidence, prob, s, "", "ok", {c: (prob if c == s else 0.1) for c in LABELS}))
        return out


def data(tmp_path: Path, gold=GOLD, name="pairs.jsonl", evidence="evidence {i}") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps({"id": f"p{i}", "claim": f"claim {i}", "evidence": evidence.format(i=i), "label": g}) + "\n" for i, g in enumerate(gold)))
    return path


def judged(tmp_path: Path, name: str, said: list[str | None], **kw) -> Path:
    out = tmp_path / name
    run_judge_eval(ListJudge(name, said), data(tmp_path, name=f"{name}.jsonl", **kw), out, resamples=50)
    return out


def compare(tmp_path, said_a=SAID_A, said_b=SAID_B, **kw):
    a, b = load_judge_eval(judged(tmp_path, "a", said_a)), load_judge_eval(judged(tmp_path, "b", said_b))
    return a, b, *compare_judge_evals(a, b, **{"resamples": 400, "seed": 3, **kw})


def test_each_side_is_judge_evals_own_figures_and_the_difference_b_minus_a(tmp_path):
    a, b, cmp, rows = compare(tmp_path)
    m = cmp["metrics"]
    for side, run in (("a", a), ("b", b)):
        assert m["balanced_accuracy"][side] == pytest.approx(run.results["balanced_accuracy"], abs=1e-12)
        assert m["accuracy"][side] == pytest.approx(run.results["accuracy"], abs=1e-12)
        assert m["balanced_accuracy_3way"][side] == pytest.approx(run.results["three_way"]["balanced_accuracy"], abs=1e-12)
    # by hand (4 pairs of each class): A says 2 supports, 1 refutes, 2 not_enough_info right (p9 unparseable,
    # counted wrong), B 4, 4 and 3
    assert m["balanced_accuracy_3way"]["a"] == pytest.approx((2 / 4 + 1 / 4 + 2 / 4) / 3)
    assert m["balanced_accuracy_3way"]["b"] == pytest.approx((4 / 4 + 4 / 4 + 3 / 4) / 3)
    assert m["balanced_accuracy_3way"]["diff"] == pytest.approx(m["balanced_accuracy_3way"]["b"] - m["balanced_accuracy_3way"]["a"])
    assert cmp["samples"] == {"paired": 12, "only_a": 0, "only_b": 0, "intersect": False, "paired_by": "id"}
    same3 = sum(x == y for x, y in zip(SAID_A, SAID_B)) / 12
    assert cmp["agreement"]["three_way"]["value"] == pytest.approx(same3)
    assert [r["id"] for r in rows] == sorted(f"p{i}" for i in range(12))
    p9 = next(r for r in rows if r["id"] == "p9")
    assert p9["output_a"] == "abstained (unparseable)" and p9["metrics"]["correct_3way"] == {"a": 0.0, "b": 1.0, "diff": 1.0}
    assert [d["what"] for d in cmp["differences"]] == ["judge"]  # a.jsonl and b.jsonl: the same bytes, the same data


def test_ci_and_p_are_those_of_the_shared_paired_helpers(tmp_path):
    _a, _b, cmp, _rows = compare(tmp_path)
    # the three-way balanced accuracy, built here from the labels alone, over A's 12 pairs then B's, in the order
    # of their ids (as compare sorts them: p0, p1, p10, p11, p2, ...)
    order = sorted(range(12), key=lambda i: f"p{i}")
    said = [SAID_A[i] for i in order] + [SAID_B[i] for i in order]
    gold = [GOLD[i] for i in order] * 2
    rec = [ratio_of_sums(np.array([g == c and s == c for g, s in zip(gold, said)], float), np.array([g == c for g in gold], float)) for c in LABELS]
    want = paired_difference({"x": lambda w: (rec[0](w) + rec[1](w) + rec[2](w)) / 3}, 12, resamples=400, seed=3)["x"]
    got = cmp["metrics"]["balanced_accuracy_3way"]
    assert got["ci"] == pytest.approx([want.ci_low, want.ci_high]) and got["p_value"] == want.p_value
    assert got["resamples_used"] == want.resamples_used and got["permutations_used"] == want.permutations_used
    agree = np.array([SAID_A[i] == SAID_B[i] for i in order], float)
    lo, hi = bootstrap_cis({"x": ratio_of_sums(agree, np.ones(12))}, 12, resamples=400, seed=3)["x"]
    assert cmp["agreement"]["three_way"]["ci"] == pytest.approx([lo, hi])


def test_identical_judges_differ_by_zero_with_p_one_and_agree_fully(tmp_path):
    _a, _b, cmp, _rows = compare(tmp_path, SAID_A, SAID_A)
    for m in cmp["metrics"].values():
        assert m["diff"] == 0.0 and m["p_value"] == 1.0 and m["verdict"] == "no clear difference"
    assert cmp["agreement"]["binary"]["value"] == cmp["agreement"]["three_way"]["value"] == 1.0


def test_each_run_is_scored_at_its_own_threshold(tmp_path):
    a = judged(tmp_path, "a", SAID_A)
    b = judged(tmp_path, "b", SAID_A)
    # B as judge-eval at threshold 0.1 would have written it: every scored pair said supports
    res = json.loads((b / "results.json").read_text())
    lines = [json.loads(x) for x in (b / "judgements.jsonl").read_text().splitlines()]
    res.update(score_judgements([x["gold"] for x in lines], [Judgement.from_dict(x) for x in lines], 0.1))
    (b / "results.json").write_text(json.dumps(res))
    cmp, _ = compare_judge_evals(load_judge_eval(a), load_judge_eval(b), resamples=0)
    assert cmp["metrics"]["balanced_accuracy"]["b"] == pytest.approx(res["balanced_accuracy"]) == pytest.approx(0.5 * (3 / 4) + 0.5 * 0)  # p9 abstained
    assert cmp["metrics"]["balanced_accuracy_3way"]["diff"] == 0.0  # the three-way labels do not read the threshold
    assert {"what": "threshold", "a": 0.5, "b": 0.1} in cmp["differences"]


def test_a_binary_judge_eval_gets_no_three_way_difference(tmp_path):
    a = judged(tmp_path, "a", SAID_A)
    res = json.loads((a / "results.json").read_text())
    del res["three_way"]  # as a binary judge's results.json
    (a / "results.json").write_text(json.dumps(res))
    cmp, _ = compare_judge_evals(load_judge_eval(a), load_judge_eval(judged(tmp_path, "b", SAID_B)), resamples=50)
    m = cmp["metrics"]["balanced_accuracy_3way"]
    assert m["diff"] is None and m["reason"].startswith("not computed in A: ") and "three_way" not in cmp["agreement"]
    assert cmp["metrics"]["balanced_accuracy"]["diff"] is not None


def test_refusals_name_what_differs(tmp_path):
    a = load_judge_eval(judged(tmp_path, "a", SAID_A))
    other_gold = load_judge_eval(judged(tmp_path, "g", SAID_B, gold=["refutes"] + GOLD[1:]))
    with pytest.raises(VericiteError, match=r"1 pairs have the same id but other gold labels \(first: 'p0'"):
        compare_judge_evals(a, other_gold, resamples=0)
    fewer = tmp_path / "few"
    run_judge_eval(ListJudge("few", SAID_B), data(tmp_path, gold=GOLD[:9], name="few.jsonl"), fewer, resamples=0)
    with pytest.raises(VericiteError, match="3 pair ids only in A, 0 only in B.*--intersect"):
        compare_judge_evals(a, load_judge_eval(fewer), resamples=0)
    cmp, rows = compare_judge_evals(a, load_judge_eval(fewer), resamples=0, intersect=True)
    assert (cmp["samples"]["paired"], cmp["samples"]["only_a"], len(rows)) == (9, 3, 9)
    other_evidence = load_judge_eval(judged(tmp_path, "e", SAID_B, evidence="other evidence {i}"))
    with pytest.raises(VericiteError, match="12 pairs have the same id and claim but other evidence.*--same-questions"):
        compare_judge_evals(a, other_evidence, resamples=0)
    cmp, _ = compare_judge_evals(a, other_evidence, resamples=0, same_questions=True)
    assert cmp["samples"]["evidence_differs"] == 12


def test_a_changed_judgements_file_or_another_task_is_refused(tmp_path):
    a = judged(tmp_path, "a", SAID_A)
    lines = (a / "judgements.jsonl").read_text().splitlines()
    first = json.loads(lines[1])
    first["label"], first["probability"] = "refutes", 0.2  # judged right now: results.json no longer agrees
    (a / "judgements.jsonl").write_text("\n".join([lines[0], json.dumps(first), *lines[2:]]) + "\n")
    with pytest.raises(VericiteError, match="judgements.jsonl gives three_way.balanced_accuracy"):
        load_judge_eval(a)
    caqa = tmp_path / "caqa"
    caqa.mkdir()
    (caqa / "results.json").write_text(json.dumps({"kind": "judge-eval", "task": "caqa"}))
    with pytest.raises(VericiteError, match="judge-eval of --task caqa"):
        load_judge_eval(caqa)


def run_cli(*args):
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


def test_the_command_compares_two_judge_evals_and_report_renders_the_folder(tmp_path):
    a, b = judged(tmp_path, "a", SAID_A), judged(tmp_path, "b", SAID_B)
    r = run_cli(a, b, "--resamples", 100, "--format", "markdown", "--out", tmp_path / "cmp")
    assert r.exit_code == 0, r.output
    assert "| balanced_accuracy_3way | 0.417 | 0.917 | +0.500 |" in r.output
    assert "12 labelled pairs judged by both" in r.output and "agreement of the judges (three-way" in r.output
    cmp = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert cmp["kind"] == "compare" and cmp["compared"] == "judge-eval"
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "cmp")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "cmp" / "report.html").read_text()
    assert 'data-metric="balanced_accuracy_3way"' in page and "agreement of the judges" in page


def test_a_judge_eval_and_an_evaluation_are_refused_in_one_line(tmp_path):
    a = judged(tmp_path, "a", SAID_A)
    ev = tmp_path / "ev"
    ev.mkdir()
    (ev / "results.json").write_text(json.dumps({"kind": "evaluate", "metrics": {}}))
    for args in ((a, ev), (ev, a)):
        r = run_cli(*args)
        assert r.exit_code != 0 and r.output.count("\n") == 1, r.output
        assert "is a judge-eval folder and" in r.output and "not one of each" in r.output


def test_one_data_file_named_by_a_relative_and_an_absolute_path_is_no_difference(tmp_path, monkeypatch):
    """judge-eval records the data path as given: run from the data's folder with ``pairs.jsonl`` and from anywhere
    with its absolute path, the two runs judged one file, and compare (from the data's folder) does not list it;
    another file is still listed, in compare.json and on the command's ``differs`` lines."""
    path = data(tmp_path)
    monkeypatch.chdir(tmp_path)
    run_judge_eval(ListJudge("a", SAID_A), "pairs.jsonl", tmp_path / "a", resamples=50)
    run_judge_eval(ListJudge("b", SAID_B), str(path.resolve()), tmp_path / "b", resamples=50)
    a, b = load_judge_eval(tmp_path / "a"), load_judge_eval(tmp_path / "b")
    assert (a.results["data"], b.results["data"]) == ("pairs.jsonl", str(path.resolve()))  # as given
    cmp, _ = compare_judge_evals(a, b, resamples=0)
    assert [d["what"] for d in cmp["differences"]] == ["judge"] and cmp["a"]["data"] == "pairs.jsonl"  # the identity as recorded
    r = CliRunner().invoke(cli, ["compare", "a", "b", "--resamples", "0"])
    assert r.exit_code == 0, r.output
    assert "differs: judge:" in r.output and "differs: data" not in r.output

    other = data(tmp_path, name="other.jsonl", evidence="other evidence {i}")  # another file of other bytes
    run_judge_eval(ListJudge("b", SAID_B), str(other), tmp_path / "c", resamples=50)
    cmp, _ = compare_judge_evals(a, load_judge_eval(tmp_path / "c"), resamples=0, same_questions=True)
    assert {"what": "data", "a": "pairs.jsonl", "b": str(other)} in cmp["differences"]
    r = CliRunner().invoke(cli, ["compare", "a", "c", "--resamples", "0", "--same-questions"])
    assert r.exit_code == 0 and f"differs: data: A pairs.jsonl / B {other}" in r.output, r.output


def without_hash(folder: Path) -> None:
    """``folder``'s results.json as judge-eval wrote it before it recorded ``data_sha256``."""
    path = folder / "results.json"
    results = json.loads(path.read_text())
    del results["data_sha256"]
    path.write_text(json.dumps(results))


def test_the_data_is_known_by_its_sha256_else_by_its_path(tmp_path, monkeypatch):
    """judge-eval records the data file's sha256: a copy of the same bytes elsewhere is the same data, one path whose
    file changed between the two runs is not (listed with each side's sha256); results without the hash (written
    before it) are compared by path, a copy then listed and a relative path compared from the current folder."""
    path = data(tmp_path)
    copy = data(tmp_path, name="copy.jsonl")  # the same pairs in another file
    run_judge_eval(ListJudge("a", SAID_A), str(path), tmp_path / "a", resamples=0)
    run_judge_eval(ListJudge("b", SAID_B), str(copy), tmp_path / "b", resamples=0)
    a, b = load_judge_eval(tmp_path / "a"), load_judge_eval(tmp_path / "b")
    from vericite.paths import file_sha256

    assert a.results["data_sha256"] == b.results["data_sha256"] == file_sha256(path)
    cmp, _ = compare_judge_evals(a, b, resamples=0)
    assert [d["what"] for d in cmp["differences"]] == ["judge"] and cmp["b"]["data_sha256"] == file_sha256(copy)

    data(tmp_path, evidence="changed evidence {i}")  # the file edited in place: the same path, other bytes
    run_judge_eval(ListJudge("c", SAID_B), str(path), tmp_path / "c", resamples=0)
    c = load_judge_eval(tmp_path / "c")
    cmp, _ = compare_judge_evals(a, c, resamples=0, same_questions=True)
    (diff,) = [d for d in cmp["differences"] if d["what"] == "data"]
    assert diff["a"] == f"{path} (sha256 {a.results['data_sha256'][:12]})" and diff["b"] == f"{path} (sha256 {c.results['data_sha256'][:12]})"
    assert diff["a"] != diff["b"]

    for folder in ("a", "b", "c"):  # written before the hash: by path
        without_hash(tmp_path / folder)
    a, b, c = (load_judge_eval(tmp_path / f) for f in ("a", "b", "c"))
    assert "data" in [d["what"] for d in compare_judge_evals(a, b, resamples=0)[0]["differences"]]  # a copy: another path
    assert "data" not in [d["what"] for d in compare_judge_evals(a, c, resamples=0, same_questions=True)[0]["differences"]]  # one path
    monkeypatch.chdir(tmp_path)
    rel = json.loads((tmp_path / "b" / "results.json").read_text())
    rel["data"] = "pairs.jsonl"  # a relative path naming a's file from here, no hash: the same data
    (tmp_path / "b" / "results.json").write_text(json.dumps(rel))
    assert "data" not in [d["what"] for d in compare_judge_evals(a, load_judge_eval(tmp_path / "b"), resamples=0)[0]["differences"]]
    monkeypatch.chdir(tmp_path / "a")  # from elsewhere, the relative path names another (absent) file: listed
    assert "data" in [d["what"] for d in compare_judge_evals(a, load_judge_eval(tmp_path / "b"), resamples=0)[0]["differences"]]
