"""``vericite build caqa`` and ``vericite build stats`` on a CAQA file, through the CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.support.caqa import write_pool
from vericite.cli.main import cli


def test_build_caqa_then_stats(tmp_path):
    pool = write_pool(tmp_path)
    out = tmp_path / "caqa.jsonl"
    r = CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "40", "--verbalise", "template", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert "items from" in r.output and "classes: supportive" in r.output and "values resolved to entities" in r.output
    s = CliRunner().invoke(cli, ["build", "stats", str(out)])
    assert s.exit_code == 0, s.output
    assert "| class | supportive (Sup.)" in s.output and "checks: all pass" in s.output
    j = json.loads(CliRunner().invoke(cli, ["build", "stats", str(out), "--json"]).output)
    assert sum(v["total"] for v in j["stats"]["classes"].values()) == len(out.read_text().splitlines())
    card = tmp_path / "caqa.md"
    card.unlink()
    c = CliRunner().invoke(cli, ["build", "stats", str(out), "--card"])
    assert c.exit_code == 0 and f"card: {card}" in c.output and card.read_text(encoding="utf-8").strip(), c.output
    again = CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "40", "--verbalise", "template", "--out", str(out), "-q"])
    assert again.exit_code != 0 and "--resume" in again.output and "Traceback" not in again.output
    more = CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "60", "--verbalise", "template", "--out", str(out), "-q", "--resume"])
    assert more.exit_code == 0, more.output


def test_build_caqa_without_a_graph_is_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["build", "caqa", "--n", "4", "--verbalise", "template", "--out", str(tmp_path / "x.jsonl"), "-q"])
    assert r.exit_code != 0 and "--store DIR or --pool FILE" in r.output and "Traceback" not in r.output


def test_stats_of_a_hand_edited_file_reports_problems(tmp_path):
    pool = write_pool(tmp_path)
    out = tmp_path / "caqa.jsonl"
    assert CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "12", "--verbalise", "template", "--out", str(out), "-q"]).exit_code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    rows[0]["split"] = "test" if rows[0]["split"] == "train" else "train"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = CliRunner().invoke(cli, ["build", "stats", str(out)])
    assert s.exit_code == 1 and "question in both splits" in s.output
