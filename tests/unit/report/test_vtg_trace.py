"""What VTG's traces say, summed over a folder's answers (report/vtg_trace.py): outcomes of the kept sentences,
trials, verifier rejections, failures by component, tokens; records without a trace are not counted."""

from __future__ import annotations

from pathlib import Path

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


def test_the_sentence_cap_is_a_limit_counted_apart_not_the_sentence_generator_s_failure():
    """An answer that reached max_sentences (the trace's ``sentence_cap``, its name kept) was ended by a guard, not
    by a failure: "fails most" leaves it out (here the citation generator's one missing citation), its own column
    counts it; an empty or short answer is still the sentence generator's."""
    t = VtgTraces()
    t.add(ended(record([[trial("verified-citations", True)]] * 6, {"sentence_cap": 1}), "sentence-cap"))
    t.add(ended(record([[trial("verified-citations", True)]] * 6, {"sentence_cap": 1, "no_citation": 1}), "sentence-cap"))
    s = t.summary()
    assert s["limits"] == {"sentence_cap": 2} and s["failures"]["sentence generator"] == 0
    assert s["fails_most"] == "citation generator" and s["problems"]["sentence_cap"] == 2
    table = summary_markdown([("a", t)])
    assert "| answers at the sentence cap |" in table.splitlines()[0] and "| citation generator (1) | 0 / 0 / 0 | 2 |" in table
    assert "Nor is the sentence cap" in vtg_trace_section([("a", t)])
    capped = VtgTraces()
    capped.add(record([[trial("verified-citations", True)]], {"sentence_cap": 1}))
    assert capped.summary()["fails_most"] is None and "| nothing | 0 / 0 / 0 | 1 |" in summary_markdown([("a", capped)])
    capped.add(record([], {"empty_answer": 1}))
    assert capped.summary()["fails_most"] == "sentence generator" and capped.summary()["failures"]["sentence generator"] == 1


# ------------------------------------------------------------------ the newer options' fields (short_retries,
# strip_preamble, drop_source_remarks): columns of their own, none for a folder written before them

GOLDEN = Path(__file__).parent / "golden"


def ended(rec, end):
    rec["vtg"]["end"] = end
    return rec


def old_rows():
    """Answers written before short_retries, strip_preamble and drop_source_remarks (repeat_retries and the
    near-repeat rule, which the repeats' column shows, included)."""
    a = VtgTraces()
    a.add(ended(record([[trial("verified-citations", True)], [trial("end")]], {"repeated_sentence": 1, "near_repeated_sentence": 2, "repeat_retries": 1, "short_answer": 0, "no_citation": 1}), "repeated"))
    a.add(ended(record([[trial("retry", False, False), trial("unverified", False, False)]], {"repeated_sentence": 0, "near_repeated_sentence": 0, "repeat_retries": 2, "short_answer": 1, "unverified_sentences": 1}, rounds=1, tokens=(200, 20)), "prompt-echo"))
    b = VtgTraces()
    b.add(record([[trial("verified-memory", False, True, removed=[1])]]))
    return [("old = 0", a), ("old = 1", b)]


NEW = {"repeated_sentence": 0, "near_repeated_sentence": 1, "repeat_retries": 1, "short_answer": 0, "prompt_echo_retries": 2, "end_marker_retries": 1, "empty_retries": 0, "preamble_stripped": 3, "source_remark_dropped": 4, "source_remark_retries": 2}


def new_traces():
    t = VtgTraces()
    t.add(ended(record([[trial("verified-citations", True)], [trial("end")]], NEW), "source-remark"))
    t.add(ended(record([[trial("verified-citations", True)]], {**NEW, "source_remark_dropped": 1, "short_answer": 1, "end_marker_retries": 0}), "source-remark"))
    t.add(record([[trial("verified-citations", True)]], {**{k: 0 for k in NEW}, "no_citation": 1}))
    return t


def test_an_older_folders_table_is_as_it_was():
    """No newer column, no newer note, for answers written before the options: the Markdown and the page's section
    are what they were before the columns (golden/, written by the reader before them)."""
    rows = old_rows()
    assert summary_markdown(rows) == (GOLDEN / "vtg_trace_old.md").read_text(encoding="utf-8")
    assert vtg_trace_section(rows) == (GOLDEN / "vtg_trace_old.html").read_text(encoding="utf-8").rstrip("\n")


def test_a_folder_with_the_newer_fields_shows_them_in_columns_of_their_own():
    s = new_traces().summary()
    assert s["drawn_again"] == {"repeat_retries": 2, "prompt_echo_retries": 4, "end_marker_retries": 1, "empty_retries": 0, "source_remark_retries": 4}
    assert s["preambles_cut"] == 6 and s["remarks_dropped"] == 5 and s["ends"] == {"source-remark": 2, "end-marker": 1}
    table = summary_markdown([("new", new_traces())])
    head = table.splitlines()[0]
    assert head.endswith("| repeats (ended / near skipped / drawn again) | answers at the sentence cap | drawn again (repeat / prompt echo / early End. / empty / source remark) | preambles cut | source remarks dropped | answers' ends | median tokens / answer |")
    row = table.splitlines()[2]
    assert "| 0 / 2 / 2 | 0 | 2 / 4 / 1 / 0 / 4 | 6 | 5 | end-marker 1, source-remark 2 | 110 |" in row
    assert 'None of these is counted in "fails most"' in table
    page = vtg_trace_section([("new", new_traces())])
    assert "<th>source remarks dropped</th>" in page and "<td>end-marker 1, source-remark 2</td>" in page
    assert "None of these is counted in &quot;fails most&quot;" in page


def test_dropped_remarks_and_draws_again_are_no_components_failure():
    """Like repeats: the remarks dropped and every draw again are counted apart, not in "fails most" (here the
    citation generator's one missing citation); the answer an early end left short is the sentence generator's."""
    s = new_traces().summary()
    assert s["failures"]["sentence generator"] == 1 and s["failures"]["citation generator"] == 1
    t = VtgTraces()
    t.add(record([[trial("verified-citations", True)]], {**NEW, "short_answer": 0, "no_citation": 1}))
    s = t.summary()
    assert s["fails_most"] == "citation generator" and s["failures"]["sentence generator"] == 0
    assert s["remarks_dropped"] == 4 and s["drawn_again"]["source_remark_retries"] == 2
    assert "| citation generator (1) | 0 / 1 / 1 | 0 | 1 / 2 / 1 / 0 / 2 | 3 | 4 |" in summary_markdown([("a", t)])


def test_a_mixed_table_dashes_what_a_row_was_written_without():
    """An older row beside a newer one: the newer columns the newer row calls for (no preamble or remark column
    here), the older row's counters dashed (its ends shown)."""
    old, new = old_rows()[0][1], VtgTraces()
    new.add(ended(record([[trial("verified-citations", True)]], {"short_answer": 0, "prompt_echo_retries": 1, "end_marker_retries": 0, "empty_retries": 2}), "end-marker"))
    lines = summary_markdown([("old", old), ("new", new)]).splitlines()
    assert "preambles cut" not in lines[0] and "source remarks dropped" not in lines[0]
    assert "| 1 / 2 / 3 | 0 | 3 / — / — / — / — | repeated 1, prompt-echo 1 | 165 |" in lines[2]
    assert "| 0 / 0 / 0 | 0 | — / 1 / 0 / 2 / — | end-marker 1 | 110 |" in lines[3]


def test_the_traces_vtg_writes_read_back_with_and_without_the_options():
    """VTG on the scripted fake (tests/support/vtg.py): Paris, then a remark on the sources and Rome, then only a
    remark, which ends the answer (``source-remark``). Written with today's defaults the table says so in its newer
    columns; written without the options (as before them) it has none of them."""
    from tests.support.vtg import answer_q1, keyword_vtg, remarking

    new = VtgTraces()
    new.add(answer_q1(keyword_vtg(remarking())))
    table = summary_markdown([("now", new)])
    assert "| 0 / 0 / 0 / 0 / 0 | 0 | 2 | 0 | source-remark 1 |" in table.splitlines()[2]  # first draws: none drawn again; no list
    assert "| list sentences cut |" in table.splitlines()[0]
    old = VtgTraces()
    old.add(answer_q1(keyword_vtg(remarking(), repeat_overlap=1.0, repeat_retries=0, short_retries=0, strip_preamble=False, strip_source_leads=False, drop_source_remarks=False, tidy_citations=False, strip_list_markers=False)))
    head = summary_markdown([("before", old)]).splitlines()[0]
    assert head.endswith("| repeats (ended / near skipped / drawn again) | answers at the sentence cap | median tokens / answer |")
