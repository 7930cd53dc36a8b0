"""RunConfig is composed (the questions, a method with its own method_args, the evaluation, the experiment),
not KaLMA's generation config with extras: every shipped YAML config keeps working and is recorded as before,
``match`` reaches the evaluation (review §0.7: it was lost), and the runner looks methods and experiments up
in the registry instead of importing them."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support.paths import REPO, SRC
from tests.unit.test_layering import imports_of
from vericite.errors import VericiteError
from vericite.evaluate import EvaluateConfig
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig, RunConfig
from vericite.runs.runner import load_run_config, run_config

CONFIGS = sorted((REPO / "configs").glob("*.yaml"))
#: the configs written before methods were composed: KaLMA's, flat (no ``method`` key)
KALMA_CONFIGS = [p for p in CONFIGS if yaml.safe_load(p.read_text(encoding="utf-8")).get("method", "kalma") == "kalma"]
KALMA_KEYS = ("knowledge", "store", "demonstration", "max_tokens", "temperature")
#: results.json's "config" of a run, key by key, as it was written before the composition (plus "match")
RECORDED = (
    "dataset", "phrasing", "data_path", "model", "base_url", "limit", *KALMA_KEYS, "seed", "threads", "cache", "timeout",
    "request_retries", "max_failures", "name", "description", "judge", "geval_model", "hypothesis", "match", "resamples",
    "experiment", "levels",
)


def test_match_normalised_reaches_the_evaluation(tmp_path):
    """A date cited in another format is wrong under exact match and right under normalised match."""
    q = tmp_path / "q.jsonl"
    dob = {"subject": "Q1", "property": "date of birth", "value": "1867-11-07"}
    q.write_text(json.dumps({"id": "a", "question": "When was Ann born?", "knowledge": [dob], "gold": [dob]}) + "\n")
    reply = "Ann was born on 7 November 1867 [Q1, Date of Birth: 7 November 1867]."
    values = {}
    for match in ("exact", "normalised"):
        cfg = tmp_path / f"{match}.yaml"
        cfg.write_text(f"name: t\ndataset: {q}\nmodel: fake\nresamples: 10\nmatch: {match}\n")
        res = run_config(load_run_config(cfg, {}), tmp_path / match, progress=False, backend=FakeBackend(default=reply))
        assert res["evaluation"]["match"] == match and res["config"]["match"] == match
        level = json.loads((tmp_path / match / "level-base" / "eval" / "results.json").read_text())
        assert level["evaluation"]["match"] == match
        values[match] = res["metrics"]["citation_correctness"]["value"]
    assert values == {"exact": 0.0, "normalised": 1.0}


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_loads_with_its_method_options_validated(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg = load_run_config(path, {})
    assert cfg.method == data.get("method", "kalma")
    options = cfg.method_options()  # the method's own model fills and validates them
    assert all(options[k] == v for k, v in (data.get("method_args") or {}).items() if k in options)
    assert cfg.record()["method"] == cfg.method if "method" in data else True


@pytest.mark.parametrize("path", KALMA_CONFIGS, ids=[p.stem for p in KALMA_CONFIGS])
def test_every_shipped_config_loads_composed_and_is_recorded_flat_as_before(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg = load_run_config(path, {})
    assert cfg.method == "kalma" and cfg.method_args == {k: data[k] for k in KALMA_KEYS if k in data}
    record = cfg.record()
    assert tuple(record) == RECORDED
    assert all(record[k] == v for k, v in data.items())
    # the method's options are validated and filled by KaLMA's own model
    assert cfg.method_options() == {"knowledge": "auto", "store": None, "demonstration": None, "max_tokens": 384, "temperature": 0.0}


def test_the_composed_form_is_the_same_config_as_the_flat_one(tmp_path):
    flat = tmp_path / "flat.yaml"
    flat.write_text("name: t\ndataset: demo\nmodel: fake\nknowledge: given\nmax_tokens: 50\n")
    composed = tmp_path / "composed.yaml"
    composed.write_text("name: t\ndataset: demo\nmodel: fake\nmethod: kalma\nmethod_args: {knowledge: given, max_tokens: 50}\n")
    a, b = load_run_config(flat, {}), load_run_config(composed, {})
    assert a == b and a.record() == b.record() and a.record()["max_tokens"] == 50
    # flags override the YAML's method options key by key
    c = load_run_config(composed, {"max_tokens": 7, "model": None})
    assert c.method_args == {"knowledge": "given", "max_tokens": 7}
    # another method is recorded by name with its own options
    other = tmp_path / "other.yaml"
    other.write_text("name: t\ndataset: demo\nmodel: fake\nmethod: fake\nmethod_args: {max_tokens: 5}\n")
    rec = load_run_config(other, {}).record()
    assert rec["method"] == "fake" and rec["max_tokens"] == 5 and "knowledge" not in rec


@pytest.mark.parametrize(
    "text, message",
    [
        ("modle: fake\n", "option modle: Extra inputs are not permitted"),
        ("method: kalam\n", "unknown method 'kalam'; did you mean 'kalma'"),
        ("max_tokens: 0\n", "option max_tokens: Input should be greater than or equal to 1"),
        ("max_tokens: 5\nmethod_args: {max_tokens: 6}\n", "max_tokens is given twice"),
        ("method_args: {judge: nli}\n", "judge is an option of the run, not of its method"),
        ("match: fuzzy\n", "option match: Input should be 'exact' or 'normalised'"),
    ],
)
def test_bad_configs_are_one_line(tmp_path, text, message):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: t\n" + text)
    with pytest.raises(VericiteError) as e:
        load_run_config(cfg, {})
    assert message in str(e.value) and e.value.exit_code == 2


def test_the_parts_get_every_field_they_have():
    """No option of the evaluation or the generation can be lost between RunConfig and its parts again."""
    assert set(EvaluateConfig.model_fields) <= set(RunConfig.model_fields)
    assert set(GenerateConfig.model_fields) <= set(RunConfig.model_fields)
    assert RunConfig().evaluation() == EvaluateConfig()
    assert RunConfig().generation() == GenerateConfig()
    cfg = RunConfig(match="normalised", hypothesis="entity", judge="nli:x", seed=3, base_url="http://127.0.0.1:1", limit=2, knowledge="given")
    ev, gen = cfg.evaluation(), cfg.generation()
    assert (ev.match, ev.hypothesis, ev.judge, ev.seed, ev.base_url) == ("normalised", "entity", "nli:x", 3, "http://127.0.0.1:1")
    assert gen.method_args == {"knowledge": "given"} and gen.seed == 3 and gen.limit is None  # the run's limit cuts the questions once
    # ALCE's final-answer reader: passed on, recorded only when given (other runs' records stay as they were)
    assert RunConfig(task="alce-short", reader="llm:x").evaluation().reader == "llm:x"
    assert RunConfig(task="alce-short", reader="llm:x").record()["reader"] == "llm:x" and "reader" not in RunConfig().record()


def test_the_runner_looks_methods_and_experiments_up_in_the_registry():
    imported = {m for m, _ in imports_of(SRC / "runs" / "runner.py")}
    assert not {m for m in imported if m.startswith(("vericite.generate", "vericite.bench"))}, imported
