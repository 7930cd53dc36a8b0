"""`vericite train caqa` on a tiny randomly initialised BERT (tests/support/nli.py's word-piece vocabulary): the
default head mean-pools the token states over the attention mask (recipe 2) and has no [CLS] pooler, the batches
keep a query's items together, training lowers the loss, the ONNX export gives the torch model's probabilities
through the `caqa:<folder>` judge, and a recipe-1 folder ([CLS] head) still loads, with its version in the id."""

from __future__ import annotations

import json
import math
import random

import pytest

from tests.support.guards import requires
from vericite.registry import BuildContext, create
from vericite.types import JudgePair

CITATIONS = {  # the class shows in the citation only, as in CAQA (a query's items share question and answer)
    "supportive": "the cat sat on the mat in the park",
    "insufficient": "a small red city was new",
    "contradictory": "the dog sat on the river in the city",
    "irrelevant": "a blue river ran home",
}


@pytest.fixture()
def tiny_base(tmp_path):
    requires("train")
    import torch
    from transformers import BertConfig, BertModel

    from tests.support.nli import _wordpiece_tokenizer

    tok, vocab = _wordpiece_tokenizer()
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                     max_position_embeddings=64)
    folder = tmp_path / "base"
    BertModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def write_items(path, queries=6, split="train"):
    rows = []
    for q in range(queries):
        for label, cit in CITATIONS.items():
            rows.append({"question": "where was the cat", "answer": f"the cat was in the park {q}", "citation": cit, "label": label,
                         "complexity": "single", "split": split, "meta": {"query_key": f"q{q}"}, "id": f"{q}-{label}"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_default_head_is_a_linear_layer_on_the_masked_mean_of_the_token_states(tiny_base):
    import torch
    from transformers import AutoTokenizer

    from vericite.bench.train_caqa import build_classifier

    torch.manual_seed(0)
    model = build_classifier(tiny_base).eval()
    names = [n for n, _ in model.named_parameters()]
    assert not any("pooler" in n for n in names), "the [CLS] pooler (never trained in all-MiniLM-L6-v2) is back"
    assert model.classifier.in_features == 32 and model.classifier.out_features == 4
    tok = AutoTokenizer.from_pretrained(str(tiny_base))
    short = tok(["the cat"], ["sat on the mat"], return_token_type_ids=True, return_tensors="pt")
    padded = tok(["the cat", "the cat sat on the mat in the big old city"], ["sat on the mat", "sat"], padding=True, return_token_type_ids=True,
                    return_tensors="pt")
    with torch.no_grad():
        alone = model(short["input_ids"], short["attention_mask"], short["token_type_ids"])
        both = model(padded["input_ids"], padded["attention_mask"], padded["token_type_ids"])
        states = model.encoder(**short).last_hidden_state
        by_hand = model.classifier(states.mean(1))
    assert torch.allclose(alone[0], both[0], atol=1e-5), "padding changed the logits: the pooling ignores the attention mask"
    assert torch.allclose(alone, by_hand, atol=1e-5), "the head does not read the mean of the token states"
    cls = build_classifier(tiny_base, "cls")
    assert any("pooler" in n for n, _ in cls.named_parameters())


def test_query_batches_keep_a_querys_items_together_and_cover_every_item_once():
    from vericite.bench.train_caqa import make_batches

    keys = [f"q{i // 4}" for i in range(40)] + ["q99"] * 3
    for mode in ("query", "shuffle"):
        batches = make_batches(keys, 16, random.Random(1), mode)
        assert sorted(i for b in batches for i in b) == list(range(43))
    batches = make_batches(keys, 16, random.Random(1), "query")
    assert all(len(b) <= 16 for b in batches)
    where = {i: n for n, b in enumerate(batches) for i in b}
    assert all(len({where[i] for i, k in enumerate(keys) if k == q}) == 1 for q in set(keys))


def train_keeping_the_model(data, out, **kw):
    """``train_caqa(data, out, **kw)``, and the torch model it exported (to compare the ONNX judge with)."""
    from vericite.bench import train_caqa as tc

    kept = {}
    real_export = tc.export_onnx

    def export_and_keep(model, tok, path, max_length):
        kept["model"] = model
        real_export(model, tok, path, max_length)

    tc.export_onnx = export_and_keep
    try:
        return tc.train_caqa(data, out, **kw), kept
    finally:
        tc.export_onnx = real_export


def test_training_lowers_the_loss_and_the_onnx_judge_gives_the_torch_probabilities(tiny_base, tmp_path):
    import numpy as np
    import torch
    from transformers import AutoTokenizer

    from vericite.bench import train_caqa as tc

    data = write_items(tmp_path / "caqa.jsonl")
    card, kept = train_keeping_the_model(data, tmp_path / "judge", epochs=12, batch_size=8, lr=1e-3, head_lr=1e-2, max_length=32, threads=1,
                                         base=tiny_base)
    assert card["version"] == 2 and card["recipe"]["head"] == "mean" and card["recipe"]["batches"] == "query"
    losses = card["training"]["loss_per_step"]
    assert card["training"]["steps"] == len(losses) == 12 * 3 and len(card["training"]["mean_loss_per_epoch"]) == 12
    assert sum(losses[-6:]) / 6 < math.log(4) - 0.3 < sum(losses[:3]) / 3 + 0.3, losses
    judge = create("judges", f"caqa:{tmp_path / 'judge'}", BuildContext(cache=False))
    assert judge.id == "caqa:judge@2"
    pairs = [JudgePair(cit, f"the cat was in the park {i}", question="where was the cat") for i, cit in enumerate(CITATIONS.values())]  # evidence, claim
    got = np.array([[j.scores[c] for c in judge.labels] for j in judge.judge(pairs)])
    tok = AutoTokenizer.from_pretrained(str(tiny_base))
    want = tc.predict(kept["model"], tok, [f"{p.question} {p.claim}" for p in pairs], [p.evidence for p in pairs], max_length=32)
    assert np.allclose(got, want, atol=1e-4), (got, want)
    assert [judge.labels[i] for i in got.argmax(1)] == list(CITATIONS), "the tiny model did not learn its four citations"
    del torch


def test_a_recipe_1_folder_still_loads_with_its_version_in_the_id(tiny_base, tmp_path):
    from vericite.bench.train_caqa import train_caqa

    data = write_items(tmp_path / "caqa.jsonl", queries=2)
    card = train_caqa(data, tmp_path / "old", epochs=1, batch_size=8, head="cls", batches="shuffle", max_length=32, threads=1, base=tiny_base)
    assert card["version"] == 1 and card["recipe"]["head"] == "cls"
    judge = create("judges", f"caqa:{tmp_path / 'old'}", BuildContext(cache=False))
    assert judge.id == "caqa:old@1"
    (j,) = judge.judge([JudgePair("the cat sat", "the cat was in the park", question="where was the cat")])
    assert j.status == "ok" and sum(j.scores.values()) == pytest.approx(1.0, abs=1e-4)


def test_an_unknown_head_or_batching_is_one_error(tiny_base, tmp_path):
    from vericite.bench.train_caqa import make_batches, train_caqa
    from vericite.errors import VericiteError

    with pytest.raises(VericiteError, match="head"):
        train_caqa(write_items(tmp_path / "c.jsonl", 1), tmp_path / "x", head="max", base=tiny_base)
    with pytest.raises(VericiteError, match="batching"):
        make_batches(["a"], 4, random.Random(0), "sorted")


def test_first_answer_trains_and_judges_on_the_answer_statement_alone(tiny_base, tmp_path):
    import numpy as np
    from transformers import AutoTokenizer

    from vericite.bench import train_caqa as tc

    data = write_items(tmp_path / "caqa.jsonl", queries=2)
    card, kept = train_keeping_the_model(data, tmp_path / "a", epochs=1, batch_size=8, first="answer", max_length=32, threads=1, base=tiny_base)
    assert card["recipe"]["first"] == "answer" and "--first answer" in card["command"]
    judge = create("judges", f"caqa:{tmp_path / 'a'}", BuildContext(cache=False))
    one, other = judge.judge([JudgePair("the cat sat", "the cat was in the park", question="where was the cat"),  # evidence, claim
                              JudgePair("the cat sat", "the cat was in the park", question="a big old city")])
    assert one.scores == other.scores, "the question reached the input"
    tok = AutoTokenizer.from_pretrained(str(tiny_base))
    want = tc.predict(kept["model"], tok, ["the cat was in the park"], ["the cat sat"], max_length=32)[0]
    assert np.allclose([one.scores[c] for c in judge.labels], want, atol=1e-4)
    from vericite.errors import VericiteError

    with pytest.raises(VericiteError, match="first text"):
        tc.train_caqa(data, tmp_path / "b", first="citation", base=tiny_base)
