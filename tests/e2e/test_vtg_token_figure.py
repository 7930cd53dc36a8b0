"""VTG's Figure 4 (tokens per question against citation F1) in ``vericite report`` of a ``vtg-methods`` experiment
folder made by ``vericite run`` with fake models: one point per level, named by its method, from each level's
generation records and evaluation; a level written before RERANK recorded its judge's tokens is marked a lower
bound; a level's missing samples.jsonl is one line on the page, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend, last_user_message

from tests.support.vtg import DOCS, scripted, vtg_experiment_config

ITEMS = [
    {"question": "Which cities are capitals?", "answer": "Paris and Rome.", "claims": ["Paris is a capital."],
     "docs": [{"title": d.title, "text": d.text, "summary": d.text, "extraction": d.text} for d in DOCS]},
    {"question": "Which cities are large?", "answer": "Madrid.", "claims": ["Madrid is large."],
     "docs": [{"title": d.title, "text": d.text, "summary": d.text, "extraction": d.text} for d in DOCS]},
]


@pytest.fixture
def methods_run(tmp_path):
    """A vtg-methods run folder: VTG's steps answered by the scripted model, ALCE's baselines by one cited sentence."""
    vtg = scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[2]", "Rome": "title:Rome"})

    def reply(messages, params):
        p = last_user_message(messages)
        if "Answer so far:" in p or "Sentence with citation:" in p or "Generated questions:" in p:
            return vtg.replies(messages, params)
        return "Paris is the capital of France [1]."

    registry.backends.register("vtg-and-alce", lambda arg, *, ctx, **o: FakeBackend("vtg-and-alce", replies=reply), replace=True)
    cfg = vtg_experiment_config(tmp_path, ITEMS, "vtg-and-alce", "vtg-methods")
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(out), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    yield out
    registry.backends.unregister("vtg-and-alce")


def figure(html: str) -> ElementTree.Element:
    section = html[html.index('<section id="token-figure">'):]
    svg = re.search(r"<svg class=\"chart cost-chart\".*?</svg>", section, re.S)
    assert svg, section[:500]
    return ElementTree.fromstring(svg.group(0))


def report(out: Path) -> str:
    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    return (out / "report.html").read_text(encoding="utf-8")


def test_the_report_of_a_vtg_methods_run_draws_tokens_against_citation_f1(methods_run):
    html = report(methods_run)
    assert '<a href="#token-figure">' in html
    svg = figure(html)
    ns = "{http://www.w3.org/2000/svg}"
    groups = svg.findall(f"{ns}g[@class='point-group']")
    assert [g.get("data-label") for g in groups] == ["vanilla", "summ", "snippet", "rerank", "vtg"]
    assert not any(g.get("data-lower-bound") for g in groups)  # the fake judge calls no model: nothing left out
    tips = {g.get("data-label"): g.find(f"{ns}circle/{ns}title").text for g in groups}
    records = {lv: [json.loads(x) for x in (methods_run / f"level-{lv}" / "samples.jsonl").read_text().splitlines()] for lv in range(5)}
    for lv, name in enumerate(["vanilla", "summ", "snippet", "rerank", "vtg"]):
        t = sorted(r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in records[lv])
        f1 = json.loads((methods_run / f"level-{lv}" / "eval" / "results.json").read_text())["metrics"]["alce_citation_f1"]["value"]
        assert tips[name].startswith(f"{name}: {sum(t) / 2:,.0f} tokens per question") and f"alce_citation_f1 {f1:.3f}" in tips[name]
    assert "interquartile range" in html


def test_a_rerank_level_without_its_judges_tokens_is_a_lower_bound(methods_run):
    level = methods_run / "level-3" / "samples.jsonl"
    recs = [json.loads(x) for x in level.read_text().splitlines()]
    for r in recs:
        del r["rerank"]["judge_usage"]  # as a run written before judges reported tokens
    level.write_text("".join(json.dumps(r) + "\n" for r in recs))
    svg = figure(report(methods_run))
    ns = "{http://www.w3.org/2000/svg}"
    bound = [g.get("data-label") for g in svg.findall(f"{ns}g[@class='point-group']") if g.get("data-lower-bound")]
    assert bound == ["rerank"]
    assert "rerank (≥)" in "".join(svg.itertext()) and "judge tokens not recorded" in "".join(svg.itertext())


@pytest.mark.parametrize("damage", ["no samples", "no usage"])
def test_a_level_without_its_records_or_usage_is_one_line_on_the_page(methods_run, damage):
    level = methods_run / "level-2" / "samples.jsonl"
    if damage == "no samples":
        level.unlink()
        why = "no samples.jsonl"
    else:
        recs = [json.loads(x) for x in level.read_text().splitlines()]
        level.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "usage"}) + "\n" for r in recs))
        why = "its answers have no usage (tokens not recorded)"
    html = report(methods_run)
    section = html[html.index('<section id="token-figure">'):]
    assert re.search(r'<p class="warn">no token figure: [^<]*level-2[^<]*' + re.escape(why), section)
    assert "Traceback" not in html


def test_every_vtg_experiment_declares_its_token_figure_and_others_none():
    from vericite.bench.experiments.vtg import EXPERIMENTS

    assert {e.presentation()["token_figure"] for e in EXPERIMENTS.values()} == {"alce_citation_f1"}
    assert "token_figure" not in registry.create("experiments", "conscious-incompetence").presentation()
