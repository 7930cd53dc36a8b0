"""VTG's ``strip_preamble``: a sentence that opens with a phrase naming the sources ("Based on the provided search
results,") loses it, its first letter capitalised, the sentence as written kept in the trace; a fixed list of
phrases, nothing else cut; ``strip_preamble=False`` is the rule before the option, trace included."""

from __future__ import annotations

import pytest

from vericite.fakes.judges import KeywordJudge
from vericite.generate import vtg_steps as S
from vericite.generate.vtg import build
from vericite.generate.vtg_build import VtgOptions
from vericite.registry import BuildContext
from vericite.types import Sample

from tests.support.vtg import DOCS, QUESTION, SAID_PARIS, saying

PARIS, ROME = "Paris is the capital of France.", "Rome is the capital of Italy."


@pytest.mark.parametrize(
    ("sentence", "rest", "cut"),
    [
        (SAID_PARIS, PARIS, "Based on the provided search results,"),
        ("According to the provided search results, there are 29 states in India.", "There are 29 states in India.", "According to the provided search results,"),
        ("According to the information provided in Document, Virginia has 30 units.", "Virginia has 30 units.", "According to the information provided in Document,"),
        ('According to the document titled "Thelma & Louise", the man was Ed Exley.', "The man was Ed Exley.", 'According to the document titled "Thelma & Louise",'),
        ("As mentioned in the documents, iPhone sales rose in 2010.", "iPhone sales rose in 2010.", "As mentioned in the documents,"),
        ("According to the 2010 census, Paris has 2 million people.", "According to the 2010 census, Paris has 2 million people.", ""),  # no source named
        ("According to the documents, yes.", "According to the documents, yes.", ""),  # too little left
        ("Paris, based on the documents, is the capital.", "Paris, based on the documents, is the capital.", ""),  # not leading
    ],
)
def test_strip_preamble_cuts_a_leading_phrase_that_names_the_sources(sentence, rest, cut):
    assert S.strip_preamble(sentence) == (rest, cut)


def test_read_sentence_cuts_only_when_asked_and_reads_what_is_left():
    assert S.read_sentence(SAID_PARIS, []) == (SAID_PARIS, "")  # the rule before the option
    cut: list[tuple[str, str]] = []
    assert S.read_sentence(SAID_PARIS, [], preambles=cut) == (PARIS, "") and cut == [(SAID_PARIS, "Based on the provided search results,")]
    cut = []  # what is left is a repeat: skipped, nothing recorded, the next sentence taken
    assert S.read_sentence(f"{SAID_PARIS} {ROME}", [PARIS], preambles=cut) == (ROME, "") and cut == []


def method(**opts):
    return build("", ctx=BuildContext(), backend=saying(), judge=KeywordJudge(), k=4, docs_per_query=1, trials=0, **opts)


def test_a_new_run_cuts_the_preambles_and_traces_the_sentences_as_written():
    m = method()
    assert m.manifest()["strip_preamble"] is S.STRIP_PREAMBLE is True
    r = m.answer(Sample("q1", QUESTION, passages=list(DOCS)))
    assert r["output"] == "Paris is the capital of France [1]. The capital of Italy is Rome [3]."
    first, second = (s["trials"][0] for s in r["vtg"]["sentences"][:2])
    assert first["preamble"] == {"original": SAID_PARIS, "stripped": "Based on the provided search results,"} and first["raw"] == SAID_PARIS
    assert second["preamble"] == {"original": "According to the search results, the capital of Italy is Rome.", "stripped": "According to the search results,"}
    assert all(s["verified"] for s in r["vtg"]["sentences"][:2])  # the keyword judge: every word of the claim in the document
    assert r["vtg"]["sentences"][2]["trials"][0]["preamble"] is None
    assert r["vtg"]["problems"]["preamble_stripped"] == 2 and m.summarise([r])["vtg"]["problems"]["preamble_stripped"] == 2


def test_without_the_option_the_sentences_and_the_trace_are_as_before():
    m = method(strip_preamble=False, strip_source_leads=False)
    r = m.answer(Sample("q1", QUESTION, passages=list(DOCS)))
    assert r["output"].startswith("Based on the provided search results, Paris is the capital of France [1].")
    assert "preamble_stripped" not in r["vtg"]["problems"] and "preamble_stripped" not in m.summarise([r])["vtg"]["problems"]
    assert all("preamble" not in t for s in r["vtg"]["sentences"] for t in s["trials"]) and m.manifest()["strip_preamble"] is False


def test_a_resumed_folder_cuts_preambles_as_it_was_written():
    before = {"method": "vtg@1", "k": 5, "repeat_overlap": 0.8, "repeat_retries": 2, "short_retries": 2}
    assert VtgOptions.resumed_options({}, before)["strip_preamble"] is False
    assert VtgOptions.resumed_options({}, {**before, "strip_preamble": True})["strip_preamble"] is True
    assert "strip_preamble" not in VtgOptions.resumed_options({"strip_preamble": True}, before)  # given: as given
    m = method()
    assert m.upgrade_manifest(before) == {**before, "strip_preamble": False, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert m.upgrade_manifest({**before, "strip_preamble": True})["strip_preamble"] is True
    assert "strip_preamble" in VtgOptions.recorded_when_set
