"""VTG short of ``min_sentences`` (``short_retries``): a completion that would end the answer otherwise than on
repeats (a prompt echo, ``End.`` written before it is offered, an empty completion) is drawn again with another
seed, a bounded number of times, each counted by its reason and traced; an answer that still ends short is
counted (``short_answer``). ``short_retries=0`` is the rule before the option, trace included."""

from __future__ import annotations

from typing import Any

import pytest

from vericite.generate import vtg_steps as S
from vericite.generate.vtg_build import VtgOptions
from vericite.models.fake import FakeBackend, last_user_message

from tests.support.vtg import BERLIN, CITES, PARIS, PARIS_AGAIN, ROME, answer_so_far, restating, scripted
from tests.support.vtg import answer_q1 as answer
from tests.support.vtg import keyword_vtg as method
from tests.support.vtg import kept_sentences as kept

ECHO = "The answer so far already answers the question completely. End."
#: what the first draw of each sentence after the first writes, why it would end the answer, its counter
EARLY = [(ECHO, "prompt-echo", "prompt_echo_retries"), ("End.", "end-marker", "end_marker_retries"), ("", "empty", "empty_retries")]


def by_seed(replies: dict[int, str] | str, sentences=(PARIS, ROME, BERLIN)) -> FakeBackend:
    """:func:`scripted`'s model, but a sentence prompt with an answer so far drawn with a seed in ``replies`` gets
    that reply (any other seed: the next sentence); a string: that reply whatever the seed."""
    inner = scripted(list(sentences), CITES).replies
    assert callable(inner)

    def reply(messages: Any, params: Any) -> str:
        prompt = last_user_message(messages)
        if "Sentence with citation:" not in prompt and "Generated questions:" not in prompt and answer_so_far(prompt):
            if isinstance(replies, str):
                return replies
            if params.seed in replies:
                return replies[params.seed]
        return inner(messages, params)

    return FakeBackend("vtg-by-seed", replies=reply)


@pytest.mark.parametrize(("early", "why", "counter"), EARLY)
def test_an_early_ending_short_of_min_sentences_is_drawn_again(early, why, counter):
    """Each sentence's first draw after the first would end the answer (seed 0); drawn again (seed 1) the model
    writes the next: with ``min_sentences=3`` the answer has three sentences, where it used to end after Paris."""
    r = answer(method(restating([PARIS, ROME, BERLIN], early, CITES), min_sentences=3))
    assert kept(r) == [PARIS, ROME, BERLIN]
    second = r["vtg"]["sentences"][1]["trials"][0]
    assert second["short_retries"] == [{"why": why, "seed": 0, "raw": early}] and second["retries"] == []
    assert second["raw"] == ROME and second["sentence"] == ROME
    problems = r["vtg"]["problems"]
    assert problems[counter] == 2 and problems["short_answer"] == 0 and problems["repeat_retries"] == 0
    assert sum(problems[c] for _, _, c in EARLY) == 2  # each counted by its own reason only
    last = r["vtg"]["sentences"][3]["trials"][0]  # End. offered (3 written): the ending ends the answer, no retry
    assert last["outcome"] == "end" and last["short_retries"] == [] and r["vtg"]["end"] == why
    assert r["vtg"]["components"]["sentence"]["calls"] == 6  # 3 sentences, 2 retries, the end


def test_a_model_that_only_echoes_ends_short_after_the_retries_counted_and_traced():
    m = method(by_seed(ECHO), min_sentences=3)
    assert m.manifest()["short_retries"] == S.SHORT_RETRIES == 2
    r = answer(m)
    assert kept(r) == [PARIS] and r["vtg"]["end"] == "prompt-echo"
    problems = r["vtg"]["problems"]
    assert problems["prompt_echo_retries"] == 2 and problems["short_answer"] == 1
    trial = r["vtg"]["sentences"][1]["trials"][0]
    assert [x["seed"] for x in trial["short_retries"]] == [0, 1] and trial["outcome"] == "end"
    assert r["vtg"]["components"]["sentence"]["calls"] == 1 + 3
    summary = m.summarise([r])["vtg"]["problems"]
    assert summary["prompt_echo_retries"] == 2 and summary["short_answer"] == 1
    more = answer(method(by_seed(ECHO), min_sentences=3, short_retries=3, trials=2))
    assert [x["seed"] for x in more["vtg"]["sentences"][1]["trials"][0]["short_retries"]] == [0, 3, 6]  # seed + t + r * (trials + 1)
    assert more["vtg"]["components"]["sentence"]["calls"] == 1 + 4


def test_repeats_and_early_endings_share_the_seeds_and_keep_their_own_budgets():
    """Seed 0 repeats Paris, seed 1 echoes the prompt, seed 2 writes Rome: one draw again of each kind, the r-th
    draw again with seed r whatever its kind."""
    r = answer(method(by_seed({0: PARIS_AGAIN, 1: ECHO}), min_sentences=3))
    second = r["vtg"]["sentences"][1]["trials"][0]
    assert second["retries"] == [{"seed": 0, "raw": PARIS_AGAIN}] and second["short_retries"] == [{"why": "prompt-echo", "seed": 1, "raw": ECHO}]
    assert second["sentence"] == ROME and kept(r) == [PARIS, ROME, BERLIN]
    # one draw again allowed of each: the second echo ends the answer though a repeat retry is left
    r = answer(method(by_seed({0: ECHO, 1: ECHO, 2: PARIS_AGAIN}), min_sentences=3, short_retries=1))
    assert kept(r) == [PARIS] and r["vtg"]["end"] == "prompt-echo" and r["vtg"]["problems"]["short_answer"] == 1
    assert r["vtg"]["problems"]["prompt_echo_retries"] == 1 and r["vtg"]["problems"]["repeat_retries"] == 0


def test_no_retry_where_end_is_offered_at_temperature_0_or_with_0_retries():
    plain = answer(method(restating([PARIS, ROME], ECHO, CITES)))  # min_sentences 1: End. offered after Paris
    assert plain["vtg"]["problems"]["prompt_echo_retries"] == 0 and kept(plain) == [PARIS]
    greedy = answer(method(restating([PARIS, ROME], ECHO, CITES), min_sentences=3, temperature=0.0))
    assert greedy["vtg"]["problems"]["prompt_echo_retries"] == 0 and greedy["vtg"]["problems"]["short_answer"] == 1
    m = method(restating([PARIS, ROME, BERLIN], ECHO, CITES), min_sentences=3, short_retries=0)
    before = answer(m)  # the rule before the option: the answer ends on the echo, the trace as it was
    assert kept(before) == [PARIS] and m.manifest()["short_retries"] == 0 and before["vtg"]["problems"]["short_answer"] == 1
    assert not {c for _, _, c in EARLY} & set(before["vtg"]["problems"]) and "prompt_echo_retries" not in m.summarise([before])["vtg"]["problems"]
    assert all("short_retries" not in t for s in before["vtg"]["sentences"] for t in s["trials"])
    alone = answer(method(restating([PARIS, ROME, BERLIN], ECHO, CITES), min_sentences=3, repeat_retries=0))
    assert kept(alone) == [PARIS, ROME, BERLIN] and alone["vtg"]["problems"]["short_answer"] == 0  # counted without repeat_retries
    assert "repeat_retries" not in alone["vtg"]["problems"] and all("retries" not in t for s in alone["vtg"]["sentences"] for t in s["trials"])


def test_the_progress_line_says_an_early_ending_is_drawn_again():
    for early, label in ((ECHO, "prompt echo"), ("End.", "early End."), ("", "empty completion")):
        m = method(restating([PARIS, ROME, BERLIN], early, CITES), min_sentences=3)
        steps: list[str] = []
        m.report_step = steps.append
        answer(m)
        assert f"sentence 2, trial 1, {label} drawn again (1 of 2)" in steps, steps


def test_a_resumed_folder_sets_the_short_retries_it_was_written_with():
    before = {"method": "vtg@1", "k": 5, "repeat_overlap": 0.8, "repeat_retries": 2}  # written before short_retries
    assert VtgOptions.resumed_options({}, before)["short_retries"] == 0
    assert VtgOptions.resumed_options({}, {**before, "short_retries": 2})["short_retries"] == 2
    assert "short_retries" not in VtgOptions.resumed_options({"short_retries": 3}, before)  # given: as given
    m = method(scripted([]))
    assert m.upgrade_manifest(before)["short_retries"] == 0
    assert m.upgrade_manifest({**before, "short_retries": 2})["short_retries"] == 2
    assert "short_retries" in VtgOptions.recorded_when_set
    with pytest.raises(Exception, match="short_retries"):
        method(scripted([]), short_retries=-1)
