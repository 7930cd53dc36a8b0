"""CONNER's per-passage files read explicitly: summary lines apart from values, NaN kept in place and counted,
an all-NaN file refused in one line; and the released files themselves (needs ../shared/data/conner)."""

from __future__ import annotations

import math

import pytest

from tests.support.guards import need
from vericite.bench.conner_reference import finite_pairs, parse_reference_values, read_reference_values
from vericite.errors import VericiteError


def test_json_list_then_summary_lines_are_kept_apart():
    r = parse_reference_values("[78.5, 16.0, NaN, 100.0]\n0.0366\n", "nq_ref_avg_sent_ppl")
    assert r.values[:2] == [78.5, 16.0] and math.isnan(r.values[2]) and r.values[3] == 100.0
    assert r.summary == [[0.0366]] and r.nan == 1 and r.finite == 3
    two = parse_reference_values("[-13.1, 18.6]\n20.34\t-26.26", "nq_ref_avg_coh_para")
    assert two.values == [-13.1, 18.6] and two.summary == [[20.34, -26.26]]
    nulls = parse_reference_values("[1.0, null]", "x")  # null is NaN too
    assert nulls.nan == 1 and nulls.summary == []


def test_a_summary_line_is_never_read_as_a_value_even_when_it_would_fit():
    # the summary holds as many numbers as the list: still not values
    r = parse_reference_values("[1.0, 2.0]\n3.0 4.0\n\n5.0\n", "f")
    assert r.values == [1.0, 2.0] and r.summary == [[3.0, 4.0], [5.0]]


def test_what_is_not_the_layout_is_an_error_naming_file_and_line():
    with pytest.raises(VericiteError, match=r"^f:2: summary line: 'mean' is not a number$"):
        parse_reference_values("[1.0]\nmean 0.5", "f")
    with pytest.raises(VericiteError, match=r"^f:1: item 1 of the list is 'x', not a number$"):
        parse_reference_values('[1.0, "x"]', "f")
    with pytest.raises(VericiteError, match=r"^f:1: the first line is not a JSON list"):
        parse_reference_values("[1.0, 2.0", "f")
    with pytest.raises(VericiteError, match=r"^rel:3: 2 numbers on a line of a one-value-a-line file$"):
        parse_reference_values("0.9\n0.8\n0.7\t0.1\n", "rel")


def test_one_value_a_line_with_nan():
    r = parse_reference_values("0.99\nNaN\n\n0.01\n", "nq_ref_rel")
    assert r.values[0] == 0.99 and math.isnan(r.values[1]) and r.values[2] == 0.01 and r.nan == 1 and r.summary == []


def test_all_nan_is_said_in_one_line():
    r = parse_reference_values("[NaN, NaN, NaN]\nNaN", "nq_ref_avg_lm_entropy")
    assert r.nan == 3 and len(r.summary) == 1 and math.isnan(r.summary[0][0])
    with pytest.raises(VericiteError) as e:
        r.require_finite()
    assert str(e.value) == "nq_ref_avg_lm_entropy: all 3 values are NaN, so nothing can be compared with it"
    assert r.describe()["note"] == "all 3 values are NaN: no comparison is possible"
    with pytest.raises(VericiteError, match="f: no values"):
        parse_reference_values("\n", "f").require_finite()
    assert parse_reference_values("[1.0, NaN]", "f").require_finite().finite == 1


def test_finite_pairs_leaves_out_and_counts():
    xs, ys, out = finite_pairs([1.0, 2.0, math.nan, 4.0, 5.0], [1.0, math.inf, 3.0, 4.0, math.nan])
    assert (xs, ys, out) == ([1.0, 4.0], [1.0, 4.0], 3)
    with pytest.raises(ValueError):
        finite_pairs([1.0], [1.0, 2.0])


def test_read_names_the_file(tmp_path):
    f = tmp_path / "nq_ref_avg_coh_para"
    f.write_text("[1.0]\noops")
    with pytest.raises(VericiteError, match="^nq_ref_avg_coh_para:2: summary line"):
        read_reference_values(f)
    with pytest.raises(VericiteError, match="cannot read"):
        read_reference_values(tmp_path / "absent")


@pytest.mark.shared
def test_the_released_files():
    from vericite.paths import shared_data_dir

    base = shared_data_dir(required=False)
    d = base / "conner" / "nq" / "random_testset" if base else None
    need(d is not None and (d / "nq_ref_avg_lm_entropy").is_file(), "../shared/data/conner is not beside this checkout (set VERICITE_DATA)")
    ppl = read_reference_values(d / "nq_ref_avg_sent_ppl")
    assert len(ppl.values) == 500 and ppl.nan == 3 and len(ppl.summary) == 1 and ppl.summary[0] == [pytest.approx(0.0366, abs=1e-4)]
    coh = read_reference_values(d / "nq_ref_avg_coh_para")
    assert len(coh.values) == 500 and coh.nan == 0 and len(coh.summary) == 1 and len(coh.summary[0]) == 2
    # the summary line is the list's max and min: the two numbers, not two more values
    assert coh.summary[0] == [pytest.approx(max(coh.values)), pytest.approx(min(coh.values))]
    ent = read_reference_values(d / "nq_ref_avg_lm_entropy")
    assert len(ent.values) == 500 and ent.nan == 500 and len(ent.summary) == 1 and math.isnan(ent.summary[0][0])
    with pytest.raises(VericiteError, match="nq_ref_avg_lm_entropy: all 500 values are NaN"):
        ent.require_finite()
    rel = read_reference_values(d / "nq_ref_rel")
    assert len(rel.values) == 368 and rel.nan == 0 and rel.summary == []
