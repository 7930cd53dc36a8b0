"""A Ray driver killed (SIGKILL) mid-run resumes with nothing lost and nothing answered or judged twice (generate,
evaluate); a driver stopped (Ctrl-C or SIGKILL) leaves no actor working on. Each starts Ray in a process of its own
(slow)."""

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

from tests.support.guards import requires
from tests.support.ray_e2e import fixed_clock, invoke  # noqa: F401  (a fixture)
from tests.support.ray_runs import SLOW_RAY_EVALUATE, SLOW_RAY_RUN, STOPPED_RAY_DRIVER, write_answers


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
