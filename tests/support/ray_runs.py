"""Ray tests' shared pieces: questions with knowledge, answers that cite, a slow generation script to kill."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

#: the driver script killed mid-run by tests/e2e/test_ray_killed.py: 40 questions, 2 actors, a fake model that sleeps;
#: every call the model answers is appended to CALLS (one line: the question), from whichever process made it
SLOW_RAY_RUN = textwrap.dedent(
    """
    import os, re, sys, time
    from vericite.runs.config import GenerateConfig
    from vericite.runs.distributed import generate_pooled
    from vericite.models.fake import FakeBackend
    from vericite.types import Sample, Triple

    CALLS = sys.argv[2]

    def slow(messages, params):
        time.sleep(0.15)
        asked = re.findall(r"Question (\\d{3})[?]", messages[-1]["content"])
        with open(CALLS, "a") as f:
            f.write("s" + asked[-1] + "\\n")
        return "Ann was a painter [Q1, occupation: painter]."

    samples = [Sample(f"s{i:03d}", f"Question {i:03d}?", [Triple("Q1", "occupation", "painter", "Ann")]) for i in range(40)]
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given", cache=False)
    generate_pooled(cfg, sys.argv[1], ray="auto", workers=2, resume=len(sys.argv) > 3, samples=samples,
                    backend_factory=lambda: FakeBackend(replies=slow), progress=False, batch_size=3)
    """
)


#: the evaluate driver killed mid-run by tests/e2e/test_ray_killed.py: the answers of ANSWERS (argv[3]) evaluated on 2
#: actors (fake judges) whose batches of 2 answers take their time; every answer a worker scores is appended to CALLS
#: (argv[2]: its index), from whichever process scored it
SLOW_RAY_EVALUATE = textwrap.dedent(
    """
    import functools, sys, time
    import vericite.runs.distributed as D
    from vericite.distributed import open_pool
    from vericite.evaluate import EvaluateConfig
    from vericite.runs.results import evaluate_file

    CALLS = sys.argv[2]

    def slow_worker(cfg, task):
        worker = D.AnswerWorker(cfg, task)
        real = worker.score

        def score(batch):
            time.sleep(0.3)
            with open(CALLS, "a") as f:
                f.write("".join(f"{i}\\n" for i, _s, _a in batch))
            return real(batch)

        worker.score = score
        return worker

    D.answer_pool = lambda cfg, *, ray, workers: lambda task: open_pool(functools.partial(slow_worker, cfg, task), workers, ray)
    cfg = EvaluateConfig(judge="fake", attribution_judge="fake-4class", cache=False)
    import vericite.evaluate.answer_scoring as S
    S.ANSWER_BATCH = 2
    evaluate_file(sys.argv[3], sys.argv[1], cfg, ray="auto", workers=2, resume=len(sys.argv) > 4)
    """
)

#: a driver whose pool of 2 Ray actors (``--ray auto``) write a heartbeat line to BEATS (argv[1]) every 0.05 s while
#: on a batch; once both beat, the driver is stopped as argv[2] says: "sigint" (Ctrl-C: it closes its pool, as every
#: command does, and prints "closed <time>") or "sigkill" (killed); it prints "stop <time>" just before
STOPPED_RAY_DRIVER = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from vericite.distributed import RayPool

    BEATS, HOW = sys.argv[1], sys.argv[2]

    class Beating:
        def run(self, x):
            for _ in range(600):
                with open(BEATS, "a") as f:
                    f.write(f"{os.getpid()} {time.time():.3f}\\n")
                time.sleep(0.05)
            return x

    def stop_when_both_beat():
        while not os.path.exists(BEATS) or len({l.split()[0] for l in open(BEATS).read().splitlines()}) < 2:
            time.sleep(0.05)
        time.sleep(0.3)
        print(f"stop {time.time():.3f}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL if HOW == "sigkill" else signal.SIGINT)

    pool = RayPool(Beating, 2, "auto")
    threading.Thread(target=stop_when_both_beat, daemon=True).start()
    try:
        for key, _ in pool.map("run", [(str(i), i) for i in range(4)]):
            print("finished", key, flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        pool.close()
    print(f"closed {time.time():.3f}", flush=True)
    """
)


def write_questions(path: Path, n: int = 12) -> Path:
    """``n`` questions, each with two facts about its own person."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i:02d}", "question": f"What did person {i} do?", "knowledge": [
                {"subject": f"Q{i}", "subject_label": f"P{i}", "property": "occupation", "value": f"job{i}"},
                {"subject": f"Q{i}", "property": "place of birth", "value": f"town{i}"}]}) + "\n")
    return path


def write_answers(path: Path, n: int = 30) -> Path:
    """``n`` answers to evaluate with the triple judge: some citations right, some wrong, some [NA]."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            k = [{"subject": f"Q{i}", "property": "occupation", "value": f"job{i}"}, {"subject": f"Q{i}", "property": "place of birth", "value": f"town{i}"}]
            wrong = "town0" if i % 3 else f"town{i}"
            answer = f"P{i} worked as job{i} [Q{i}, occupation: job{i}]. P{i} was born in {wrong} [Q{i}, place of birth: {wrong}]."
            if i % 4 == 0:
                answer += " P{i} liked tea [NA]."
            f.write(json.dumps({"id": f"a{i:02d}", "question": f"Who is P{i}?", "answer": answer, "knowledge": k, "gold": k[:1]}) + "\n")
    return path


def without_timings(text: str) -> str:
    """A samples.jsonl with each record's wall time (``"seconds": x``, different in any two runs) blanked, and the
    seconds of each of its parts (VTG's ``"seconds": {"sentence": x, ...}``)."""
    text = re.sub(r'"seconds": \{[^{}]*\}', lambda m: re.sub(r'": [0-9.e-]+', '": 0', m.group(0)), text)
    return re.sub(r'"seconds": [0-9.e-]+', '"seconds": 0', text)
