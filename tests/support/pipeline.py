"""A fake model that cites what it is given, the two samples it answers, a slow run to kill mid-way, a questions
file and a run folder's manifest: what the pipeline, run-loop, run-safety, compare and report tests drive
generation with."""

from __future__ import annotations

import json
import re
import textwrap
import time
from pathlib import Path

from vericite.models.fake import last_user_message
from vericite.types import Sample, Triple

ENTITY_LINE = re.compile(r"^\{name: (?P<name>[^,]*), (?P<body>.*), qid: (?P<qid>[^}]+)\}$", re.M)


def citing_reply(messages, params) -> str:
    """Cite the first two facts of each entity in the prompt, one of them wrongly, and add an [NA] sentence."""
    text = last_user_message(messages)
    out = []
    for m in ENTITY_LINE.finditer(text):
        facts = [f.split(": ", 1) for f in m["body"].split(", ") if ": " in f][:2]
        for i, (p, v) in enumerate(facts):
            value = v if i == 0 else v + " (sic)"
            out.append(f"{m['name']} has {p} {value} [{m['qid']}, {p}: {value}].")
    out.append("Nobody knows what they had for breakfast [NA].")
    return " ".join(out)


def make_samples() -> list[Sample]:
    k1 = [Triple("Q1", "occupation", "painter", "Ann"), Triple("Q1", "place of birth", "Rome", "Ann")]
    k2 = [Triple("Q2", "occupation", "poet", "Bo"), Triple("Q2", "spouse", "Cy", "Bo")]
    return [
        Sample("s1", "What did Ann do?", k1, gold=[k1[0]], absent=[Triple("Q1", "breakfast", "eggs")]),
        Sample("s2", "What did Bo do?", k2, gold=[k2[0], k2[1]], absent=[]),
    ]


#: a generate run of 60 samples (0.05 s each) to kill or to race: ``python run.py OUT [--resume]``. With
#: ``$SLOW_RUN_HOLD_AT`` = N it stops before its (N+1)th model call, N samples written and the run folder still
#: locked, until the file ``$SLOW_RUN_RELEASE`` exists (or 120 s have passed: a test that died hangs nothing), so
#: a test acts while the run is provably in the middle, however slow the machine
SLOW_RUN = textwrap.dedent(
    """
    import os, sys, time
    from vericite.runs.config import GenerateConfig
    from vericite.runs.loop import generate_run
    from vericite.models.fake import FakeBackend
    from vericite.types import Sample, Triple

    HOLD_AT = int(os.environ.get("SLOW_RUN_HOLD_AT") or 0)
    RELEASE = os.environ.get("SLOW_RUN_RELEASE") or ""
    calls = 0

    def slow(messages, params):
        global calls
        calls += 1
        if HOLD_AT and calls == HOLD_AT + 1:
            deadline = time.time() + 120
            while not (RELEASE and os.path.exists(RELEASE)) and time.time() < deadline:
                time.sleep(0.02)
        time.sleep(0.05)
        return "Ann was a painter [Q1, occupation: painter]."

    samples = [Sample(f"s{i:03d}", f"Question {i}?", [Triple("Q1", "occupation", "painter", "Ann")]) for i in range(60)]
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given")
    generate_run(cfg, sys.argv[1], resume=len(sys.argv) > 2, samples=samples, backend=FakeBackend(replies=slow), progress=False)
    """
)


def wait_for_lines(path: Path, n: int, timeout: float = 120) -> int:
    """Wait until ``path`` holds ``n`` lines (at most ``timeout`` s); the number of lines it holds then."""
    deadline = time.time() + timeout
    while True:
        count = path.read_text(encoding="utf-8").count("\n") if path.exists() else 0
        if count >= n or time.time() > deadline:
            return count
        time.sleep(0.02)


def questions_file(tmp_path: Path, n: int = 3) -> Path:
    """``n`` questions about Ann the painter, one JSONL line each."""
    p = tmp_path / "questions.jsonl"
    rows = [
        {"id": f"q{i}", "question": f"What did Ann do ({i})?", "knowledge": [{"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]}
        for i in range(n)
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
