"""``vericite generate --resume`` after the dataset file was edited or reordered in place: its ids are positions,
so the answers already written would sit under ids that now ask other questions. Refused in one line."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

DOCS = [{"title": "Song", "text": "Paul Simon wrote the song."}]


def write(path, questions):
    path.write_text(json.dumps([{"question": q, "docs": DOCS, "claims": ["x"]} for q in questions]), encoding="utf-8")


def generate(data, out, limit, *more):
    return CliRunner().invoke(cli, ["generate", "--method", "vanilla", "--dataset", f"alce:{data}", "--model", "fake", "--limit", str(limit),
                                    "--out", str(out), "-q", "--no-cache", *more])  # fmt: skip


def test_resume_refuses_a_dataset_changed_in_place(tmp_path):
    data, out = tmp_path / "qs.json", tmp_path / "run"
    write(data, ["Who wrote it?", "When?", "Where?"])
    assert generate(data, out, 1).exit_code == 0
    r = generate(data, out, 2, "--resume")  # unchanged: continues
    assert r.exit_code == 0, r.output
    write(data, ["Where?", "When?", "Who wrote it?"])  # reordered: qs-1 now asks another question
    r = generate(data, out, 3, "--resume")
    assert r.exit_code == 2 and "cannot resume" in r.output and "sample qs-1 asked 'Who wrote it?' in the run, the dataset now asks 'Where?'" in r.output, r.output
    assert len((out / "samples.jsonl").read_text().splitlines()) == 2  # nothing mixed in
