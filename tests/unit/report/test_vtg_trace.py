"""What VTG's traces say, summed over a folder's answers (report/vtg_trace.py): outcomes of the kept sentences,
trials, verifier rejections, failures by component, tokens; records without a trace are not counted."""

from __future__ import annotations

from vericite.report.vtg_trace import VtgTraces, summary_markdown, vtg_trace_section


def trial(outcome, gen=None, mem=None, removed=()):
    t = {"outcome": outcome}
    if gen is not None:
        t["generation_verifier"] = {"entailed": gen}
    if mem is not None:
        t["memory_verifier"] = {"entailed": mem}
    if removed:
        t["simplifier"] = {"removed": list(removed)}
    return t


def record(sentences, problems=None, rounds=0, tokens=(100, 10)):
    return {
        "vtg": {
            "sentences": [{"trials": ts} for ts in sentences],
            "problems": problems or {},
            "evidence_rounds": rounds,
            "end": "end-marker",
            "components": {"sentence": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "calls": 1}},
        }
    }


def test_sums_a_folders_traces():
    t = VtgTraces()
    t.add(record([[trial("retry", False, False), trial("verified-citations", True, removed=[2])], [trial("end")]], {"citations_out_of_range": 2, "no_citation": 1}, rounds=1))
    t.add(record([[trial("verified-memory", False, True)], [trial("unverified", False, False)]], {"retrieval_empty": 1, "unverified_sentences": 1}, tokens=(300, 30)))
    t.add({"output": "not a VTG answer"})
    s = t.summary()
    assert s["answers"] == 2 and s["sentences_per_answer"] == 1.5  # the end marker's trial is no sentence
    assert s["outcomes"] == {"verified-citations": 1 / 3, "verified-memory": 1 / 3, "accepted": 0.0, "unverified": 1 / 3}
    assert s["trials_per_sentence"] == 4 / 3 and s["evidence_rounds_per_answer"] == 0.5
    assert s["rejected"] == {"generation verifier": 3, "memory verifier": 2} and s["simplified_citations"] == 1
    assert s["failures"]["citation generator"] == 3 and s["failures"]["evidence finder"] == 1
    assert s["fails_most"] == "citation generator"
    assert s["tokens_per_answer_median"] == 220 and s["component_tokens_per_answer"] == {"sentence": 220}


def test_nothing_went_wrong_says_so_and_no_traces_no_section():
    t = VtgTraces()
    t.add(record([[trial("verified-citations", True)]]))
    assert t.summary()["fails_most"] is None
    assert "| a | 1 | 1.00 | 100 % |" in summary_markdown([("a", t)]) and "nothing" in summary_markdown([("a", t)])
    assert vtg_trace_section([]) == "" and not VtgTraces()
    assert "<script" not in vtg_trace_section([("<script>", t)])  # labels are escaped


def test_repeats_are_counted_apart_not_as_the_sentence_generator_s_failures():
    """Repeats skipped, drawn again or ending the answer are not a component's failure: "fails most" leaves them
    out (here the citation generator's one missing citation), their own column counts them; an answer left short
    of min_sentences is still the sentence generator's."""
    t = VtgTraces()
    problems = {"repeated_sentence": 5, "near_repeated_sentence": 3, "repeat_retries": 2, "no_citation": 1}
    t.add(record([[trial("verified-citations", True)]], problems))
    s = t.summary()
    assert s["fails_most"] == "citation generator" and s["failures"]["sentence generator"] == 0
    assert s["repeats"] == {"repeated_sentence": 5, "near_repeated_sentence": 3, "repeat_retries": 2}
    table = summary_markdown([("a", t)])
    assert "fails most (repeats apart)" in table and "| citation generator (1) | 5 / 3 / 2 |" in table
    assert "Repeats are not counted there" in vtg_trace_section([("a", t)])
    t.add(record([[trial("verified-citations", True)]], {"short_answer": 2}))
    assert t.summary()["fails_most"] == "sentence generator" and t.summary()["failures"]["sentence generator"] == 2
