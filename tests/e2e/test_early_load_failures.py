"""A model that the corpus's scoring loads (CONNER's relevance model, ALCE's ``--reader``) and that cannot be loaded —
a missing or corrupt file, a bad spec — fails the evaluation before any answer is judged: one line naming it, a
non-zero exit, never a traceback, and no judge call (counted on the fake judges). A model that loads is loaded once,
by the driver, and the corpus's scoring uses it. ALCE's QA model, missing by design offline (its metrics not computed
with the reason), is decided before the judging too, and said in one warning line then."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.checkpoint import CONNER, Cut
from vericite import registry
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend
from vericite.models.scorers import onnx


def lines(tmp_path, rows):
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f


def conner(tmp_path, *args):
    return CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(lines(tmp_path, CONNER)), "-o", str(tmp_path / "out"), "-q",
                                    "--resamples", "10", "--judge", "fake-3way", "--lm", "fake", *args])  # fmt: skip


def one_line_failure(r, *words):
    assert r.exit_code != 0, r.output
    assert "Traceback" not in r.output and isinstance(r.exception, SystemExit), (r.exception, r.output)
    said = [x for x in r.output.splitlines() if "cannot be loaded" in x]
    assert len(said) == 1 and all(w in said[0] for w in words), r.output
    return said[0]


def test_a_relevance_model_whose_file_fails_verification_fails_before_any_judge_call(tmp_path, monkeypatch):
    monkeypatch.setitem(onnx.FILES, "reranker_en", {**onnx.FILES["reranker_en"], "model.onnx": "0" * 64})  # as a corrupt file reads
    cut = Cut(monkeypatch)
    r = conner(tmp_path)  # the default relevance model, ms-marco
    one_line_failure(r, "relevance model ms-marco", "sha256")
    assert cut.calls == 0


def test_a_corrupt_model_file_that_its_runtime_refuses_is_one_line(tmp_path, monkeypatch):
    folder = tmp_path / "reranker"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not an onnx graph")
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(onnx, "model_dir", lambda name: folder)
    monkeypatch.setattr(onnx, "verified_files", lambda name: {})  # past the checksums: onnxruntime's own error
    cut = Cut(monkeypatch)
    line = one_line_failure(conner(tmp_path), "relevance model ms-marco")
    assert cut.calls == 0 and len(line) < 400


def test_a_bad_relevance_model_spec_fails_before_any_judge_call(tmp_path, monkeypatch):
    cut = Cut(monkeypatch)
    one_line_failure(conner(tmp_path, "--relevance-model", "ms-marco:nine"), "relevance model ms-marco:nine", "takes no argument")
    one_line_failure(conner(tmp_path, "--relevance-model", "hf:/no/such/cross-encoder"), "hf:/no/such/cross-encoder")
    assert cut.calls == 0


def test_a_coherence_model_that_cannot_be_loaded_fails_before_any_judge_call(tmp_path, monkeypatch):
    cut = Cut(monkeypatch)
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner:coherence_model=hf:/no/such/coherence-model", "-i", str(lines(tmp_path, CONNER)),
                                 "-o", str(tmp_path / "out"), "-q", "--resamples", "10", "--judge", "fake-3way", "--lm", "fake",
                                 "--relevance-model", "none"])  # fmt: skip
    one_line_failure(r, "coherence model hf:/no/such/coherence-model", "conner:coherence_model")
    assert cut.calls == 0


def test_a_coherence_model_is_neither_loaded_nor_recorded_when_metrics_leaves_coherence_paragraph_out(tmp_path, monkeypatch):
    # it was built (an unloadable one failed the evaluation) and its id recorded though nothing scored with it
    cut = Cut(monkeypatch)
    task = "conner:coherence_model=hf:/no/such/coherence-model"
    common = ["-i", str(lines(tmp_path, CONNER)), "-q", "--resamples", "10", "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "none"]
    r = CliRunner().invoke(cli, ["evaluate", "--task", task, *common, "-o", str(tmp_path / "f"), "--metrics", "factuality,coherence_sentence"])
    assert r.exit_code == 0 and "coherence model" not in r.output, r.output
    res = json.loads((tmp_path / "f" / "results.json").read_text())
    ev = res["evaluation"]["conner"]
    assert ev["coherence_paragraph_model"] is None and "coherence_paragraph" not in res["metrics"]
    assert not [d for d in ev["deviations"] if d.startswith("coherence_paragraph")], ev["deviations"]
    calls = cut.calls
    r = CliRunner().invoke(cli, ["evaluate", "--task", task, *common, "-o", str(tmp_path / "g"), "--metrics", "factuality,coherence_paragraph"])
    one_line_failure(r, "coherence model hf:/no/such/coherence-model", "conner:coherence_model")
    assert cut.calls == calls  # still before any judge call when it is measured


def test_relevance_model_none_is_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setitem(onnx.FILES, "reranker_en", {**onnx.FILES["reranker_en"], "model.onnx": "0" * 64})
    r = conner(tmp_path, "--relevance-model", "none")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "out" / "results.json").read_text())["evaluation"]["conner"]["relevance_model"] is None


def test_a_relevance_model_is_neither_loaded_nor_recorded_when_metrics_leaves_relevance_out(tmp_path, monkeypatch):
    # it was loaded (a broken one failed the evaluation) and its id recorded though nothing scored with it
    monkeypatch.setitem(onnx.FILES, "reranker_en", {**onnx.FILES["reranker_en"], "model.onnx": "0" * 64})  # as a corrupt file reads
    r = conner(tmp_path, "--metrics", "factuality,coherence_sentence", "-o", str(tmp_path / "f"))
    assert r.exit_code == 0 and "relevance model" not in r.output, r.output
    res = json.loads((tmp_path / "f" / "results.json").read_text())
    assert res["evaluation"]["conner"]["relevance_model"] is None and "relevance" not in res["metrics"]
    one_line_failure(conner(tmp_path, "--metrics", "factuality,relevance", "-o", str(tmp_path / "g")), "relevance model ms-marco")


def test_a_relevance_model_that_loads_is_built_once_and_scores_the_corpus(tmp_path):
    from vericite.fakes.scoring import FakePairScorer

    built = []

    def factory(arg, *, ctx, **options):
        built.append(arg)
        return FakePairScorer()

    registry.scorers.register("counting", factory, replace=True)
    try:
        r = conner(tmp_path, "--relevance-model", "counting")
    finally:
        registry.scorers.unregister("counting")
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["metrics"]["relevance"]["n"] == len(CONNER) and built == [""]


# --------------------------------------------------------------------------- ALCE's --reader

ALCE = [{"id": f"q{i}", "question": "What is the capital of France?", "answers": [["Paris"]], "answer": "It is Paris [1].",
         "passages": [{"title": "France", "text": "Paris is the capital of France."}]} for i in range(3)]  # fmt: skip


@pytest.fixture
def broken_reader():
    def factory(arg, *, ctx, **options):
        if arg == "corrupt":
            raise RuntimeError("weights file truncated at byte 1024")
        return FakeBackend(f"fake:{arg}", replies=lambda messages, params: "Paris")

    registry.backends.register("brittle", factory, replace=True)
    yield
    registry.backends.unregister("brittle")


def alce(tmp_path, *args):
    return CliRunner().invoke(cli, ["evaluate", "--task", "alce-short", "-i", str(lines(tmp_path, ALCE)), "-o", str(tmp_path / "out"), "-q",
                                    "--resamples", "10", "--no-cache", "--judge", "fake", *args])  # fmt: skip


def test_a_reader_that_cannot_be_loaded_fails_before_any_judge_call(tmp_path, monkeypatch, broken_reader):
    cut = Cut(monkeypatch)
    one_line_failure(alce(tmp_path, "--reader", "llm:no-such-model"), "reader", "no-such-model")
    one_line_failure(alce(tmp_path, "--reader", "llm:brittle:corrupt"), "reader", "brittle:corrupt", "truncated")
    assert cut.calls == 0
    r = alce(tmp_path, "--reader", "llm:brittle:fine")  # one that loads: judged, then read
    assert r.exit_code == 0, r.output
    assert cut.calls > 0 and json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]["answer_em"]["value"] == 1.0


# --------------------------------------------------------------------------- ALCE's QA model


@pytest.fixture
def qa_model(monkeypatch):
    """ALCE's QA model replaced: each construction recorded with the fake judges' calls made by then (``Cut``)."""
    import vericite.metrics.alce_qa as alce_qa

    built, cut = [], Cut(monkeypatch)

    class Answers:
        fail = None

        def __init__(self, model):
            built.append(cut.calls)
            if Answers.fail:
                raise OSError(Answers.fail)
            self.id = model

        def answer(self, question, context):
            return "Paul Simon" if "Simon" in context else ""

    monkeypatch.setattr(alce_qa, "QAModel", Answers)
    monkeypatch.setattr(alce_qa, "qa_unavailable", lambda model: None)
    return Answers, built, cut


def asqa(tmp_path, *args):
    from tests.support.checkpoint import alce_file

    tmp_path.mkdir(exist_ok=True)
    return CliRunner().invoke(cli, ["evaluate", "--task", "alce-asqa", "-i", str(alce_file(tmp_path)), "-o", str(tmp_path / "out"), "-q", "--resamples", "10",
                                    "--no-cache", "--judge", "fake", "--metrics", "qa_em,qa_f1,qa_hit,alce_citation_recall", *args])  # fmt: skip


def test_alces_qa_model_is_loaded_before_any_judge_call_and_one_that_fails_is_said_then(tmp_path, monkeypatch, qa_model):
    # as documented, a QA model that cannot be had or loaded leaves qa_em/qa_f1/qa_hit not computed with the reason
    # (exit 0); it is now decided before the first answer is judged, and said once on stderr then
    import vericite.metrics.alce_qa as alce_qa

    Answers, built, cut = qa_model
    r = asqa(tmp_path)
    assert r.exit_code == 0, r.output
    assert built == [0] and cut.calls > 0  # loaded once, before any judge call; the corpus's scoring used it
    metrics = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]
    assert metrics["qa_em"]["value"] == 1.0 and "warning" not in r.output

    Answers.fail = "weights file truncated"
    built.clear()
    cut.calls = 0
    r = asqa(tmp_path / "x")
    assert r.exit_code == 0, r.output
    said = [x for x in r.output.splitlines() if x.startswith("warning:")]
    assert said == ["warning: ALCE's QA model gaotianyu1350/roberta-large-squad could not be loaded (OSError: weights file truncated): qa_em, qa_f1, qa_hit will not be computed (results.json says why)"], r.output
    assert built == [0] and cut.calls > 0  # tried once, before the judging, not again after it
    metrics = json.loads((tmp_path / "x" / "out" / "results.json").read_text())["metrics"]
    assert metrics["qa_em"]["value"] is None and "weights file truncated" in metrics["qa_em"]["reason"]
    assert metrics["alce_citation_recall"]["value"] is not None

    monkeypatch.setattr(alce_qa, "qa_unavailable", lambda model: f"ALCE's QA model {model} is not in the Hugging Face cache")
    r = asqa(tmp_path / "y")
    assert r.exit_code == 0 and r.output.count("warning: ALCE's QA model") == 1 and "not in the Hugging Face cache" in r.output, r.output
    r = CliRunner().invoke(cli, ["evaluate", "--task", "alce-asqa", "-i", str(tmp_path / "result.json"), "-o", str(tmp_path / "z"), "-q", "--judge", "fake"])
    assert r.exit_code == 0 and "warning" not in r.output  # not asked for (--metrics): not loaded, nothing said


# --------------------------------------------------------------------------- vericite run


def test_a_run_with_a_relevance_model_that_cannot_be_loaded_fails_before_it_generates(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is the capital of land {i}?"}) + "\n" for i in range(3)), encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    base = f"name: t\ndataset: {data}\nmodel: fake\nmethod: conner-knowledge\ntask: conner\njudge: fake-3way\nlm: fake\nresamples: 5\n"
    cfg.write_text(base + "relevance_model: ms-marco:nine\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    one_line_failure(r, "relevance model ms-marco:nine", "takes no argument")
    assert not list((tmp_path / "run").rglob("samples.jsonl"))  # nothing generated
    cfg.write_text(base + "relevance_model: fake\n", encoding="utf-8")  # the same run with a model that loads
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "ok"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "ok" / "results.json").read_text())["metrics"]["relevance"]["n"] == 3
    # metrics without relevance: the model is not loaded before generating (nor after), nor recorded
    cfg.write_text(base + "relevance_model: ms-marco:nine\nmetrics: [factuality]\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "some"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "some" / "results.json").read_text())
    assert res["evaluation"]["conner"]["relevance_model"] is None and "relevance" not in res["metrics"]


def test_a_run_with_a_reader_of_an_unknown_model_fails_before_it_generates(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "answer"}) + "\n" for x in ALCE), encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\nmethod: vanilla\ntask: alce-short\njudge: fake\nreader: llm:no-such-model\nresamples: 5\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    one_line_failure(r, "reader", "no-such-model", "unknown")
    assert not list((tmp_path / "run").rglob("samples.jsonl"))  # nothing generated


def test_a_run_whose_reader_model_file_is_missing_fails_before_it_generates(tmp_path, monkeypatch):
    # a known model (a registered embedded one, llamacpp:<path>) whose file is missing was found only when the first
    # evaluation loaded it, after level 0's generation
    from vericite.models import provision

    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "answer"}) + "\n" for x in ALCE), encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    base = f"name: t\ndataset: {data}\nmodel: fake\nmethod: vanilla\ntask: alce-short\njudge: fake\nresamples: 5\n"
    cfg.write_text(base + f"reader: llm:llamacpp:{tmp_path / 'no-such.gguf'}\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    one_line_failure(r, "reader", "no-such.gguf", "not found")
    assert not list((tmp_path / "run").rglob("samples.jsonl"))  # nothing generated
    monkeypatch.setattr(provision.ModelSpec, "is_installed", lambda self: False)
    cfg.write_text(base + "reader: llm:smollm2-135m\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run2"), "--no-cache", "-q"])
    one_line_failure(r, "reader", "smollm2-135m", "is not installed")
    assert not list((tmp_path / "run2").rglob("samples.jsonl"))


def test_a_conner_run_whose_lm_file_is_missing_fails_before_it_generates(tmp_path):
    # CONNER's lm (its LM measures and validity's reader) is loaded by the evaluation's suite, after the generation
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is the capital of land {i}?"}) + "\n" for i in range(3)), encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\nmethod: conner-knowledge\ntask: conner\njudge: fake-3way\n"
                   f"lm: llamacpp:{tmp_path / 'no-lm.gguf'}\nrelevance_model: fake\nresamples: 5\n", encoding="utf-8")  # fmt: skip
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    one_line_failure(r, "LM", "no-lm.gguf", "not found")
    assert not list((tmp_path / "run").rglob("samples.jsonl"))
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("lm: llamacpp:", "lm: no-such-model #"), encoding="utf-8")
    one_line_failure(CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run2"), "--no-cache", "-q"]), "LM", "no-such-model")


def test_a_conner_run_whose_coherence_model_cannot_be_loaded_fails_before_it_generates(tmp_path):
    # conner:coherence_model was loaded only by the evaluation's preload, after the generation
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is the capital of land {i}?"}) + "\n" for i in range(3)), encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    base = (f"name: t\ndataset: {data}\nmodel: fake\nmethod: conner-knowledge\ntask: conner:coherence_model=hf:/no/such/coherence-model\n"
            "judge: fake-3way\nlm: fake\nrelevance_model: fake\nresamples: 5\n")  # fmt: skip
    cfg.write_text(base, encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    one_line_failure(r, "coherence model hf:/no/such/coherence-model", "conner:coherence_model")
    assert not list((tmp_path / "run").rglob("samples.jsonl"))  # nothing generated
    # metrics without coherence_paragraph: not loaded before generating (nor after), nor recorded
    cfg.write_text(base + "metrics: [factuality, coherence_sentence]\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "some"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "some" / "results.json").read_text())
    assert res["evaluation"]["conner"]["coherence_paragraph_model"] is None and "coherence_paragraph" not in res["metrics"]
    # a coherence model that loads: the run measures coherence_paragraph with it
    cfg.write_text(base.replace("hf:/no/such/coherence-model", "fake"), encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "ok"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ok" / "results.json").read_text())
    assert res["evaluation"]["conner"]["coherence_paragraph_model"].startswith("fake") and "coherence_paragraph" in res["metrics"]
