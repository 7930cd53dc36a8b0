"""llm3f: the three-way LLM judge with class biases fitted on labelled pairs (judges/fit_bias.py, judges/fitted.py):
the fit undoes a known lean, goes through the call cache, records no pair text; the judge applies the file's biases,
keys its id on the file's content, and refuses a missing, foreign or mismatched file in one line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.evaluate.memo_judge import pair_key
from vericite.judges.fit_bias import balanced_log_loss, fit_biases, fit_on_pairs, fit_record
from vericite.judges.fitted import FittedLLM3Judge, apply_bias, read_fit
from vericite.judges.three_way import LABELS, LLM3Judge
from vericite.types import JudgePair, ModelIdentity

WORDS = {"supports": "Supports", "refutes": "Refutes", "not_enough_info": "Neutral"}
GOLD = {"supports": 0, "refutes": 1, "not_enough_info": 2}
LEAN = np.array([1.0, 1.0, 5.0])  # the model says Neutral five times as readily as it should


def leaning(probs: dict[str, float]) -> dict[str, float]:
    w = {k: probs[k] * LEAN[i] for i, k in enumerate(LABELS)}
    return {k: v / sum(w.values()) for k, v in w.items()}


#: claim -> (gold label, what the model says): 0.6 on the gold class, 0.2 on each other, then leaning to Neutral
CLAIMS = {f"{g} {i}": (g, leaning({k: 0.6 if k == g else 0.2 for k in LABELS})) for g in LABELS for i in range(2)}


class Scorer:
    """A next-token scorer answering each claim's leaning probabilities; counts the prompts it is asked."""

    def __init__(self, name: str = "leaning", sha256: str | None = "a" * 64) -> None:
        self.asked = 0
        self.ident = ModelIdentity(name=name, backend="test", model=f"{name}.gguf", sha256=sha256)

    def identity(self) -> ModelIdentity:
        return self.ident

    def next_token_logprobs(self, prompts, candidates):
        self.asked += len(prompts)
        out = []
        for messages in prompts:
            probs = CLAIMS[messages[-1]["content"].split("Claim: ")[1]][1]
            out.append({WORDS[k]: math.log(probs[k]) for k in LABELS if WORDS[k] in candidates})
        return out


def write_pairs(path, lead: int = 0):
    """``lead`` pairs judge-eval would report on (never fitted on), then one line per claim."""
    lines = [{"evidence": "lead", "claim": f"{LABELS[i % 3]} {i % 2}", "label": LABELS[i % 3]} for i in range(lead)]
    lines += [{"evidence": f"e {c}", "claim": c, "label": g} for c, (g, _) in CLAIMS.items()]
    path.write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
    return path


def write_fit(tmp_path, scorer=None, name="fit.json", lead=3):
    record = fit_on_pairs(scorer or Scorer(), write_pairs(tmp_path / "pairs.jsonl", lead), skip=lead, limit=len(CLAIMS))
    f = tmp_path / name
    f.write_text(json.dumps(record), encoding="utf-8")
    return f, record


def test_the_fit_undoes_a_known_lean():
    z = np.log(np.array([list(leaning({k: 0.6 if k == g else 0.2 for k in LABELS}).values()) for g in LABELS]))
    gold = np.array([0, 1, 2])
    b = fit_biases(z, gold)
    assert b == pytest.approx([0.0, 0.0, -math.log(5.0)], abs=1e-4)
    assert balanced_log_loss(z, gold, b) < balanced_log_loss(z, gold, np.zeros(3))


def test_fit_on_pairs_skips_the_lead_goes_through_the_call_cache_and_writes_no_text(tmp_path):
    from vericite.models.cache import CachedBackend, CallCache

    cache = CallCache(tmp_path / "calls.sqlite")
    first, second = Scorer(), Scorer()
    data = write_pairs(tmp_path / "pairs.jsonl", lead=4)
    rec = fit_on_pairs(CachedBackend(first, cache), data, skip=4, limit=6)
    again = fit_on_pairs(CachedBackend(second, cache), data, skip=4, limit=6)
    cache.close()
    assert first.asked == 6 and second.asked == 0 and again == rec  # refitting asks the model nothing
    assert rec["data"]["skip"] == 4 and rec["data"]["n"] == 6 and len(rec["data"]["sha256"]) == 64
    assert rec["pairs"]["gold"] == {"supports": 2, "refutes": 2, "not_enough_info": 2} and rec["pairs"]["used"] == 6
    assert rec["bias"]["supports"] == 0.0 and rec["bias"]["not_enough_info"] == pytest.approx(-math.log(5.0), abs=1e-4)
    assert rec["before"]["said"]["not_enough_info"] == 6 and rec["after"]["balanced_accuracy_3way"] == 1.0
    assert rec["model"]["sha256"] == "a" * 64 and rec["judge"] == "llm3:leaning@1" and rec["prompt"] == "judge-3way@1"
    assert "e supports 0" not in json.dumps(rec) and "supports 0" not in json.dumps(rec)


def test_a_gold_class_missing_from_the_fit_pairs_is_an_error():
    judgements = LLM3Judge(Scorer()).judge([JudgePair("e", "supports 0"), JudgePair("e", "refutes 0")])
    with pytest.raises(VericiteError, match="no usable not_enough_info pair"):
        fit_record(judgements, ["supports", "refutes"], model={"name": "leaning"}, judge_id="llm3:leaning@1", data={})


def test_the_judge_applies_the_biases_and_keeps_what_llm3_said(tmp_path):
    f, rec = write_fit(tmp_path)
    fit, sha = read_fit(f)
    judge = FittedLLM3Judge(Scorer(), fit, sha, path=f)
    pairs = [JudgePair("e", c) for c in CLAIMS]
    plain, got = LLM3Judge(Scorer()).judge(pairs), judge.judge(pairs)
    assert [j.label for j in plain] == ["not_enough_info"] * len(pairs)
    assert [j.label for j in got] == [g for g, _ in CLAIMS.values()]
    raw = json.loads(got[0].raw)
    assert raw["uncalibrated"] == plain[0].scores and raw["bias"] == rec["bias"]
    assert got[0].scores == pytest.approx(apply_bias(plain[0].scores, rec["bias"]), abs=1e-5)
    assert got[0].probability == got[0].scores["supports"] and sum(got[0].scores.values()) == pytest.approx(1, abs=1e-5)


def test_the_id_and_options_key_on_the_fit_files_content(tmp_path):
    f, _ = write_fit(tmp_path)
    fit, sha = read_fit(f)
    judge = FittedLLM3Judge(Scorer(), fit, sha, path=f)
    assert judge.id == f"llm3f:leaning:{sha[:12]}@1" and judge.labels == LABELS
    assert judge.options() == {"fit_file": str(f), "fit_sha256": sha, "fit": "class-bias@1"}
    other = dict(fit, bias={**fit["bias"], "refutes": 0.5})
    g = tmp_path / "other.json"
    g.write_text(json.dumps(other), encoding="utf-8")
    fit2, sha2 = read_fit(g)
    judge2 = FittedLLM3Judge(Scorer(), fit2, sha2, path=g)
    assert judge2.id != judge.id and pair_key(judge2.id, JudgePair("e", "c")) != pair_key(judge.id, JudgePair("e", "c"))
    cal = judge.calibration()
    assert cal["id"] == "class-bias@1" and cal["bias"] == fit["bias"] and cal["data"]["skip"] == 3


@pytest.mark.parametrize(
    "content, message",
    [
        (None, r"fit file .* not found: make one with `vericite train llm3f"),
        (b"{not json", "is not a fit file \\(not JSON"),
        (json.dumps({"kind": "something"}).encode(), "is not a fit file \\(kind"),
        ("prompt", "fitted on the prompt 'judge-3way@9'"),
        ("bias", "no finite bias for each of supports, refutes, not_enough_info"),
    ],
)
def test_a_bad_fit_file_is_one_line(tmp_path, content, message):
    f = tmp_path / "bad.json"
    if content == "prompt" or content == "bias":
        good, _ = write_fit(tmp_path)
        d = json.loads(good.read_text())
        d.update({"prompt": "judge-3way@9"} if content == "prompt" else {"bias": {"supports": 0, "refutes": float("inf")}})
        f.write_text(json.dumps(d), encoding="utf-8")
    elif content is not None:
        f.write_bytes(content)
    with pytest.raises(VericiteError, match=message) as e:
        read_fit(f)
    assert "\n" not in str(e.value)


def test_a_fit_made_with_another_model_file_is_refused(tmp_path):
    f, _ = write_fit(tmp_path)
    fit, sha = read_fit(f)
    with pytest.raises(VericiteError, match=r"fitted with another model than 'leaning'.*its sha256 bbbbbbbbbbbb is not the fitted aaaaaaaaaaaa"):
        FittedLLM3Judge(Scorer(sha256="b" * 64), fit, sha, path=f)
    FittedLLM3Judge(Scorer(sha256="a" * 64), fit, sha, path=f)  # the same file: fine


def test_overlap_names_the_pairs_fitted_on(tmp_path):
    f, rec = write_fit(tmp_path, lead=3)
    fit, sha = read_fit(f)
    judge = FittedLLM3Judge(Scorer(), fit, sha, path=f)
    data = rec["data"]["sha256"]
    assert judge.overlap(data, 0, 3) is None and judge.overlap("0" * 64, 0, 100) is None
    assert "fitted on pairs 4-9" in judge.overlap(data, 0, 4) and "(1 in both)" in judge.overlap(data, 0, 4)


def test_built_from_its_file_through_the_registry(tmp_path):
    f, _ = write_fit(tmp_path)
    ctx = registry.BuildContext(load_model=lambda name: Scorer(name))
    judge = registry.create("judges", f"llm3f:{f}", ctx)
    assert isinstance(judge, FittedLLM3Judge) and judge.id.startswith("llm3f:leaning:")
    with pytest.raises(VericiteError, match="llm3f:<file>"):
        registry.create("judges", "llm3f", ctx)


def test_a_label_without_mass_in_some_pairs_still_gives_finite_biases():
    # the top_logprobs path: a word outside the top 20 has no mass (-inf); its pairs still count for the others
    with np.errstate(divide="ignore"):
        z = np.log(np.array([[0.7, 0.0, 0.3], [0.2, 0.5, 0.3], [0.3, 0.0, 0.7], [0.6, 0.1, 0.3]]))
    b = fit_biases(z, np.array([0, 1, 2, 2]))
    assert np.all(np.isfinite(b)) and b[0] == 0.0
