"""``vericite report``: the HTML page for a run folder (docs/results-format.md).

Run folders are built by hand (tests/support/report.py), following the contract, so these tests do not depend on
how generation or evaluation write them. The page is checked with the stdlib HTML parser; in a real headless
Chromium by tests/real/test_report_chromium.py.
"""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from tests.support.report import HOSTILE_Q, Dom, make_run, results_doc, spans_of
from vericite.errors import DataError
from vericite.report import write_report

# --------------------------------------------------------------------------- tests


@pytest.fixture()
def page(tmp_path):
    run = make_run(tmp_path)
    path = write_report(run)
    assert path == run / "report.html"
    text = path.read_text(encoding="utf-8")
    return text, Dom(text)


def test_sections_and_header(page):
    text, dom = page
    for id_ in ("header", "metrics", "charts", "experiments", "judges", "counts", "tokens", "samples"):
        dom.by_id(id_)
    header = dom.by_id("header").all_text()
    for want in ("run", "qwen2.5-coder-1.5b", "llamacpp", "abcdef012345", "kalma-answer@1", "0.1.0", "7", "2026-11-21", "kg@1", "complete"):
        assert want in header, want
    assert "abcdef0123456789abcdef" not in header  # sha256 shown short (the full hash only in the tooltip)


def test_self_contained(page):
    text, dom = page
    assert not dom.find_all("link")
    for n in dom.find_all():
        for attr in ("src", "href"):
            v = n.attrs.get(attr)
            assert v is None or v.startswith("#"), (n.tag, attr, v)
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text
    csp = [m for m in dom.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "script-src 'sha256-" in csp[0].attrs["content"] and "default-src 'none'" in csp[0].attrs["content"]


def test_metric_table(page):
    _, dom = page
    rows = {r.attrs["data-metric"]: r for r in dom.find_all("tr", cls="metric")}
    assert set(rows) == set(results_doc()["metrics"])
    cells = lambda name: [c.all_text().strip() for c in rows[name].children]  # noqa: E731
    assert cells("citation_correctness")[:5] == ["citation_correctness", "0.620", "120", "[0.550, 0.700]", "↑ higher is better"]
    assert cells("alignment_micro")[5] == "triple@1"
    # a metric not computed says so, with its reason, and never shows a number
    nc = rows["na_f1"]
    assert "not-computed" in nc.classes
    assert cells("na_f1")[1] == "not computed"
    assert cells("na_f1")[6] == "no gold sets <i>here</i>"  # the reason is text, not markup
    assert not dom.find_all("i")
    # a real zero is a number
    assert cells("na_recall")[1] == "0.000"
    # the table follows the fixed order of metric names
    order = [r.attrs["data-metric"] for r in dom.find_all("tr", cls="metric")]
    assert order.index("citation_correctness") < order.index("alignment_micro") < order.index("na_precision") < order.index("geval_fluency")


def test_bar_charts(page):
    _, dom = page
    charts = dom.find_all("svg", cls="bar-chart")
    titles = [c.attrs["aria-label"] for c in charts]
    assert titles == ["Citation quality", "Text–citation alignment", "Conscious incompetence ([NA])", "Text quality (G-Eval, 1–5)"]
    na_chart = charts[2]
    bars = [n for n in na_chart.iter() if n.tag == "rect" and "bar" in n.classes]
    assert len(bars) == 2  # na_precision, na_recall; na_f1 not computed
    assert "not computed: no gold sets" in na_chart.all_text()
    whiskers = [n for c in charts for n in c.iter() if "whisker" in n.classes]
    assert len(whiskers) == 8  # every computed metric has a CI
    # the G-Eval chart runs from 1 to 5
    ticks = [n.all_text() for n in charts[3].iter() if "tick" in n.classes]
    assert ticks[0] == "1" and ticks[-1] == "5"


def test_experiment_curves(page):
    _, dom = page
    exps = {e.attrs["data-experiment"]: e for e in dom.find_all("div", cls="experiment")}
    assert set(exps) == {"knowledge removal", "retrieval accuracy"}
    removal = [n for n in exps["knowledge removal"].iter() if n.tag == "svg"]
    assert [s.attrs["aria-label"] for s in removal] == ["[NA] precision / recall / F1", "Citation quality (micro)"]
    series = [n.attrs["data-metric"] for n in removal[0].iter() if n.tag == "g" and "series" in n.classes]
    assert series == ["na_precision", "na_recall", "na_f1"]
    # x: removed triples 0..3; the [NA] metrics are not computed at 0, so their lines start at 1
    ticks = [n.all_text() for n in removal[0].iter() if "tick" in n.classes and n.attrs.get("text-anchor") == "middle"]
    assert ticks == ["0", "1", "2", "3"]
    points = [n for n in removal[0].iter() if n.tag == "circle"]
    assert len(points) == 9
    retrieval = [n for n in exps["retrieval accuracy"].iter() if n.tag == "svg"]
    assert [s.attrs["aria-label"] for s in retrieval] == ["Citation quality (micro)"]
    series = [n.attrs["data-metric"] for n in retrieval[0].iter() if n.tag == "g" and "series" in n.classes]
    assert series == ["citation_correctness", "citation_precision_micro", "citation_recall_micro", "citation_f1_micro"]
    ticks = [n.all_text() for n in retrieval[0].iter() if "tick" in n.classes and n.attrs.get("text-anchor") == "middle"]
    assert ticks == ["100", "80", "60", "40", "20"]  # from the gold graphs down, as in KaLMA Figure 5


def test_citation_colours(page):
    _, dom = page
    spans = spans_of(dom, "sample-1")
    got = [(s.all_text(), sorted(s.classes - {"cite"})) for s in spans]
    assert got == [
        ("[Q1, place of birth: Rome]", ["cite-correct"]),  # the graph spells it place_of_birth
        ("[Q1, occupation: sculptor]", ["cite-incorrect"]),
        ("Q1, ethnic group: Italians", ["cite-correct"]),
        ("occupation: painter", ["cite-correct"]),
        ("NA", ["cite-na"]),
        ("[Q99, spouse: X]", ["cite-bad", "st-unknown_entity"]),
        ("[Q1, movement:]", ["cite-bad", "st-no_value"]),
        ("[Q1, award]", ["cite-bad", "st-no_property"]),
        ("[see above]", ["cite-bad", "st-malformed"]),
    ]
    titles = [s.attrs["title"] for s in spans]
    for status, t in zip(["unknown_entity", "no_value", "no_property", "malformed"], titles[5:]):
        assert t.startswith(status)
    assert titles[1].startswith("incorrect") and titles[0].startswith("correct")
    # the text between the citations is kept
    answer = [n for n in dom.by_id("sample-1").iter() if "answer" in n.classes][0].all_text()
    assert answer.startswith("Artemisia was born in Rome [Q1, place of birth: Rome]. She was a sculptor")
    assert "She liked cats NA." in answer
    flags = dom.by_id("sample-1").attrs["data-flags"].split()
    assert set(flags) == {"incorrect", "bad", "na", "judge"}


def test_per_sample_scores_judgements_knowledge(page):
    _, dom = page
    s1 = dom.by_id("sample-1")
    text = s1.all_text()
    assert "alignment_pairs" in text and "na_recalled" in text
    jt = [n for n in s1.iter() if "judgements" in n.classes][0]
    rows = [r for r in jt.iter() if r.tag == "tr"][1:]
    cells = [[c.all_text() for c in r.children] for r in rows]
    assert cells[0][0] == "triple@1" and cells[0][4] == "0.970" and cells[0][6] == "ok"
    assert cells[1][0] == "llm:qwen@1" and cells[1][4] == "—" and cells[1][6] == "unparseable"
    kn = [n for n in s1.iter() if "knowledge" in n.classes][0].all_text()
    assert "place_of_birth" in kn and "gold" in kn and "cited" in kn and "Pierantonio" in kn
    # unparsed output shown raw and flagged
    s3 = dom.by_id("sample-3")
    assert "unparsed" in s3.attrs["data-flags"]
    assert "<<garbled>>" in s3.all_text()


def s2_text(dom):
    return dom.by_id("sample-2").all_text()


def test_hostile_output_is_text(page):
    text, dom = page
    scripts = dom.find_all("script")
    assert len(scripts) == 1 and "pwned" not in scripts[0].all_text()  # only the page's own script
    assert not dom.find_all("img")
    assert not [b for b in dom.find_all("b") if b.all_text() == "bold"]
    assert "<b>bold</b>" in s2_text(dom)
    s2 = dom.by_id("sample-2")
    assert HOSTILE_Q in s2.all_text()
    assert "<script>document.title='pwned'</script>" in s2.all_text()
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in text
    assert "<script>document.title" not in text
    # attribute breakout attempts stay inside the attribute
    assert all(n.attrs.get("onerror") is None for n in dom.find_all())
    assert [s.attrs["class"] for s in spans_of(dom, "sample-2")] == ["cite cite-na", "cite cite-correct"]
    # the reason in bad_lines.jsonl is escaped too
    assert "missing field 'question' <script>" in dom.by_id("counts").all_text()


def test_judges_counts_tokens(page):
    _, dom = page
    judges = {r.children[1].all_text(): r for r in dom.find_all("tr", cls="judge")}
    assert set(judges) == {"triple@1", "llm:qwen@1"}
    t = [c.all_text() for c in judges["triple@1"].children]
    assert t[2:5] == ["0.810", "0.900", "docs/judges.md"]
    assert "not measured" in judges["llm:qwen@1"].all_text()
    assert "0 / 1 / 0" in judges["llm:qwen@1"].all_text()
    assert "2 / 0 / 0" in judges["triple@1"].all_text()
    counts = dom.by_id("counts").all_text()
    for want in ("unparseable outputs", "failed model calls", "unparseable judgements", "bad input lines", "unknown_entity",
                 "1 unreadable line skipped", "an unfinished last line was ignored", "3 samples read"):
        assert want in counts, want
    tokens = dom.by_id("tokens").all_text()
    assert "300" in tokens and "60" in tokens and "360" in tokens


def test_many_samples_are_capped(tmp_path):
    run = make_run(tmp_path, extra_samples=3000, torn=False)
    t0 = time.perf_counter()
    path = write_report(run, tmp_path / "out" / "r.html", max_samples=200)
    assert time.perf_counter() - t0 < 30
    dom = Dom(path.read_text(encoding="utf-8"))
    assert len(dom.find_all("details", cls="sample")) == 200
    assert "Showing the first 200 of 3,003 answers" in dom.by_id("sample-cap").all_text()
    assert "Answers (3,003)" in dom.by_id("samples").all_text()
    assert path.stat().st_size < 5_000_000


def test_missing_samples_and_manifest(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    doc = results_doc()
    del doc["experiments"]
    (run / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    dom = Dom(write_report(run).read_text(encoding="utf-8"))
    assert "No samples.jsonl" in dom.by_id("samples").all_text()
    assert not dom.find_all(id="experiments")


def test_spans_missing_falls_back_to_sentences(tmp_path):
    run = make_run(tmp_path, torn=False)
    lines = (run / "samples.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    for s in rec["answer"]["sentences"]:
        for c in s["citations"]:
            c["span"] = [-1, -1]
    (run / "samples.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    dom = Dom(write_report(run).read_text(encoding="utf-8"))
    classes = [sorted(s.classes - {"cite"})[0] for s in spans_of(dom, "sample-1")]
    assert classes == ["cite-correct", "cite-incorrect", "cite-correct", "cite-correct", "cite-na"] + ["cite-bad"] * 4


def test_old_judgement_labels_are_shown_in_the_current_vocabulary(page):
    """Results written before the triple judge's labels were unified ("supports") read as "supported"."""
    _, dom = page
    rows = [r for r in dom.by_id("sample-1").iter() if r.tag == "tr" and r.all_text().startswith("triple@1")]
    cells = [c.all_text() for c in rows[0].children if c.tag == "td"]
    assert cells[5] == "supported"
    rows = [r for r in dom.find_all(id="sample-2")[0].iter() if r.tag == "tr" and r.all_text().startswith("triple@1")]
    assert [c.all_text() for c in rows[0].children if c.tag == "td"][5] == "not_supported"


def test_judge_eval_results_of_an_older_vericite(tmp_path):
    """Written before judge-eval recorded its kind, CIs and confusion counts: shown with what it holds."""
    run = tmp_path / "j"
    run.mkdir()
    (run / "results.json").write_text(json.dumps({"n": 10, "balanced_accuracy": 0.7, "roc_auc": None, "per_class_f1": {"supports": {"f1": 0.5}}}))
    text = write_report(run).read_text(encoding="utf-8")
    dom = Dom(text)
    figures = {r.attrs["data-figure"]: [c.all_text() for c in r.children if c.tag == "td"] for r in dom.find_all("tr", cls="figure")}
    assert figures["balanced_accuracy"][1:3] == ["0.700", ""] and figures["f1_supports"][1] == "0.500"
    assert "not-computed" in dom.find_all("tr", cls="figure", **{"data-figure": "roc_auc"})[0].classes
    assert "not recorded" in dom.by_id("judge-eval").all_text()
    assert not dom.find_all(id="metrics") and not dom.find_all(id="samples")
    assert "balanced_accuracy" in dom.by_id("config").all_text()


def test_judge_eval_folder_gets_its_own_page(tmp_path):
    """`vericite report` on a judge-eval folder rendered an empty page (issue 9): now the judge, its figures with
    CIs, the confusion counts and the data, from a results.json that judge-eval itself wrote."""
    from vericite.judges.llm import LLMJudge
    from vericite.judges.meta import run_judge_eval
    from vericite.models.fake import FakeBackend
    from vericite.types import ModelIdentity

    class Stub(FakeBackend):
        def identity(self):
            return ModelIdentity(name="stub<b>", backend="llamacpp", model="stub.gguf", sha256="cd" * 32)

    rows = [("Rome is in Italy.", "Rome is in Italy.", "supports"), ("Rome is in Italy.", "Rome is in France <script>.", "refutes"),
            ("The cat sat.", "The cat sat.", "supports"), ("The cat sat.", "The dog sat.", "not_enough_info")] * 3
    data = tmp_path / "pairs <x>.jsonl"
    data.write_text("".join(json.dumps({"evidence": e, "claim": c, "label": g}) + "\n" for e, c, g in rows) + "not json\n", encoding="utf-8")
    run = tmp_path / "j"
    judge = LLMJudge(Stub(replies={"Claim: Rome is in Italy": "Yes", "Claim: The cat": "Yes", "Claim: The dog": "Yes"}))
    res = run_judge_eval(judge, data, run)
    r = CliRunner().invoke(__import__("vericite.cli.main", fromlist=["cli"]).cli, ["report", str(run)])
    assert r.exit_code == 0, r.output
    dom = Dom((run / "report.html").read_text(encoding="utf-8"))
    assert [a.attrs["href"] for a in dom.find_all("a") if a.parent.tag == "nav"] == ["#header", "#judge-eval", "#config"]
    section = dom.by_id("judge-eval")
    ident = {tr.children[0].all_text(): tr.children[1].all_text() for tr in dom.find_all("table", cls="judge-identity")[0].iter() if tr.tag == "tr"}
    assert ident["judge"] == "llm:stub<b>@2" and ident["kind"] == "llm" and ident["version"] == "2"
    assert ident["model sha256"] == "cd" * 32 and ident["model"] == "stub<b> · llamacpp · stub.gguf"
    figures = {r.attrs["data-figure"]: [c.all_text() for c in r.children if c.tag == "td"] for r in section.iter() if r.tag == "tr" and "figure" in r.classes}
    lo, hi = res["ci"]["balanced_accuracy"]
    assert figures["balanced_accuracy"] == ["balanced accuracy", f"{res['balanced_accuracy']:.3f}", f"[{lo:.3f}, {hi:.3f}]", "12", ""]
    assert figures["unparseable"][4] == "lower is better"
    confusion = {tr.attrs["data-gold"]: [c.all_text() for c in tr.children if c.tag == "td"] for tr in dom.by_id("judge-confusion").iter() if tr.tag == "tr" and "data-gold" in tr.attrs}
    c = res["confusion"]
    assert confusion["supports"] == [str(c["supports"]["supported"]), str(c["supports"]["not_supported"]), str(c["supports"]["abstained"]), "6"]
    assert confusion["not_supports"][0] == str(c["not_supports"]["supported"]) and confusion["not_supports"][3] == "6"
    data_rows = {tr.children[0].all_text(): tr.children[1].all_text() for tr in dom.find_all("table", cls="judge-data")[0].iter() if tr.tag == "tr"}
    assert data_rows["data"] == str(data) and data_rows["pairs judged"] == "12" and data_rows["bad lines skipped"] == "1"
    assert not [n for n in dom.root.iter() if n.tag in ("script", "b") and n.parent.tag != "body"]  # escaped, nothing injected
    assert not dom.find_all(id="judge-confusion-3way") and "balanced_accuracy_3way" not in figures  # a two-label judge


def test_judge_eval_page_of_a_three_way_judge_shows_its_three_way_figures(tmp_path):
    from vericite import registry
    from vericite.judges.meta import run_judge_eval

    rows = [("Ann was born in Rome.", "Ann was born in Rome.", "supports"), ("Ann was born in Rome.", "Ann was not born in Rome.", "refutes"),
            ("Ann was born in Rome.", "Bob likes cats.", "not_enough_info"), ("Ann was born in Rome.", "Ann was born in Paris.", "refutes")]
    data = tmp_path / "p.jsonl"
    data.write_text("".join(json.dumps({"evidence": e, "claim": c, "label": g}) + "\n" for e, c, g in rows), encoding="utf-8")
    res = run_judge_eval(registry.create("judges", "fake-3way"), data, tmp_path / "j", resamples=50)
    r = CliRunner().invoke(__import__("vericite.cli.main", fromlist=["cli"]).cli, ["report", str(tmp_path / "j")])
    assert r.exit_code == 0, r.output
    dom = Dom((tmp_path / "j" / "report.html").read_text(encoding="utf-8"))
    figures = {r.attrs["data-figure"]: [c.all_text() for c in r.children if c.tag == "td"] for r in dom.by_id("judge-eval").iter() if r.tag == "tr" and "figure" in r.classes}
    assert figures["f1_refutes_3way"][:2] == ["F1 refutes (3-way)", f"{res['three_way']['per_class_f1']['refutes']['f1']:.3f}"]
    conf = {tr.attrs["data-gold"]: [c.all_text() for c in tr.children if c.tag == "td"] for tr in dom.by_id("judge-confusion-3way").iter() if tr.tag == "tr" and "data-gold" in tr.attrs}
    assert [x.split(" ")[0] for x in conf["refutes"]] == ["0", "1", "1", "0"]




def test_judge_eval_page_shows_the_judges_tokens(tmp_path):
    """judge-eval's judge_usage (per model name, calls of unknown tokens, the note) is a row of the judge's table;
    a file written before it has no such row."""
    from vericite.judges.meta import run_judge_eval
    from vericite.judges.triple import TripleJudge

    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"evidence": "Born in Rome.", "claim": "place of birth: Rome", "label": "supports"}) + "\n", encoding="utf-8")
    cli = __import__("vericite.cli.main", fromlist=["cli"]).cli

    def identity_rows(run):
        assert CliRunner().invoke(cli, ["report", str(run)]).exit_code == 0
        dom = Dom((run / "report.html").read_text(encoding="utf-8"))
        return {tr.children[0].all_text(): tr.children[1].all_text() for tr in dom.find_all("table", cls="judge-identity")[0].iter() if tr.tag == "tr"}

    run_judge_eval(TripleJudge(), data, tmp_path / "old")
    assert "judge tokens" not in identity_rows(tmp_path / "old")
    run_judge_eval(TripleJudge(), data, tmp_path / "j")
    res = json.loads((tmp_path / "j" / "results.json").read_text())
    res.update(judge_usage={"m<b>": {"prompt_tokens": 1200, "completion_tokens": 3, "calls": 3, "uncounted_calls": 1}},
               judge_usage_note="this process's calls only: the 2 judgements kept by --resume from an earlier run are not counted")
    (tmp_path / "j" / "results.json").write_text(json.dumps(res))
    row = identity_rows(tmp_path / "j")["judge tokens"]
    assert row.startswith("m<b>: 1,200 prompt + 3 completion tokens in 3 calls (1 of unknown tokens)") and "2 judgements kept by --resume" in row
    res["judge_usage"], res["judge_usage_note"] = {}, ""
    (tmp_path / "j" / "results.json").write_text(json.dumps(res))
    assert identity_rows(tmp_path / "j")["judge tokens"] == "none (no language model called)"


def test_odd_entries_do_not_break_the_page(tmp_path):
    run = tmp_path / "odd"
    run.mkdir()
    doc = {
        "kind": "evaluate",
        "model": "just-a-string",
        "judges": {"alignment": "triple@1", "na": {"id": "nli@1", "measured": {"balanced_accuracy": "high"}}},
        "metrics": {
            "citation_correctness": {"value": "0.5", "n": "ten", "ci": [0.1]},
            "alignment_micro": [0.3],
            "na_precision": {"value": float("nan"), "n": 3},
            "my_metric": {"value": 12.5, "n": 4, "ci": [10, 15], "higher_is_better": False},
        },
        "counts": {"samples": 2, "citation_status": {"ok": 0}},
        "experiments": {"broken": [1, 2], "levels as text": {"x": "setting", "rows": [
            {"level": "b", "metrics": {"na_f1": {"value": 0.2}}}, {"level": "a", "metrics": None}, "junk"]}},
    }
    (run / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    (run / "samples.jsonl").write_text(
        json.dumps({"id": 1, "question": None, "answer": {"raw": "x [Q1, p: v]", "sentences": [{"text": "x [Q1, p: v]", "citations": [
            {"kind": "triple", "raw": "[Q1, p: v]", "status": "weird", "span": ["a", 3]}, "junk"]}, "junk"]},
            "knowledge": [{"subject": 1}], "judgements": ["junk", {"judge": None}], "scores": [1], "usage": {"prompt_tokens": "x"}}) + "\n"
        + json.dumps({"id": "2", "question": "q", "output": None, "answer": {"sentences": None}}) + "\n"
        + "[1, 2]\n",
        encoding="utf-8",
    )
    dom = Dom(write_report(run).read_text(encoding="utf-8"))
    rows = {r.attrs["data-metric"]: r for r in dom.find_all("tr", cls="metric")}
    assert "not-computed" in rows["alignment_micro"].classes and "not-computed" in rows["na_precision"].classes
    assert "not-computed" in rows["citation_correctness"].classes
    assert "12.500" in rows["my_metric"].all_text() and "lower is better" in rows["my_metric"].all_text()
    assert "malformed experiment entry" in dom.by_id("experiments").all_text()
    assert [s.attrs["class"] for s in spans_of(dom, "sample-1")] == ["cite cite-bad st-weird"]
    assert "not measured" in dom.by_id("judges").all_text()


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "has no results.json"),
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"metrics": [1]}', "'metrics' must be an object"),
    ],
)
def test_bad_results_are_one_line_errors(tmp_path, content, message):
    run = tmp_path / "r"
    run.mkdir()
    if content is not None:
        (run / "results.json").write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        write_report(run)
    from vericite.cli.main import cli

    res = CliRunner().invoke(cli, ["report", str(run)])
    assert res.exit_code != 0
    assert res.output.count("\n") == 1 and message in res.output and "Traceback" not in res.output


def test_missing_run_folder(tmp_path):
    with pytest.raises(DataError, match="run folder not found"):
        write_report(tmp_path / "nope")


def test_cli_prints_path(tmp_path):
    from vericite.cli.main import cli

    run = make_run(tmp_path)
    res = CliRunner().invoke(cli, ["report", str(run)])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(run / "report.html")
    out = tmp_path / "elsewhere" / "x.html"
    res = CliRunner().invoke(cli, ["report", str(run), "--out", str(out), "--max-samples", "1"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(out) and out.is_file()
    assert len(Dom(out.read_text()).find_all("details", cls="sample")) == 1


def test_answers_parsed_by_the_real_parser(tmp_path):
    """What ``generate`` writes (parse_kg_answer's spans and grouping) colours the same way."""
    from vericite.attribution import kg
    from vericite.types import Triple

    kn = [Triple("Q1", "place_of_birth", "Rome"), Triple("Q1", "occupation", "painter"), Triple("Q1", "ethnic group", "Italians")]
    text = ("She was born in Rome [Q1, place of birth: Rome]. Italian painter [Q1, ethnic group: Italians, occupation: sculptor]. "
            "Cats [NA]. X [Q9, spouse: Y] [Q1, movement:] [Q1] [see above].")
    graph = {}
    for t in kn:
        graph.setdefault(t.subject, set()).add(t.property.replace("_", " "))
    answer = kg.parse_kg_answer(text, graph)
    run = tmp_path / "g"
    run.mkdir()
    (run / "results.json").write_text(json.dumps({"kind": "evaluate", "metrics": {}}), encoding="utf-8")
    rec = {"id": "g1", "question": "Who?", "knowledge": [t.to_dict() for t in kn], "output": text, "answer": answer.to_dict()}
    (run / "samples.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    dom = Dom(write_report(run).read_text(encoding="utf-8"))
    got = [sorted(s.classes - {"cite"}) for s in spans_of(dom, "sample-1")]
    assert got == [["cite-correct"], ["cite-correct"], ["cite-incorrect"], ["cite-na"], ["cite-bad", "st-unknown_entity"],
                   ["cite-bad", "st-no_value"], ["cite-bad", "st-no_property"], ["cite-bad", "st-malformed"]]
    answer_text = [n for n in dom.by_id("sample-1").iter() if "answer" in n.classes][0].all_text()
    assert answer_text.startswith("She was born in Rome [Q1, place of birth: Rome]. Italian painter [Q1, ethnic group: Italians, occupation: sculptor].")


def test_report_judge_table_shows_kappa_beside_alces_judge():
    """An ALCE evaluation's report: the judge's measured κ on ALCE's human labels beside TRUE's (a measurement as
    judges/measured.json gives it for the task alce-human)."""
    from vericite.report.sections import judges_section

    meas = {"task": "alce-human", "balanced_accuracy": 0.636, "cohen_kappa": 0.302, "roc_auc": 0.815, "n": 26,
            "data": "ALCE human citation labels", "reference": {"judge": "TRUE T5-11B", "cohen_kappa": 0.611}}
    html = judges_section({"judges": {"citations": {"id": "llm:q@2", "measured": meas}}}, {})
    assert "Cohen&#x27;s κ 0.302" in html or "Cohen's κ 0.302" in html
    assert "TRUE T5-11B: κ 0.611" in html


def test_a_family_s_per_answer_shares_are_one_stacked_bar_with_its_legend():
    from vericite.report.answers import sample_html, shares_html

    entry = {"pairs": 4, "counts": {"supportive": 3, "irrelevant": 1, "unparseable": 0},
             "shares": {"supportive": 0.75, "irrelevant": 0.25, "unparseable": 0.0}}  # fmt: skip
    html = shares_html("attribution", entry)
    assert "of 4 (sentence, citation) pairs" in html and html.count('class="share share-') == 2  # a 0 share draws no segment
    assert 'style="width:75.00%"' in html and "supportive: 75% (3)" in html and "unparseable: 0% (0)" in html
    assert "no pair judged" in shares_html("attribution", {"pairs": 0, "counts": {}, "shares": {"supportive": None}})
    assert shares_html("alce", {"citation_recall": 1.0}) == ""  # a family without shares draws none
    page = sample_html(1, {"id": "a", "question": "q", "output": "x", "scores": {"attribution": entry, "citations": 1}})
    assert 'class="share-bar"' in page and '<span class="sub">attribution of 4' in page


def test_tokens_section_shows_each_judging_model_and_unknown_token_calls():
    from vericite.report.sections import tokens_section

    results = {"tokens": {"prompt": 10, "completion": 2, "uncounted_calls": 3}, "counts": {"samples": 2},
               "judge_usage": {"smollm2-135m": {"prompt_tokens": 1093, "completion_tokens": 6, "calls": 6, "uncounted_calls": 1}}}
    html = tokens_section(results, (0, 0), 2)
    assert "calls of unknown tokens" in html and "lower bound" in html
    assert "judging: smollm2-135m" in html and "1,093 + 6 in 6 calls, 1 of unknown tokens" in html
    assert "judge_usage" in html
    plain = tokens_section({"tokens": {"prompt": 10, "completion": 2}, "judge_usage": {}}, (0, 0), 2)
    assert "judging" not in plain and "unknown" not in plain
