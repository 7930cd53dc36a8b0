"""conner-knowledge's NQ reference knowledge (``source=reference``, few-shot demonstrations) is the gold passage of
the file the run reads its questions from (``nq-500:<file>``, or ``--data-path``), not the shared file's: a custom
file whose passages differ gives its own, locally and in a pool, and needs no shared data."""

from __future__ import annotations

import json

import pytest

from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.runs.loop import generate_run

ROWS = [  # topic, question, gold passage, answer: passages no shared file holds
    ("Zorblat", "what colour is a zorblat", "A zorblat is a violet bird of the Custom Isles .", "violet"),
    ("Quennick", "where does a quennick live", "The quennick lives under the salt flats of Marrow .", "salt flats"),
    ("Tavish", "how tall is a tavish", "A tavish grows to nine metres on the plains of Oss .", "nine metres"),
    ("Pellow", "what does a pellow eat", "The pellow eats only copper moss in the spring .", "copper moss"),
]


@pytest.fixture
def nq_file(tmp_path, monkeypatch):
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path / "no-shared-data"))  # the shared file is not there
    f = tmp_path / "custom" / "nq.txt"
    f.parent.mkdir()
    f.write_text("".join("\t".join(r) + "\n" for r in ROWS), encoding="utf-8")
    return f


def prompts_of(cfg, out, pooled):
    prompts: list[str] = []
    backend = lambda: FakeBackend(replies=lambda messages, params: prompts.append(messages[-1]["content"]) or "K.")  # noqa: E731
    if pooled:
        generate_pooled(cfg, out, ray=None, workers=2, batch_size=1, backend_factory=backend, progress=False)
    else:
        generate_run(cfg, out, backend=backend(), progress=False)
    return prompts, [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("pooled", [False, True], ids=["local", "pooled"])
@pytest.mark.parametrize("given", ["spec", "data_path"])
def test_reference_knowledge_is_the_run_files_gold_passage(tmp_path, nq_file, given, pooled):
    where = {"dataset": f"nq-500:{nq_file}"} if given == "spec" else {"dataset": "nq-500", "data_path": str(nq_file)}
    cfg = GenerateConfig(**where, model="fake", method="conner-knowledge", cache=False, method_args={"source": "reference"})
    prompts, records = prompts_of(cfg, tmp_path / "out", pooled)
    assert prompts == []  # no model call: the reference is the knowledge
    assert sorted(r["output"] for r in records) == sorted(r[2] for r in ROWS)


@pytest.mark.parametrize("pooled", [False, True], ids=["local", "pooled"])
@pytest.mark.parametrize("draw", [{"demo_draw": "dataset"}, {"demo_draw": "run"}, {"pool": 3}], ids=["dataset", "run", "pool"])
def test_few_shot_demonstrations_are_the_run_files_gold_passages(tmp_path, nq_file, draw, pooled):
    cfg = GenerateConfig(dataset="nq-500", data_path=str(nq_file), model="fake", method="conner-knowledge", shot=2, seed=5, cache=False, **draw)
    prompts, records = prompts_of(cfg, tmp_path / "out", pooled)
    assert len(records) == 4 and len(prompts) == 4
    passages = [r[2] for r in ROWS]
    for p in prompts:  # two demonstrations, each a passage of the custom file
        assert sum(text in p for text in passages) == 2, p


def test_where_a_datasets_gold_passages_are(tmp_path, nq_file):
    from vericite.datasets import reference_file

    other = tmp_path / "other.txt"
    assert reference_file(f"nq-500:{nq_file}") == str(nq_file)
    assert reference_file(f"nq-500:{nq_file}", other) == str(other)  # --data-path is what the loader reads
    assert reference_file("nq-500", nq_file) == str(nq_file)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "question": "q?"}\n', encoding="utf-8")
    assert reference_file(str(questions)) is None and reference_file("demo") is None  # no gold passages file


def questions_file(tmp_path, nq_file, **meta):
    """nq_file's questions as a plain .jsonl of questions (their meta naming gold_document), ``meta`` added to each."""
    from vericite.datasets.nq import load_nq

    f = tmp_path / "questions.jsonl"
    f.write_text("".join(json.dumps({**s.to_dict(), "meta": {**s.meta, **meta}}) + "\n" for s in load_nq(nq_file)), encoding="utf-8")
    return f


@pytest.fixture
def shared_nq(tmp_path, monkeypatch):
    """A shared NQ file whose passages differ from nq_file's under the same document ids (what was read silently)."""
    from vericite.datasets.nq import RELATIVE

    f = tmp_path / "shared" / RELATIVE
    f.parent.mkdir(parents=True)
    f.write_text("".join("\t".join((t, q, "Shared passage of " + t + " .", a)) + "\n" for t, q, _, a in ROWS), encoding="utf-8")
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path / "shared"))
    return f


@pytest.mark.parametrize("few_shot", [False, True], ids=["reference", "few-shot"])
def test_a_questions_file_naming_gold_documents_is_refused_without_their_file(tmp_path, nq_file, shared_nq, few_shot):
    from vericite.errors import VericiteError

    data = questions_file(tmp_path, nq_file)
    args = {"shot": 2} if few_shot else {"method_args": {"source": "reference"}}
    cfg = GenerateConfig(dataset=str(data), model="fake", method="conner-knowledge", cache=False, **args)
    with pytest.raises(VericiteError, match="names gold_document 'nq-1'.*reference_file=FILE"):
        prompts_of(cfg, tmp_path / "out", False)  # not the shared file's passages under the same ids
    assert not (tmp_path / "out" / "samples.jsonl").exists()


@pytest.mark.parametrize("pooled", [False, True], ids=["local", "pooled"])
def test_a_questions_file_reads_gold_passages_from_the_file_it_names(tmp_path, nq_file, shared_nq, pooled):
    data = questions_file(tmp_path, nq_file)
    cfg = GenerateConfig(dataset=str(data), model="fake", method="conner-knowledge", cache=False, method_args={"source": "reference", "reference_file": str(nq_file)})
    _, records = prompts_of(cfg, tmp_path / "out", pooled)
    assert sorted(r["output"] for r in records) == sorted(r[2] for r in ROWS)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["config"]["reference_file"] == str(nq_file) and "sha256" in manifest["files"]["reference_file"]
    few = cfg.model_copy(update={"method_args": {"reference_file": str(nq_file), "shot": 2}})
    prompts, _ = prompts_of(few, tmp_path / "few", pooled)
    assert len(prompts) == 4 and all(sum(r[2] in p for r in ROWS) == 2 and "Shared passage" not in p for p in prompts), prompts


def test_passages_the_questions_carry_need_no_file_and_a_document_the_file_lacks_is_named(tmp_path, nq_file, shared_nq):
    from vericite.errors import VericiteError

    data = questions_file(tmp_path, nq_file, reference_knowledge="Carried with the question .")
    cfg = GenerateConfig(dataset=str(data), model="fake", method="conner-knowledge", cache=False, method_args={"source": "reference"})
    _, records = prompts_of(cfg, tmp_path / "carried", False)
    assert {r["output"] for r in records} == {"Carried with the question ."}
    short = tmp_path / "short.txt"
    short.write_text("\t".join(ROWS[0]) + "\n", encoding="utf-8")  # one passage: nq-1 only
    data = questions_file(tmp_path, nq_file)
    cfg = cfg.model_copy(update={"dataset": str(data), "method_args": {"source": "reference", "reference_file": str(short)}})
    with pytest.raises(VericiteError, match=f"which {short} does not hold"):
        prompts_of(cfg, tmp_path / "short", False)
