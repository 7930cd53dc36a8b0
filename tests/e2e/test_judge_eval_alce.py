"""``vericite judge-eval --task alce-human`` end to end: on a hand-written file, on the shared ALCE file with a table
judge built from the file's own automatic (TRUE) labels (whose figures must equal the reference row's), and bad
input said in one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.alce_human import MINI, MINI_REFERENCE, write_mini, write_table
from vericite.cli.main import cli
from vericite.paths import file_sha256


def invoke(*args):
    return CliRunner().invoke(cli, ["judge-eval", "--task", "alce-human", *map(str, args)])


def test_mini_file_with_a_table_judge(tmp_path):
    data = write_mini(tmp_path)
    table = write_table(tmp_path / "t.jsonl", MINI)
    r = invoke("--judge", f"table:{table}", "--data", data, "--out", tmp_path / "o", "-q", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["task"] == "alce-human" and doc["counts"]["recall_items"] == 3
    fig = doc["figures"]["all"]["recall_cohen_kappa"]
    assert fig["value"] == pytest.approx(MINI_REFERENCE["recall_cohen_kappa"]) == fig["reference"]
    assert set(doc["figures"]) == {"all", "asqa", "eli5"}
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert res["kind"] == "judge-eval" and res["config"]["task"] == "alce-human"
    assert res["data_sha256"] == file_sha256(data)  # the bytes judged, as --task pairs records them
    table_out = invoke("--judge", f"table:{table}", "--data", data, "--out", tmp_path / "o2", "-q")
    assert table_out.exit_code == 0 and "ALCE's TRUE T5-11B" in table_out.output and "recall Cohen's kappa" in table_out.output
    md = invoke("--judge", f"table:{table}", "--data", data, "--out", tmp_path / "o3", "-q", "--format", "markdown")
    assert md.exit_code == 0 and "| recall Cohen's kappa |" in md.stdout


@pytest.mark.parametrize(
    "content, match",
    [
        (None, "not found"),
        ("[1, 2]", "want a JSON object"),
        ('{"asqa": {"s": {"q": {"output": "no sentences"}}}}', "'sentences' list"),
        ("{not json", "not JSON"),
    ],
)
def test_bad_input_is_one_line(tmp_path, content, match):
    data = tmp_path / "h.json"
    if content is not None:
        data.write_text(content, encoding="utf-8")
    r = invoke("--judge", "fake", "--data", data, "--out", tmp_path / "o")
    assert r.exit_code != 0
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and match in lines[0] and "Traceback" not in r.output, r.output


def test_resume_is_for_alce_human_only(tmp_path):
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "fake", "--resume", "--data", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o")])
    assert r.exit_code != 0 and "--task alce-human" in r.output and len(r.output.strip().splitlines()) == 1


@pytest.mark.shared
def test_shared_file_reference_row_is_the_files_labels(tmp_path, shared_data):
    path = shared_data / "alce" / "human_eval" / "human_eval_citations_completed.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    # the file's labels, counted here without vericite: sentences with citations, and their citations
    recall, precision = [], []
    for systems in data.values():
        for answers in systems.values():
            for qid, a in answers.items():
                if qid == "overall_results":
                    continue
                for k, s in enumerate(a["sentences"]):
                    if s["citations"]:
                        recall.append((s["sentence_recall_score"] == 1, a["automatic_recall_scores"][k] == 1))
                        precision += [(c["citation_precision_score"] == 2, a["automatic_citation_precision_scores"][k][i] == 2)
                                      for i, c in enumerate(s["citations"])]

    def kappa(pairs):
        n = len(pairs)
        po = sum(g == s for g, s in pairs) / n
        g1, s1 = sum(g for g, _ in pairs) / n, sum(s for _, s in pairs) / n
        pe = g1 * s1 + (1 - g1) * (1 - s1)
        return (po - pe) / (1 - pe)

    table = write_table(tmp_path / "true.jsonl", data)
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "alce-human", "--judge", f"table:{table}", "--out", str(tmp_path / "o"), "-q", "--format", "json"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert res["data"] == str(path.resolve()) or res["data"].endswith("alce/human_eval/human_eval_citations_completed.json")
    ref = res["reference"]
    assert ref["recall_n"] == len(recall) == 2120 and ref["precision_n"] == len(precision) == 2896
    assert ref["recall_cohen_kappa"] == pytest.approx(kappa(recall)) and round(ref["recall_cohen_kappa"], 3) == 0.578
    assert ref["precision_cohen_kappa"] == pytest.approx(kappa(precision)) and round(ref["precision_cohen_kappa"], 3) == 0.610
    assert res["counts"]["sentences_without_citations"] == 484 and res["failed"] == 0
    for k in ("recall_cohen_kappa", "recall_balanced_accuracy", "precision_cohen_kappa", "precision_balanced_accuracy"):
        assert res[k] == ref[k], k  # the table of the file's labels reproduces its reference row exactly
    for d in ("asqa", "eli5"):
        assert res["datasets"][d]["recall_cohen_kappa"] == ref["datasets"][d]["recall_cohen_kappa"]


def test_report_of_an_alce_human_folder(tmp_path):
    data = write_mini(tmp_path)
    table = write_table(tmp_path / "t.jsonl", MINI)
    assert invoke("--judge", f"table:{table}", "--data", data, "--out", tmp_path / "o", "-q").exit_code == 0
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert html.count('class="grid-table alce-human"') == 3  # both datasets, asqa, eli5
    assert 'data-figure="recall_cohen_kappa"><td>recall Cohen&#x27;s kappa</td><td class="num">-0.500' in html


@pytest.mark.shared
def test_shipped_alce_human_measurements_match_the_file(shared_data):
    """judges/measured.json's alce-human entries: their counts and reference row are what the shared file gives at
    their --limit now (the judges' own figures need the models: docs/judges.md has the commands)."""
    from pathlib import Path

    import vericite.judges as judges_pkg
    from vericite.judges.meta_alce import read_alce_human
    from vericite.judges.meta_alce_figures import all_figures, reference_verdict

    table = json.loads((Path(judges_pkg.__file__).parent / "measured.json").read_text(encoding="utf-8"))
    found = 0
    for jid, entry in table.items():
        if not isinstance(entry, dict):
            continue
        for m in [entry, *entry.get("also", [])]:
            if m.get("task") != "alce-human":
                continue
            found += 1
            f = read_alce_human(shared_data / "alce" / "human_eval" / "human_eval_citations_completed.json", m["limit"])
            ref = all_figures(f, reference_verdict, resamples=1)
            assert (m["n"], m["precision_n"]) == (ref["recall_n"], ref["precision_n"]), jid
            assert m["reference"]["n"] == ref["recall_n"]
            for k in ("cohen_kappa", "balanced_accuracy"):
                assert m["reference"][k] == round(ref[f"recall_{k}"], 3), (jid, k)
            assert m["reference"]["precision_cohen_kappa"] == round(ref["precision_cohen_kappa"], 3)
            assert m["reference"]["precision_any_cohen_kappa"] == round(ref["precision_any_cohen_kappa"], 3)
    assert found >= 2  # the embedded LLM judges
