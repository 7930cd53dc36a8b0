"""generate, evaluate and judge-eval on Ray (``--ray auto``: Ray started in-process, two actors) give the files of a
local run; a driver killed mid-run resumes with nothing lost and nothing answered twice. Fakes only; the real
two-node cluster is tests/real/test_ray_cluster.py."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vericite.distributed import fit
from click.testing import CliRunner

from tests.support.checkpoint import Cut
from tests.support.guards import requires
from tests.support.ray_runs import SLOW_RAY_EVALUATE, SLOW_RAY_RUN, STOPPED_RAY_DRIVER, without_timings, write_answers, write_questions
from vericite.cli.main import cli


@pytest.fixture(scope="module")
def ray_local():
    """One in-process Ray for the module (the commands reuse it rather than starting their own)."""
    requires("ray")
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture
def fixed_clock(monkeypatch):
    """results.json's ``created`` from a fixed clock, so two evaluations can be compared byte for byte."""
    import vericite.runs.results as results

    class Clock:
        @staticmethod
        def strftime(fmt, *a):
            return "2026-11-27T00:00:00"

        time = staticmethod(time.time)

    monkeypatch.setattr(results, "time", Clock)


def invoke(args):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output + repr(r.exception)
    return r


def test_generate_on_ray_writes_what_a_local_run_writes(tmp_path, ray_local):
    q = write_questions(tmp_path / "q.jsonl", 10)
    common = ["generate", "--dataset", str(q), "--model", "fake", "--no-cache", "-q"]
    invoke([*common, "--out", str(tmp_path / "local")])
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    local, ray = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("local", "ray"))
    assert local.count("\n") == 10
    assert without_timings(ray) == without_timings(local)  # byte for byte, but for each answer's wall time
    ml, mr = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("local", "ray"))
    assert mr["summary"] == ml["summary"] and mr["config"] == ml["config"] and mr["status"] == "complete"
    assert (tmp_path / "ray" / ".ray-calls.jsonl").read_text().count("\n") == 3  # batches of 4: 4 + 4 + 2


def test_few_shot_conner_knowledge_on_ray_gives_the_local_demonstrations(tmp_path, ray_local):
    # each actor's method gets what the driver's check_samples prepared (the few-shot pool), not an empty one
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"id": f"s{i}", "question": f"question {i}?", "meta": {"reference_knowledge": f"knowledge {i}."}}) + "\n" for i in range(8)))
    common = ["generate", "--method", "conner-knowledge", "--shot", "2", "--limit", "4", "--dataset", str(q), "--model", "fake", "--no-cache", "-q"]
    invoke([*common, "--out", str(tmp_path / "local")])
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    local, ray = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("local", "ray"))
    assert without_timings(ray) == without_timings(local) and local.count('"demonstrations"') == 4


def test_actors_write_the_one_call_cache_a_local_rerun_reads(tmp_path, ray_local, monkeypatch):
    from vericite.models.cache_admin import cache_stats

    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))  # sent to the actors by the driver
    q = write_questions(tmp_path / "q.jsonl", 10)
    common = ["generate", "--dataset", str(q), "--model", "fake", "-q"]
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    assert cache_stats(tmp_path / "cache" / "calls.sqlite")["entries"] == 10  # both actors wrote the one file
    invoke([*common, "--out", str(tmp_path / "local")])
    records = [json.loads(l) for l in (tmp_path / "local" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 10 and all(r["cached"] for r in records)


def test_evaluate_on_ray_is_byte_identical(tmp_path, ray_local, fixed_clock, monkeypatch):
    a = write_answers(tmp_path / "answers.jsonl", 30)
    invoke(["evaluate", "-i", str(a), "-o", str(tmp_path / "local"), "-q"])
    invoke(["evaluate", "-i", str(a), "-o", str(tmp_path / "ray"), "-q", "--ray", "auto", "--workers", "2"])
    for name in ("results.json", "samples.jsonl", "bad_lines.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    res = json.loads((tmp_path / "ray" / "results.json").read_text())
    assert res["counts"]["samples"] == 30 and 0 < res["metrics"]["citation_correctness"]["value"] < 1
    # the per-answer checkpoint of a local evaluate: its header (the same), then one line per answer, in any order
    ray_lines, local_lines = ((tmp_path / d / ".evaluate-answers.jsonl").read_text().splitlines() for d in ("ray", "local"))
    assert ray_lines[0] == local_lines[0] and sorted(json.loads(l)["answer"] for l in ray_lines[1:]) == list(range(30))

    # --resume: every answer is in the checkpoint, nothing is sent again, and the files are the same
    before = (tmp_path / "ray" / ".evaluate-answers.jsonl").read_bytes()
    sent = SentAnswers(monkeypatch)
    invoke(["evaluate", "-i", str(a), "-o", str(tmp_path / "ray"), "-q", "--ray", "auto", "--workers", "2", "--resume"])
    assert sent.answers == [] and (tmp_path / "ray" / ".evaluate-answers.jsonl").read_bytes() == before
    assert (tmp_path / "ray" / "results.json").read_bytes() == (tmp_path / "local" / "results.json").read_bytes()


class SentAnswers:
    """The answers ``evaluate --ray`` sends to its actors (their indices), counted from now on; ``cut_after``: the
    driver stops (KeyboardInterrupt, as Ctrl-C) once that many batches have come back."""

    def __init__(self, monkeypatch, cut_after=None):
        from vericite.distributed import RayPool

        self.answers, self.cut_after = [], cut_after
        real = getattr(RayPool.map, "real", RayPool.map)

        def map(pool, method, batches):
            batches = list(batches)
            if method == "score":
                self.answers += [i for _key, batch in batches for i, _s, _a in batch]
            for n, got in enumerate(real(pool, method, batches)):
                if self.cut_after is not None and n == self.cut_after:
                    raise KeyboardInterrupt
                yield got

        map.real = real
        monkeypatch.setattr(RayPool, "map", map)


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


def test_evaluate_on_ray_counts_the_workers_judge_usage(tmp_path, ray_local, fixed_clock):
    a = write_answers(tmp_path / "answers.jsonl", 12)
    common = ["evaluate", "-i", str(a), "-q", "--judge", "llm:fake", "--no-cache"]
    invoke([*common, "-o", str(tmp_path / "local")])
    invoke([*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    local, ray = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    assert local["judge_usage"]["fake"]["calls"] > 0 and local["judge_usage"]["fake"]["prompt_tokens"] > 0
    assert ray["judge_usage"] == local["judge_usage"]  # the workers' usage came back with their judgements


def test_judge_eval_on_ray_gives_the_local_judgements(tmp_path, ray_local):
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"id": f"p{i}", "evidence": f"Q{i} occupation job{i}", "claim": f"occupation: job{i if i % 3 else i + 1}", "label": "supports" if i % 3 else "refutes"} for i in range(40)]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = ["judge-eval", "--judge", "fake", "--data", str(pairs), "--no-progress", "--batch-size", "8"]
    invoke([*common, "--out", str(tmp_path / "local")])
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    assert (tmp_path / "ray" / "judgements.jsonl").read_bytes() == (tmp_path / "local" / "judgements.jsonl").read_bytes()
    rl, rr = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    for key in ("balanced_accuracy", "roc_auc", "per_class_f1", "ci", "confusion", "judge", "judge_kind", "model", "n"):
        assert rr[key] == rl[key], key


def test_judge_eval_tasks_caqa_and_alce_human_judge_on_ray(tmp_path, ray_local):
    """--ray reaches every judge-eval task, not only labelled pairs: the judgements are the local ones, and the
    actors did the judging (their checkpoint)."""
    from tests.support.alce_human import write_mini
    from tests.support.caqa import write_pool

    data = tmp_path / "caqa.jsonl"
    invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "30", "--verbalise", "template", "--out", str(data), "-q"])
    mini = write_mini(tmp_path)
    for name, common in (
        ("caqa", ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--split", "train", "-q"]),
        ("alce", ["judge-eval", "--task", "alce-human", "--judge", "fake", "--data", str(mini), "-q"]),
    ):
        invoke([*common, "--out", str(tmp_path / f"{name}-local")])
        invoke([*common, "--out", str(tmp_path / f"{name}-ray"), "--ray", "auto", "--workers", "2"])
        local, ray = ((tmp_path / f"{name}-{d}" / "judgements.jsonl").read_text() for d in ("local", "ray"))
        assert local and ray == local, name
        assert (tmp_path / f"{name}-ray" / ".ray-calls.jsonl").read_text().count("\n") >= 2, name  # two actors' parts


class SentParts:
    """The parts of judge calls judge-eval --ray sends to its actors, counted from now on; ``cut_after``: the driver
    stops (KeyboardInterrupt) once that many parts have come back."""

    def __init__(self, monkeypatch, cut_after=None):
        from vericite.distributed import RayPool

        self.parts, self.cut_after = 0, cut_after
        real = getattr(RayPool.map, "real", RayPool.map)

        def map(pool, method, batches):
            batches = list(batches)
            self.parts += len(batches)
            for n, got in enumerate(real(pool, method, batches)):
                if self.cut_after is not None and self.parts - len(batches) + n == self.cut_after:
                    raise KeyboardInterrupt
                yield got

        map.real = real
        monkeypatch.setattr(RayPool, "map", map)


def test_judge_eval_on_ray_resumes_from_its_judgements_and_the_actors_parts(tmp_path, ray_local, monkeypatch):
    """judge-eval --task caqa --ray cut after 3 parts, as the 4th is given to the driver (one call of 2 parts
    written to judgements.jsonl, the next call's 2 parts only in .ray-calls.jsonl, the 4th kept by
    ``keep_finished``): --resume --ray keeps the 4 judgements and sends neither the finished call's parts nor the
    finished parts again; the judgements are an uninterrupted run's. --task pairs has no --resume, on Ray or not:
    one line."""
    from tests.support.caqa import write_pool

    data = tmp_path / "caqa.jsonl"
    invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "16", "--verbalise", "template", "--out", str(data), "-q"])
    common = ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--batch-size", "4", "-q", "--ray", "auto", "--workers", "2"]
    whole = SentParts(monkeypatch)
    invoke([*common, "--out", str(tmp_path / "whole")])
    assert whole.parts >= 8
    SentParts(monkeypatch, cut_after=3)
    r = CliRunner().invoke(cli, [*common, "--out", str(tmp_path / "cut")])
    assert r.exit_code == 130 and "--resume" in r.output, r.output
    assert (tmp_path / "cut" / ".ray-calls.jsonl").read_text().count("\n") == 4  # the part given at Ctrl-C too
    again = SentParts(monkeypatch)
    invoke([*common, "--out", str(tmp_path / "cut"), "--resume"])
    assert again.parts == whole.parts - 4  # nothing the actors finished is sent again
    res = json.loads((tmp_path / "cut" / "results.json").read_text())
    assert res["resumed_pairs"] == 4 and "the 4 judgements kept by --resume from judgements.jsonl are not counted" in res["judge_usage_note"]
    assert (tmp_path / "cut" / "judgements.jsonl").read_text() == (tmp_path / "whole" / "judgements.jsonl").read_text()
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"evidence": "P works as a cook.", "claim": "P is a cook.", "label": "supports"}) + "\n")
    for ray in ([], ["--ray", "auto"]):
        r = CliRunner().invoke(cli, ["judge-eval", "--judge", "fake", "--data", str(pairs), "--out", str(tmp_path / "p"), "-q", "--resume", *ray])
        assert r.exit_code != 0 and "--resume works with --task alce-human and caqa only" in r.output and "Traceback" not in r.output


def test_judge_eval_on_ray_reports_the_workers_judge_usage(tmp_path, ray_local):
    """judge-eval's judge_usage with --ray is what the workers' model calls cost: the local run's, on every task."""
    from tests.support.caqa import write_pool

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"evidence": f"P{i} works as job{i}.", "claim": f"P{i} is a job{i}.", "label": "supports"}) + "\n" for i in range(12)))
    data = tmp_path / "caqa.jsonl"
    invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "16", "--verbalise", "template", "--out", str(data), "-q"])
    for name, common in (
        ("pairs", ["judge-eval", "--judge", "llm:fake", "--data", str(pairs), "--batch-size", "4", "-q"]),
        ("caqa", ["judge-eval", "--task", "caqa", "--judge", "llm4:fake", "--data", str(data), "--batch-size", "4", "-q"]),
    ):
        invoke([*common, "--out", str(tmp_path / f"{name}-local")])
        invoke([*common, "--out", str(tmp_path / f"{name}-ray"), "--ray", "auto", "--workers", "2"])
        local, ray = (json.loads((tmp_path / f"{name}-{d}" / "results.json").read_text()) for d in ("local", "ray"))
        assert local["judge_usage"]["fake"]["calls"] > 0 and ray["judge_usage"] == local["judge_usage"], name
        assert ray["judge_usage_note"] == "", name


def test_workers_without_ray_is_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(write_answers(tmp_path / "a.jsonl", 2)), "-o", str(tmp_path / "o"), "--workers", "2"])
    assert r.exit_code != 0 and "--workers needs --ray" in r.output and "Traceback" not in r.output


def ray_actors_in_session(sid: int) -> list[int]:
    """The live processes of the session ``sid`` that hold a pool's Ray actor (``ray::_Holder``, whether idle or
    in a call); none where there is no ``/proc``."""
    found = []
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            state, _ppid, _pgrp, session = stat[stat.rindex(")") + 2 :].split()[:4]
            if int(session) == sid and state != "Z" and b"ray::_Holder" in Path(f"/proc/{d}/cmdline").read_bytes():
                found.append(int(d))
        except (OSError, ValueError):
            pass
    return found


def kill_driver_after(args, env, checkpoint, lines):
    """Start ``python args...`` in its own session and SIGKILL it (the driver only: Ray's own processes notice it
    is gone) once ``checkpoint`` holds ``lines`` lines, or after 120 s; then wait until its actors have exited
    (they watch the driver and exit as it goes), so that nothing they ask is counted as the resumed driver's."""
    p = subprocess.Popen([sys.executable, *map(str, args)], env=env, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and (not checkpoint.exists() or checkpoint.read_text().count("\n") < lines):
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.time() + 120
    while ray_actors_in_session(p.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not ray_actors_in_session(p.pid), "the killed driver's Ray actors should have exited"


@pytest.mark.slow  # two Ray starts of its own, about a minute on two cores
def test_killed_driver_resumes_with_nothing_lost_or_answered_twice(tmp_path):
    requires("ray")
    script, out, calls = tmp_path / "run.py", tmp_path / "r", tmp_path / "calls.txt"
    script.write_text(SLOW_RAY_RUN)
    env = {**os.environ, "VERICITE_CACHE": str(tmp_path / "cache")}
    checkpoint = out / ".ray-calls.jsonl"
    kill_driver_after([script, out, calls], env, checkpoint, 3)
    checkpointed = {o["id"] for line in checkpoint.read_text().splitlines() if line.strip() for o in json.loads(line)["result"]}
    written = [json.loads(l)["id"] for l in (out / "samples.jsonl").read_text().splitlines()]
    assert 3 <= len(checkpointed) < 40 and len(written) < 40, "the driver should have been killed mid-way"
    print(f"killed with {len(written)} samples written, {len(checkpointed)} checkpointed: {sorted(checkpointed)}")  # -rP: where the kill landed
    asked_before = calls.read_text().split()
    subprocess.run([sys.executable, str(script), str(out), str(calls), "--resume"], env=env, check=True, timeout=240)
    ids = [json.loads(l)["id"] for l in (out / "samples.jsonl").read_text().splitlines()]
    assert ids == [f"s{i:03d}" for i in range(40)]  # none lost, none twice, in the order of the questions
    asked_after = calls.read_text().split()[len(asked_before):]
    assert not set(asked_after) & checkpointed, f"asked again: {sorted(set(asked_after) & checkpointed)}, {len(written)} samples written"  # a checkpointed answer is never asked for again
    assert sorted(asked_after) == sorted(set(ids) - checkpointed)  # the resumed driver asks each sample not checkpointed, once
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["summary"]["n_done"] == 40


@pytest.mark.slow  # two Ray starts of its own, about a minute on two cores
def test_killed_evaluate_driver_resumes_with_nothing_lost_or_judged_twice(tmp_path, fixed_clock):
    """evaluate --ray's driver killed (SIGKILL) once some answers' lines are written: --resume on Ray scores only
    the answers not in its checkpoint, and the files are those of an uninterrupted local evaluate."""
    requires("ray")
    a = write_answers(tmp_path / "answers.jsonl", 24)
    invoke(["evaluate", "-i", str(a), "-o", str(tmp_path / "local"), "-q", "--judge", "fake", "--attribution-judge", "fake-4class", "--no-cache"])
    script, out, calls = tmp_path / "run.py", tmp_path / "r", tmp_path / "calls.txt"
    script.write_text(SLOW_RAY_EVALUATE)
    env = {**os.environ, "VERICITE_CACHE": str(tmp_path / "cache")}
    checkpoint = out / ".evaluate-answers.jsonl"
    kill_driver_after([script, out, calls, a], env, checkpoint, 5)
    kept = {json.loads(l)["answer"] for l in checkpoint.read_text().splitlines()[1:] if l.strip()}
    assert 4 <= len(kept) < 24 and not (out / "results.json").exists(), "the driver should have been killed mid-way"
    scored_before = calls.read_text().split()
    subprocess.run([sys.executable, str(script), str(out), str(calls), str(a), "--resume"], env=env, check=True, timeout=240)
    scored_after = [int(i) for i in calls.read_text().split()[len(scored_before):]]
    assert sorted(scored_after) == sorted(set(range(24)) - kept)  # none lost, none judged twice: the answers not kept, once each
    local, ray = (json.loads((d / "results.json").read_text()) for d in (tmp_path / "local", out))
    local.pop("created"), ray.pop("created")
    local["config"].pop("input"), ray["config"].pop("input")
    assert ray == local
    assert (out / "samples.jsonl").read_bytes() == (tmp_path / "local" / "samples.jsonl").read_bytes()


@pytest.mark.slow  # a Ray start of its own per case, about 20 s each on two cores
@pytest.mark.parametrize("how", ["sigint", "sigkill"])
def test_no_actor_works_on_once_its_driver_is_stopped(tmp_path, how):
    """A driver stopped with its actors on a batch: on Ctrl-C it closes its pool, which cancels the batches in
    flight (Ray said it would run them again: two lines after "interrupted") and kills the actors, so no work goes on
    once it is closed; killed (SIGKILL), its actors on its machine see it gone and exit at once, where they went on
    with their batch until Ray noticed (1.4 to 3 s measured)."""
    requires("ray")
    script, beats = tmp_path / "stop.py", tmp_path / "beats.txt"
    script.write_text(STOPPED_RAY_DRIVER)
    p = subprocess.run([sys.executable, str(script), str(beats), how], capture_output=True, text=True, timeout=240, start_new_session=True)
    said = p.stdout + p.stderr
    stop = float(re.search(r"^stop (\S+)", p.stdout, re.M).group(1))
    time.sleep(3)  # what an actor left running would write meanwhile
    last = max(float(line.split()[1]) for line in beats.read_text().splitlines())
    if how == "sigint":
        closed = float(re.search(r"^closed (\S+)", p.stdout, re.M).group(1))
        assert "interrupted" in p.stdout and last <= closed, (last, closed)
        assert "will be retried" not in said and "retries remaining" not in said, said
    else:
        assert p.returncode == -signal.SIGKILL and last - stop < 1.0, (last - stop, said)


class Doubler:
    """A worker that takes its time (and reports what it is on, to a pool with steps)."""

    report = None

    def report_steps_to(self, report):
        self.report = report

    def run(self, x):
        if self.report is not None:
            self.report(str(x), f"doubling {x}")
        time.sleep(0.3)
        if self.report is not None:
            self.report(str(x), None)
        return 2 * x


def test_a_lost_worker_is_restarted_and_its_batch_run_again(ray_local):
    from vericite.distributed import RayPool

    pool = RayPool(Doubler, 2, "auto", steps=True)  # with the step board (generate's progress): it changes nothing
    try:
        pids = pool.pids()
        batches = pool.map("run", [(str(i), i) for i in range(8)])
        got = dict([next(batches)])
        os.kill(pids[0], signal.SIGKILL)  # one actor's process dies with a batch in hand
        got.update(batches)
        assert got == {str(i): 2 * i for i in range(8)}  # every batch once, the lost one run again
        assert len(set(pool.pids()) - set(pids)) == 1  # the actor was restarted in a new process
        deadline = time.monotonic() + 10  # a worker sends its reports every STEP_PUSH_S
        while pool.steps() != {} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.steps() == {}  # the board still answers, and the restarted actor reported to it (each item done)
    finally:
        pool.close()


class SlowToRestart(Doubler):
    """A Doubler that takes 2 s a batch (its step is on the board a while) and, in an actor Ray restarted, 6 s to
    build (a model loaded again) before it runs its batch."""

    def __init__(self):
        import ray

        if ray.get_runtime_context().get_actor_id() and ray.get_runtime_context().was_current_actor_reconstructed:
            time.sleep(6)

    def run(self, x):
        if self.report is not None:
            self.report(str(x), f"doubling {x}")
        time.sleep(2)
        if self.report is not None:
            self.report(str(x), None)
        return 2 * x


def test_a_restarted_worker_s_question_shows_it_restarted_not_its_old_step(ray_local):
    """A lost actor's question showed the step its lost process was at until the restarted actor reported it anew
    (after building its worker again: a model loaded); now it shows ``worker restarted, waiting`` meanwhile."""
    from vericite.distributed import RayPool
    from vericite.distributed.restarts import actor_table
    from vericite.distributed.steps import RESTARTED

    pool = RayPool(SlowToRestart, 2, "auto", steps=True)
    try:
        pids = pool.pids()
        batches = pool.map("run", [(str(i), i) for i in range(4)])
        got = dict([next(batches)])
        deadline = time.monotonic() + 20
        while len((pool.steps() or {})) < 2 and time.monotonic() < deadline:  # both actors on a question
            time.sleep(0.05)
        os.kill(pids[0], signal.SIGKILL)
        killed = time.monotonic()
        seen = []
        deadline = time.monotonic() + 20
        while RESTARTED not in seen and time.monotonic() < deadline:
            seen = list((pool.steps() or {}).values())
            time.sleep(0.1)
        assert RESTARTED in seen, seen
        print(f"marked {time.monotonic() - killed:.2f} s after the kill")  # -rP
        # the driver's side: Ray's actor table, read for the restarts (a private call: checked on the Ray pinned)
        assert any(int(info.get("NumRestarts") or 0) >= 1 for info in actor_table(ray_local).values())
        got.update(batches)
        assert got == {str(i): 2 * i for i in range(4)}
    finally:
        pool.close()


def test_a_pool_on_a_ray_without_free_cpus_is_one_line_or_fewer_workers_never_a_wait(tmp_path, ray_local, monkeypatch, capsys):
    """Two pools of two 1-CPU actors on a Ray of 2 CPUs waited for ever (the second pool's actors never got a CPU);
    now the second is one line at once, and a pool with some CPUs free runs on those, with a warning."""
    from vericite.distributed import RayPool
    from vericite.distributed import pool as P
    from vericite.errors import VericiteError

    monkeypatch.setattr(fit, "FREE_WAIT_S", 1.0)
    first = RayPool(Doubler, 2, "auto")  # started: it holds both CPUs
    try:
        t0 = time.monotonic()
        with pytest.raises(VericiteError, match=r"no CPU free for a worker \(0 of 2 free") as e:
            RayPool(Doubler, 2, "auto")
        assert "\n" not in str(e.value) and time.monotonic() - t0 < 30
        a = write_answers(tmp_path / "answers.jsonl", 4)  # a command: one line, exit 2
        r = CliRunner().invoke(cli, ["evaluate", "-i", str(a), "-o", str(tmp_path / "e"), "-q", "--ray", "auto", "--workers", "2"])
        assert r.exit_code == 2 and "no CPU free for a worker" in r.output and "Traceback" not in r.output, r.output
    finally:
        first.close()
    one = RayPool(Doubler, 1, "auto")  # the first pool's CPUs come back a moment after it closed
    try:
        two = RayPool(Doubler, 2, "auto")
        try:
            assert two.workers == 1 and dict(two.map("run", [(str(i), i) for i in range(3)])) == {"0": 0, "1": 2, "2": 4}
        finally:
            two.close()
    finally:
        one.close()
    assert "running 1 worker, not 2" in capsys.readouterr().err


def test_evaluate_on_ray_with_a_final_answer_reader_reads_on_the_driver(tmp_path, ray_local, fixed_clock):
    """``--reader``: the actors judge the citations and never load the reader (its backend, registered here at run
    time and so given to the actors too, fails in any other process); the driver reads each answer: the local
    evaluation's files."""
    from vericite import registry
    from vericite.models.fake import FakeBackend

    driver = os.getpid()

    def driver_only(arg, *, ctx, **o):
        if os.getpid() != driver:
            raise RuntimeError("the reader's model was loaded by a worker")
        return FakeBackend("fake:driver-only", default="Paris")

    docs = [{"title": "France", "text": "Paris is the capital of France."}]
    lines = [{"id": f"q{i}", "question": "What is the capital of France?", "answers": [["Paris"]], "passages": docs,
              "answer": f"The capital of France is Paris [1]. Answer {i}."} for i in range(6)]
    a = tmp_path / "answers.jsonl"
    a.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    registry.backends.register("driver-only", driver_only, replace=True)
    try:
        common = ["evaluate", "-i", str(a), "-q", "--task", "alce-short", "--judge", "fake", "--reader", "llm:driver-only", "--no-cache", "--resamples", "20"]
        invoke([*common, "-o", str(tmp_path / "local")])
        invoke([*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    finally:
        registry.backends.unregister("driver-only")
    local, ray = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    assert ray["metrics"]["answer_em"]["value"] == 1.0 and ray["metrics"] == local["metrics"]
    assert ray["evaluation"]["alce"]["reader_calls"] == 6 and ray["judge_usage"] == local["judge_usage"]
    assert (tmp_path / "ray" / "samples.jsonl").read_text() == (tmp_path / "local" / "samples.jsonl").read_text()


def test_evaluate_conner_workers_never_load_the_relevance_model(tmp_path, monkeypatch):
    """CONNER's relevance is scored over the corpus, on the driver: the workers, which score the judged measures
    answer by answer, build the task's suite without loading its relevance scorer. Counted with a scorer
    registered here, the workers being threads in this process (``open_pool`` without Ray: the same
    ``AnswerWorker`` as an actor): one load, the driver's, where each worker loaded its own; the files are a local
    evaluate's."""
    from tests.support.checkpoint import conner_lines
    from vericite import registry
    from vericite.distributed import pool
    from vericite.fakes.scoring import FakePairScorer
    from vericite.runs import distributed

    loads = []

    def counted(arg, *, ctx, **options):
        loads.append(arg)
        return FakePairScorer()

    monkeypatch.setattr(distributed, "open_pool", lambda factory, workers, ray=None: pool.ThreadPool(factory, workers))
    answers = tmp_path / "k.jsonl"
    answers.write_text("".join(json.dumps(x) + "\n" for x in conner_lines(6)), encoding="utf-8")
    common = ["evaluate", "--task", "conner", "-i", str(answers), "-q", "--resamples", "50", "--judge", "fake-3way", "--lm", "fake",
              "--relevance-model", "counted"]  # fmt: skip
    registry.scorers.register("counted", counted, replace=True)
    try:
        invoke([*common, "-o", str(tmp_path / "local")])
        assert len(loads) == 1
        invoke([*common, "-o", str(tmp_path / "pool"), "--ray", "auto", "--workers", "2"])
    finally:
        registry.scorers.unregister("counted")
    assert len(loads) == 2  # the driver's, once per evaluation (it was 4: the two workers loaded it too)
    local, pooled = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "pool"))
    local.pop("created"), pooled.pop("created")
    assert pooled == local and pooled["metrics"]["relevance"]["value"] is not None and pooled["metrics"]["factuality"]["value"] is not None
    assert (tmp_path / "pool" / "samples.jsonl").read_text() == (tmp_path / "local" / "samples.jsonl").read_text()


def test_a_judge_registered_at_run_time_is_given_to_the_actors(tmp_path, ray_local, fixed_clock):
    """A judge a script registers in the driver (no entry point, no plugin module) was an unknown name on the
    actors; they are given the driver's run-time registrations (``distributed/pool.py``), so it judges there as it
    does locally. One that cannot be sent (a factory holding a lock) is one line naming it and how to register it."""
    import threading

    from vericite import registry

    a = write_answers(tmp_path / "answers.jsonl", 6)

    def script_judge(arg, *, ctx, **options):  # a local function: sent by value
        return registry.create("judges", "fake", ctx)

    lock = threading.Lock()

    def locked_judge(arg, *, ctx, **options):
        with lock:
            return registry.create("judges", "fake", ctx)

    registry.judges.register("script-judge", script_judge)
    registry.judges.register("locked-judge", locked_judge)
    try:
        common = ["evaluate", "-i", str(a), "-q", "--judge", "script-judge", "--resamples", "20"]
        invoke([*common, "-o", str(tmp_path / "local")])
        invoke([*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
        r = CliRunner().invoke(cli, ["evaluate", "-i", str(a), "-q", "--judge", "locked-judge", "-o", str(tmp_path / "locked"), "--ray", "auto", "--workers", "2"])
    finally:
        registry.judges.unregister("script-judge")
        registry.judges.unregister("locked-judge")
    for name in ("results.json", "samples.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    said = " ".join(r.output.split())
    assert "judge 'locked-judge' was registered in the driver process only" in said and "cannot pickle '_thread.lock'" in said and "vericite.plugins" in said


def test_vtg_on_ray_names_each_question_s_sentence_and_answers_as_locally(tmp_path, ray_local, monkeypatch):
    """Issue 12's progress per sentence under --ray: the actors report their step to the pool's step board, the
    driver's progress names it ("sample q1, sentence 1, trial 1"), and the answers are those of a local run."""
    from vericite.models.usage import UsageMeter
    from vericite.runs.config import GenerateConfig
    from vericite.runs.distributed import generate_pooled
    from vericite.runs.loop import build_method, run_method
    from vericite.types import Sample

    from tests.support.vtg import DOCS, QUESTION, StepLabels, slow_script

    cfg = GenerateConfig(dataset="x", method="vtg", model="vtg-script", cache=False,
                         method_args={"k": 2, "verifier_judge": "fake", "docs_per_query": 1, "trials": 1})  # fmt: skip
    samples = [Sample(f"q{i}", QUESTION, passages=list(DOCS)) for i in range(1, 4)]
    labels = StepLabels(monkeypatch)
    generate_pooled(cfg, tmp_path / "ray", ray="auto", workers=2, samples=samples, backend_factory=slow_script, progress=True, batch_size=1)
    assert any("sample q1, sentence 1, trial 1" in x for x in labels.seen), labels.seen
    assert any("sentence 2, trial 1" in x for x in labels.seen), labels.seen
    meter = UsageMeter()
    run_method(build_method(cfg, meter=meter, backend=slow_script()), samples, tmp_path / "local", config={}, meter=meter, progress=False)
    ray, local = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("ray", "local"))
    assert ray.count("\n") == 3 and without_timings(ray) == without_timings(local)
