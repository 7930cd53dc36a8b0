"""A user's file in a manifest or an evaluation checkpoint is known by its content (paths.file_identity,
paths.reconcile_files): where it was is shown, portable across checkouts; a resume compares the bytes (an
evaluation's index by its corpus: tests/unit/evaluate/test_checkpoint.py)."""

from __future__ import annotations

from vericite.paths import display_path, file_identity, reconcile_files


def test_a_file_is_shown_relative_to_the_shared_data_or_the_current_folder(tmp_path, monkeypatch):
    data = tmp_path / "shared" / "data"
    (data / "alce").mkdir(parents=True)
    (data / "alce" / "p.json").write_text("{}")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "q.jsonl").write_text("")
    monkeypatch.setenv("VERICITE_DATA", str(data))
    monkeypatch.chdir(tmp_path / "work")
    assert display_path(data / "alce" / "p.json") == "data:alce/p.json"
    assert display_path("q.jsonl") == "q.jsonl" and display_path(tmp_path / "work" / "q.jsonl") == "q.jsonl"
    assert display_path(tmp_path / "elsewhere.json") == str((tmp_path / "elsewhere.json").resolve())
    assert file_identity(data / "alce" / "p.json") == {"file": "data:alce/p.json", "sha256": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}
    assert file_identity(tmp_path / "work") == {"folder": "."}


def test_the_same_content_is_the_same_file_wherever_it_is():
    old = {"prompt_files": {"asqa": {"file": "/a/shared/data/alce/prompts/asqa_default.json", "sha256": "s", "demos": [1]}},
           "demonstration": "/a/p.json", "demonstration_sha256": "d", "index": "/a/idx", "index_corpus": {"sha256": "c"}}  # fmt: skip
    new = {"prompt_files": {"asqa": {"file": "data:alce/prompts/asqa_default.json", "sha256": "s", "demos": [1]}},
           "demonstration": "data:p.json", "demonstration_sha256": "d", "index": "/b/idx", "index_corpus": {"sha256": "c"}}  # fmt: skip
    assert reconcile_files(old, new) == (new, [])
    changed = {**new, "prompt_files": {"asqa": {**new["prompt_files"]["asqa"], "sha256": "t"}}, "demonstration_sha256": "e"}
    assert reconcile_files(old, changed)[1] == [("prompt_files.asqa", "data:alce/prompts/asqa_default.json"), ("demonstration", "data:p.json")]
    other_corpus = {**new, "index_corpus": {"sha256": "x"}}
    assert reconcile_files(old, other_corpus)[0]["index"] == "/a/idx"  # compared as given: the corpus differs anyway

