"""VTG's near-repeat rule (``repeat_overlap``, ``vtg_steps.repeat_of``): a sentence whose content words one
written sentence holds at the threshold or more is skipped as a repeat; 1.0 is the exact rule it replaces. The
sentences are the embedded Qwen's, from runs/vtg-ablation-long/level-0 (vtg-sentence@3, min_sentences=3)."""

from __future__ import annotations

import pytest

from vericite.errors import VericiteError
from vericite.fakes.judges import KeywordJudge
from vericite.generate import vtg_steps as S
from vericite.generate.vtg import build
from vericite.generate.vtg_build import VtgOptions
from vericite.registry import BuildContext
from vericite.types import Sample

from tests.support.vtg import DOCS, QUESTION, scripted

SIMON = 'The original artist of "The Sound of Silence" is Paul Simon, who wrote the song over a period of several months in 1963 and 1964.'
SIMON_AGAIN = 'Paul Simon\'s original song "The Sound of Silence" was written over a period of several months in 1963 and 1964.'
GARFUNKEL = SIMON_AGAIN[:-1] + ", with the help of his fellow bandmate Art Garfunkel."
PHELPS = "Based on the provided search results, James and Oliver Phelps played the Weasley brothers in Harry Potter."
PHELPS_AGAIN = "James and Oliver Phelps played the Weasley brothers in Harry Potter."
PHELPS_BORN = "James and Oliver Phelps were born on February 25, 1986, in Sutton Coldfield, Birmingham."
MESSI = "The highest goals scored in world football is attributed to Lionel Messi, who has been named the best soccer player in World Cup history both by The Times and FourFourTwo."
MESSI_AGAIN = "Lionel Messi has been named the best soccer player in World Cup history both by The Times and FourFourTwo."


def test_content_tokens_leave_out_case_punctuation_citations_and_stopwords():
    assert S.content_tokens('Paul Simon\'s "The Sound of Silence" [1][2], 1963.') == {"paul", "simon", "sound", "silence", "1963"}
    assert S.content_tokens("It is the one.") == {"one"}
    assert S.content_tokens("It is.") == frozenset()
    assert S.containment(frozenset(), {"a"}) == 0.0 and S.containment({"a", "b"}, {"a"}) == 0.5


def test_the_runs_near_repeats_are_caught_at_the_default_and_a_sentence_that_adds_a_fact_is_not():
    assert S.REPEAT_OVERLAP == 0.8
    assert S.repeat_of(SIMON_AGAIN, [SIMON], 0.8) == (0, pytest.approx(11 / 12))  # "written" for "wrote": the one word new
    assert S.repeat_of(PHELPS_AGAIN, ["Something else.", PHELPS], 0.8) == (1, 1.0)
    assert S.repeat_of(MESSI_AGAIN, [MESSI], 0.8) == (0, 1.0)
    # Garfunkel's help is a claim of its own (12 of its 17 content words in the sentence before): kept
    assert S.repeat_of(GARFUNKEL, [SIMON, SIMON_AGAIN], 0.8) is None
    assert S.repeat_of(PHELPS_BORN, [PHELPS, "The Weasley brothers were born on February 25, 1986, in Sutton Coldfield, Birmingham."], 0.8) is None  # 0.7
    # ONE written sentence must hold them: words spread over two sentences are not a repeat
    assert S.repeat_of("Paris and Rome are capitals.", ["Paris is big.", "Rome and capitals."], 0.8) is None
    assert S.repeat_of("Paris and Rome are capitals.", ["Paris is big.", "Rome and capitals."], 0.5) == (1, pytest.approx(2 / 3))


def test_overlap_1_is_the_exact_rule_alone():
    for cand, written in ((SIMON_AGAIN, [SIMON]), (PHELPS_AGAIN, [PHELPS]), (MESSI_AGAIN, [MESSI])):
        assert S.repeat_of(cand, written, 1.0) is None  # every word held by a longer sentence: not exact, kept
        assert S.read_sentence(cand, written, 1.0) == (cand, "")
    assert S.repeat_of("paris IS big [2]", ["Paris is big."], 1.0) == (0, 1.0)  # exact once normalised
    assert S.read_sentence("Paris is big. Rome is old.", ["Paris is big [1]."]) == ("Rome is old.", "")  # the default: 1.0


def test_read_sentence_skips_near_repeats_and_ends_repeated_when_nothing_is_new():
    skipped: list = []
    assert S.read_sentence(f"{SIMON_AGAIN} {GARFUNKEL}", [SIMON], 0.8, skipped) == (GARFUNKEL, "")
    assert skipped == [(SIMON_AGAIN, 0, pytest.approx(11 / 12))]
    skipped = []
    assert S.read_sentence(f"{SIMON} [1] {SIMON_AGAIN}", [SIMON], 0.8, skipped) == (None, "repeated")
    assert [s for s, _, _ in skipped] == [SIMON_AGAIN]  # the exact repeat is not a near one
    assert S.read_sentence(SIMON_AGAIN, [SIMON], 1.0) == (SIMON_AGAIN, "")


def method(backend, **opts):
    opts.setdefault("k", 2)
    opts.setdefault("docs_per_query", 1)
    return build("", ctx=BuildContext(), backend=backend, judge=KeywordJudge(), **opts)


PARIS, PARIS_AGAIN, ROME = "Paris is the capital of France.", "The capital of France is Paris.", "Rome is the capital of Italy."


def test_the_method_skips_a_near_repeat_counts_it_and_records_its_threshold():
    """The scripted model writes its sentences in order and stays on one until the answer holds it: skipped as a
    near repeat, it comes back, and the answer ends ``repeated``; with the exact rule it is kept, then Rome."""
    backend = scripted([PARIS, PARIS_AGAIN, ROME], cites={"Rome": "title:Rome"})
    m = method(backend, trials=0, k=4)
    r = m.answer(Sample("q1", QUESTION, passages=list(DOCS)))
    assert r["output"] == "Paris is the capital of France [1]." and r["vtg"]["end"] == "repeated"
    assert r["vtg"]["problems"]["near_repeated_sentence"] == 1 and r["vtg"]["problems"]["repeated_sentence"] == 1
    assert m.manifest()["repeat_overlap"] == 0.8
    assert m.summarise([r])["vtg"]["problems"]["near_repeated_sentence"] == 1

    exact = method(scripted([PARIS, PARIS_AGAIN, ROME], cites={"Rome": "title:Rome"}), trials=0, k=4, repeat_overlap=1.0)
    r = exact.answer(Sample("q1", QUESTION, passages=list(DOCS)))
    assert r["output"] == "Paris is the capital of France [1]. The capital of France is Paris [1]. Rome is the capital of Italy [3]."
    assert "near_repeated_sentence" not in r["vtg"]["problems"]  # the trace the exact rule always wrote
    assert "near_repeated_sentence" not in exact.summarise([r])["vtg"]["problems"]
    assert exact.manifest()["repeat_overlap"] == 1.0


@pytest.mark.parametrize("bad", [0, 0.0, -0.5, 1.5, "x"])
def test_repeat_overlap_must_be_in_0_1(bad):
    with pytest.raises(VericiteError, match="repeat_overlap"):
        method(scripted([]), repeat_overlap=bad)


def test_repeat_overlap_is_recorded_in_the_config_only_when_given():
    from vericite.runs.config import GenerateConfig

    plain = GenerateConfig(dataset="d", method="vtg", method_args={"k": 3})
    assert "repeat_overlap" not in plain.record()  # the configs of the runs before it, unchanged
    assert plain.record_defaults()["repeat_overlap"] is None
    assert GenerateConfig(dataset="d", method="vtg", method_args={"repeat_overlap": 0.9}).record()["repeat_overlap"] == 0.9


def test_a_resumed_folder_sets_the_threshold_it_was_written_with():
    old = {"method": "vtg@1", "k": 5}  # a manifest written before the option (and before repeat_retries, short_retries: 0)
    assert VtgOptions.resumed_options({}, old) == {"repeat_overlap": 1.0, "repeat_retries": 0, "short_retries": 0, "strip_preamble": False, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert VtgOptions.resumed_options({"repeat_overlap": None}, {**old, "repeat_overlap": 0.8})["repeat_overlap"] == 0.8
    assert "repeat_overlap" not in VtgOptions.resumed_options({"repeat_overlap": 0.9}, old)  # given: as given (the config check refuses it)
    assert VtgOptions.resumed_options({}, {"method": "vtg@2"}) == {}
    m = method(scripted([]))
    assert m.upgrade_manifest(old) == {**old, "repeat_overlap": 1.0, "repeat_retries": 0, "short_retries": 0, "strip_preamble": False, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False, "question_quotes": False}
    assert m.upgrade_manifest({**old, "repeat_overlap": 0.8})["repeat_overlap"] == 0.8
    assert m.upgrade_manifest({"method": "rerank@1"}) == {"method": "rerank@1"}


def test_the_script_counts_what_a_threshold_would_drop_in_a_folder(tmp_path, capsys):
    """scripts/vtg_repeats.py: each kept sentence against those kept before it in its answer."""
    import json

    from tests.support.paths import load_script

    def record(qid, sentences):
        return {"id": qid, "vtg": {"sentences": [{"kept": s + " [1]", "trials": [{"sentence": s}]} for s in sentences] + [{"kept": "", "trials": [{"sentence": ""}]}]}}

    (tmp_path / "samples.jsonl").write_text(json.dumps(record("a", [SIMON, SIMON_AGAIN, GARFUNKEL])) + "\n" + json.dumps(record("b", [PHELPS, PHELPS_BORN, PHELPS_AGAIN])) + "\n", encoding="utf-8")
    mod = load_script("scripts/vtg_repeats.py")
    assert mod.main([str(tmp_path), "--thresholds", "0.7,0.8,1", "--show", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "2 answers, 6 kept sentences (4 after an answer's first)" in out
    assert "repeat_overlap=0.7: 3 would be dropped" in out and "repeat_overlap=0.8: 2 would be dropped" in out and "repeat_overlap=1: 0 would be dropped" in out
    assert "[a #2] 0.92" in out and "[b #3] 1.00" in out and "kept [a #3] 0.71" in out
    assert mod.main([str(tmp_path / "nothing")]) == 1
