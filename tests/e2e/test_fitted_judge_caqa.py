"""``vericite train llm3f`` on a `vericite build caqa` dataset (the fake model): --split (train by default), a split
with no item refused in one line, the fit file's data kind, split and mapping; judge-eval --task caqa refuses the
three-way judge (and any judge whose labels are not CAQA's four classes) in one line; an existing --out is
overwritten only with --force."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

CLASSES = ("supportive", "contradictory", "insufficient", "irrelevant")


def caqa_file(tmp_path, train=8, test=4):
    f = tmp_path / "caqa.jsonl"
    items = [{"question": f"question {i}", "answer": f"answer {i}", "citation": f"citation {i}", "label": CLASSES[i % 4],
              "complexity": "single", "split": "train" if i < train else "test"} for i in range(train + test)]
    f.write_text("".join(json.dumps(d) + "\n" for d in items), encoding="utf-8")
    return f


def train_llm3f(*args):
    return CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--no-cache", "-q", *args])


def test_train_llm3f_on_a_caqa_dataset_fits_its_train_split(tmp_path):
    data, fit = caqa_file(tmp_path), tmp_path / "fit.json"
    r = train_llm3f("--data", str(data), "--out", str(fit))
    assert r.exit_code == 0, r.output
    assert "CAQA split train: supportive 2, contradictory 2, insufficient 2, irrelevant 2, read as three labels" in r.output
    rec = json.loads(fit.read_text())
    d = rec["data"]
    assert d["kind"] == "caqa" and d["split"] == "train" and d["n"] == 8 and d["mapping"]["irrelevant"] == "not_enough_info"
    assert rec["pairs"]["gold"] == {"supports": 2, "refutes": 2, "not_enough_info": 4}
    r = train_llm3f("--data", str(data), "--split", "test", "--out", str(tmp_path / "test.json"))
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "test.json").read_text())["data"]["n"] == 4


def test_a_caqa_split_with_no_item_is_refused_in_one_line(tmp_path):
    data, fit = caqa_file(tmp_path), tmp_path / "fit.json"
    r = train_llm3f("--data", str(data), "--split", "dev", "--out", str(fit))
    assert r.exit_code != 0 and "Traceback" not in r.output and not fit.exists()
    assert "holds no item of split 'dev' (its items: test 4, train 8): give --split one of those" in r.output


def test_judge_eval_caqa_refuses_a_judge_whose_labels_are_not_the_four_classes(tmp_path):
    # a three-way (or binary) judge's labels are none of CAQA's classes: every item was scored unparseable, micro_f1 0
    data, fit = caqa_file(tmp_path), tmp_path / "fit.json"
    assert train_llm3f("--data", str(data), "--out", str(fit)).exit_code == 0
    takes = ("--task caqa measures four-class judges (labels supportive, insufficient, contradictory, irrelevant): llm4:<model>, "
             "autois:<binary judge>, nli4:<three-class NLI model>, caqa:<folder of vericite train caqa>, or --predictions FILE; ")
    for judge, said in ((f"llm3f:{fit}", "(its labels are supports / refutes / not_enough_info)"),
                        ("fake-3way", "(its labels are supports / refutes / not_enough_info)"),
                        ("fake", "(its labels are supported / not_supported); a binary judge is read as four classes by autois:<judge>")):
        for split in (["--split", "test"], []):
            out = tmp_path / "j"
            r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", judge, "--data", str(data), *split,
                                         "--no-cache", "--out", str(out), "-q"])
            assert r.exit_code != 0 and "Traceback" not in r.output, r.output
            line = r.output.strip()
            assert "\n" not in line and line.startswith("error: " + takes) and line.endswith(" is not one " + said), line
            assert not out.exists()  # nothing written
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--split", "test",
                                 "--no-cache", "--out", str(tmp_path / "k"), "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", "autois:fake", "--data", str(data), "--split", "test",
                                 "--no-cache", "--out", str(tmp_path / "m"), "-q"])
    assert r.exit_code == 0, r.output


def test_an_existing_fit_file_is_overwritten_only_with_force(tmp_path):
    data, fit = caqa_file(tmp_path), tmp_path / "fit.json"
    fit.write_text("keep me", encoding="utf-8")
    r = train_llm3f("--data", str(data), "--out", str(fit))
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert f"--out {fit} exists: give --force to overwrite it" in r.output and fit.read_text() == "keep me"
    r = train_llm3f("--data", str(data), "--out", str(fit), "--force")
    assert r.exit_code == 0, r.output
    assert json.loads(fit.read_text())["kind"] == "vericite-llm3-fit"


def test_the_report_says_a_fit_was_on_caqa_items(tmp_path):
    from vericite.report.judge_eval import judge_block

    data, fit = caqa_file(tmp_path), tmp_path / "fit.json"
    assert train_llm3f("--data", str(data), "--out", str(fit)).exit_code == 0
    pairs = tmp_path / "pairs.jsonl"  # measured on three-way pairs (--task caqa takes four-class judges only)
    pairs.write_text("".join(json.dumps({"evidence": f"evidence {i}", "claim": f"claim {i}", "label": lab}) + "\n"
                             for i, lab in enumerate(("supports", "refutes", "not_enough_info"))), encoding="utf-8")
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", f"llm3f:{fit}", "--data", str(pairs), "--no-cache", "--out", str(tmp_path / "j"), "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "j" / "results.json").read_text())
    assert res["calibration"]["data"]["kind"] == "caqa" and res["calibration"]["data"]["split"] == "train"
    assert "fitted on 8 CAQA train items, four classes read as three, after the first 0" in judge_block(res)
