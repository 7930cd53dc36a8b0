"""Every registered implementation the contract suites run against, and how to build it here.

Each is built through ``registry.create`` (kind, spec, context, options), exactly as the CLI builds it; what a
test needs around it (a file, a store, a server stand-in) is made in ``tmp_path`` first. ``NOT_HERE`` lists the
registered names that cannot be built in a unit run, with the reason and where they are tested for real;
``test_coverage.py`` checks that every registered name is in one list or the other, so a new registration
without a contract run fails the suite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import httpx
import pytest

from vericite.registry import BuildContext, create
from vericite.types import Passage, Sample, Triple

#: every contract build: no call cache (nothing written outside tmp_path), one thread
CTX = BuildContext(cache=False, threads=1)

#: a small graph the graph, retriever, format and metric suites share
TRIPLES = [
    Triple("Q1", "instance of", "human", "Ada Lovelace"),
    Triple("Q1", "occupation", "mathematician", "Ada Lovelace"),
    Triple("Q1", "father", "Lord Byron", "Ada Lovelace"),
    Triple("Q2", "instance of", "human", "Lord Byron"),
    Triple("Q2", "occupation", "poet", "Lord Byron"),
    Triple("Q3", "instance of", "city", "London"),
    Triple("Q3", "country", "United Kingdom", "London"),
]
PASSAGES = [
    Passage("p1", "Ada Lovelace was an English mathematician and writer.", "Ada Lovelace"),
    Passage("p2", "Lord Byron was an English poet.", "Lord Byron"),
    Passage("p3", "London is the capital of the United Kingdom.", "London"),
]


@dataclass
class Impl:
    """One implementation: ``kind``/``spec`` as registered; ``make(tmp_path)`` returns the options to build
    it with (files made there first); ``extra`` holds what a suite needs to exercise it (a cited answer ...), and
    for a backend the optional capabilities it ``lacks`` (test_backends.py checks the declaration)."""

    kind: str
    spec: str
    make: Callable[[Path], dict[str, Any]] | None = None
    marks: tuple[Any, ...] = ()
    requires: Callable[[], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    after: Callable[[Any], Any] | None = None  # e.g. load the shared triples into an empty store

    @property
    def name(self) -> str:
        return self.spec.split(":", 1)[0]

    @property
    def id(self) -> str:
        return self.spec if len(self.spec) < 40 else self.name

    def build(self, tmp_path: Path) -> Any:
        if self.requires is not None:
            self.requires()
        options = self.make(tmp_path) if self.make is not None else {}
        spec = options.pop("_spec", self.spec)
        obj = create(self.kind, spec, CTX, **options)
        return self.after(obj) if self.after is not None else obj


# --------------------------------------------------------------------------- what some builds need


def require_smollm2() -> None:
    from tests.support.guards import require_smollm2 as need_it

    need_it()


def require_shared_data() -> None:
    from tests.support.guards import need
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "biokalma").is_dir(), "../shared/data is not beside this checkout (set VERICITE_DATA)")


def scripted_openai(request: httpx.Request) -> httpx.Response:
    """An OpenAI-compatible server, scripted: chat replies "Yes it does" (cut at max_tokens, with top
    log-probs when asked), /completions echoes prompt log-probs (-1 per word after the first)."""
    path = request.url.path
    if path.endswith("/models"):
        return httpx.Response(200, json={"data": [{"id": "scripted"}]})
    body = json.loads(request.content)
    if path.endswith("/chat/completions"):
        words = ["Yes", "it", "does"][: body["max_tokens"]]
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": " ".join(words)}, "finish_reason": "stop"}
        if body.get("logprobs"):
            steps = [{"token": w, "logprob": -0.1, "top_logprobs": [{"token": w, "logprob": -0.1}, {"token": "No", "logprob": -2.3}]} for w in words]
            choice["logprobs"] = {"content": steps}
        return httpx.Response(200, json={"choices": [choice], "usage": {"prompt_tokens": 9, "completion_tokens": len(words)}})
    if path.endswith("/completions"):
        words = body["prompt"].split(" ")
        offsets, at = [], 0
        for w in words:
            offsets.append(at)
            at += len(w) + 1
        lp = {"token_logprobs": [None] + [-1.0] * (len(words) - 1) + [-0.5], "text_offset": offsets + [len(body["prompt"])]}
        return httpx.Response(200, json={"choices": [{"text": "x", "logprobs": lp}], "usage": {"prompt_tokens": len(words)}})
    return httpx.Response(404, json={"error": {"message": "no such path"}})


def fake_ner(text: str) -> Any:
    """Stands in for spaCy: every label of the shared graph found in the text is a PERSON or GPE mention."""
    labels = {"Ada Lovelace": "PERSON", "Lord Byron": "PERSON", "London": "GPE"}
    return SimpleNamespace(ents=[SimpleNamespace(text=k, label_=v) for k, v in labels.items() if k in text])


def oxigraph_on_disk(tmp_path: Path) -> dict[str, Any]:
    from vericite.knowledge.store import OxigraphStore

    folder = tmp_path / "store"
    with OxigraphStore(folder) as store:
        store.add_triples(TRIPLES)
    return {"_spec": f"oxigraph:{folder}"}


def questions_file(tmp_path: Path) -> dict[str, Any]:
    f = tmp_path / "questions.jsonl"
    rows = [{"id": f"q{i}", "question": f"Who is {t.subject_label}?", "knowledge": [t.to_dict()]} for i, t in enumerate(TRIPLES[:3])]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"_spec": f"jsonl:{f}"}


def judge_table(tmp_path: Path) -> dict[str, Any]:
    """A table judge that knows two of the judge suite's pairs (and not the third: a failed judgement)."""
    f = tmp_path / "verdicts.jsonl"
    rows = [
        {"premise": "Ada Lovelace was a  mathematician .", "hypothesis": "occupation: mathematician", "entailed": True},
        {"premise": "London is not in France.", "hypothesis": "country: France", "entailed": False},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"_spec": f"table:{f}"}


def judge_fit(tmp_path: Path) -> dict[str, Any]:
    """An llm3f fit file for the fake model (what `vericite train llm3f --model fake` writes, biases by hand)."""
    f = tmp_path / "llm3f.json"
    fit = {"kind": "vericite-llm3-fit", "format": 1, "fit": "class-bias@1", "prompt": "judge-3way@1",
           "model": {"name": "fake", "backend": "fake", "model": "fake", "sha256": None},
           "bias": {"supports": 0.0, "refutes": -0.5, "not_enough_info": 0.5}}
    f.write_text(json.dumps(fit), encoding="utf-8")
    return {"_spec": f"llm3f:{f}"}


def alce_file(tmp_path: Path) -> dict[str, Any]:
    """An ALCE file of two questions with their documents (ELI5-shaped: claims, a long answer)."""
    f = tmp_path / "eli5_eval.json"
    items = [
        {"question": f"Who was {p.title}?", "answer": p.text, "claims": [p.text], "docs": [q.to_dict() for q in PASSAGES]}
        for p in PASSAGES[:2]
    ]
    f.write_text(json.dumps(items), encoding="utf-8")
    return {"_spec": f"alce:{f}"}


def twowiki_file(tmp_path: Path) -> dict[str, Any]:
    """A 2WikiMultihopQA file of two questions with their context paragraphs (the released shape)."""
    f = tmp_path / "dev.json"
    items = [
        {"_id": f"w{i}", "type": "inference", "question": f"Who was {p.title}?", "answer": p.title, "context": [[q.title, [q.text]] for q in PASSAGES],
         "supporting_facts": [[p.title, 0]], "evidences": []}
        for i, p in enumerate(PASSAGES[:2])
    ]  # fmt: skip
    f.write_text(json.dumps(items), encoding="utf-8")
    return {"_spec": f"2wiki:{f}"}


def webq_file(tmp_path: Path) -> dict[str, Any]:
    """A WebQuestions file of two questions (the released shape: targetValue, utterance)."""
    f = tmp_path / "webquestions.json"
    items = [{"url": "u", "targetValue": f'(list (description "{p.title}"))', "utterance": f"who was {p.title}?"} for p in PASSAGES[:2]]
    f.write_text(json.dumps(items), encoding="utf-8")
    return {"_spec": f"webq:{f}"}


def require_alce_prompts() -> None:
    from tests.conftest import need
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "alce" / "prompts").is_dir(), "../shared/data/alce is not beside this checkout (set VERICITE_DATA)")


#: what a line of the ALCE tasks holds beyond a fake sample's fields: the documents the answer cites
ALCE_FIELDS = {"fields": {"passages": [p.to_dict() for p in PASSAGES]}}


def builder_pool(tmp_path: Path) -> dict[str, Any]:
    from tests.support.builder import fake, hand_pool

    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(hand_pool()), encoding="utf-8")
    return {"_spec": f"biokalma:{pool}", "n": 2, "iterations": 3, "model": "fake", "min_gold": 2, "generator": fake()}


def caqa_pool(tmp_path: Path) -> dict[str, Any]:
    from tests.support.caqa import write_pool

    return {"pool": str(write_pool(tmp_path)), "n": 12, "verbalise": "template"}


def smollm2_path(tmp_path: Path) -> dict[str, Any]:
    from vericite.models.provision import SMOLLM2, model_path

    return {"_spec": f"llamacpp:{model_path(SMOLLM2)}"}


def passage_index(kind: str) -> Callable[[Path], dict[str, Any]]:
    """An index of the shared passages in tmp_path (dense and hybrid with the embedded bge-small model)."""

    def make(tmp_path: Path) -> dict[str, Any]:
        from vericite.knowledge.docs import build_from_passages

        folder = tmp_path / "index"
        build_from_passages(PASSAGES, folder, retrievers=[kind], ctx=CTX, progress=False)
        return {"_spec": f"{kind}:{folder}", "k": 2}

    return make


def require_onnx_models() -> None:
    from tests.conftest import need
    from vericite.errors import ModelUnavailableError
    from vericite.models.scorers.onnx import model_dir

    try:
        model_dir("bge_small_en")
        ok, why = True, ""
    except ModelUnavailableError as e:
        ok, why = False, str(e)
    need(ok, why)


def require_conner_data() -> None:
    from tests.conftest import need
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "conner" / "nq").is_dir(), "../shared/data/conner is not beside this checkout (set VERICITE_DATA)")


def _with_triples(store: Any) -> Any:
    store.add_triples(TRIPLES)
    return store


# --------------------------------------------------------------------------- the implementations

SLOW = (pytest.mark.slow,)
SHARED = (pytest.mark.shared,)

IMPLS: list[Impl] = [
    # LLM backends and models
    Impl("backends", "fake"),
    Impl("backends", "openai:scripted", make=lambda _: {"transport": httpx.MockTransport(scripted_openai), "backoff": 0.0},
         extra={"lacks": ("ContinuationScorer", "TokenSpanScorer")}),
    Impl("backends", "llamacpp", make=smollm2_path, marks=SLOW, requires=require_smollm2),
    Impl("models", "smollm2-135m", marks=SLOW, requires=require_smollm2),
    # judges
    Impl("judges", "fake"),
    Impl("judges", "fake-4class"),
    Impl("judges", "triple"),
    Impl("judges", "llm:fake"),
    Impl("judges", "fake-3way"),
    Impl("judges", "llm3:fake"),
    Impl("judges", "llm3c:fake"),
    Impl("judges", "llm3f:<fit file>", make=judge_fit),
    Impl("judges", "llm4:fake"),
    Impl("judges", "autois:fake"),
    Impl("judges", "table:<file.jsonl>", make=judge_table),
    # knowledge
    Impl("graphs", "fake", make=lambda _: {"triples": TRIPLES}),
    Impl("graphs", "oxigraph", after=_with_triples),
    Impl("graphs", "oxigraph:<store folder>", make=oxigraph_on_disk),
    Impl("docstores", "fake"),
    Impl("docstores", "index:<dir>", make=lambda tmp: {"_spec": f"index:{tmp / 'store'}"}),
    Impl("retrievers", "fake", make=lambda _: {"graph": create("graphs", "fake", CTX, triples=TRIPLES)}),
    Impl("retrievers", "kalma", make=lambda _: {"graph": create("graphs", "fake", CTX, triples=TRIPLES), "ner": fake_ner}),
    # passage retrievers over an index folder (evidence: passages, not a graph's triples)
    Impl("retrievers", "bm25:<index dir>", make=passage_index("bm25"), extra={"evidence": "passages"}),
    Impl("retrievers", "dense:<index dir>", make=passage_index("dense"), requires=require_onnx_models, extra={"evidence": "passages"}),
    Impl("retrievers", "hybrid:<index dir>", make=passage_index("hybrid"), requires=require_onnx_models, extra={"evidence": "passages"}),
    Impl("scorers", "fake"),
    Impl("scorers", "ms-marco", requires=require_onnx_models),
    Impl("embedders", "fake"),
    Impl("embedders", "bge-small", requires=require_onnx_models),
    # citation formats: a well-cited answer, and what it was given
    Impl("formats", "kg", extra={"cited": "Ada was a mathematician [Q1, occupation: mathematician].", "knowledge": TRIPLES}),
    Impl("formats", "passages", extra={"cited": "Ada was a mathematician [1].", "knowledge": PASSAGES}),
    Impl("formats", "alce", extra={"cited": "Ada was a mathematician [1].", "knowledge": PASSAGES}),
    Impl("formats", "alce-qampari", extra={"cited": "Ada Lovelace [1]", "knowledge": PASSAGES}),
    # metrics, methods, data, builders, experiments, tasks
    Impl("metrics", "fake"),
    Impl("metrics", "kalma", make=lambda _: {"judge": "triple", "resamples": 50}),
    Impl("metrics", "geval:fake", make=lambda _: {"resamples": 50}),
    Impl("metrics", "alce", make=lambda _: {"judge": "fake", "resamples": 50}),
    Impl("metrics", "conner", make=lambda _: {"judge": "fake-3way", "lm": "fake", "scorer": "fake", "resamples": 50}),
    Impl("metrics", "attribution", make=lambda _: {"judge": "fake-4class", "resamples": 50}),
    Impl("methods", "fake"),
    Impl("methods", "kalma:fake"),
    Impl("methods", "conner-knowledge:fake"),
    # ALCE's baselines read ALCE's prompt files from the shared data
    *(Impl("methods", f"{m}:fake", marks=SHARED, requires=require_alce_prompts) for m in ("vanilla", "summ", "snippet", "rerank", "closedbook")),
    Impl("methods", "vtg:fake"),  # VTG: its prompts are its own (App. B), no shared data
    Impl("datasets", "fake"),
    Impl("datasets", "demo"),
    Impl("datasets", "jsonl:<file>", make=questions_file),
    Impl("datasets", "biokalma", marks=SHARED, requires=require_shared_data),
    Impl("datasets", "biokalma-gold", marks=SHARED, requires=require_shared_data),
    Impl("datasets", "biokalma-mini"),  # the checkout's datasets/biokalma-mini.jsonl
    Impl("datasets", "nq-500", marks=SHARED, requires=require_conner_data),
    Impl("datasets", "wow-seen-500", marks=SHARED, requires=require_conner_data),
    Impl("datasets", "wow-unseen-500", marks=SHARED, requires=require_conner_data),
    Impl("datasets", "alce:<file>", make=alce_file),
    Impl("datasets", "2wiki:<file>", make=twowiki_file),
    Impl("datasets", "webq:<file>", make=webq_file),
    Impl("datasets", "alce-asqa-10", marks=SHARED, requires=require_shared_data),
    Impl("datasets", "alce-eli5-30", marks=SHARED, requires=require_shared_data),
    Impl("datasets", "asqa-dev-500", marks=SHARED, requires=require_shared_data),
    Impl("builders", "fake"),
    Impl("builders", "biokalma:<pool file>", make=builder_pool),
    Impl("builders", "caqa", make=caqa_pool),
    Impl("experiments", "fake"),
    Impl("experiments", "conscious-incompetence"),
    Impl("experiments", "retrieval-accuracy"),
    *(Impl("experiments", f"vtg-{e}") for e in ("docs-per-query", "queries", "trials", "ablation", "methods")),
    Impl("experiments", "conner-sources"),
    Impl("experiments", "conner-selection"),
    Impl("tasks", "fake"),
    Impl("tasks", "kalma"),
    Impl("tasks", "alce", extra=ALCE_FIELDS),
    Impl("tasks", "alce-asqa", extra=ALCE_FIELDS),
    Impl("tasks", "alce-qampari", extra=ALCE_FIELDS),
    Impl("tasks", "alce-eli5", extra=ALCE_FIELDS),
    Impl("tasks", "alce-short", extra=ALCE_FIELDS),
    Impl("tasks", "conner", extra={"fields": {"knowledge": "Ann was born in Rome. She painted."}}),
]

#: registered names no contract run builds here, why, and where they are tested for real
NOT_HERE: dict[tuple[str, str], str] = {
    ("judges", "nli"): "needs torch and an NLI model folder; tests/unit/judges/test_nli.py builds tiny random ones",
    ("judges", "nli4"): "a three-way NLI model folder (as nli); its mapping is tested in tests/unit/judges/test_four_class.py",
    ("judges", "nli3"): "a three-way NLI model folder (as nli); its three labels are read in tests/unit/judges/test_three_way.py",
    ("judges", "caqa"): "needs a folder made by `vericite train caqa` (torch, a minute); tests/real/test_train_caqa.py trains one and judges with it",
    ("graphs", "sparql"): "needs a SPARQL server; tests/real/test_sparql_server.py runs `oxigraph serve` (slow)",
    ("models", "qwen2.5-coder-1.5b"): "the llama.cpp backend of smollm2-135m, with 1.5B weights: too slow for a contract run",
    ("embedders", "hf"): "needs a hub model or a trained folder (a random tiny model cannot rank); tests/unit/models/test_scorers_hf.py loads tiny random ones",
    ("scorers", "hf"): "needs a hub model or a trained folder (a random tiny model cannot rank); tests/unit/models/test_scorers_hf.py loads tiny random ones",
}


def params(kind: str) -> list[Any]:
    return [pytest.param(i, id=i.id, marks=i.marks) for i in IMPLS if i.kind == kind]


def experiment_samples() -> list[Sample]:
    """Four samples about different people, four triples each, the first three the gold set."""
    out = []
    for n, name in enumerate(["Ada Lovelace", "Lord Byron", "Mary Shelley", "Percy Shelley"], 1):
        triples = [Triple(f"Q{n}", p, f"{p} of {name}", name) for p in ("occupation", "father", "mother", "spouse")]
        out.append(Sample(f"s{n}", f"Who was {name}?", knowledge=triples, gold=triples[:3], gold_entities=[f"Q{n}"]))
    return out
