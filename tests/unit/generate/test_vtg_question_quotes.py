"""VTG's ``question_quotes``: a sentence that quotes the question ('The answer to the question "Why ...?" is
that ...', which Punkt cuts after the quoted question mark, as ALCE's evaluation does) is read as a prompt echo:
drawn again short of ``min_sentences`` (``short_retries``), counted and traced as one; ``question_quotes=false``
(what a folder written before the option resumes with) keeps it as a sentence."""

from __future__ import annotations

from typing import Any

import pytest

from vericite.generate import vtg_steps as S
from vericite.generate.vtg_build import VtgOptions
from vericite.models.fake import FakeBackend
from vericite.types import Sample

from tests.support.vtg import BERLIN, CITES, DOCS, PARIS, ROME, restating, scripted
from tests.support.vtg import keyword_vtg as method

ASKED = "Which European cities are national capitals?"
#: the first draw's completion (seed 0): the question quoted, then the claim
QUOTING = f'The answer to the question "{ASKED}" is that Paris is the capital of France.'


@pytest.mark.parametrize(
    "unit",
    [
        'The answer to the question "Which European cities are national capitals?"',
        "The answer to the question \u201cwhich European cities are national capitals?\u201d",  # curly, lower-cased
        'To answer "Which European cities are capitals", Paris is one.',  # most of its words
        'The answer to the question "Which European cities are national capitals?',  # Punkt cut inside the quote
    ],
)
def test_a_unit_quoting_the_question_is_told(unit):
    assert S.quotes_question(unit, ASKED)


@pytest.mark.parametrize(
    "unit",
    [
        'The phrase "national capitals" names them.',  # two content words: too few to restate it
        'The film "Gone with the Wind" was made in Atlanta.',  # a quote, not of the question
        "Which European cities are national capitals is a question of law.",  # the words, unquoted
        'They asked "which rivers cross national borders in Europe?"',  # under 0.8 of its words in the question
    ],
)
def test_other_units_are_not(unit):
    assert not S.quotes_question(unit, ASKED)


def test_read_sentence_reads_it_as_a_prompt_echo_only_when_given_the_question():
    assert S.read_sentence(QUOTING, [], question=ASKED) == (None, "prompt-echo")
    sentence, why = S.read_sentence(QUOTING, [])  # the rule before the option: the first unit Punkt gives
    assert why == "" and sentence is not None and sentence.startswith("The answer to the question")
    assert S.read_sentence(PARIS, [], question=ASKED) == (PARIS, "")


def quoting_first() -> FakeBackend:
    """:func:`scripted`'s model, but the first sentence drawn with seed 0 quotes the question."""
    return restating([PARIS, ROME, BERLIN], QUOTING, CITES, first=True)


def answer(m: Any) -> Any:
    return m.answer(Sample("q1", ASKED, passages=list(DOCS)))


def test_short_of_min_sentences_a_quoted_question_is_drawn_again_counted_and_traced():
    m = method(quoting_first(), min_sentences=3)
    assert m.manifest()["question_quotes"] is S.QUESTION_QUOTES is True
    r = answer(m)
    first = r["vtg"]["sentences"][0]["trials"][0]
    assert first["short_retries"] == [{"why": "prompt-echo", "seed": 0, "raw": QUOTING}] and first["sentence"] == PARIS
    assert r["vtg"]["problems"]["prompt_echo_retries"] == 1 and r["vtg"]["problems"]["short_answer"] == 0
    assert r["output"].startswith("Paris is the capital of France") and "question" not in r["output"]


def test_question_quotes_false_keeps_the_quoting_sentence_as_before():
    m = method(quoting_first(), min_sentences=3, question_quotes=False)
    assert m.manifest()["question_quotes"] is False
    r = answer(m)
    assert r["output"].startswith("The answer to the question") and r["vtg"]["sentences"][0]["trials"][0]["short_retries"] == []


def test_a_folder_written_before_the_option_resumes_without_it():
    before = {"method": "vtg@1", "k": 5, "strip_list_markers": True}
    assert VtgOptions.resumed_options({}, before)["question_quotes"] is False
    assert VtgOptions.resumed_options({}, {**before, "question_quotes": True})["question_quotes"] is True
    assert "question_quotes" not in VtgOptions.resumed_options({"question_quotes": True}, before)
    assert method(scripted([]), question_quotes=True).upgrade_manifest(before)["question_quotes"] is False
