"""VTG's ``strip_list_markers``: a completion written as a list (numbered or bulleted, markdown emphasis) is read
as its items, not cut at its numbers: a bare "2." and a lead-in ("The types include:") are skipped, markers cut,
each change traced as written and counted. Prose reads as before. Off: the rule before the option (the embedded
Qwen's "2." kept as a sentence), trace included; a folder written before the option resumes without it."""

from __future__ import annotations

from typing import Any

import pytest

from vericite.attribution.alce import sent_tokenize
from vericite.generate import vtg_steps as S
from vericite.generate.vtg_build import BEFORE_OPTIONS, VtgOptions
from vericite.generate.vtg_lists import list_sentences

from tests.support.vtg import PARIS, ROME, two_capitals
from tests.support.vtg import answer_q1 as answer
from tests.support.vtg import keyword_vtg as method

#: completions of the embedded Qwen (runs/vtg-eli5-long, ELI5 question 6, "What are the different types of guns
#: used for?"), and the sentence each should give
QWEN = [
    ("There are several types of guns used for different purposes, including:\n\n1. **Pistols**: Used for self-defense and "
     "various types of law enforcement.\n2. **Rifles**: Mainly used for military purposes.", "Pistols: Used for self-defense and various types of law enforcement."),
    ("2. Rifles: These are larger firearms with multiple barrels and trigger.\n\n3. Knives: These are small, sharp weapons "
     "used for cutting or slicing food.", "Rifles: These are larger firearms with multiple barrels and trigger."),
    ("3. Rifles: These are long guns with multiple barrels and a trigger mechanism. 4. Knives: These are small, handheld "
     "weapons used for cutting or slicing food. 5. Gatling Guns: These are large guns.", "Rifles: These are long guns with multiple barrels and a trigger mechanism."),
    ("pistols; 3. Rifles: These are larger firearms with multiple barrels and triggers, typically used for hunting and "
     "military purposes. 4. Knives: These are small weapons.", "Rifles: These are larger firearms with multiple barrels and triggers, typically used for hunting and military purposes."),
    (" 2. Rifles: These are firearms with multiple barrels and trigger mechanisms.\n\n 3. Knives: These are small weapons.",
     "Rifles: These are firearms with multiple barrels and trigger mechanisms."),
]
#: what the rule before the option read from the same completions (Punkt on the joined text)
BEFORE = ["There are several types of guns used for different purposes, including: 1.", "2.", "3.", "pistols; 3.", "2."]

PROSE = [
    "Paris is the capital of France [1]. It has about 2 million people.",
    "The bridge opened in 1932.\nIt took six years to build.",
    "Scores were 3, 4 and 5. The best was 5.",
    "Use a 9 mm round - not a .22 - for this. Done.",
]


@pytest.mark.parametrize(("raw", "first"), QWEN)
def test_qwens_lists_give_their_first_item(raw, first):
    assert S.read_sentence(raw, [], lists=[])[0] == first


@pytest.mark.parametrize(("raw", "before"), list(zip([r for r, _ in QWEN], BEFORE)))
def test_without_the_option_the_numbers_are_sentences_as_before(raw, before):
    assert S.read_sentence(raw, []) == (before, "")


@pytest.mark.parametrize("text", PROSE)
def test_prose_reads_as_before(text):
    got, changed = list_sentences(text)
    assert got == sent_tokenize(text.replace("\n", " ").strip()) and not any(changed)
    assert S.read_sentence(text, [], lists=[]) == S.read_sentence(text, [])


def test_what_was_cut_or_skipped_is_returned_as_written_with_the_sentence_it_came_before():
    got, changed = list_sentences("The types include:\n- **Pistols** are small.\n- Rifles are long.\n3.")
    assert got == ["Pistols are small.", "Rifles are long."]
    assert changed == [
        [{"written": "The types include:", "read": ""}, {"written": "- **Pistols** are small.", "read": "Pistols are small."}],
        [{"written": "- Rifles are long.", "read": "Rifles are long."}],
        [{"written": "3.", "read": ""}],
    ]
    assert list_sentences("Only a lead-in:") == ([], [[{"written": "Only a lead-in:", "read": ""}]])
    assert list_sentences(PROSE[0]) == (sent_tokenize(PROSE[0]), [[], [], []])


def test_the_trace_holds_what_was_read_up_to_the_sentence_taken():
    raw = QWEN[0][0]
    seen: list[dict[str, str]] = []
    assert S.read_sentence(raw, [], lists=seen)[0] == QWEN[0][1]
    assert [x["written"] for x in seen] == ["There are several types of guns used for different purposes, including:", "1.", "**Pistols**: Used for self-defense and various types of law enforcement."]
    seen = []  # the first item written already: read on to the second
    assert S.read_sentence(raw, [QWEN[0][1]], lists=seen)[0] == "Rifles: Mainly used for military purposes."
    assert [x["read"] for x in seen] == ["", "", QWEN[0][1], "", "Rifles: Mainly used for military purposes."]
    seen = []  # nothing new: everything read
    assert S.read_sentence("1. **Paris** is the capital of France.\n2.", [PARIS], lists=seen) == (None, "repeated") and seen[-1] == {"written": "2.", "read": ""}


def listing() -> Any:
    """A model that answers with a list: a lead-in and Paris as item 1, then Rome as item 2, then End."""
    return two_capitals("vtg-listing", f"The capitals include:\n\n1. **{PARIS[:-1]}**.\n2. {ROME}", f"2. {ROME}", "End.")


def test_a_new_run_reads_the_list_as_items_traces_and_counts_the_cuts():
    m = method(listing())
    assert m.manifest()["strip_list_markers"] is S.STRIP_LIST_MARKERS is True
    r = answer(m)
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    first, second = (s["trials"][0] for s in r["vtg"]["sentences"][:2])
    assert first["list_markers"][:2] == [{"written": "The capitals include:", "read": "", "draw": 0}, {"written": "1.", "read": "", "draw": 0}]
    assert second["list_markers"] == [{"written": "2.", "read": "", "draw": 0}] and second["sentence"] == ROME
    assert r["vtg"]["problems"]["list_markers_cut"] == len(first["list_markers"]) + 1
    assert m.summarise([r])["vtg"]["problems"]["list_markers_cut"] == r["vtg"]["problems"]["list_markers_cut"]


def test_without_the_option_the_list_is_read_as_before_trace_included():
    m = method(listing(), strip_list_markers=False)
    r = answer(m)
    assert r["vtg"]["sentences"][0]["trials"][0]["sentence"] == "The capitals include: 1."
    assert "list_markers_cut" not in r["vtg"]["problems"] and all("list_markers" not in t for s in r["vtg"]["sentences"] for t in s["trials"])
    assert m.manifest()["strip_list_markers"] is False


def test_a_resumed_folder_reads_lists_as_it_was_written():
    before = {"method": "vtg@1", "k": 5, "tidy_citations": True}
    assert VtgOptions.resumed_options({}, before)["strip_list_markers"] is False
    assert VtgOptions.resumed_options({}, {**before, "strip_list_markers": True})["strip_list_markers"] is True
    assert "strip_list_markers" not in VtgOptions.resumed_options({"strip_list_markers": True}, before)
    assert "strip_list_markers" in VtgOptions.recorded_when_set and BEFORE_OPTIONS["strip_list_markers"] is False
    assert method(listing()).upgrade_manifest(before)["strip_list_markers"] is False
    with pytest.raises(Exception, match="strip_list_markers"):
        method(listing(), strip_list_markers="sometimes")


def test_every_option_added_after_the_first_runs_resumes_with_its_value_before_it():
    """One table (BEFORE_OPTIONS) for the resume and the manifest's upgrade; a recorded value of the wrong kind is
    left out (the option's default), never passed on."""
    got = VtgOptions.resumed_options({}, {"method": "vtg@1"})
    assert got == BEFORE_OPTIONS and set(BEFORE_OPTIONS) <= set(VtgOptions.recorded_when_set)
    assert all(type(got[k]) is type(v) for k, v in BEFORE_OPTIONS.items())
    odd = VtgOptions.resumed_options({}, {"method": "vtg@1", "repeat_overlap": True, "strip_preamble": 1, "simplifier_strategy": "fastest", "repeat_retries": 2.0})
    assert not {"repeat_overlap", "strip_preamble", "simplifier_strategy"} & set(odd) and odd["repeat_retries"] == 2 and type(odd["repeat_retries"]) is int
    assert VtgOptions.resumed_options({}, {"method": "vtg@2"}) == {}


def test_the_report_counts_the_list_sentences_in_a_column_of_their_own():
    from vericite.report.vtg_trace import VtgTraces, summary_markdown

    traces = VtgTraces()
    r = answer(method(listing()))
    traces.add(r)
    assert traces.summary()["lists_cut"] == r["vtg"]["problems"]["list_markers_cut"] > 0
    head, _, row = summary_markdown([("lists", traces)]).splitlines()[:3]
    column = head.split(" | ").index("list sentences cut")
    assert row.split(" | ")[column] == str(r["vtg"]["problems"]["list_markers_cut"])
    assert "fails most" in head and "nothing" in row  # not a failure
