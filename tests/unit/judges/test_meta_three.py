"""judge-eval's three-way figures: a three-way judge (``labels`` supports / refutes / not_enough_info) on data with
three-way gold labels also gets 3-class balanced accuracy, per-class F1 and confusion counts, each with a bootstrap
CI; a two-label judge, or binary gold labels, get none; the binary figures stay as they were."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.judges.meta import run_judge_eval
from vericite.judges.meta_figures import judge_eval_rows
from vericite.judges.meta_three import three_way_figures
from vericite.types import Judgement

# fake-3way: every claim word in the evidence -> supports; a negation in one of them only -> refutes; else NEI
PAIRS = [
    ("Ann was born in Rome.", "Ann was born in Rome.", "SUPPORTS"),  # said supports
    ("Ann was born in Rome.", "Ann was not born in Rome.", "REFUTES"),  # said refutes
    ("Ann was born in Rome.", "Bob likes cats.", "NOT ENOUGH INFO"),  # said not_enough_info
    ("Ann was born in Rome.", "Ann was born in Paris.", "REFUTES"),  # said not_enough_info
    ("Ann was born in Rome.", "Ann was born.", "REFUTES"),  # said supports (a wrong gold label)
    ("Ann was born in Rome.", "Ann was born.", "SUPPORTS"),  # said supports
]


def write(path, rows):
    path.write_text("".join(json.dumps({"id": str(i), "evidence": e, "claim": c, "label": g}) + "\n" for i, (e, c, g) in enumerate(rows)), encoding="utf-8")
    return path


def test_three_way_judge_on_three_way_gold_gets_three_way_figures(tmp_path):
    res = run_judge_eval(registry.create("judges", "fake-3way"), write(tmp_path / "p.jsonl", PAIRS), tmp_path / "o", resamples=200)
    three = res["three_way"]
    assert three["n"] == 6 and three["labels"] == ["supports", "refutes", "not_enough_info"]
    assert three["confusion"] == {
        "supports": {"supports": 2, "refutes": 0, "not_enough_info": 0, "abstained": 0},
        "refutes": {"supports": 1, "refutes": 1, "not_enough_info": 1, "abstained": 0},
        "not_enough_info": {"supports": 0, "refutes": 0, "not_enough_info": 1, "abstained": 0},
    }
    # recalls: supports 2/2, refutes 1/3, NEI 1/1
    assert abs(three["balanced_accuracy"] - (1 + 1 / 3 + 1) / 3) < 1e-9
    f1 = {c: three["per_class_f1"][c]["f1"] for c in three["labels"]}
    assert abs(f1["supports"] - 0.8) < 1e-9 and abs(f1["refutes"] - 0.5) < 1e-9 and abs(f1["not_enough_info"] - 2 / 3) < 1e-9
    for key in ("balanced_accuracy", "f1_supports", "f1_refutes", "f1_not_enough_info"):
        lo, hi = three["ci"][key]
        assert 0 <= lo <= hi <= 1
    lo, hi = three["ci"]["confusion"]["refutes"]["supports"]
    assert lo <= 1 <= hi and hi <= 6
    # the binary figures are there, as before (supports vs the rest, P(supports) >= 0.5)
    assert res["confusion"]["supports"] == {"supported": 2, "not_supported": 0, "abstained": 0}
    assert res["confusion"]["not_supports"] == {"supported": 1, "not_supported": 3, "abstained": 0}
    assert set(res["ci"]) == {"balanced_accuracy", "accuracy", "roc_auc", "f1_supports", "f1_not_supports", "unparseable"}
    # written, and shown as rows beside the binary ones
    assert json.loads((tmp_path / "o" / "results.json").read_text())["three_way"]["confusion"] == three["confusion"]
    rows = {r["metric"]: r for r in judge_eval_rows(res)}
    assert rows["f1_refutes_3way"]["value"] == f1["refutes"] and rows["f1_refutes_3way"]["ci"] == three["ci"]["f1_refutes"]
    assert rows["balanced_accuracy"]["value"] == res["balanced_accuracy"]


def test_a_two_label_judge_or_binary_gold_gets_no_three_way_rows(tmp_path):
    res = run_judge_eval(registry.create("judges", "fake"), write(tmp_path / "p.jsonl", PAIRS), tmp_path / "b", resamples=50)
    assert "three_way" not in res
    assert not [r for r in judge_eval_rows(res) if r["metric"].endswith("_3way")]
    binary = [(e, c, "supports" if g == "SUPPORTS" else "not_supports") for e, c, g in PAIRS]
    res = run_judge_eval(registry.create("judges", "fake-3way"), write(tmp_path / "q.jsonl", binary), tmp_path / "c", resamples=50)
    assert "three_way" not in res


def test_abstentions_and_a_missing_class():
    judge = registry.create("judges", "fake-3way")
    js = [Judgement("x", "c", "e", 0.8, "supports", None, "ok"), Judgement("x", "c", "e", None, None, None, "unparseable")]
    three = three_way_figures(judge, ["supports", "refutes"], js, resamples=20)
    assert three["confusion"]["refutes"]["abstained"] == 1
    assert three["per_class_f1"]["refutes"]["recall"] == 0.0
    assert three["balanced_accuracy"] is None and "not_enough_info" in three["balanced_accuracy_note"]


def test_the_command_shows_three_way_rows_only_for_a_three_way_judge(tmp_path):
    data = write(tmp_path / "p.jsonl", PAIRS)
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "llm3:fake", "--data", str(data), "--out", str(tmp_path / "l"), "-q", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    assert "| f1_refutes_3way |" in r.output and "three-way confusion counts" in r.output
    assert "three_way" in json.loads((tmp_path / "l" / "results.json").read_text())
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "fake-3way", "--data", str(data), "--out", str(tmp_path / "t"), "-q"])
    assert r.exit_code == 0, r.output
    assert "f1 refutes (3-way)" in r.output and "three-way confusion" in r.output
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "llm:fake", "--data", str(data), "--out", str(tmp_path / "b"), "-q", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    assert "3way" not in r.output and "three-way" not in r.output


def test_a_class_never_said_has_f1_zero_with_its_bootstrap_interval_and_counts_have_whole_number_intervals():
    # an F1 of a class never predicted was 0.0 with a null CI (every resample's precision undefined), and the
    # confusion counts' CIs were interpolated percentiles (fractions of a pair)
    from vericite.judges.meta_figures import figure_cis

    class Said:
        labels = ("supports", "refutes", "not_enough_info")

    golds = ["supports"] * 5 + ["refutes"] * 4 + ["not_enough_info"] * 3
    said = ["supports"] * 4 + ["not_enough_info"] + ["supports", "not_enough_info"] * 2 + ["not_enough_info"] * 2 + ["supports"]
    judged = [Judgement("j@1", "c", "e", label=s, probability=1.0 if s == "supports" else 0.0) for s in said]  # never "refutes"
    three = three_way_figures(Said(), golds, judged, resamples=300)
    assert three["per_class_f1"]["refutes"]["f1"] == 0.0 and three["per_class_f1"]["refutes"]["precision"] is None
    assert three["ci"]["f1_refutes"] == [0.0, 0.0]  # as the point figure, over the resamples that drew a refutes pair
    for g, row in three["ci"]["confusion"].items():
        for p, ci in row.items():
            assert ci is not None and all(isinstance(x, int) for x in ci) and ci[0] <= three["confusion"][g][p] <= ci[1], (g, p, ci)
    assert three["ci"]["confusion"]["refutes"]["refutes"] == [0, 0]
    # the binary figures read the same way: a judge that never says not_supports
    cis = figure_cis(["supports", "not_supports", "supports", "not_supports"], [Judgement("j@1", "c", "e", label="supports", probability=0.9)] * 4, resamples=300)
    assert cis["f1_not_supports"] == [0.0, 0.0]
    rows = {r["metric"]: r for r in judge_eval_rows({"three_way": {**three, "per_class_f1": {**three["per_class_f1"], "refutes": {"f1": None}}}})}
    assert rows["f1_refutes_3way"]["reason"].startswith("undefined: no pair is of the class")
