"""Plain progress lines (stderr not a terminal): issue 9, defect 6 (a line while an item is still running)
and defect 7 (the closing line printed twice)."""

from __future__ import annotations

import re
import time

from vericite.progress import progress_bar


def test_the_closing_line_is_not_printed_twice(capsys):
    with progress_bar(3, "generating", interval=0.0) as advance:  # a line at every step
        for _ in range(3):
            advance()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("generating: 3/3 after"), lines
    # stopped early: the closing line says where it stopped, once
    with progress_bar(5, "judging", interval=0.0) as advance:
        advance(2)
    lines = capsys.readouterr().err.splitlines()
    assert [l.split(" after")[0] for l in lines] == ["judging: 2/5"], lines


def test_a_line_says_which_item_is_still_running(capsys):
    with progress_bar(3, "generating", interval=0.1) as advance:
        advance()
        advance.running("sample q2")
        time.sleep(0.45)
        advance()
        time.sleep(0.3)  # no label given: the next item by number
    err = capsys.readouterr().err
    running = re.findall(r"^generating: (\d)/3, (.+) running for (\d+) s$", err, re.M)
    assert ("1", "sample q2", "0") in running and ("2", "item 3", "0") in running, err
    # at most one line per interval while it runs
    assert sum(1 for r in running if r[1] == "sample q2") <= 5


def test_no_running_line_for_quick_items_or_when_disabled(capsys):
    with progress_bar(3, "generating", interval=10.0) as advance:
        advance.running("sample a")
        advance(3)
    with progress_bar(3, "generating", enabled=False) as advance:
        advance.running("sample a")
        time.sleep(0.05)
        advance(3)
    assert capsys.readouterr().err == ""


def test_generate_names_the_running_sample(tmp_path, monkeypatch, capsys):
    import vericite.progress as progress
    from vericite.runs.config import GenerateConfig
    from vericite.runs.loop import generate_run
    from vericite.models.fake import FakeBackend
    from vericite.types import Sample, Triple

    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.1)

    def slow(messages, params):
        time.sleep(0.35)
        return "Ann was a painter [Q1, occupation: painter]."

    samples = [Sample("s1", "What did Ann do?", [Triple("Q1", "occupation", "painter", "Ann")])]
    generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "g", samples=samples, backend=FakeBackend(replies=slow))
    assert re.search(r"^generating: 0/1, sample s1 running for \d+ s$", capsys.readouterr().err, re.M)


def test_the_time_left_counts_the_items_worked_on_not_the_call_caches_hits(tmp_path, capsys, monkeypatch):
    """A resumed call whose first 90 of 100 texts the cache answers, then 1 text scored in 10 s: the time left is
    9 texts at 10 s (1:30), not 9 at the rate of 91 texts in 10 s (a second)."""
    from vericite.models.cache import CachedBackend, CallCache
    from vericite.models.fake import FakeBackend
    from vericite.progress import items_of_call

    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    texts = [f"text {i} here" for i in range(100)]
    cache = CallCache(tmp_path / "calls.sqlite")
    CachedBackend(FakeBackend(), cache).logprobs(texts[:90])

    class Slow(FakeBackend):
        def logprobs(self, asked):
            clock[0] += 10.0  # the first text asked takes 10 s, then the call is stopped
            return super().logprobs(asked[:1])

    with progress_bar(100, "scoring", interval=0.0) as advance, items_of_call(advance, 100):
        CachedBackend(Slow(), cache).logprobs(texts)
    cache.close()
    err = capsys.readouterr().err
    assert "scoring: 91/100 after 0:10, about 1:30 left" in err, err
    assert "scoring: 90/100" in err and "90/100 after 0:00, about" not in err  # no rate from the hits alone
