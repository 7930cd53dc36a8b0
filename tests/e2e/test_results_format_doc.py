"""docs/results-format.md lists every key that evaluate, run and judge-eval write — checked here against their
real output, so the page cannot drift from the code again (issue 9: it named keys that did not exist)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "results-format.md"
KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"},
             {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]


WHAT: dict[tuple[str, str], str] = {}  # (table, key) -> the "what" cell


def documented() -> dict[str, dict[str, str]]:
    """``<!-- keys: NAME -->`` + the table after it -> {NAME: {key: when present}}."""
    text = DOC.read_text(encoding="utf-8")
    tables: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"<!-- keys: ([\w-]+) -->\n((?:\|.*\n?)+)", text):
        rows = m.group(2).strip().splitlines()
        assert re.fullmatch(r"\| key \| present \| what \|", rows[0]), rows[0]
        keys = {}
        for row in rows[2:]:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
            key = re.fullmatch(r"`([\w-]+)`", cells[0])
            assert key, f"first cell of {row!r} is not one `key`"
            keys[key.group(1)] = cells[1]
            WHAT[(m.group(1), key.group(1))] = cells[2]
        tables[m.group(1)] = keys
    return tables


@pytest.fixture(scope="module")
def doc():
    tables = documented()
    assert set(tables) == {"sample", "judgement", "scores", "results", "metric", "counts", "judge-eval", "judge-eval-alce", "judge-eval-caqa"}
    return tables


def always(table: dict[str, str]) -> set[str]:
    return {k for k, when in table.items() if when == "always"}


def check(table: dict[str, str], keys: set[str], what: str, *, conditions: tuple[str, ...] = ()) -> None:
    """Every key written is documented; every key documented as always there (or there under one of
    ``conditions``) is written."""
    assert not keys - set(table), f"{what}: written but not in docs/results-format.md: {sorted(keys - set(table))}"
    expected = always(table) | {k for k, when in table.items() if when in conditions}
    assert not expected - keys, f"{what}: documented but not written: {sorted(expected - keys)}"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("doc")
    recs = [
        {"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome]. She liked cats [NA].",
         "knowledge": KNOWLEDGE, "gold": KNOWLEDGE[:1], "absent": [{"subject": "Q1", "property": "pet", "value": "cat"}],
         "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
        {"id": "b", "question": "What did Ann do?", "answer": "", "knowledge": KNOWLEDGE},
    ]
    (tmp / "in.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\nnot json\n", encoding="utf-8")
    out = {}
    for name, extra in (("geval", ["--geval-model", "fake"]), ("plain", []), ("attribution", ["--attribution-judge", "fake-4class"])):
        r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp / "in.jsonl"), "-o", str(tmp / name), "-q", *extra])
        assert r.exit_code == 0, r.output
        out[name] = (json.loads((tmp / name / "results.json").read_text()),
                     [json.loads(x) for x in (tmp / name / "samples.jsonl").read_text().splitlines()])
    return recs, out


def test_per_sample_keys(doc, evaluated):
    inputs, out = evaluated
    for name in ("geval", "plain", "attribution"):
        _, samples = out[name]
        for rec, given in zip(samples, inputs):
            check(doc["sample"], set(rec) - set(given) | {"answer"}, "samples.jsonl record")
            for j in rec["judgements"]:
                check(doc["judgement"], set(j), "a judgement")
    _, samples = out["geval"]
    assert samples[0]["judgements"]  # there were judgements to check
    check(doc["scores"], set(samples[0]["scores"]), "scores", conditions=("with `--geval-model`",))
    check(doc["scores"], set(out["plain"][1][0]["scores"]), "scores without G-Eval")
    check(doc["scores"], set(out["attribution"][1][0]["scores"]), "scores with --attribution-judge", conditions=("with `--attribution-judge`",))
    assert any(j["purpose"] == "attribution" for j in out["attribution"][1][0]["judgements"])


def test_results_keys(doc, evaluated):
    _, out = evaluated
    for name in ("geval", "plain", "attribution"):
        res, _ = out[name]
        check(doc["results"], set(res), "results.json", conditions=("evaluate",))
        check(doc["counts"], set(res["counts"]), "counts", conditions=("evaluate",) + (("with `--attribution-judge`",) if name == "attribution" else ()))
        for metric, entry in res["metrics"].items():
            assert not set(entry) - set(doc["metric"]), f"{metric}: {sorted(set(entry) - set(doc['metric']))} not documented"
            assert always(doc["metric"]) <= set(entry), f"{metric} lacks {sorted(always(doc['metric']) - set(entry))}"
    union = {k for name in out for entry in out[name][0]["metrics"].values() for k in entry}
    assert union == set(doc["metric"]), f"documented metric keys never written: {sorted(set(doc['metric']) - union)}"


def test_run_results_keys(doc, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    q = [{"id": "q1", "question": "Where was Ann born?", "knowledge": KNOWLEDGE, "gold": KNOWLEDGE[:1]}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(x) + "\n" for x in q), encoding="utf-8")
    (tmp_path / "c.yaml").write_text("name: t\ndataset: q.jsonl\nmodel: fake\nresamples: 20\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", "c.yaml", "--out", "o", "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    check(doc["results"], set(res), "run results.json")
    check(doc["counts"], set(res["counts"]), "run counts")


def judge_eval(*args: object) -> dict:
    """``vericite judge-eval ARGS`` through the command (which adds ``judge_usage``); its results.json."""
    r = CliRunner().invoke(cli, ["judge-eval", *map(str, args), "-q"])
    assert r.exit_code == 0, r.output
    return json.loads((Path(str(args[list(args).index("--out") + 1])) / "results.json").read_text())


def test_judge_eval_results_keys(doc, tmp_path):
    rows = [("Born in Rome.", "place of birth: Rome", "supports"), ("Born in Paris.", "place of birth: Rome", "refutes")]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"evidence": e, "claim": c, "label": g}) + "\n" for e, c, g in rows), encoding="utf-8")
    res = judge_eval("--judge", "triple", "--data", data, "--out", tmp_path / "t")
    check(doc["judge-eval"], set(res), "judge-eval results.json")
    assert set(res["ci"]) == set(re.findall(r'"(\w+)"', WHAT[("judge-eval", "ci")]))
    assert set(res["confusion"]["supports"]) == set(re.findall(r"`(\w+)`", WHAT[("judge-eval", "confusion")])) - set(res["confusion"])
    res = judge_eval("--judge", "llm:fake", "--data", data, "--out", tmp_path / "l")
    check(doc["judge-eval"], set(res), "judge-eval results.json (LLM judge)", conditions=("LLM judges",))
    assert set(res["judge_usage"]["fake"]) == set(re.findall(r'"(\w+)"', WHAT[("judge-eval", "judge_usage")])) - {"uncounted_calls", "model"}
    assert "three_way" not in res
    res = judge_eval("--judge", "fake-3way", "--data", data, "--out", tmp_path / "3")
    check(doc["judge-eval"], set(res), "judge-eval results.json (three-way judge)", conditions=("three-way judges",))
    documented_three = set(re.findall(r'"(\w+)"', WHAT[("judge-eval", "three_way")]))
    assert set(res["three_way"]) | set(res["three_way"]["ci"]) | set(res["three_way"]["per_class_f1"]["refutes"]) | set(res["three_way"]["labels"]) == documented_three


def test_judge_eval_alce_results_keys(doc, tmp_path):
    from tests.support.alce_human import MINI, write_mini, write_table

    res = judge_eval("--task", "alce-human", "--judge", f"table:{write_table(tmp_path / 't.jsonl', MINI)}", "--data", write_mini(tmp_path), "--out", tmp_path / "a")
    check(doc["judge-eval-alce"], set(res), "judge-eval --task alce-human results.json")
    assert set(res["ci"]) == set(re.findall(r'"(\w+)"', WHAT[("judge-eval-alce", "ci")]))
    assert set(res["config"]) == set(re.findall(r'"(\w+)"', WHAT[("judge-eval-alce", "config")]))
    assert set(res["counts"]) == set(re.findall(r'"(\w+)"', WHAT[("judge-eval-alce", "counts")]))
    figures = {k for k in res["datasets"]["asqa"]}
    assert figures <= set(doc["judge-eval-alce"]) and figures | {"datasets", "judge"} == set(res["reference"])


def test_judge_eval_caqa_results_keys(doc, tmp_path):
    from tests.support.caqa import write_pool

    data = tmp_path / "c.jsonl"
    pool = write_pool(tmp_path)
    assert CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "12", "--verbalise", "template", "--out", str(data), "-q"]).exit_code == 0
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--out", str(tmp_path / "j"), "-q"])
    assert r.exit_code == 0, r.output
    written = json.loads((tmp_path / "j" / "results.json").read_text())
    check(doc["judge-eval-caqa"], set(written), "judge-eval --task caqa results.json", conditions=("with --judge",))
    documented_figures = set(re.findall(r'"(\w+)"', WHAT[("judge-eval-caqa", "figures")]))
    figures = {re.sub(r"_(supportive|insufficient|contradictory|irrelevant|single|union|intersection|concatenation)$", "_<x>", k) for k in written["figures"]}
    assert {k for k in figures if "<x>" not in k} <= documented_figures
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps({"label": "supportive", "prediction": "Supportive", "complexity": "single"}) + "\n")
    assert CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--predictions", str(p), "--out", str(tmp_path / "k")]).exit_code == 0
    written = json.loads((tmp_path / "k" / "results.json").read_text())
    check(doc["judge-eval-caqa"], set(written), "judge-eval --task caqa --predictions results.json", conditions=("with --predictions",))
