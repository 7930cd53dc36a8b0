"""The ground floor has one of each: one triple key, one usage total, one did-you-mean, one cache opener."""

from __future__ import annotations

import pytest

from vericite.metrics import kalma
from vericite.normalise import normalise_property, triple_key
from vericite.types import Citation, CitationKind, Triple


def test_one_triple_key_everywhere():
    want = ("Q1", "date of birth", "1815")
    assert triple_key(" Q1 ", "date_of_birth", " 1815 ") == want
    assert Triple(" Q1 ", "date_of_birth ", "1815 ").key == want
    assert Citation(CitationKind.TRIPLE, "[..]", entity="Q1 ", property="date  of_birth", value="1815").key == want
    assert kalma.triple_key("Q1", "date_of_birth", "1815") == want
    assert kalma.triple_key("Q1", "Date_of_birth", "1815", "normalised")[1] == "date of birth"
    assert normalise_property(" a_b  c ") == "a b c"


def test_token_totals_take_usages_and_earlier_totals_and_ignore_junk():
    from vericite.totals import token_totals

    usages = [{"prompt_tokens": 3, "completion_tokens": 2}, None, "n/a", {"prompt_tokens": True, "completion_tokens": float("nan")}]
    assert token_totals(usages) == {"prompt": 3, "completion": 2}
    assert token_totals([{"prompt": 10, "completion": 1}, {"prompt": 5}]) == {"prompt": 15, "completion": 1}
    assert token_totals([]) == {"prompt": 0, "completion": 0}
    # calls whose tokens are unknown (a judge's, from an old cache entry) are said, never passed off as 0 tokens
    with_unknown = [{"prompt_tokens": 3, "completion_tokens": 1, "calls": 2, "uncounted_calls": 1}, {"prompt": 1, "completion": 0, "uncounted_calls": 2}]
    assert token_totals(with_unknown) == {"prompt": 4, "completion": 1, "uncounted_calls": 3}


def test_status_totals_sum_in_first_seen_order():
    from vericite.totals import status_totals

    got = status_totals([{"ok": 2}, {}, {"unknown_entity": 1, "ok": 1}])
    assert got == {"ok": 3, "unknown_entity": 1} and list(got) == ["ok", "unknown_entity"]


def test_evaluate_counts_tokens_of_records_whose_usage_is_not_an_object(tmp_path):
    import json

    from vericite.evaluate import EvaluateConfig
    from vericite.runs.results import evaluate_file

    good = {"question": "q?", "answer": "x [Q1, p: v].", "knowledge": [{"subject": "Q1", "property": "p", "value": "v"}]}
    lines = [{**good, "id": "a", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}, {**good, "id": "b", "usage": "n/a"}]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = evaluate_file(tmp_path / "in.jsonl", tmp_path / "ev", EvaluateConfig(judge="triple", resamples=0, cache=False))
    assert res["tokens"] == {"prompt": 7, "completion": 3}  # it was an AttributeError traceback


def test_open_cache_reads_every_form_of_the_cache_argument(tmp_path, monkeypatch):
    from vericite.models.cache import CallCache, open_cache

    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "default"))
    assert open_cache(None) is None and open_cache(False) is None
    mine = CallCache(tmp_path / "mine.sqlite")
    assert open_cache(mine) is mine
    assert open_cache(tmp_path / "p.sqlite").path == tmp_path / "p.sqlite"
    assert open_cache(str(tmp_path / "s.sqlite")).path == tmp_path / "s.sqlite"
    assert open_cache(True).path == tmp_path / "default" / "calls.sqlite"


def test_did_you_mean_words_every_hint_the_same_way():
    from vericite.errors import did_you_mean
    from vericite.registry import Registry

    assert did_you_mean("tripel", ["triple", "nli", "llm"]) == "did you mean 'triple'?"
    assert did_you_mean("zzz", ["triple"]) == ""
    assert did_you_mean("abcd", ["abxx", "abce", "zzzz"], n=3, cutoff=0.5) == "did you mean 'abce' or 'abxx'?"
    r = Registry("thing")
    r.register("alpha", 1)
    r.register("alpine", 2)
    assert r.unknown_message("alpah") == "unknown thing 'alpah'; did you mean 'alpha' or 'alpine'? (known: alpha, alpine)"


def test_build_names_a_bad_option_by_its_flag(tmp_path):
    from click.testing import CliRunner

    from vericite.cli.main import cli

    r = CliRunner().invoke(cli, ["build", "biokalma", "--pool", "x.json", "--out", str(tmp_path / "d.jsonl"), "--min-gold", "0"])
    assert r.exit_code == 2 and "error: invalid option --min-gold: Input should be greater than or equal to 1" in r.output


def test_one_logsumexp_one_softmax_one_log_softmax_one_sigmoid_in_the_source():
    # judges/log_mass.py and models/openai_wire.py had their own logsumexp, metrics/alce_qa.py and the BioKaLMA
    # builder their own softmax: the numeric helpers are defined once (stats.py; log_softmax, on numpy arrays, in
    # models/llamacpp_scoring.py; sigmoid in metrics/conner_specs.py) and imported everywhere else
    import ast

    from tests.support.paths import SRC

    helpers = ("logsumexp", "softmax", "log_softmax", "sigmoid")
    found: dict[str, list[str]] = {h: [] for h in helpers}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.lstrip("_") in found:
                found[node.name.lstrip("_")].append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert {h: len(where) for h, where in found.items()} == dict.fromkeys(helpers, 1), found


def test_logsumexp_and_softmax():
    import math

    from vericite.stats import logsumexp, softmax

    assert logsumexp([math.log(0.25), math.log(0.5)]) == pytest.approx(math.log(0.75))
    assert logsumexp([1000.0, 1000.0]) == pytest.approx(1000.0 + math.log(2))  # stable for large inputs
    assert logsumexp([]) == -math.inf and logsumexp([-math.inf, -math.inf]) == -math.inf
    assert softmax([0.0, math.log(3)]) == pytest.approx([0.25, 0.75])
    assert softmax([]) == [] and sum(softmax([1000.0, 999.0, -5.0])) == pytest.approx(1.0)
