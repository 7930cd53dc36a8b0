"""``evaluate --resume``: each answer is checkpointed as it is scored (OUT/.evaluate-answers.jsonl); an evaluation cut
after k answers and resumed judges only the rest and writes exactly what an uninterrupted one writes; a resume
with other settings or another input is one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.ray_runs import write_answers
from vericite.cli.main import cli
from tests.support.checkpoint import CONNER, Cut, alce_file


def results_without_time(folder):
    res = json.loads((folder / "results.json").read_text())
    res.pop("created")
    return res


def evaluate(answers, out, *extra):
    return CliRunner().invoke(cli, ["evaluate", "-i", str(answers), "-o", str(out), "--judge", "fake", "--attribution-judge", "fake-4class", "-q", *extra])


@pytest.mark.parametrize("k", [1, 4, 7])
def test_cut_after_k_answers_then_resumed_writes_what_an_uninterrupted_evaluate_writes(tmp_path, monkeypatch, k):
    answers = write_answers(tmp_path / "a.jsonl", 6)
    whole = Cut(monkeypatch)
    r = evaluate(answers, tmp_path / "whole")
    assert r.exit_code == 0, r.output

    cut = Cut(monkeypatch, at=k)  # each answer asks its two judges once: call k falls in answer (k+1)//2
    r = evaluate(answers, tmp_path / "cut")
    assert r.exit_code == 130 and "rerun with --resume" in r.output, r.output
    assert not (tmp_path / "cut" / "results.json").exists()
    kept = (tmp_path / "cut" / ".evaluate-answers.jsonl").read_text().splitlines()
    assert len(kept) == 1 + (k - 1) // 2  # the header, then one line per answer finished before the cut

    again = Cut(monkeypatch)
    r = evaluate(answers, tmp_path / "cut", "--resume")
    assert r.exit_code == 0, r.output
    # only the pairs of the answers finished before the cut are not judged again (the cut answer's are lost)
    assert again.pairs == whole.pairs - sum(len(json.loads(line)["judged"]) for line in kept[1:])
    assert results_without_time(tmp_path / "cut") == results_without_time(tmp_path / "whole")
    assert (tmp_path / "cut" / "samples.jsonl").read_text() == (tmp_path / "whole" / "samples.jsonl").read_text()


def test_a_finished_evaluation_resumed_asks_no_judge(tmp_path, monkeypatch):
    answers = write_answers(tmp_path / "a.jsonl", 4)
    assert evaluate(answers, tmp_path / "o").exit_code == 0
    first = results_without_time(tmp_path / "o")
    lines = (tmp_path / "o" / ".evaluate-answers.jsonl").read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[0])["config"]["judge"] == "fake"
    one = json.loads(lines[1])
    assert one["answer"] == 0 and one["id"] == "a00" and one["judged"] and one["scores"]["citations"] == 2
    again = Cut(monkeypatch)
    r = evaluate(answers, tmp_path / "o", "--resume")
    assert r.exit_code == 0, r.output
    assert again.calls == 0 and results_without_time(tmp_path / "o") == first


def test_resume_with_other_settings_or_input_is_one_line(tmp_path):
    answers = write_answers(tmp_path / "a.jsonl", 3)
    assert evaluate(answers, tmp_path / "o").exit_code == 0
    r = evaluate(answers, tmp_path / "o", "--resume", "--match", "normalised")
    assert r.exit_code == 2 and "cannot resume" in r.output and "match" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(answers), "-o", str(tmp_path / "o"), "--judge", "triple", "--attribution-judge", "fake-4class", "-q", "--resume"])
    assert r.exit_code == 2 and "judge" in r.output
    lines = answers.read_text().splitlines(keepends=True)
    answers.write_text(lines[0] + lines[1].replace("P1 worked", "P1 once worked") + lines[2])  # a scored answer changed
    r = evaluate(answers, tmp_path / "o", "--resume")
    assert r.exit_code == 2 and "answer 'a01' (answer 2 of" in r.output and "has changed since it was scored" in r.output and "Traceback" not in r.output
    answers.write_text(lines[0] + lines[2])  # a scored answer gone
    r = evaluate(answers, tmp_path / "o", "--resume")
    assert r.exit_code == 2 and "answer 'a01', scored as answer 2, is no longer in" in r.output and len(r.output.strip().splitlines()) == 1, r.output
    # operational settings may change, and the bootstrap's (the corpus numbers are computed at the end); without
    # --resume the checkpoint starts again
    assert evaluate(write_answers(answers, 3), tmp_path / "o", "--resume", "--threads", "3", "--resamples", "20", "--seed", "4").exit_code == 0
    assert json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]["citation_correctness"]["resamples"] == 20
    assert evaluate(write_answers(answers, 4), tmp_path / "o").exit_code == 0


def test_resume_into_an_empty_folder_starts_afresh(tmp_path):
    answers = write_answers(tmp_path / "a.jsonl", 2)
    r = evaluate(answers, tmp_path / "new", "--resume")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "new" / ".evaluate-answers.jsonl").read_text().count("\n") == 3


@pytest.mark.parametrize("task", ["conner", "alce"])
def test_the_judged_families_of_other_tasks_resume_too(tmp_path, monkeypatch, task):
    if task == "conner":
        answers = tmp_path / "k.jsonl"
        answers.write_text("".join(json.dumps(x) + "\n" for x in CONNER), encoding="utf-8")
        opts = ["--task", "conner", "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "fake"]
    else:
        answers = alce_file(tmp_path)
        opts = ["--task", "alce", "--judge", "fake", "--metrics", "str_em,rouge_lsum,alce_citation_recall,alce_citation_precision"]

    def run(out, *extra):
        return CliRunner().invoke(cli, ["evaluate", "-i", str(answers), "-o", str(tmp_path / out), "-q", "--resamples", "50", *opts, *extra])

    whole = Cut(monkeypatch)
    r = run("whole")
    assert r.exit_code == 0, r.output
    assert whole.calls >= 4  # each answer judged alone
    judged = "factuality" if task == "conner" else "alce_citation_recall"
    assert results_without_time(tmp_path / "whole")["metrics"][judged]["value"] is not None
    Cut(monkeypatch, at=3)
    assert run("cut").exit_code == 130
    kept = (tmp_path / "cut" / ".evaluate-answers.jsonl").read_text().splitlines()
    assert 1 < len(kept) < 5
    again = Cut(monkeypatch)
    r = run("cut", "--resume")
    assert r.exit_code == 0, r.output
    assert 0 < again.calls < whole.calls
    assert results_without_time(tmp_path / "cut") == results_without_time(tmp_path / "whole")
    assert (tmp_path / "cut" / "samples.jsonl").read_text() == (tmp_path / "whole" / "samples.jsonl").read_text()
    done = Cut(monkeypatch)
    assert run("cut", "--resume").exit_code == 0 and done.calls == 0


def test_with_no_cache_the_evaluations_own_model_calls_are_kept_for_resume(tmp_path, monkeypatch):
    """G-Eval is computed over the corpus at the end: with --no-cache its calls go to OUT/.evaluate-calls.sqlite as
    they are made, so a resumed evaluation cut in G-Eval makes only the calls not made yet."""
    from vericite.models.fake import FakeBackend

    real, made = FakeBackend.next_token_logprobs, []  # how G-Eval asks a model that gives next-token log-probs

    def counted(self, prompts, candidates, cut=None):
        made.append(len(prompts))
        if cut is not None and len(made) == cut:
            raise KeyboardInterrupt
        return real(self, prompts, candidates)

    answers = write_answers(tmp_path / "a.jsonl", 3)
    monkeypatch.setattr(FakeBackend, "next_token_logprobs", counted)
    assert evaluate(answers, tmp_path / "whole", "--no-cache", "--geval-model", "fake").exit_code == 0
    whole = sum(made)
    assert whole >= 3 and (tmp_path / "whole" / ".evaluate-calls.sqlite").exists()

    made.clear()
    monkeypatch.setattr(FakeBackend, "next_token_logprobs", lambda self, prompts, candidates: counted(self, prompts, candidates, cut=3))
    assert evaluate(answers, tmp_path / "cut", "--no-cache", "--geval-model", "fake").exit_code == 130
    before = sum(made[:-1])
    made.clear()
    monkeypatch.setattr(FakeBackend, "next_token_logprobs", counted)
    r = evaluate(answers, tmp_path / "cut", "--no-cache", "--geval-model", "fake", "--resume")
    assert r.exit_code == 0, r.output
    assert sum(made) == whole - before
    assert results_without_time(tmp_path / "cut") == results_without_time(tmp_path / "whole")
    made.clear()
    assert evaluate(answers, tmp_path / "cut", "--no-cache", "--geval-model", "fake", "--resume").exit_code == 0 and not made
    # without --resume, an evaluation starts with none of the calls of the one before
    assert evaluate(answers, tmp_path / "cut", "--no-cache", "--geval-model", "fake").exit_code == 0 and sum(made) == whole


#: with ``$SLOW_EVALUATE_HOLD_AT`` = N, the judge waits (to be killed; 120 s at most) once N answers are checkpointed
SLOW_EVALUATE = """
import os, sys, time
from pathlib import Path
from vericite.fakes.judges import KeywordJudge
from vericite.cli.main import cli

HOLD_AT = int(os.environ.get("SLOW_EVALUATE_HOLD_AT") or 0)
CHECKPOINT = Path(sys.argv[2]) / ".evaluate-answers.jsonl"
real = KeywordJudge.judge
def slow(self, pairs):
    if HOLD_AT and CHECKPOINT.exists() and CHECKPOINT.read_text().count("\\n") - 1 >= HOLD_AT:
        deadline = time.time() + 120
        while time.time() < deadline:
            time.sleep(0.05)
    time.sleep(0.05)
    return real(self, pairs)
KeywordJudge.judge = slow
cli(["evaluate", "-i", sys.argv[1], "-o", sys.argv[2], "--judge", "fake", "-q", *sys.argv[3:]])
"""


def test_evaluate_killed_with_sigkill_resumes_from_its_checkpoint(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    answers = write_answers(tmp_path / "a.jsonl", 60)
    script = tmp_path / "slow.py"
    script.write_text(SLOW_EVALUATE)
    env = {**os.environ, "VERICITE_CACHE": str(tmp_path / "cache")}
    subprocess.run([sys.executable, str(script), str(answers), str(tmp_path / "whole")], env=env, check=True, timeout=120)
    # the cut run stops once 10 answers are checkpointed (it waits there to be killed), so the kill lands mid-way
    # however slow the machine
    p = subprocess.Popen([sys.executable, str(script), str(answers), str(tmp_path / "cut")], env={**env, "SLOW_EVALUATE_HOLD_AT": "10"})
    checkpoint = tmp_path / "cut" / ".evaluate-answers.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not checkpoint.exists() or checkpoint.read_text().count("\n") < 11):
        time.sleep(0.02)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    kept = checkpoint.read_text().count("\n") - 1
    assert 9 <= kept < 60, "the evaluation should have been killed mid-way"
    subprocess.run([sys.executable, str(script), str(answers), str(tmp_path / "cut"), "--resume"], env=env, check=True, timeout=120)
    assert results_without_time(tmp_path / "cut") == results_without_time(tmp_path / "whole")
    assert (tmp_path / "cut" / "samples.jsonl").read_text() == (tmp_path / "whole" / "samples.jsonl").read_text()
    lines = [json.loads(line) for line in checkpoint.read_text().splitlines()[1:]]
    assert sorted(line["answer"] for line in lines) == list(range(60))  # each answer scored once


def test_a_task_option_is_part_of_what_resume_checks(tmp_path, monkeypatch):
    """The checkpoint records the task's options, not only its name: resuming ``alce:at_most_citations=1`` over a
    checkpoint made with the default is refused in one line (nothing appended), while a spec whose options equal the
    defaults (``at_most_citations=3``) is the same evaluation, as is the same non-default option again."""
    answers = alce_file(tmp_path)
    opts = ["--judge", "fake", "--metrics", "alce_citation_recall,alce_citation_precision", "--resamples", "20"]

    def run(out, task, *extra):
        return CliRunner().invoke(cli, ["evaluate", "-i", str(answers), "-o", str(tmp_path / out), "-q", "--task", task, *opts, *extra])

    assert run("o", "alce").exit_code == 0
    ck = tmp_path / "o" / ".evaluate-answers.jsonl"
    before = ck.read_text()
    assert json.loads(before.splitlines()[0])["config"]["task_options"] == {}  # the defaults, recorded
    r = run("o", "alce:at_most_citations=1", "--resume")
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "cannot resume" in r.output and "at_most_citations" in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert ck.read_text() == before  # nothing appended, nothing rewritten
    r = run("o", "alce:at_most_citations=all", "--resume")
    assert r.exit_code == 2 and "at_most_citations" in r.output, r.output
    again = Cut(monkeypatch)
    r = run("o", "alce:at_most_citations=3", "--resume")  # the default spelled out: the same evaluation
    assert r.exit_code == 0 and again.calls == 0, r.output

    assert run("one", "alce:at_most_citations=1").exit_code == 0
    one = tmp_path / "one" / ".evaluate-answers.jsonl"
    assert json.loads(one.read_text().splitlines()[0])["config"]["task_options"] == {"at_most_citations": 1}
    again = Cut(monkeypatch)
    assert run("one", "alce:at_most_citations=1", "--resume").exit_code == 0 and again.calls == 0
    r = run("one", "alce", "--resume")  # and back to the default
    assert r.exit_code == 2 and "at_most_citations" in r.output, r.output


def test_a_conner_task_option_is_part_of_what_resume_checks(tmp_path):
    answers = tmp_path / "k.jsonl"
    answers.write_text("".join(json.dumps(x) + "\n" for x in CONNER), encoding="utf-8")

    def run(task, *extra):
        return CliRunner().invoke(cli, ["evaluate", "-i", str(answers), "-o", str(tmp_path / "o"), "-q", "--resamples", "20", "--task", task,
                                        "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "fake", *extra])  # fmt: skip

    assert run("conner").exit_code == 0
    r = run("conner:aggregation=max", "--resume")
    assert r.exit_code == 2 and "aggregation" in r.output, r.output
    assert run("conner:aggregation=min,evidence_k=10", "--resume").exit_code == 0  # the defaults, spelled out


def test_resume_over_a_damaged_checkpoint_is_one_line_naming_it_and_the_way_out(tmp_path, monkeypatch):
    """A checkpoint that cannot be read is refused (exit 2, one line naming the file, what is wrong and the way out;
    the file left as it was), never a traceback nor a silent fresh start; a torn last line, what a crash leaves, is
    cut, said on stderr, and the evaluation resumes."""
    answers = write_answers(tmp_path / "a.jsonl", 3)
    assert evaluate(answers, tmp_path / "o").exit_code == 0
    ck = tmp_path / "o" / ".evaluate-answers.jsonl"
    good = ck.read_text().splitlines(keepends=True)
    for text in ("", good[0][:-20], "".join(good[:2]) + "{not json\n" + "".join(good[2:]), '["a list"]\n' + "".join(good[1:])):
        ck.write_text(text, encoding="utf-8")
        r = evaluate(answers, tmp_path / "o", "--resume")
        assert r.exit_code == 2 and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1, r.output
        assert str(ck) in r.output and "delete it, or rerun without --resume" in r.output, r.output
        assert ck.read_text() == text  # left as it was
    ck.write_text("".join(good[:3]) + good[3][: len(good[3]) // 2], encoding="utf-8")  # killed while writing answer 3
    again = Cut(monkeypatch)
    r = evaluate(answers, tmp_path / "o", "--resume")
    assert r.exit_code == 0 and f"note: {ck}: dropped its torn last line" in r.output and "the 2 answers before it" in r.output, r.output
    assert again.calls == 2  # only the torn answer's two judges asked again
    assert ck.read_text().count("\n") == 4


def as_previous_header(ck, task=None):
    """Rewrite ``ck``'s header as the previous version (evaluate-answers@1) wrote it: the task's name as given, its
    options only when some differed from the defaults."""
    lines = ck.read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    head["checkpoint"] = "evaluate-answers@1"
    if task is not None:
        head["config"]["task"] = task
    if not head["config"].get("task_options"):
        head["config"].pop("task_options", None)
    ck.write_text(json.dumps(head) + "\n" + "".join(lines[1:]), encoding="utf-8")


def alce_evaluation(tmp_path):
    """``run(task, *extra)``: evaluate an ALCE file's two ASQA answers into ``tmp_path/o`` with the fake judge."""
    answers = alce_file(tmp_path)
    opts = ["--judge", "fake", "--metrics", "alce_citation_recall,alce_citation_precision", "--resamples", "20"]

    def run(task, *extra):
        return CliRunner().invoke(cli, ["evaluate", "-i", str(answers), "-o", str(tmp_path / "o"), "-q", "--task", task, *opts, *extra])

    return run


def test_alce_over_asqa_answers_is_the_same_evaluation_as_alce_asqa(tmp_path, monkeypatch):
    """``--task alce`` reads the sub-task from the input (ASQA here): the checkpoint records the evaluation it
    resolved to, so ``--task alce-asqa --resume`` over it (and the other way round) judges nothing again, while
    ``alce-eli5`` is refused; a previous checkpoint's ``alce`` is resolved over the same answers."""
    run = alce_evaluation(tmp_path)

    assert run("alce").exit_code == 0
    ck = tmp_path / "o" / ".evaluate-answers.jsonl"
    assert json.loads(ck.read_text().splitlines()[0])["config"]["task"] == "alce-asqa"
    first = results_without_time(tmp_path / "o")
    again = Cut(monkeypatch)
    r = run("alce-asqa", "--resume")
    assert r.exit_code == 0 and again.calls == 0, r.output
    assert results_without_time(tmp_path / "o")["metrics"] == first["metrics"]
    before = ck.read_text()
    r = run("alce-eli5", "--resume")
    assert r.exit_code == 2 and "cannot resume" in r.output and "(task)" in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert ck.read_text() == before

    as_previous_header(ck, "alce")  # as `--task alce` wrote it before: its name only
    again = Cut(monkeypatch)
    r = run("alce-asqa", "--resume")
    assert r.exit_code == 0 and again.calls == 0, r.output
    assert run("alce-eli5", "--resume").exit_code == 2


def test_a_checkpoint_written_before_task_options_were_recorded_is_taken_at_the_defaults(tmp_path, monkeypatch):
    """The rule for a checkpoint that does not record the task's options (written before they were): it resumes
    only an evaluation at the task's defaults, with a note on stderr; other options are refused in one line saying
    why, the file left as it was."""
    run = alce_evaluation(tmp_path)

    assert run("alce").exit_code == 0
    ck = tmp_path / "o" / ".evaluate-answers.jsonl"
    as_previous_header(ck, "alce")
    before = ck.read_text()
    r = run("alce:at_most_citations=1", "--resume")
    assert r.exit_code == 2 and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert "task option at_most_citations" in r.output and "written before task options were recorded" in r.output, r.output
    assert ck.read_text() == before
    again = Cut(monkeypatch)
    r = run("alce", "--resume")
    assert r.exit_code == 0 and again.calls == 0, r.output
    assert "written before task options were recorded: resumed as made with alce-asqa's defaults" in r.output, r.output


def test_a_checkpoint_that_cannot_be_appended_to_ends_evaluate_in_one_line_exit_2(tmp_path, monkeypatch):
    """Root ignores chmod, so the read-only checkpoint is a seam: its module's ``open`` refuses to append."""
    from tests.unit.evaluate.test_checkpoint import refuse_appending

    answers = write_answers(tmp_path / "a.jsonl", 3)
    out = tmp_path / "ev"
    refuse_appending(monkeypatch, out / ".evaluate-answers.jsonl")
    r = evaluate(answers, out)
    assert r.exit_code == 2 and "Traceback" not in r.output and (r.exception is None or isinstance(r.exception, SystemExit)), (r.output, r.exception)
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: cannot write the evaluation's checkpoint {out / '.evaluate-answers.jsonl'}: Permission denied"
                      " (make the file and its folder writable, or use another --out)"], r.output  # fmt: skip
    assert not (out / "results.json").exists()
