"""VTG's ``strip_source_leads``: a sentence that opens by naming its source with its markers ("Document [2] mentions
that", "According to document [3],", "As stated in [1],", "Documents [1] and [2] state that") loses that lead, read
on the sentence as written, the rest's markers kept (then removed as VTG removes a sentence's citations) and its
first letter capitalised; traced and counted as a preamble. A sentence that only mentions documents, or says
"according to" within itself, stays as it is. ``strip_source_leads=False`` (a folder written before the option) is
the rule before it: "Document mentions that the Eiffel Tower is 330 m tall." """

from __future__ import annotations

import pytest

from vericite.generate import vtg_remarks as R
from vericite.generate import vtg_steps as S
from vericite.generate.vtg_build import VtgOptions

from tests.support.vtg import answer_q1 as answer
from tests.support.vtg import keyword_vtg as method
from tests.support.vtg import PARIS_LED, ROME_LED, leading, two_capitals

EIFFEL = "Document [2] mentions that the Eiffel Tower is 330 m tall [2]."


@pytest.mark.parametrize(
    ("sentence", "rest", "lead"),
    [
        (EIFFEL, "The Eiffel Tower is 330 m tall [2].", "Document [2] mentions that"),
        ("According to document [3], the first iPhone was released on June 29, 2007.", "The first iPhone was released on June 29, 2007.", "According to document [3],"),
        ("As stated in [1], the tower was completed in 1889 [1].", "The tower was completed in 1889 [1].", "As stated in [1],"),
        ("Documents [1] and [2] state that the tower is 330 m tall.", "The tower is 330 m tall.", "Documents [1] and [2] state that"),
        ("Document [1] and Document [4] also note that it was built for the 1889 World's Fair.", "It was built for the 1889 World's Fair.", "Document [1] and Document [4] also note that"),
        ("The passages [1], [3] suggest that iPhone sales rose in 2010 [3].", "iPhone sales rose in 2010 [3].", "The passages [1], [3] suggest that"),  # "iPhone" keeps its case
    ],
)
def test_a_lead_that_names_the_source_by_its_markers_is_cut_the_rest_kept_with_its_markers(sentence, rest, lead):
    assert R.strip_source_lead(sentence) == (rest, lead)


@pytest.mark.parametrize(
    "sentence",
    [
        "Document management systems store files [1].",  # "Document" is the sentence's subject, no marker
        "The tower, according to Document [1], is 330 m tall.",  # "according to" within the sentence
        "The Eiffel Tower is 330 m tall, according to document [2].",
        "According to the 2010 census [1], Paris has 2 million people.",  # the census is no document named by a marker
        "Document [2] mentions the tower's height of 330 m.",  # no "that": what it mentions is the sentence's object
        "Documents show that the tower is 330 m tall.",  # no marker
        "Document [2] mentions that it is.",  # fewer than three words would be left
    ],
)
def test_a_sentence_without_such_a_lead_stays_as_it_is(sentence):
    assert R.strip_source_lead(sentence) == (sentence, "")


def test_read_sentence_cuts_the_lead_only_when_asked():
    assert S.read_sentence(EIFFEL, [], tidy=True) == ("Document mentions that the Eiffel Tower is 330 m tall.", "")  # the rule before
    leads: list[tuple[str, str]] = []
    assert S.read_sentence(EIFFEL, [], tidy=True, leads=leads) == ("The Eiffel Tower is 330 m tall.", "") and leads == [(EIFFEL, "Document [2] mentions that")]
    leads, cut = [], []  # a preamble strip_preamble cuts is cut (and traced) as it was
    said = "According to the search results [3], the capital of Italy is Rome."
    assert S.read_sentence(said, [], preambles=cut, leads=leads) == ("The capital of Italy is Rome.", "") and leads == [] and cut == [("According to the search results, the capital of Italy is Rome.", "According to the search results,")]
    leads = []  # what is left is a repeat: skipped, nothing recorded
    assert S.read_sentence(f"{EIFFEL} Paris is in France [1].", ["The Eiffel Tower is 330 m tall."], leads=leads) == ("Paris is in France.", "") and leads == []
    leads = []
    unchanged = "Document management systems store files [1]."
    assert S.read_sentence(unchanged, [], tidy=True, leads=leads) == ("Document management systems store files.", "") and leads == []


def test_a_new_run_cuts_the_leads_and_traces_them_as_written():
    m = method(leading())
    assert m.manifest()["strip_source_leads"] is S.STRIP_SOURCE_LEADS is True
    r = answer(m)
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    first, second = (s["trials"][0] for s in r["vtg"]["sentences"][:2])
    assert first["preamble"] == {"original": PARIS_LED, "stripped": "Document [1] mentions that"} and first["raw"] == PARIS_LED
    assert second["preamble"] == {"original": ROME_LED, "stripped": "As stated in [3],"}
    assert r["vtg"]["problems"]["preamble_stripped"] == 2 and m.summarise([r])["vtg"]["problems"]["preamble_stripped"] == 2
    alone = answer(method(leading(), strip_preamble=False))  # the leads are cut without strip_preamble too
    assert alone["output"] == r["output"] and alone["vtg"]["problems"]["preamble_stripped"] == 2


def test_without_the_option_the_sentences_are_as_before():
    r = answer(method(leading(), strip_source_leads=False))
    assert r["output"].startswith("Document mentions that Paris is the capital of France [1].")
    assert r["vtg"]["problems"]["preamble_stripped"] == 0 and r["vtg"]["sentences"][0]["trials"][0]["preamble"] is None
    before = answer(method(leading(), strip_preamble=False, strip_source_leads=False))
    assert "preamble_stripped" not in before["vtg"]["problems"] and all("preamble" not in t for s in before["vtg"]["sentences"] for t in s["trials"])


def test_a_resumed_folder_cuts_leads_as_it_was_written():
    before = {"method": "vtg@1", "k": 5, "repeat_overlap": 0.8, "repeat_retries": 2, "short_retries": 2, "strip_preamble": True, "drop_source_remarks": True, "tidy_citations": True}
    assert VtgOptions.resumed_options({}, before)["strip_source_leads"] is False  # strip_preamble: true, recorded before the leads
    assert VtgOptions.resumed_options({}, {**before, "strip_source_leads": True})["strip_source_leads"] is True
    assert "strip_source_leads" not in VtgOptions.resumed_options({"strip_source_leads": True}, before)  # given: as given
    m = method(leading())
    assert m.upgrade_manifest(before) == {**before, "strip_source_leads": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert m.upgrade_manifest({**before, "strip_source_leads": True})["strip_source_leads"] is True
    assert "strip_source_leads" in VtgOptions.recorded_when_set
    with pytest.raises(Exception, match="strip_source_leads"):
        method(leading(), strip_source_leads="sometimes")


TOWER = "Based on the search results, Document [2] mentions that the tower is 330 m tall [2]."
BOTH_PARIS = "According to the search results [1], Document [1] mentions that Paris is the capital of France [1]."


@pytest.mark.parametrize("tidy", [False, True])
def test_a_preamble_then_a_lead_are_both_cut(tidy):
    """With both options on, the preamble ("Based on the search results,") is cut and then the lead after it
    ("Document [2] mentions that"): traced once, as a lead is, with the whole phrase as written."""
    cut, leads = [], []
    assert S.read_sentence(TOWER, [], preambles=cut, leads=leads, tidy=tidy) == ("The tower is 330 m tall.", "")
    assert cut == [] and leads == [(TOWER, "Based on the search results, Document [2] mentions that")]
    cut, leads = [], []  # the preamble's own markers, as written
    assert S.read_sentence(BOTH_PARIS, [], preambles=cut, leads=leads, tidy=tidy) == ("Paris is the capital of France.", "")
    assert cut == [] and leads == [(BOTH_PARIS, "According to the search results [1], Document [1] mentions that")]
    cut = []  # strip_source_leads off (a folder written before it): the preamble only, as before
    assert S.read_sentence(TOWER, [], preambles=cut, tidy=tidy) == ("Document mentions that the tower is 330 m tall.", "")
    assert cut == [("Based on the search results, Document mentions that the tower is 330 m tall.", "Based on the search results,")]
    cut, leads = [], []  # too little left after the lead: the preamble only
    short = "Based on the search results, Document [2] mentions that it is."
    assert S.read_sentence(short, [], preambles=cut, leads=leads, tidy=tidy) == ("Document mentions that it is.", "") and leads == [] and len(cut) == 1


def test_a_new_run_cuts_a_preamble_and_the_lead_after_it():
    m = method(two_capitals("vtg-both", BOTH_PARIS, ROME_LED, "End."))
    r = answer(m)
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    first = r["vtg"]["sentences"][0]["trials"][0]
    assert first["preamble"] == {"original": BOTH_PARIS, "stripped": "According to the search results [1], Document [1] mentions that"}
    assert r["vtg"]["problems"]["preamble_stripped"] == 2
    before = answer(method(two_capitals("vtg-both", BOTH_PARIS, ROME_LED, "End."), strip_source_leads=False))
    assert before["output"].startswith("Document mentions that Paris is the capital of France [1].")
