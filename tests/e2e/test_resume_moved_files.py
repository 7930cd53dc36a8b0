"""``generate --resume`` from another checkout: a run folder's manifest knows a user's file (ALCE's prompt file read
from the shared data, a dataset given by path, a BioKaLMA demonstration) by its content, beside where it was. The
run folder and the shared files moved to another root, with the same bytes, resume; a file whose bytes changed is
refused in one line naming it; a manifest written before (absolute paths only) still resumes."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tests.support.alce import TINY
from vericite.cli.main import cli

DOCS = [{"title": "Song", "text": "Paul Simon wrote the song."}, {"title": "Simon", "text": "Paul Simon is a musician."}]
QUESTIONS = [{"sample_id": f"q{i}", "question": f"Who wrote song {i}?", "docs": DOCS, "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}]} for i in range(3)]
ROWS = [{"id": f"k{i}", "question": f"What did P{i} do?", "knowledge": [{"subject": f"Q{i}", "subject_label": f"P{i}", "property": "occupation", "value": f"job{i}"}]} for i in range(3)]
# a BioKaLMA prompt file: [question, answer, [entities]]
DEMO = ["What did Ann do?", "Ann was a painter [Q9, occupation: painter].", [{"qid": "Q9", "name": "Ann", "occupation": "painter"}]]


def checkout(root):
    """``root/shared/data`` (ALCE's prompt and questions, a BioKaLMA demonstration, KaLMA questions) and ``root/work``."""
    data = root / "shared" / "data"
    (data / "alce" / "prompts").mkdir(parents=True)
    (data / "alce" / "prompts" / "asqa_default.json").write_text(json.dumps(TINY), encoding="utf-8")
    (data / "alce" / "asqa_eval.json").write_text(json.dumps(QUESTIONS), encoding="utf-8")
    (data / "biokalma").mkdir()
    (data / "biokalma" / "prompt.json").write_text(json.dumps(DEMO), encoding="utf-8")
    (data / "biokalma" / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (root / "work").mkdir()
    return root


def at(root, monkeypatch):
    """Work in ``root``'s checkout: its shared data, its current folder."""
    monkeypatch.setenv("VERICITE_DATA", str(root / "shared" / "data"))
    monkeypatch.chdir(root / "work")


def generate(root, method, limit, *extra):
    data = root / "shared" / "data"
    if method == "vanilla":
        args = ["--method", "vanilla", "--dataset", f"alce:{data / 'alce' / 'asqa_eval.json'}", "--ndoc", "1", "--shot", "1"]
    else:
        args = ["--method", "kalma", "--dataset", str(data / "biokalma" / "questions.jsonl"), "--demonstration", str(data / "biokalma" / "prompt.json"), "--knowledge", "given"]
    args += ["--model", "fake", "--limit", str(limit), "--out", str(root / "work" / "run"), "-q", "--no-cache", *extra]
    return CliRunner().invoke(cli, ["generate", *args])


def answered(root):
    return [json.loads(x)["id"] for x in (root / "work" / "run" / "samples.jsonl").read_text().splitlines()]


def refused_one_line(r, *named):
    assert r.exit_code == 2 and r.output.startswith("error: cannot resume") and len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output, r.output
    for n in named:
        assert n in r.output, r.output


@pytest.mark.parametrize("method", ["vanilla", "kalma"])
def test_a_run_moved_with_its_shared_files_resumes(tmp_path, monkeypatch, method):
    a = checkout(tmp_path / "a")
    at(a, monkeypatch)
    assert generate(a, method, 1).exit_code == 0
    b = tmp_path / "b"
    shutil.copytree(a, b)
    shutil.rmtree(a)  # the first checkout is gone: nothing can be read from it
    at(b, monkeypatch)
    r = generate(b, method, 3, "--resume")
    assert r.exit_code == 0, r.output
    assert len(answered(b)) == 3
    manifest = json.loads((b / "work" / "run" / "manifest.json").read_text())
    assert str(b) not in json.dumps({k: v for k, v in manifest.items() if k != "config"})  # where the files are: shown portably


@pytest.mark.parametrize("method, name, shown", [("vanilla", "prompt_files.asqa", "data:alce/prompts/asqa_default.json"), ("kalma", "demonstration", "data:biokalma/prompt.json")])
def test_a_shared_file_whose_bytes_changed_is_refused_by_name(tmp_path, monkeypatch, method, name, shown):
    """Moved to another root, and the method's file edited there: refused, the folder untouched."""
    a = checkout(tmp_path / "a")
    at(a, monkeypatch)
    assert generate(a, method, 1).exit_code == 0
    b = tmp_path / "b"
    shutil.copytree(a, b)
    at(b, monkeypatch)
    target = b / "shared" / "data" / shown.removeprefix("data:")
    target.write_text(target.read_text().replace("Ann", "Bob").replace("Answer with", "Answer briefly with"), encoding="utf-8")
    before = (b / "work" / "run" / "manifest.json").read_bytes()
    r = generate(b, method, 3, "--resume")
    refused_one_line(r, "changed since the run began", shown, "sha256")
    assert (b / "work" / "run" / "manifest.json").read_bytes() == before and len(answered(b)) == 1


def test_an_old_manifest_with_absolute_paths_still_resumes(tmp_path, monkeypatch):
    """A folder written before files were known by their content: its prompt file recorded by its absolute path, no
    ``files``. In place it resumes as before; moved to another root with the same bytes, with its dataset given as the
    same relative path, it resumes too (the prompt file is compared by its sha256)."""
    a = checkout(tmp_path / "a")
    at(a, monkeypatch)
    rel = ["--dataset", "alce:../shared/data/alce/asqa_eval.json"]
    assert generate(a, "vanilla", 1, *rel).exit_code == 0
    path = a / "work" / "run" / "manifest.json"
    old = json.loads(path.read_text())
    old.pop("files", None)
    old["prompt_files"]["asqa"]["file"] = str(a / "shared" / "data" / "alce" / "prompts" / "asqa_default.json")
    path.write_text(json.dumps(old))
    r = generate(a, "vanilla", 2, "--resume", *rel)
    assert r.exit_code == 0, r.output
    assert len(answered(a)) == 2
    path.write_text(json.dumps(old))  # as the old vericite left it
    b = tmp_path / "b"
    shutil.copytree(a, b)
    at(b, monkeypatch)
    r = generate(b, "vanilla", 3, "--resume", *rel)
    assert r.exit_code == 0, r.output
    assert len(answered(b)) == 3
