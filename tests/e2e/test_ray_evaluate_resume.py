"""evaluate on Ray cut (Ctrl-C as a batch comes back) and resumed, on Ray or locally: nothing scored twice, the files
of an uninterrupted evaluate; a resume with other settings or a changed answer is one line. The driver killed
(SIGKILL): test_ray_killed.py."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.checkpoint import Cut
from tests.support.ray_e2e import SentAnswers, fixed_clock, invoke, ray_local  # noqa: F401  (fixtures)
from tests.support.ray_runs import write_answers
from vericite.cli.main import cli


def test_evaluate_on_ray_cut_then_resumed_writes_what_an_uninterrupted_evaluate_writes(tmp_path, ray_local, fixed_clock, monkeypatch):
    """The driver stops after 2 batches of 4 answers came back (Ctrl-C as the third is given to it): their lines
    are kept, and the third batch's too (``keep_finished``: with any other Ray finished meanwhile); --resume on Ray
    sends only the other answers, and the files are the uninterrupted (local) run's byte for byte. The four-class
    judge is the workers' too."""
    a = write_answers(tmp_path / "answers.jsonl", 14)
    common = ["evaluate", "-i", str(a), "-q", "--judge", "fake", "--attribution-judge", "fake-4class"]
    invoke([*common, "-o", str(tmp_path / "local")])
    SentAnswers(monkeypatch, cut_after=2)
    r = CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    assert r.exit_code == 130 and "--resume" in r.output, r.output
    assert not (tmp_path / "ray" / "results.json").exists()
    kept = {json.loads(l)["answer"] for l in (tmp_path / "ray" / ".evaluate-answers.jsonl").read_text().splitlines()[1:]}
    assert len(kept) >= 10  # two batches of four answers, and the one the driver was given (4 or 2 answers)
    sent = SentAnswers(monkeypatch)
    driver = Cut(monkeypatch)  # this process's fake judges (the actors are other processes)
    invoke([*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2", "--resume"])
    assert sorted(sent.answers) == sorted(set(range(14)) - kept)  # a checkpointed answer is not judged again
    assert driver.calls == 0  # both judges (the four-class one too) judged on the actors only
    for name in ("results.json", "samples.jsonl", "bad_lines.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    res = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert res["metrics"]["attribution_supportive"]["value"] is not None


@pytest.mark.parametrize("task", ["conner", "conner-index", "alce"])
def test_evaluate_on_ray_other_tasks_cut_then_resumed(tmp_path, ray_local, monkeypatch, task):
    """CONNER's and ALCE's judged families on the actors (the task as the driver prepared it): cut after one batch
    (Ctrl-C as the next is given to the driver: kept too) and resumed on Ray, the files are an uninterrupted local
    evaluate's. CONNER with --index: each answer's
    evidence is retrieved on the actor that scored it, not again by the driver's scoring of the corpus."""
    from tests.support.checkpoint import Searches, alce_file, conner_index, conner_lines

    if task.startswith("conner"):
        answers = tmp_path / "k.jsonl"
        lines = conner_lines(9) if task == "conner" else [{k: v for k, v in x.items() if k != "evidence"} for x in conner_lines(9)]
        answers.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        opts = ["--task", "conner", "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "fake"]
        if task == "conner-index":
            opts += ["--index", str(conner_index(tmp_path, 9))]
    else:
        answers = alce_file(tmp_path, 9)
        opts = ["--task", "alce", "--judge", "fake", "--metrics", "str_em,rouge_lsum,alce_citation_recall,alce_citation_precision"]
    common = ["evaluate", "-i", str(answers), "-q", "--resamples", "50", *opts]
    invoke([*common, "-o", str(tmp_path / "local")])
    SentAnswers(monkeypatch, cut_after=1)
    assert CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"]).exit_code == 130
    kept = (tmp_path / "ray" / ".evaluate-answers.jsonl").read_text().count("\n") - 1
    assert kept >= 5  # a batch of 4 written, and the one given to the driver (4 answers or 1)
    sent, searched = SentAnswers(monkeypatch), Searches(monkeypatch)
    invoke([*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2", "--resume"])
    assert len(sent.answers) == 9 - kept
    assert searched.queries == []  # the driver: the answers kept read back, the rest scored on the actors; none retrieved for again
    local, ray = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    local.pop("created"), ray.pop("created")
    judged = "factuality" if task.startswith("conner") else "alce_citation_recall"
    assert ray == local and ray["metrics"][judged]["value"] is not None
    assert (tmp_path / "ray" / "samples.jsonl").read_text() == (tmp_path / "local" / "samples.jsonl").read_text()


def test_evaluate_on_ray_and_local_resume_each_others_checkpoint(tmp_path, ray_local, fixed_clock, monkeypatch):
    """One checkpoint: cut on Ray and resumed locally, or cut locally and resumed on Ray, gives the same files."""
    a = write_answers(tmp_path / "answers.jsonl", 10)
    common = ["evaluate", "-i", str(a), "-q", "--judge", "fake"]
    invoke([*common, "-o", str(tmp_path / "whole")])
    SentAnswers(monkeypatch, cut_after=1)
    assert CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "r2l"), "--ray", "auto", "--workers", "2"]).exit_code == 130
    invoke([*common, "-o", str(tmp_path / "r2l"), "--resume"])
    Cut(monkeypatch, at=4)  # local: cut in the fourth answer
    assert CliRunner().invoke(cli, [*common, "-o", str(tmp_path / "l2r")]).exit_code == 130
    Cut(monkeypatch)
    sent = SentAnswers(monkeypatch)
    invoke([*common, "-o", str(tmp_path / "l2r"), "--ray", "auto", "--workers", "2", "--resume"])
    assert sorted(sent.answers) == list(range(3, 10))
    for d in ("r2l", "l2r"):
        for name in ("results.json", "samples.jsonl"):
            assert (tmp_path / d / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), (d, name)


def test_evaluate_on_ray_resume_with_other_settings_is_one_line(tmp_path, ray_local, monkeypatch):
    a = write_answers(tmp_path / "answers.jsonl", 6)
    common = ["evaluate", "-i", str(a), "-o", str(tmp_path / "o"), "-q", "--ray", "auto", "--workers", "2"]
    SentAnswers(monkeypatch, cut_after=1)
    assert CliRunner().invoke(cli, [*common, "--judge", "fake"]).exit_code == 130
    sent = SentAnswers(monkeypatch)
    for extra, what in ((["--judge", "triple"], "judge"), (["--judge", "fake", "--match", "normalised"], "match")):
        r = CliRunner().invoke(cli, [*common, *extra, "--resume"])
        assert r.exit_code == 2 and "cannot resume the evaluation" in r.output and what in r.output, r.output
        assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    scored = sorted(json.loads(line)["answer"] for line in (tmp_path / "o" / ".evaluate-answers.jsonl").read_text().splitlines()[1:])
    k = scored[0]  # whichever batch came back first: an answer scored changed
    a.write_text(a.read_text().replace(f"P{k} worked", f"P{k} once worked"), encoding="utf-8")
    r = CliRunner().invoke(cli, [*common, "--judge", "fake", "--resume"])
    assert r.exit_code == 2 and f"answer 'a{k:02d}' (answer {k + 1} of" in r.output and "has changed since it was scored" in r.output, r.output
    assert sent.answers == []  # refused before any answer went to the actors
    write_answers(a, 7)  # the answers scored as they were, one more: the actors score only the answers not scored yet
    invoke([*common, "--judge", "fake", "--resume"])
    assert sorted(sent.answers) == [i for i in range(7) if i not in scored] and 6 in sent.answers
