"""VTG short of ``min_sentences`` (``repeat_retries``): a completion that holds only repeats (exact or near) while
the answer has fewer than ``min_sentences`` sentences is drawn again with another seed, a bounded number of times,
each retry counted and traced; an answer that still ends short is counted (``short_answer``). And the trace keeps
each near repeat skipped: its text, its overlap, the written sentence it repeats (``near_repeats``)."""

from __future__ import annotations

import pytest

from vericite.generate import vtg_steps as S
from vericite.generate.vtg_build import VtgOptions

from tests.support.vtg import BERLIN, CITES, PARIS, PARIS_AGAIN, ROME, restating, scripted
from tests.support.vtg import answer_q1 as answer
from tests.support.vtg import keyword_vtg as method
from tests.support.vtg import kept_sentences as kept



@pytest.mark.parametrize("again", [PARIS_AGAIN, PARIS])  # a near repeat, an exact one
def test_a_repeat_short_of_min_sentences_is_drawn_again_and_the_answer_reaches_it(again):
    """Each sentence's first draw after the first repeats Paris; drawn again (seed 1) the model writes the next:
    with ``min_sentences=3`` the answer has three sentences, where it used to end after Paris."""
    r = answer(method(restating([PARIS, ROME, BERLIN], again, CITES), min_sentences=3))
    assert kept(r) == [PARIS, ROME, BERLIN]
    second = r["vtg"]["sentences"][1]["trials"][0]
    assert second["retries"] == [{"seed": 0, "raw": again}] and second["raw"] == ROME and second["sentence"] == ROME
    problems = r["vtg"]["problems"]
    assert problems["repeat_retries"] == 2 and problems["short_answer"] == 0
    # the fourth: End. offered (3 written), the repeat ends the answer as it always did, no retry
    last = r["vtg"]["sentences"][3]["trials"][0]
    assert last["outcome"] == "end" and last["retries"] == [] and r["vtg"]["end"] == "repeated"
    assert r["vtg"]["components"]["sentence"]["calls"] == 6  # 3 sentences, 2 retries, the end
    near = [n for s in r["vtg"]["sentences"] for t in s["trials"] for n in t["near_repeats"]]
    assert len(near) == problems["near_repeated_sentence"] == (3 if again == PARIS_AGAIN else 0)


def test_a_model_that_only_repeats_ends_short_after_the_retries_counted_and_traced():
    """The scripted model repeats Paris in other words whatever the seed: the retries are bounded (2 by default,
    then ``repeat_retries``), and the answer that ends short of ``min_sentences`` says so."""
    m = method(scripted([PARIS, PARIS_AGAIN, ROME], cites=CITES), min_sentences=3)
    assert m.manifest()["repeat_retries"] == S.REPEAT_RETRIES == 2
    r = answer(m)
    assert r["output"] == "Paris is the capital of France [1]." and r["vtg"]["end"] == "repeated"
    problems = r["vtg"]["problems"]
    assert problems["short_answer"] == 1 and problems["repeat_retries"] == 2 and problems["repeated_sentence"] == 1
    trial = r["vtg"]["sentences"][1]["trials"][0]
    assert trial["retries"] == [{"seed": 0, "raw": PARIS_AGAIN}, {"seed": 1, "raw": PARIS_AGAIN}] and trial["outcome"] == "end"
    assert [n["draw"] for n in trial["near_repeats"]] == [0, 1, 2] and problems["near_repeated_sentence"] == 3
    assert r["vtg"]["components"]["sentence"]["calls"] == 1 + 3
    summary = m.summarise([r])["vtg"]["problems"]
    assert summary["short_answer"] == 1 and summary["repeat_retries"] == 2

    five = answer(method(scripted([PARIS, PARIS_AGAIN, ROME], cites=CITES), min_sentences=3, repeat_retries=5, trials=2))
    assert [t["seed"] for t in five["vtg"]["sentences"][1]["trials"][0]["retries"]] == [0, 3, 6, 9, 12]  # seed + t + r * (trials + 1)
    assert five["vtg"]["components"]["sentence"]["calls"] == 1 + 6 and five["vtg"]["problems"]["short_answer"] == 1


def test_no_retry_where_end_is_offered_at_temperature_0_or_with_0_retries():
    plain = answer(method(scripted([PARIS, PARIS_AGAIN, ROME], cites=CITES)))  # min_sentences 1: End. offered after Paris
    assert plain["vtg"]["problems"]["repeat_retries"] == 0 and plain["vtg"]["problems"]["short_answer"] == 0
    greedy = answer(method(scripted([PARIS, PARIS_AGAIN, ROME], cites=CITES), min_sentences=3, temperature=0.0))
    assert greedy["vtg"]["problems"]["repeat_retries"] == 0 and greedy["vtg"]["problems"]["short_answer"] == 1  # the same completion again: not asked
    m = method(restating([PARIS, ROME, BERLIN], PARIS_AGAIN, CITES), min_sentences=3, repeat_retries=0, short_retries=0)
    before = answer(m)  # the rule before the options: the answer ends on the first repeat, the trace as it was
    assert kept(before) == [PARIS] and m.manifest()["repeat_retries"] == 0
    assert "repeat_retries" not in before["vtg"]["problems"] and "short_answer" not in before["vtg"]["problems"]
    assert all("retries" not in t for s in before["vtg"]["sentences"] for t in s["trials"])
    assert "short_answer" not in m.summarise([before])["vtg"]["problems"]


def test_the_trace_keeps_each_near_repeat_skipped():
    """A completion holding a near repeat of the second sentence, then a new one: the new one is kept, and the
    trial records what was skipped (text, overlap, the written sentence's index, which draw)."""
    r = answer(method(scripted([ROME, PARIS, PARIS_AGAIN, BERLIN], cites=CITES, rest=True)))
    trial = r["vtg"]["sentences"][2]["trials"][0]
    assert trial["sentence"] == BERLIN and trial["near_repeats"] == [{"sentence": PARIS_AGAIN, "repeats": 1, "overlap": 1.0, "draw": 0}]
    near = [n for s in r["vtg"]["sentences"] for t in s["trials"] for n in t["near_repeats"]]
    assert len(near) == r["vtg"]["problems"]["near_repeated_sentence"] == 1
    exact = answer(method(scripted([ROME, PARIS, PARIS_AGAIN, BERLIN], cites=CITES, rest=True), repeat_overlap=1.0))
    assert all("near_repeats" not in t for s in exact["vtg"]["sentences"] for t in s["trials"])  # the exact rule's trace


def test_a_resumed_folder_sets_the_retries_it_was_written_with():
    before = {"method": "vtg@1", "k": 5, "repeat_overlap": 0.8}  # written with the near-repeat rule, before retries
    assert VtgOptions.resumed_options({}, before) == {"repeat_overlap": 0.8, "repeat_retries": 0, "short_retries": 0, "strip_preamble": False, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert VtgOptions.resumed_options({}, {**before, "repeat_retries": 2})["repeat_retries"] == 2
    assert "repeat_retries" not in VtgOptions.resumed_options({"repeat_retries": 3}, before)  # given: as given
    m = method(scripted([]))
    assert m.upgrade_manifest(before) == {**before, "repeat_retries": 0, "short_retries": 0, "strip_preamble": False, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert m.upgrade_manifest({**before, "repeat_retries": 2})["repeat_retries"] == 2
    with pytest.raises(Exception, match="repeat_retries"):
        method(scripted([]), repeat_retries=-1)


def test_the_progress_line_says_a_repeat_is_drawn_again():
    m = method(restating([PARIS, ROME, BERLIN], PARIS_AGAIN, CITES), min_sentences=3)
    steps: list[str] = []
    m.report_step = steps.append
    answer(m)
    assert "sentence 2, trial 1, repeat drawn again (1 of 2)" in steps, steps
    assert steps.index("sentence 2, trial 1") < steps.index("sentence 2, trial 1, repeat drawn again (1 of 2)")


def test_min_sentences_above_max_sentences_is_refused_in_one_line():
    from vericite.errors import VericiteError

    with pytest.raises(VericiteError, match=r"min_sentences \(4\) is more than max_sentences \(3\)"):
        method(scripted([PARIS], cites=CITES), min_sentences=4, max_sentences=3)
    assert method(scripted([PARIS], cites=CITES), min_sentences=3, max_sentences=3).opts.min_sentences == 3
