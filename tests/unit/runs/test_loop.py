"""The generic run loop (runs/loop.py) runs any registered Method: resume, failures, progress and the summary
are the loop's; usage is metered per sample over every model call the method makes; what is KaLMA's in a
summary comes from the KaLMA method. ``vericite generate --method NAME`` picks a method from the registry and
validates its ``--method-arg`` options with the method's own model."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.pipeline import citing_reply, make_samples
import vericite
from vericite import registry
from vericite.cli.main import cli
from vericite.errors import BackendError, VericiteError
from vericite.fakes.pipeline import FakeDataset, FakeMethod
from vericite.models.fake import FakeBackend
from vericite.models.usage import MeteredBackend, UsageMeter
from vericite.runs import loop
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import IncompleteRun, generate_run, run_method
from vericite.types import GenParams, Usage


def records_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


class ManyCalls:
    """A VTG-like method: per sample two generations, a log-prob scoring and a next-token check, and it writes
    no usage of its own."""

    id = "many-calls@1"

    def __init__(self, backend, fail_on: str = "") -> None:
        self.backend = backend
        self.fail_on = fail_on

    def manifest(self):
        return {"method": self.id, "model": self.backend.identity().to_dict()}

    def answer(self, sample):
        if self.fail_on and self.fail_on in sample.question:
            self.backend.generate([[{"role": "user", "content": "doomed call"}]], GenParams())
            raise BackendError("the server went away")
        draft = self.backend.generate([[{"role": "user", "content": sample.question}]], GenParams())[0].text
        self.backend.logprobs([draft])
        self.backend.next_token_logprobs([[{"role": "user", "content": draft}]], ["Yes", "No"])
        final = self.backend.generate([[{"role": "user", "content": "revise: " + draft}]], GenParams())[0].text
        return {"id": sample.id, "question": sample.question, "method": self.id, "output": final}


@pytest.fixture
def many_calls():
    """``many-calls`` registered as a method, as a plugin would be; the model comes from the build context."""

    def factory(arg, *, ctx, seed=0, backend=None, fail_on=""):
        from vericite.models import model_loader

        return ManyCalls(backend if backend is not None else model_loader(ctx)(arg), fail_on)

    registry.methods.register("many-calls", factory)
    yield
    registry.methods.unregister("many-calls")


def test_a_method_with_many_calls_per_sample_gets_each_call_counted(tmp_path, many_calls):
    backend = FakeBackend(default="one two three")
    cfg = GenerateConfig(dataset="x", model="fake", method="many-calls", cache=False)
    manifest = generate_run(cfg, tmp_path / "r", samples=make_samples(), backend=backend, progress=False)
    recs = records_of(tmp_path / "r")
    # generate: prompt = the question's words (4) / "revise: " + draft (4); 3 words out each; logprobs: the
    # draft's 3 tokens; next-token scoring: the draft's 3 words and the one token read
    assert [r["usage"] for r in recs] == [{"prompt_tokens": 4 + 3 + 4 + 3, "completion_tokens": 6 + 1, "calls": 4}] * 2
    assert backend.n_calls == 2 * 4
    assert manifest["summary"]["tokens"] == {"prompt": 28, "completion": 14}
    assert manifest["method"] == "many-calls@1" and manifest["config"]["method"] == "many-calls"
    # the loop's summary has nothing of KaLMA's when the method does not summarise
    assert set(manifest["summary"]) == {"n_samples", "n_done", "unanswered", "failed_calls", "tokens"}


def test_models_a_method_loads_itself_are_metered_too(tmp_path, many_calls, monkeypatch):
    import vericite.models

    loaded = FakeBackend(default="a b")
    monkeypatch.setattr(vericite.models, "load_model", lambda name, **kw: loaded)
    generate_run(GenerateConfig(dataset="x", model="fake", method="many-calls"), tmp_path / "r", samples=make_samples()[:1], progress=False)
    assert records_of(tmp_path / "r")[0]["usage"] == {"prompt_tokens": 4 + 2 + 3 + 2, "completion_tokens": 4 + 1, "calls": 4}


def test_failed_samples_are_the_loops_and_resume_retries_them(tmp_path, many_calls):
    samples = make_samples()
    cfg = GenerateConfig(dataset="x", model="fake", method="many-calls", method_args={"fail_on": "Bo"}, max_failures="1")
    m = generate_run(cfg, tmp_path / "r", samples=samples, backend=FakeBackend(), progress=False)
    assert m["status"] == "incomplete" and m["summary"]["unanswered"] == 1 and m["summary"]["failed_calls"] == 1
    assert [json.loads(x)["id"] for x in (tmp_path / "r" / "errors.jsonl").read_text().splitlines()] == ["s2"]
    with pytest.raises(VericiteError, match=r"cannot resume .*\(fail_on: 'Bo' -> not given\)"):  # the method's options are the config's
        generate_run(GenerateConfig(dataset="x", model="fake", method="many-calls"), tmp_path / "r", samples=samples, backend=FakeBackend(), resume=True, progress=False)
    with pytest.raises(IncompleteRun):
        generate_run(cfg.model_copy(update={"max_failures": "0"}), tmp_path / "r", samples=samples, backend=FakeBackend(), resume=True, progress=False)


def test_run_method_runs_the_fake_method_over_the_fake_dataset(tmp_path):
    meter = UsageMeter()
    method = FakeMethod(MeteredBackend(FakeBackend("fake:method", default="It is [NA]."), meter))
    samples = FakeDataset().load(n=3)
    m = run_method(method, samples, tmp_path / "r", config={"dataset": "fake"}, meter=meter, progress=False)
    assert m["kind"] == "generate" and m["status"] == "complete" and m["n_samples"] == 3
    assert m["method"] == "fake-method@1" and m["config"] == {"dataset": "fake"}
    recs = records_of(tmp_path / "r")
    assert [r["id"] for r in recs] == [s.id for s in samples]
    assert all(r["usage"]["calls"] == 1 and r["usage"]["completion_tokens"] == 3 for r in recs)
    # resuming a finished run answers nothing again
    calls = meter.usage.calls
    run_method(method, samples, tmp_path / "r", config={"dataset": "fake"}, meter=meter, resume=True, progress=False)
    assert meter.usage.calls == calls and len(records_of(tmp_path / "r")) == 3


def test_without_a_meter_a_record_keeps_the_usage_its_method_wrote(tmp_path):
    method = FakeMethod(FakeBackend("fake:method", default="It is [NA]."))
    run_method(method, FakeDataset().load(n=1), tmp_path / "r", config={}, progress=False)
    usage = records_of(tmp_path / "r")[0]["usage"]
    assert usage["completion_tokens"] == 3 and "calls" not in usage


def test_kalma_usage_is_its_one_call_and_its_summary_is_the_methods(tmp_path):
    backend = FakeBackend(replies=citing_reply)
    m = generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "g", samples=make_samples(), backend=backend, progress=False)
    recs = records_of(tmp_path / "g")
    for r, prompt in zip(recs, backend.prompts):
        completion = backend.generate([prompt], GenParams(max_tokens=384))[0]
        assert r["usage"] == {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens, "calls": 1}
    assert list(recs[0])[-4:] == ["na_count", "usage", "cached", "seconds"]  # usage stays where KaLMA wrote it
    assert m["summary"]["citation_status"] == {"ok": 4} and m["summary"]["na_count"] == 2
    # the loop itself knows nothing of citations, [NA] or retrieval
    source = inspect.getsource(loop)
    assert not any(word in source for word in ("citation_status", "na_count", "retrieval_accuracy", "not_found"))


def test_kalma_method_from_the_registry_and_the_datasets_demonstration(tmp_path, shared_data):
    m = generate_run(GenerateConfig(dataset="biokalma-gold", model="fake", limit=1), tmp_path / "s", backend=FakeBackend(), progress=False)
    assert m["demonstration"].endswith("biokalma/prompt/answer_question_complex_prompt.json")
    m = generate_run(GenerateConfig(dataset="biokalma-gold", phrasing="general", model="fake", limit=1), tmp_path / "g", backend=FakeBackend(), progress=False)
    assert m["demonstration"].endswith("biokalma/prompt/answer_question_simple_prompt.json")
    assert m["config"]["demonstration"] is None  # the config records what was given, the manifest what was used
    m = generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "x", samples=make_samples(), backend=FakeBackend(), progress=False)
    assert m["demonstration"] == "vericite:demonstration.json"  # not the install's path: the same run from any install
    assert len(m["demonstration_sha256"]) == 64


def test_kalma_resumes_a_folder_another_install_wrote(tmp_path):
    """A folder whose manifest names vericite's own demonstration by the absolute path of another install (what
    kalma@1 recorded before ``vericite:demonstration.json``) resumes; another demonstration file still differs."""
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given")
    out = tmp_path / "run"
    generate_run(cfg.model_copy(update={"limit": 1}), out, samples=make_samples(), backend=FakeBackend(), progress=False)
    path = out / "manifest.json"
    m = json.loads(path.read_text())
    m["demonstration"] = "/elsewhere/venv/lib/python3.11/site-packages/vericite/data/demonstration.json"
    del m["demonstration_sha256"]
    path.write_text(json.dumps(m))
    m = generate_run(cfg, out, samples=make_samples(), backend=FakeBackend(), progress=False, resume=True)
    assert m["status"] == "complete" and m["n_samples"] == len(make_samples())
    other = tmp_path / "demo.json"
    other.write_text((Path(vericite.__file__).parent / "data" / "demonstration.json").read_text())
    with pytest.raises(VericiteError, match="demonstration"):
        generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given", demonstration=str(other)), out, samples=make_samples(), backend=FakeBackend(), progress=False, resume=True)


# --------------------------------------------------------------------------- the command


def questions(tmp_path: Path) -> Path:
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps({"id": "a", "question": "What did Ann do?", "knowledge": [{"subject": "Q1", "property": "occupation", "value": "painter"}]}) + "\n")
    return p


def test_generate_method_option_picks_a_registered_method(tmp_path):
    out = tmp_path / "r"
    r = CliRunner().invoke(cli, ["generate", "--method", "fake", "--method-arg", "max_tokens=2", "-d", str(questions(tmp_path)), "-m", "fake", "-o", str(out), "-q", "--no-cache"])
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert m["method"] == "fake-method@1" and m["params"]["max_tokens"] == 2
    assert m["config"]["method"] == "fake" and m["config"]["max_tokens"] == 2 and "knowledge" not in m["config"]
    rec = records_of(out)[0]
    assert rec["usage"]["calls"] == 1 and rec["usage"]["completion_tokens"] == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--method", "kalam"], "unknown method 'kalam'; did you mean 'kalma'"),
        (["--method-arg", "max_tokens=0"], "invalid option max_tokens: Input should be greater than or equal to 1"),
        (["--method-arg", "bogus=1"], "invalid option bogus: Extra inputs are not permitted"),
        (["--method", "fake", "--knowledge", "given"], "invalid option knowledge: Extra inputs are not permitted"),
        (["--max-tokens", "3", "--method-arg", "max_tokens=4"], "max_tokens is given twice"),
        (["--method-arg", "model=fake"], "model is an option of the run, not of its method"),
        (["--method-arg", "nonsense"], "--method-arg wants KEY=VALUE"),
    ],
)
def test_bad_methods_and_method_options_are_one_line(tmp_path, args, message):
    r = CliRunner().invoke(cli, ["generate", *args, "-d", str(questions(tmp_path)), "-m", "fake", "-o", str(tmp_path / "r"), "-q"])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output, r.output
    assert not (tmp_path / "r").exists()
