"""VTG's ``drop_source_remarks`` and ``tidy_citations``: a sentence that only remarks on the sources ("This
information can be found in documents [1], [2], and [3].") is skipped as a repeat is (the next sentence of the
completion taken; none: the answer ends, ``source-remark``, drawn again short of ``min_sentences`` within
``short_retries``), counted and traced as written; a sentence that says something and cites is kept; a list of
markers is removed with its separators ("documents.", never "documents,, and."). Both off: the rules before the
options, trace included."""

from __future__ import annotations

from typing import Any

import pytest

from vericite.generate import vtg_remarks as R
from vericite.generate import vtg_steps as S
from vericite.generate.vtg_build import VtgOptions
from vericite.models.fake import FakeBackend, last_user_message

from tests.support.vtg import BERLIN, CITES, PARIS, REMARK, REMARK_MANGLED, ROME, SEE, answer_so_far, remarking, restating
from tests.support.vtg import answer_q1 as answer
from tests.support.vtg import keyword_vtg as method
from tests.support.vtg import kept_sentences as kept

#: what the embedded Qwen wrote in runs/vtg-trials-rr (level-0: 4 such sentences, level-2: 1)
QWEN_REMARKS = [
    "This information can be found in documents [1], [2], and [5].",
    REMARK_MANGLED,  # the same, copied back from the answer so far
    "Document [2] and Document [3] provide additional information about the release date of the iPhone.",
]
#: near misses: a claim that also names or cites the sources (the first four written by the embedded Qwen)
CLAIMS = [
    "Document [2] mentions that the first iPhone was released on June 29, 2007.",
    "Document [1] states that \"The Sound of Silence\" was originally titled \"The Sounds of Silence\".",
    "The plot summary provided in Document [4] confirms this information by stating that Richard Thompson is Harlan Thompson.",
    "In addition to the murders mentioned in the search results, there are several other instances of violence in the movie.",
    "According to Document [1], the tower is 300 m tall.",
    "Document [1] provides information about the tower, which is 300 m tall.",
    "The documents provide information about how the tower was built.",
    "This information can be found in the 2010 census of Paris.",
    "It is found in France [1].",
    "See the Eiffel Tower in Paris [2].",
]


@pytest.mark.parametrize("sentence", [*QWEN_REMARKS, REMARK, SEE, "Please refer to the documents above for more details.", "This is stated in the search results [4].", "Sources: see Document [1] and Document [2]."])
def test_a_sentence_that_only_remarks_on_the_sources_is_one(sentence):
    assert R.is_source_remark(sentence) is ("Sources:" not in sentence)  # "Sources: ..." is no form of the list


@pytest.mark.parametrize("sentence", CLAIMS)
def test_a_sentence_that_says_something_is_no_remark_whatever_it_cites(sentence):
    assert not R.is_source_remark(sentence)


@pytest.mark.parametrize(
    ("sentence", "tidy"),
    [
        (REMARK, "This information can be found in documents."),
        ("The tower is 300 m tall, according to Document [1], [2] and [3].", "The tower is 300 m tall, according to Document."),
        ("Paris [1], Rome [2], and Berlin [3] are capitals.", "Paris, Rome, and Berlin are capitals."),  # the commas are the sentence's
        ("Paris is the capital [1][2]; Rome [3] is Italy's.", "Paris is the capital; Rome is Italy's."),
        ("Paris is the capital [1, 2] of France [3-4].", "Paris is the capital of France."),
        ("Paris is the capital ([1]) of France (see [2]).", "Paris is the capital of France."),
        ("Paris is the capital [1] & [2].", "Paris is the capital."),
        ("Paris is the capital [3", "Paris is the capital"),  # no closing bracket: ALCE's way
        ("The function f() returns None (see below) [1].", "The function f() returns None (see below)."),  # brackets of its own stay
    ],
)
def test_a_list_of_markers_leaves_no_punctuation_behind(sentence, tidy):
    assert R.without_citations(sentence) == tidy
    assert ",," not in tidy and not tidy.endswith(", and.")


def test_read_sentence_skips_remarks_only_when_asked_and_tidies_only_when_asked():
    assert S.read_sentence(REMARK, []) == (REMARK_MANGLED, "")  # the rules before the options
    assert S.read_sentence(REMARK, [], tidy=True) == ("This information can be found in documents.", "")
    seen: list[str] = []
    assert S.read_sentence(f"{REMARK} {ROME}", [PARIS], remarks=seen) == (ROME, "") and seen == [REMARK]  # as written
    seen = []
    assert S.read_sentence(f"{REMARK} {SEE}", [PARIS], remarks=seen) == (None, "source-remark") and seen == [REMARK, SEE]
    seen = []  # a repeat as well: the answer ends on repeats, as it did
    assert S.read_sentence(f"{REMARK} {PARIS}", [PARIS], remarks=seen) == (None, "repeated") and seen == [REMARK]
    cut: list[tuple[str, str]] = []  # a preamble, then a remark: skipped, no preamble recorded
    assert S.read_sentence(f"According to the search results, this information can be found in Document [1]. {ROME}", [], preambles=cut, remarks=[]) == (ROME, "") and cut == []


def test_a_new_run_drops_the_remarks_traces_them_as_written_and_ends_on_a_completion_of_them():
    m = method(remarking())
    assert m.manifest()["drop_source_remarks"] is S.DROP_SOURCE_REMARKS is True and m.manifest()["tidy_citations"] is S.TIDY_CITATIONS is True
    r = answer(m)
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    second, end = r["vtg"]["sentences"][1]["trials"][0], r["vtg"]["sentences"][2]["trials"][0]
    assert second["source_remarks"] == [{"sentence": REMARK, "draw": 0}] and second["sentence"] == ROME
    assert end["outcome"] == "end" and end["source_remarks"] == [{"sentence": SEE, "draw": 0}] and r["vtg"]["end"] == "source-remark"
    assert r["vtg"]["sentences"][0]["trials"][0]["source_remarks"] == []  # Paris came first: the remark after it never read
    assert r["vtg"]["problems"]["source_remark_dropped"] == 2 and r["vtg"]["problems"]["source_remark_retries"] == 0
    assert m.summarise([r])["vtg"]["problems"]["source_remark_dropped"] == 2


def test_without_the_options_the_remarks_are_kept_as_before_trace_included():
    m = method(remarking(), drop_source_remarks=False, tidy_citations=False)
    r = answer(m)
    assert r["output"] == f"Paris is the capital of France [1]. {REMARK_MANGLED[:-1]} [1]. Rome is the capital of Italy [3]. For more information, see Document [1]."
    problems = r["vtg"]["problems"]
    assert not {"source_remark_dropped", "source_remark_retries"} & set(problems) and "source_remark_dropped" not in m.summarise([r])["vtg"]["problems"]
    assert all("source_remarks" not in t for s in r["vtg"]["sentences"] for t in s["trials"])
    assert m.manifest()["drop_source_remarks"] is False and m.manifest()["tidy_citations"] is False
    tidy = answer(method(remarking(), drop_source_remarks=False))  # tidied, not dropped
    assert "This information can be found in documents [1]." in tidy["output"] and ",," not in tidy["output"]


def test_a_completion_of_remarks_short_of_min_sentences_is_drawn_again_within_short_retries():
    """Each sentence's first draw after the first (seed 0) is a remark; drawn again (seed 1) the next sentence."""
    m = method(restating([PARIS, ROME, BERLIN], REMARK, CITES), min_sentences=3)
    steps: list[str] = []
    m.report_step = steps.append
    r = answer(m)
    assert kept(r) == [PARIS, ROME, BERLIN] and r["vtg"]["end"] == "source-remark"  # End. offered: the last remark ends it
    second = r["vtg"]["sentences"][1]["trials"][0]
    assert second["short_retries"] == [{"why": "source-remark", "seed": 0, "raw": REMARK}] and second["source_remarks"] == [{"sentence": REMARK, "draw": 0}]
    problems = r["vtg"]["problems"]
    assert problems["source_remark_retries"] == 2 and problems["source_remark_dropped"] == 3 and problems["short_answer"] == 0
    assert problems["prompt_echo_retries"] == problems["empty_retries"] == problems["end_marker_retries"] == 0
    assert "sentence 2, trial 1, source remark drawn again (1 of 2)" in steps, steps


def only_remarks() -> FakeBackend:
    """Paris, then nothing but :data:`REMARK`."""

    def reply(messages: Any, params: Any) -> str:
        prompt = last_user_message(messages)
        if "Sentence with citation:" in prompt:
            return prompt.rsplit("Sentence: ", 1)[1].split("\n", 1)[0] + " [1]"
        return REMARK if answer_so_far(prompt) else PARIS

    return FakeBackend("vtg-only-remarks", replies=reply)


def test_a_model_that_only_remarks_ends_short_after_the_retries_and_without_short_retries_at_once():
    r = answer(method(only_remarks(), min_sentences=3))
    assert kept(r) == [PARIS] and r["vtg"]["problems"]["source_remark_retries"] == 2 and r["vtg"]["problems"]["short_answer"] == 1
    assert [x["draw"] for x in r["vtg"]["sentences"][1]["trials"][0]["source_remarks"]] == [0, 1, 2]
    once = answer(method(only_remarks(), min_sentences=3, short_retries=0, repeat_retries=0))
    assert kept(once) == [PARIS] and once["vtg"]["end"] == "source-remark" and once["vtg"]["problems"]["source_remark_dropped"] == 1
    assert "source_remark_retries" not in once["vtg"]["problems"]  # counted only where it can happen


def test_a_resumed_folder_drops_and_tidies_as_it_was_written():
    before = {"method": "vtg@1", "k": 5, "repeat_overlap": 0.8, "repeat_retries": 2, "short_retries": 2, "strip_preamble": True}
    for key in ("drop_source_remarks", "tidy_citations"):
        assert VtgOptions.resumed_options({}, before)[key] is False
        assert VtgOptions.resumed_options({}, {**before, key: True})[key] is True
        assert key not in VtgOptions.resumed_options({key: True}, before)  # given: as given
        assert key in VtgOptions.recorded_when_set
        with pytest.raises(Exception, match=key):
            method(remarking(), **{key: "sometimes"})
    m = method(remarking())
    assert m.upgrade_manifest(before) == {**before, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert m.upgrade_manifest({**before, "drop_source_remarks": True})["drop_source_remarks"] is True
