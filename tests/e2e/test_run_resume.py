"""``vericite run --resume``: a level whose evaluation finished is read back (no judge asked), a level cut while it
was evaluated goes on from its checkpoint, and the run's files are those of an uninterrupted run; a level whose
evaluation settings changed is evaluated again."""

from __future__ import annotations

import json

from tests.support.checkpoint import Cut
from tests.support.pipeline import citing_reply
from tests.support.ray_runs import without_timings
from vericite.models.fake import FakeBackend
from vericite.runs.runner import load_run_config, run_config


def setup(tmp_path, judge="fake", resamples=10):
    data = tmp_path / "q.jsonl"
    rows = [
        {"id": f"q{i}", "question": f"What did P{i} do?", "knowledge": [
            {"subject": f"Q{i}", "subject_label": f"P{i}", "property": "occupation", "value": f"job{i}"},
            {"subject": f"Q{i}", "subject_label": f"P{i}", "property": "birthplace", "value": f"town{i}"}]}
        for i in range(4)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cfg = tmp_path / f"{judge}.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\nexperiment: fake\nlevels: [0, 1]\nresamples: {resamples}\njudge: {judge}\nattribution_judge: fake-4class\n")
    return load_run_config(cfg, {})


def run(cfg, out, resume=False):
    return run_config(cfg, out, resume=resume, progress=False, backend=FakeBackend(replies=citing_reply))


def files(out):
    """The run's files, each results.json without its time of writing, each record without its wall time."""
    got = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name in ("results.json", "samples.jsonl"):
            text = p.read_text()
            if p.name == "results.json":
                d = json.loads(text)
                d.pop("created")
                text = json.dumps(d, sort_keys=True)
            got[str(p.relative_to(out))] = without_timings(text)
    return got


def test_a_run_cut_in_its_last_levels_evaluation_resumes_without_judging_again(tmp_path, monkeypatch):
    cfg = setup(tmp_path)
    whole = Cut(monkeypatch)
    run(cfg, tmp_path / "whole")
    per_level = whole.calls // 2
    assert per_level >= 4  # each answer of a level judged alone (two judges)

    at = per_level + 3  # in level 1's evaluation, after its first answer
    cut = Cut(monkeypatch, at=at)
    try:
        run(cfg, tmp_path / "cut")
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the run should have been cut")
    assert (tmp_path / "cut" / "level-0" / "eval" / "results.json").exists()
    assert not (tmp_path / "cut" / "level-1" / "eval" / "results.json").exists()

    again = Cut(monkeypatch)
    run(cfg, tmp_path / "cut", resume=True)
    assert again.calls == whole.calls - (at - 1)  # level 0 not at all, level 1 only what the cut left
    assert files(tmp_path / "cut") == files(tmp_path / "whole")

    done = Cut(monkeypatch)
    res = run(cfg, tmp_path / "cut", resume=True)
    assert done.calls == 0 and [r["n"] for r in res["experiments"]["fake"]["rows"]] == [4, 4]
    assert files(tmp_path / "cut") == files(tmp_path / "whole")


def test_a_level_whose_evaluation_settings_changed_is_evaluated_again(tmp_path, monkeypatch):
    run(setup(tmp_path), tmp_path / "r")
    before = json.loads((tmp_path / "r" / "level-0" / "eval" / "results.json").read_text())
    assert before["judges"]["alignment"]["id"] == "fake@1"
    again = Cut(monkeypatch)
    run(setup(tmp_path, judge="triple"), tmp_path / "r", resume=True)
    after = json.loads((tmp_path / "r" / "level-0" / "eval" / "results.json").read_text())
    assert after["judges"]["alignment"]["id"] == "triple@1"
    assert again.calls > 0  # the four-class judge asked again for both levels


def test_a_finished_level_whose_bootstrap_changed_is_scored_again_from_its_checkpoint(tmp_path, monkeypatch):
    run(setup(tmp_path), tmp_path / "r")
    again = Cut(monkeypatch)
    run(setup(tmp_path, resamples=20), tmp_path / "r", resume=True)
    after = json.loads((tmp_path / "r" / "level-1" / "eval" / "results.json").read_text())
    assert again.calls == 0 and after["metrics"]["citation_correctness"]["resamples"] == 20


def test_a_run_resumed_with_a_larger_limit_judges_only_the_new_answers_of_each_level(tmp_path, monkeypatch):
    """``run --resume --limit 4`` after ``--limit 2``: each level's answers grew by two; its evaluation goes on
    from its checkpoint (the two answers scored kept), judges only the new ones, and the run's files are those of
    a run with ``--limit 4`` from the start."""
    cfg = setup(tmp_path)
    small, large = cfg.model_copy(update={"limit": 2}), cfg.model_copy(update={"limit": 4})
    first = Cut(monkeypatch)
    run(small, tmp_path / "grown")
    resumed = Cut(monkeypatch)
    run(large, tmp_path / "grown", resume=True)
    whole = Cut(monkeypatch)
    run(large, tmp_path / "whole")
    assert 0 < resumed.calls < whole.calls and resumed.calls + first.calls == whole.calls
    assert files(tmp_path / "grown") == files(tmp_path / "whole")
