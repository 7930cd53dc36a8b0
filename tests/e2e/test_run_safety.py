"""Issue 9, defects 2, 4 and 5: one writer per run folder (an OS lock, refused in one line), a run whose model
calls failed is "incomplete" and exits non-zero, and an output path that cannot be written is one clear line
at the start of every command that writes — never a traceback, never after the work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.pipeline import SLOW_RUN, citing_reply, make_samples, manifest_of, questions_file, wait_for_lines
from vericite.cli.main import cli
from vericite.errors import BackendError, VericiteError
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import generate_run
from vericite.jsonl import read_appended as read_jsonl
from vericite.models.fake import FakeBackend, last_user_message
from vericite.runs.rundir import RunDir


class Failing(FakeBackend):
    """Fails the call for questions that contain one of ``fail_on`` (every question when it is empty)."""

    def __init__(self, fail_on: tuple[str, ...] = (), **kw):
        super().__init__("fake:failing", default="Ann was a painter [Q1, occupation: painter].", **kw)
        self.fail_on = fail_on

    def generate(self, prompts, params):
        for messages in prompts:
            q = last_user_message(messages)
            if not self.fail_on or any(f in q for f in self.fail_on):
                raise BackendError("llama.cpp could not load /tmp/bad.gguf: failed to load model")
        return super().generate(prompts, params)


def use_backend(monkeypatch, backend) -> None:
    import vericite.models

    monkeypatch.setattr(vericite.models, "load_model", lambda name, **kw: backend)


# ---------------------------------------------------------------------------------------------- defect 2: lock


def test_a_second_open_of_a_run_folder_is_refused_even_in_one_process(tmp_path):
    out = tmp_path / "r"
    first = RunDir.open(out, {"config": {}})
    with pytest.raises(VericiteError, match=rf"run folder .* is in use by another vericite process \(pid {os.getpid()}\)"):
        RunDir.open(out, {"config": {}}, resume=True)
    first.append({"id": "a"})
    first.close()
    again = RunDir.open(out, {"config": {}}, resume=True)  # free once the first is closed
    assert again.done_ids == {"a"}
    again.close()
    assert not (out / ".lock").exists()  # a closed run leaves no lock file behind


HOLD = textwrap.dedent(
    """
    import sys, time
    from vericite.runs.rundir import RunDir
    run = RunDir.open(sys.argv[1], {"config": {}})
    run.append({"id": "a"})
    print("holding", flush=True)
    time.sleep(60)
    """
)


def test_the_lock_names_the_holder_and_dies_with_it(tmp_path):
    out = tmp_path / "r"
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "holding"
        r = CliRunner().invoke(cli, ["generate", "-d", str(questions_file(tmp_path)), "-m", "fake", "-o", str(out), "--resume", "-q"])
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert f"run folder {out} is in use by another vericite process (pid {p.pid})" in r.output
    finally:
        os.kill(p.pid, signal.SIGKILL)  # a crash: the OS releases the lock
        p.wait()
    with RunDir.open(out, {"config": {}}, resume=True) as run:
        assert run.done_ids == {"a"}


def test_two_generate_processes_on_one_folder_write_each_sample_once(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SLOW_RUN)
    out = tmp_path / "r"
    env = {**os.environ, "VERICITE_CACHE": str(tmp_path / "cache")}
    release = tmp_path / "release"
    # the first run stops after 5 samples, its folder locked, until the test releases it: the second starts
    # while the first provably holds the folder, however long its start-up takes on a loaded machine
    first = subprocess.Popen([sys.executable, str(script), str(out)], env={**env, "SLOW_RUN_HOLD_AT": "5", "SLOW_RUN_RELEASE": str(release)})
    samples = out / "samples.jsonl"
    try:
        assert wait_for_lines(samples, 5) == 5 and first.poll() is None
        second = subprocess.run([sys.executable, str(script), str(out), "--resume"], env=env, capture_output=True, text=True, timeout=120)
        assert first.poll() is None, "the first run should still hold its folder while the second runs"
    finally:
        release.touch()
    assert first.wait(timeout=120) == 0
    assert second.returncode != 0 and "is in use by another vericite process" in second.stderr
    ids = [json.loads(line)["id"] for line in samples.read_text().splitlines()]
    assert sorted(ids) == [f"s{i:03d}" for i in range(60)]  # each once
    assert manifest_of(out)["status"] == "complete"


def test_vericite_run_locks_its_folder(tmp_path):
    from vericite.runs.runner import RunConfig, run_config

    out = tmp_path / "run"
    seen: list[str] = []

    def reply(messages, params):
        if not seen:  # while the first run is generating, a second one on the same folder
            try:
                run_config(RunConfig(dataset=str(questions_file(tmp_path)), model="fake", resamples=10), out, resume=True, progress=False, backend=FakeBackend())
                seen.append("ran")
            except VericiteError as e:
                seen.append(str(e))
        return citing_reply(messages, params)

    run_config(RunConfig(dataset=str(questions_file(tmp_path)), model="fake", resamples=10), out, progress=False, backend=FakeBackend(replies=reply))
    assert seen == [f"run folder {out} is in use by another vericite process (pid {os.getpid()})"]


# ---------------------------------------------------------------------------------------------- defect 4: failures


def test_a_run_whose_every_call_failed_exits_non_zero_and_is_incomplete(tmp_path, monkeypatch):
    use_backend(monkeypatch, Failing())
    out = tmp_path / "r"
    r = CliRunner().invoke(cli, ["generate", "-d", str(questions_file(tmp_path, 1)), "-m", "fake", "-o", str(out), "--limit", "1", "-q"])
    assert r.exit_code == 1, r.output
    assert "run incomplete: every model call failed" in r.output and "could not load" in r.output and "Traceback" not in r.output
    assert "0 answers" in r.output  # the summary is still printed
    m = manifest_of(out)
    assert m["status"] == "incomplete"
    assert m["summary"]["unanswered"] == 1 and m["summary"]["failed_calls"] == 1 and m["summary"]["n_samples"] == 1
    assert [e["id"] for e in read_jsonl(out / "errors.jsonl")] == ["q0"]


def test_all_failed_is_fatal_whatever_the_threshold(tmp_path):
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given", max_failures="100%")
    with pytest.raises(VericiteError, match="every model call failed") as e:
        generate_run(cfg, tmp_path / "r", samples=make_samples(), backend=Failing(), progress=False)
    assert e.value.exit_code == 1
    assert manifest_of(tmp_path / "r")["status"] == "incomplete"


def test_partial_failures_against_the_threshold(tmp_path, monkeypatch):
    data = questions_file(tmp_path, 4)
    use_backend(monkeypatch, Failing(fail_on=("(1)",)))
    base = ["generate", "-d", str(data), "-m", "fake", "-q"]
    r = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / "a")])  # default: no failure allowed
    assert r.exit_code == 1 and "failed for 1 of 4 questions (--max-failures 0)" in r.output, r.output
    assert manifest_of(tmp_path / "a")["status"] == "incomplete"
    for allowed in ("1", "25%"):
        r = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / f"b{allowed[:-1] or allowed}"), "--max-failures", allowed])
        assert r.exit_code == 0, r.output
        m = manifest_of(tmp_path / f"b{allowed[:-1] or allowed}")
        assert m["status"] == "incomplete" and m["summary"]["unanswered"] == 1  # tolerated, still said
        assert "unanswered: 1" in r.output
    r = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / "c"), "--max-failures", "20%"])  # 20 % of 4 allows 0
    assert r.exit_code == 1
    r = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / "d"), "--max-failures", "lots"])
    assert r.exit_code == 2 and "max_failures must be a count" in r.output
    # the failed question is retried on --resume; once answered the run is complete
    use_backend(monkeypatch, Failing(fail_on=("no such question",)))
    r = CliRunner().invoke(cli, [*base, "-o", str(tmp_path / "a"), "--resume"])
    assert r.exit_code == 0, r.output
    m = manifest_of(tmp_path / "a")
    assert m["status"] == "complete" and m["summary"]["unanswered"] == 0 and m["summary"]["n_done"] == 4


def test_three_failures_in_a_row_stop_the_run_and_leave_it_incomplete(tmp_path):
    from vericite.types import Sample, Triple

    samples = [Sample(f"s{i}", f"Question {i}?", [Triple("Q1", "occupation", "painter", "Ann")]) for i in range(5)]
    with pytest.raises(BackendError, match="3 calls failed in a row"):
        generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "r", samples=samples, backend=Failing(), progress=False)
    m = manifest_of(tmp_path / "r")
    assert m["status"] == "incomplete" and m["summary"]["failed_calls"] == 3 and m["summary"]["unanswered"] == 5


def test_vericite_run_fails_when_generation_failed(tmp_path):
    from vericite.runs.runner import RunConfig, run_config

    with pytest.raises(VericiteError, match="every model call failed"):
        run_config(RunConfig(dataset=str(questions_file(tmp_path, 2)), model="fake", resamples=10), tmp_path / "run", progress=False, backend=Failing())
    assert not (tmp_path / "run" / "results.json").exists()


# ---------------------------------------------------------------------------------------------- defect 5: --out


@pytest.fixture()
def blocked(tmp_path) -> Path:
    """An --out that truly cannot be made, even by root: its parent is a regular file."""
    f = tmp_path / "a-file"
    f.write_text("not a folder")
    return f / "out"


def one_line_refusal(r, *needles: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and all(n in errors[0] for n in needles), r.output


def test_generate_refuses_an_out_it_cannot_create_before_loading_a_model(tmp_path, blocked, monkeypatch):
    def no_model(*a, **kw):
        raise AssertionError("a model was loaded")

    import vericite.models

    monkeypatch.setattr(vericite.models, "load_model", no_model)
    r = CliRunner().invoke(cli, ["generate", "-d", str(questions_file(tmp_path)), "-m", "fake", "-o", str(blocked), "-q"])
    one_line_refusal(r, f"cannot create --out {blocked}", "is a file, not a folder")


def test_evaluate_checks_out_before_it_judges(tmp_path, blocked, monkeypatch):
    import vericite.evaluate

    def no_judging(*a, **kw):
        raise AssertionError("judged before checking --out")

    monkeypatch.setattr(vericite.evaluate, "evaluate_items", no_judging)
    generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "gen", samples=make_samples(), backend=FakeBackend(replies=citing_reply), progress=False)
    inp = str(tmp_path / "gen" / "samples.jsonl")
    r = CliRunner().invoke(cli, ["evaluate", "-i", inp, "-o", str(blocked)])
    one_line_refusal(r, f"cannot create --out {blocked}")
    existing = tmp_path / "results.txt"
    existing.write_text("x")
    r = CliRunner().invoke(cli, ["evaluate", "-i", inp, "-o", str(existing)])
    one_line_refusal(r, f"--out {existing} is a file, not a folder")


def test_evaluate_refuses_an_out_another_evaluate_is_writing(tmp_path, monkeypatch):
    """One writer per evaluation folder: while one evaluate holds --out, a second is refused in one line and
    judges nothing; once the first is done, the folder is free and no lock file is left."""
    from vericite.outputs import PathLock

    generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "gen", samples=make_samples(), backend=FakeBackend(replies=citing_reply), progress=False)
    inp = str(tmp_path / "gen" / "samples.jsonl")
    out = tmp_path / "eval"
    out.mkdir()
    with PathLock(out / ".lock", f"evaluation folder {out}"):
        r = CliRunner().invoke(cli, ["evaluate", "-i", inp, "-o", str(out), "-q"])
        one_line_refusal(r, f"evaluation folder {out} is in use by another vericite process (pid {os.getpid()})")
        assert not (out / "results.json").exists()
    r = CliRunner().invoke(cli, ["evaluate", "-i", inp, "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert (out / "results.json").exists() and not (out / ".lock").exists()


def test_run_judge_eval_and_export_annotation_refuse_a_bad_out(tmp_path, blocked):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: t\ndataset: {questions_file(tmp_path)}\nmodel: fake\nresamples: 10\n")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(blocked), "-q"])
    one_line_refusal(r, f"cannot create --out {blocked}")

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"evidence": "Ann was a painter.", "claim": "Ann was a painter.", "label": "SUPPORTS"}) + "\n")
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "triple", "--data", str(pairs), "--out", str(blocked), "-q"])
    one_line_refusal(r, f"cannot create --out {blocked}")

    ds = tmp_path / "ds.jsonl"
    ds.write_text(json.dumps({"id": "x", "question": "Who?", "question_general": "Who?", "knowledge": [], "gold": []}) + "\n")
    r = CliRunner().invoke(cli, ["build", "export-annotation", str(ds), "--out", str(blocked / "a.csv")])
    one_line_refusal(r, f"{blocked / 'a.csv'}", "is a file, not a folder")


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.isdir("/sys"), reason="needs Linux's /sys")
def test_an_existing_folder_nobody_can_write_is_refused(tmp_path):
    """/sys refuses new files even to root: a real unwritable folder, where chmod would not be one for root."""
    try:
        open("/sys/vericite-probe", "w").close()
        pytest.skip("/sys is writable here")
    except OSError:
        pass
    r = CliRunner().invoke(cli, ["generate", "-d", str(questions_file(tmp_path)), "-m", "fake", "-o", "/sys", "-q"])
    one_line_refusal(r, "cannot write to --out /sys")
    r = CliRunner().invoke(cli, ["generate", "-d", str(questions_file(tmp_path)), "-m", "fake", "-o", "/sys/vericite/r1", "-q"])
    one_line_refusal(r, "cannot create --out /sys/vericite/r1 in /sys")


# ---------------------------------------------------------------------------------------------- defect 7: summary words


def test_generate_summary_says_well_formed_not_ok(tmp_path, monkeypatch):
    use_backend(monkeypatch, FakeBackend(replies=citing_reply))
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in make_samples()))
    r = CliRunner().invoke(cli, ["generate", "-d", str(data), "-m", "fake", "-o", str(tmp_path / "r"), "-q"])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("citations:"))
    assert "well-formed 4" in line and "ok" not in line.replace("well-formed", "")
    assert manifest_of(tmp_path / "r")["summary"]["citation_status"] == {"ok": 4}  # the stored name is unchanged
