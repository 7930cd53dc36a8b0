"""evaluate on Ray (``--ray auto``: Ray started in-process, two actors) writes the files of a local evaluate: the
judges' usage counted, a final-answer reader and CONNER's relevance scorer on the driver only, a judge registered at
run time given to the actors; --workers without --ray is one line. Cut and resumed: test_ray_evaluate_resume.py."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from tests.support.ray_e2e import SentAnswers, fixed_clock, invoke, ray_local  # noqa: F401  (fixtures)
from tests.support.ray_runs import write_answers
from vericite.cli.main import cli


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


def test_evaluate_on_ray_counts_the_workers_judge_usage(tmp_path, ray_local, fixed_clock):
    a = write_answers(tmp_path / "answers.jsonl", 12)
    common = ["evaluate", "-i", str(a), "-q", "--judge", "llm:fake", "--no-cache"]
    invoke([*common, "-o", str(tmp_path / "local")])
    invoke([*common, "-o", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    local, ray = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    assert local["judge_usage"]["fake"]["calls"] > 0 and local["judge_usage"]["fake"]["prompt_tokens"] > 0
    assert ray["judge_usage"] == local["judge_usage"]  # the workers' usage came back with their judgements


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


def test_workers_without_ray_is_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(write_answers(tmp_path / "a.jsonl", 2)), "-o", str(tmp_path / "o"), "--workers", "2"])
    assert r.exit_code != 0 and "--workers needs --ray" in r.output and "Traceback" not in r.output
