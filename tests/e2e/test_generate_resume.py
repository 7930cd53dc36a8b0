"""``generate --resume`` (and ``run --resume``'s levels) continue a run folder only with what made its answers: the
config (dataset, model, seed, the method's options) and what the method records beside it (its versioned id, the
model's identity, prompt ids and files by sha256, parser, retriever, sampling parameters). Anything else is one
line naming what differs, exit 2, and the folder untouched: never a folder of answers made two ways."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.alce import TINY, write_alce_files
from vericite.cli.main import cli
from vericite.errors import VericiteError
from vericite.fakes import pipeline as fake_pipeline
from vericite.generate import alce as alce_methods

DOCS = [
    {"title": "The Sound of Silence", "text": "The Sound of Silence is a song by Simon & Garfunkel, written by Paul Simon.", "summary": "A song."},
    {"title": "Paul Simon", "text": "Paul Simon is an American musician.", "summary": "A musician."},
    {"title": "Elsewhere", "text": "Nothing to do with it."},
]
QUESTIONS = [{"sample_id": f"q{i}", "question": f"Who wrote song {i}?", "docs": DOCS, "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}]} for i in range(3)]


@pytest.fixture
def files(tmp_path):
    return write_alce_files(tmp_path, QUESTIONS)


def generate(tmp_path, files, *extra, method="summ"):
    data, prompt = files
    args = ["generate", "--method", method, "--dataset", data, "--model", "fake", "--ndoc", 2, "--shot", 0, "--method-arg", f"prompt={prompt}",
            "--out", tmp_path / "run", "-q", "--no-cache", *extra]  # fmt: skip
    return CliRunner().invoke(cli, [str(a) for a in args])


def folder(tmp_path):
    """The run folder's files as they are (a refused resume changes none)."""
    return {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file() and p.name != ".lock"}


def refused(r, *named):
    assert r.exit_code == 2, r.output
    assert r.output.startswith("error: cannot resume") and len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output, r.output
    for n in named:
        assert n in r.output, r.output


def test_a_folder_made_by_another_version_of_the_method_is_not_continued(tmp_path, files, monkeypatch):
    monkeypatch.setitem(alce_methods.VERSIONS, "summ", 1)  # the folder was made by summ@1
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    before = folder(tmp_path)
    assert json.loads(before["manifest.json"])["method"] == "summ@1"
    monkeypatch.setitem(alce_methods.VERSIONS, "summ", 2)  # this vericite's summ
    refused(generate(tmp_path, files, "--resume"), "method", "summ@1", "summ@2")
    assert folder(tmp_path) == before  # nothing appended, the manifest not rewritten


@pytest.mark.parametrize(
    "change, named",
    [
        (["--ndoc", 1], "ndoc"), (["--shot", 1], "shot"), (["--seed", 3], "seed"), (["--model", "fake:other"], "model"),
        (["--retriever", "tfidf"], "retriever"), (["--index", "INDEX"], "index"), (["--method-arg", "shorter_pool=5"], "shorter_pool"),
        (["--temperature", 0.1], "temperature"), (["--max-tokens", 20], "max_tokens"),
    ],
)  # fmt: skip
def test_other_method_options_are_refused(tmp_path, files, change, named):
    if "INDEX" in change:  # a real index of documents to retrieve from
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text(json.dumps({"id": "d1", "title": "Rome", "text": "Rome is the capital of Italy."}) + "\n", encoding="utf-8")
        assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"]).exit_code == 0
        change = [str(tmp_path / "idx") if c == "INDEX" else c for c in change]
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    before = folder(tmp_path)
    refused(generate(tmp_path, files, "--resume", *change), named)
    assert folder(tmp_path) == before


def test_another_dataset_is_refused(tmp_path, files):
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    before = folder(tmp_path)
    other = tmp_path / "asqa_other.json"
    other.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    data, prompt = files
    refused(generate(tmp_path, (other, prompt), "--resume"), "dataset")
    assert folder(tmp_path) == before


def test_an_edited_prompt_file_is_refused(tmp_path, files):
    """Same path, other demonstrations: the prompt file's sha256 (in the manifest) differs; the line names the file."""
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    before = folder(tmp_path)
    data, prompt = files
    prompt.write_text(json.dumps({**TINY, "instruction": "Answer briefly."}), encoding="utf-8")
    refused(generate(tmp_path, files, "--resume"), f"{prompt} (prompt) changed since the run began", "sha256")
    assert folder(tmp_path) == before


def test_the_same_settings_resume_and_answer_the_rest(tmp_path, files):
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    r = generate(tmp_path, files, "--resume", "--threads", 2)  # the limit and operational settings may change
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["id"] for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()] == ["q0", "q1", "q2"]


def test_a_key_an_older_vericite_did_not_record_is_not_a_difference(tmp_path, files):
    """Only what both manifests record is compared: a folder from before a manifest key existed still resumes."""
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    path = tmp_path / "run" / "manifest.json"
    old = json.loads(path.read_text())
    del old["retrieval_depth"], old["params"]["top_p"]
    path.write_text(json.dumps(old))
    r = generate(tmp_path, files, "--resume")
    assert r.exit_code == 0, r.output


def test_run_resume_refuses_a_level_made_by_another_method_version(tmp_path, monkeypatch):
    """``vericite run --resume``: each level's generation is checked the same way (the level's run folder)."""
    from tests.support.pipeline import citing_reply
    from vericite.models.fake import FakeBackend
    from vericite.runs.runner import load_run_config, run_config

    data = tmp_path / "q.jsonl"
    rows = [{"id": f"q{i}", "question": f"What did P{i} do?", "knowledge": [{"subject": f"Q{i}", "subject_label": f"P{i}", "property": "occupation", "value": f"job{i}"}]} for i in range(3)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    yaml = tmp_path / "c.yaml"
    yaml.write_text(f"name: t\ndataset: {data}\nmodel: fake\nmethod: fake\nexperiment: fake\nlevels: [0, 1]\nresamples: 5\njudge: fake\n")
    cfg = load_run_config(yaml, {})
    out = tmp_path / "runs"
    run_config(cfg, out, progress=False, backend=FakeBackend(replies=citing_reply))
    before = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".lock"}
    assert json.loads((out / "level-0" / "manifest.json").read_text())["method"] == "fake-method@1"

    monkeypatch.setattr(fake_pipeline.FakeMethod, "id", "fake-method@2")
    with pytest.raises(VericiteError, match=r"cannot resume .*level-0.*method: 'fake-method@1' -> 'fake-method@2'"):
        run_config(cfg, out, resume=True, progress=False, backend=FakeBackend(replies=citing_reply))
    r = CliRunner().invoke(cli, ["run", str(yaml), "--out", str(out), "--resume", "-q"])
    refused(r, "fake-method@1", "fake-method@2")
    assert {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".lock"} == before


def test_an_option_newer_than_the_folder_is_the_same_run_at_its_default(tmp_path, files):
    """A folder written before an option existed (its config lacks the key) resumes when the option is at its
    default (VTG's simplifier_batch, added later, is false by default), and is refused when it is not."""
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    path = tmp_path / "run" / "manifest.json"
    old = json.loads(path.read_text())
    del old["config"]["shorter_pool"]
    path.write_text(json.dumps(old))
    before = folder(tmp_path)
    refused(generate(tmp_path, files, "--resume", "--method-arg", "shorter_pool=5"), "shorter_pool")
    assert folder(tmp_path) == before
    r = generate(tmp_path, files, "--resume")
    assert r.exit_code == 0, r.output


def test_a_dataset_edited_in_place_is_refused_with_the_folder_untouched(tmp_path, files):
    """Same path, another question under an id already answered: one line, and not even the manifest rewritten
    (no "running" status, no resumed time added)."""
    assert generate(tmp_path, files, "--limit", 1).exit_code == 0
    before = folder(tmp_path)
    data, prompt = files
    data.write_text(json.dumps([{**QUESTIONS[0], "question": "Who sang song 0?"}, *QUESTIONS[1:]]), encoding="utf-8")
    refused(generate(tmp_path, files, "--resume"), "dataset changed", "q0")
    assert folder(tmp_path) == before


def test_an_index_rebuilt_in_place_from_another_corpus_is_refused(tmp_path, files):
    """Same --index path, other documents in it: the manifest's index_corpus (the corpus's sha256, the passages)
    differs."""
    import shutil

    def index(texts):
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"T{i}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
        shutil.rmtree(tmp_path / "idx", ignore_errors=True)
        r = CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"])
        assert r.exit_code == 0, r.output

    index(["Paul Simon wrote song 0.", "Paul Simon wrote song 1."])
    extra = ["--index", tmp_path / "idx", "--method-arg", "documents=retrieve"]
    assert generate(tmp_path, files, "--limit", 1, *extra, method="vanilla").exit_code == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["index_corpus"]["passages"] == 2 and len(manifest["index_corpus"]["sha256"]) == 64
    before = folder(tmp_path)
    assert generate(tmp_path, files, "--limit", 2, *extra, "--resume", method="vanilla").exit_code == 0  # the same index: goes on
    index(["Art Garfunkel sang song 0.", "Art Garfunkel sang song 1.", "Nobody wrote song 2."])
    before = folder(tmp_path)
    refused(generate(tmp_path, files, "--resume", *extra, method="vanilla"), "index_corpus")
    assert folder(tmp_path) == before


def test_run_resume_refuses_a_level_whose_index_was_rebuilt_in_place(tmp_path, files):
    """``vericite run --resume``: a level's generation that retrieved from ``index`` is checked the same way (its
    manifest's index_corpus), whatever the path says."""
    import shutil

    def index(texts):
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"T{i}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
        shutil.rmtree(tmp_path / "idx", ignore_errors=True)
        assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"]).exit_code == 0

    data, prompt = files
    yaml = tmp_path / "c.yaml"
    args = {"prompt": str(prompt), "ndoc": 2, "shot": 0, "index": str(tmp_path / "idx"), "documents": "retrieve"}
    yaml.write_text(f"name: t\ndataset: {data}\nmodel: fake\nmethod: vanilla\nmethod_args: {json.dumps(args)}\ntask: alce\njudge: none\nresamples: 5\nlimit: 2\n", encoding="utf-8")
    out = tmp_path / "runs"
    index(["Paul Simon wrote song 0.", "Paul Simon wrote song 1."])
    r = CliRunner().invoke(cli, ["run", str(yaml), "--out", str(out), "-q", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "level-base" / "manifest.json").read_text())["index_corpus"]["passages"] == 2
    index(["Art Garfunkel sang song 0.", "Art Garfunkel sang song 1.", "Nobody wrote song 2."])
    before = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".lock"}
    refused(CliRunner().invoke(cli, ["run", str(yaml), "--out", str(out), "--resume", "-q", "--no-cache"]), "level-base", "index_corpus")
    assert {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".lock"} == before


def test_a_few_shot_conner_folder_made_before_demo_words_was_recorded_is_refused_in_one_line(tmp_path):
    """conner-knowledge put few-shot demonstrations in whole before it cut them to 200 words by default (and recorded
    ``demo_words``): such a folder resumed now would cut the rest silently. Its manifest (no ``demo_words``) is read
    as whole demonstrations, so --resume says in one line that they differ; a folder whose config set demo_words
    (they were cut then too), or a zero-shot one, resumes."""
    def gen(out, *extra):
        args = ["generate", "--method", "conner-knowledge", "--dataset", "nq-500", "--model", "fake", "--out", tmp_path / out, "-q", "--no-cache", *extra]
        return CliRunner().invoke(cli, [str(a) for a in args])

    def as_before(out):  # the manifest as conner-knowledge wrote it before it recorded demo_words
        path = tmp_path / out / "manifest.json"
        old = json.loads(path.read_text())
        del old["demo_words"]
        path.write_text(json.dumps(old))

    assert gen("few", "--shot", 2, "--limit", 3).exit_code == 0
    as_before("few")
    before = {p.name: p.read_bytes() for p in (tmp_path / "few").iterdir() if p.is_file() and p.name != ".lock"}
    r = gen("few", "--shot", 2, "--limit", 4, "--resume")
    refused(r, "demo_words: 'whole", "-> 200", "use another --out")
    assert {p.name: p.read_bytes() for p in (tmp_path / "few").iterdir() if p.is_file() and p.name != ".lock"} == before

    assert gen("set", "--shot", 2, "--limit", 3, "--method-arg", "demo_words=200").exit_code == 0
    as_before("set")
    r = gen("set", "--shot", 2, "--limit", 4, "--method-arg", "demo_words=200", "--resume")
    assert r.exit_code == 0, r.output
    assert gen("zero", "--shot", 0, "--limit", 2).exit_code == 0
    assert gen("zero", "--shot", 0, "--limit", 3, "--resume").exit_code == 0
    assert gen("few2", "--shot", 2, "--limit", 3).exit_code == 0  # written now: it records demo_words
    assert gen("few2", "--shot", 2, "--limit", 4, "--resume").exit_code == 0
