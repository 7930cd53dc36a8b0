"""The registry: one construction path (create, BuildContext), Protocol checks, did-you-mean, and an LLM judge
whose model asks the server it was given (a local HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from vericite import registry as r
from vericite.errors import BackendError, UnknownNameError, VericiteError
from vericite.judges import load_judge
from vericite.models import load_model
from vericite.protocols import Judge, LLMBackend
from vericite.registry import BuildContext, create


@pytest.fixture
def scratch_kind():
    """Entries registered by a test, removed after it."""
    added: list[tuple[r.Registry, str]] = []

    def add(reg: r.Registry, name: str, factory) -> None:
        reg.register(name, factory, replace=True)
        added.append((reg, name))

    yield add
    for reg, name in added:
        reg.unregister(name)


def test_create_passes_argument_context_and_options(scratch_kind):
    seen = {}

    def factory(arg, *, ctx, **options):
        seen.update(arg=arg, ctx=ctx, options=options)
        from vericite.fakes.judges import KeywordJudge

        return KeywordJudge(arg)

    scratch_kind(r.judges, "probe", factory)
    ctx = BuildContext(threads=2, base_url="http://127.0.0.1:9/v1", timeout=5.0, retries=1)
    judge = create("judges", " probe : C:\\models\\x ", ctx, threshold=0.7)
    assert isinstance(judge, Judge)
    assert seen == {"arg": "C:\\models\\x", "ctx": ctx, "options": {"threshold": 0.7}}
    create("judges", "probe")
    assert seen["arg"] == "" and seen["ctx"] == BuildContext()


def test_what_a_factory_builds_is_checked_against_the_protocol(scratch_kind):
    scratch_kind(r.judges, "broken", lambda arg, *, ctx, **o: object())
    with pytest.raises(VericiteError, match=r"judge 'broken' built a object, which is not a Judge \(missing: id, labels, judge\)"):
        create("judges", "broken")


def test_unknown_names_and_kinds_get_did_you_mean():
    with pytest.raises(UnknownNameError, match="unknown metric 'kalm'; did you mean 'kalma'"):
        create("metrics", "kalm")
    with pytest.raises(UnknownNameError, match="unknown kind 'judge'; did you mean 'judges'"):
        create("judge", "triple")


def test_every_kind_has_a_registry_typed_by_its_protocol():
    assert set(r.REGISTRIES) == {
        "backends", "models", "judges", "metrics", "methods", "datasets", "builders", "experiments", "tasks",
        "graphs", "docstores", "retrievers", "formats", "scorers", "embedders",
    }
    for kind, reg in r.REGISTRIES.items():
        assert reg.protocol is not None and "fake" in reg.names() or kind in ("models", "formats"), kind
    assert r.backends.protocol is LLMBackend and r.judges.protocol is Judge


def test_lazy_entries_are_imported_only_when_built():
    import sys

    assert isinstance(r.judges._entries["fake-4class"], str) or "vericite.fakes.judges" in sys.modules
    create("judges", "fake-4class")
    assert "vericite.fakes.judges" in sys.modules and not isinstance(r.judges._entries["fake-4class"], str)


def test_load_model_options_override_the_context():
    ctx = BuildContext(base_url="http://127.0.0.1:1/v1", timeout=3.0, retries=0, cache=False)
    b = load_model("openai:m", ctx=ctx)
    assert b.base_url == "http://127.0.0.1:1/v1" and b.timeout == 3.0 and b.max_retries == 0
    b = load_model("openai:m", ctx=ctx, base_url="http://127.0.0.1:2", timeout=4.0)
    assert b.base_url == "http://127.0.0.1:2/v1" and b.timeout == 4.0 and b.max_retries == 0


def test_factories_check_their_own_argument():
    with pytest.raises(VericiteError, match="takes no argument"):
        create("experiments", "retrieval-accuracy:50")
    with pytest.raises(VericiteError, match="the sparql graph needs an endpoint"):
        create("graphs", "sparql")
    with pytest.raises(VericiteError, match="the kalma retriever needs a graph"):
        create("retrievers", "kalma")
    with pytest.raises(VericiteError, match="G-Eval needs a model"):
        create("metrics", "geval")
    with pytest.raises(VericiteError, match="the jsonl dataset needs a file"):
        create("datasets", "jsonl").load()


# --------------------------------------------------------------------------- an llm judge asks the server it was given


class _Server(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization")))
        self._send({"data": [{"id": "local-model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append((self.path, self.headers.get("Authorization")))
        top = [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.5}]
        choice = {"index": 0, "message": {"role": "assistant", "content": "Yes"}, "logprobs": {"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": top}]}}
        self._send({"choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 1}})


@pytest.fixture
def local_server():
    _Server.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_llm_judge_model_uses_the_given_server_and_key(local_server, monkeypatch):
    """``load_judge("llm:openai:<model>", base_url=...)`` builds the judge's model with the judge's context:
    every request goes to that server, with the key given, and the time limits reach the backend."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
    judge = load_judge("llm:openai:local-model", base_url=local_server, api_key="sk-given", timeout=7.0, retries=0, cache=False)
    assert judge.id == "llm:openai:local-model@2"
    assert judge.backend.base_url == local_server and judge.backend.timeout == 7.0 and judge.backend.max_retries == 0
    from vericite.types import JudgePair

    j = judge.judge([JudgePair("Rome is in Italy.", "Rome is Italian.")])[0]
    assert j.status == "ok" and j.probability > 0.8
    assert _Server.seen and all(auth == "Bearer sk-given" for _, auth in _Server.seen)
    assert {path for path, _ in _Server.seen} == {"/v1/models", "/v1/chat/completions"}


# --------------------------------------------------------------------------- a plugin's failures


class _Exploding:
    """A plugin's model backend with a bug: ``generate`` raises ``exc``; no other capability."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def identity(self):
        from vericite.types import ModelIdentity

        return ModelIdentity(name="exploding", backend="exploding", model="m")

    def generate(self, prompts, params):
        raise self.exc

    def logprobs(self, texts):
        return [[] for _ in texts]


def _generate(backend):
    from vericite.types import GenParams

    return backend.generate([[{"role": "user", "content": "hi"}]], GenParams())


def test_a_plugin_backends_failure_is_one_plugin_error_naming_it(scratch_kind):
    # it used to leave the call as the plugin's RuntimeError: a traceback out of generate/evaluate
    from vericite.errors import BackendError, PluginError
    from vericite.protocols import NextTokenScorer

    scratch_kind(r.backends, "exploding", lambda arg, *, ctx, **o: _Exploding(RuntimeError("boom\n  on two lines")))
    b = create("backends", "exploding:m")
    assert type(b) is _Exploding and not isinstance(b, NextTokenScorer)  # the same object: no capability added
    with pytest.raises(PluginError) as e:
        _generate(b)
    assert str(e.value) == "backend 'exploding:m' (plugin) failed: RuntimeError: boom on two lines"
    assert isinstance(e.value, BackendError) and isinstance(e.value.__cause__, RuntimeError)
    with pytest.raises(PluginError, match=r"^backend 'exploding:m' \(plugin\) failed: RuntimeError"):
        _generate(load_model("exploding:m", cache=False))  # the path every role loads its model by
    assert not r.backends.is_builtin("exploding") and r.backends.is_builtin("openai") and r.judges.is_builtin("table")


@pytest.mark.parametrize("exc", [BackendError("server down"), KeyboardInterrupt(), SystemExit(3)])
def test_a_plugins_backend_error_and_interrupts_go_through_as_they_are(scratch_kind, exc):
    scratch_kind(r.backends, "exploding", lambda arg, *, ctx, **o: _Exploding(exc))
    with pytest.raises(type(exc)) as e:
        _generate(create("backends", "exploding"))
    assert e.value is exc


def test_vericites_own_objects_are_not_guarded():
    b = create("backends", "fake")
    assert "generate" not in vars(b) and "judge" not in vars(create("judges", "fake"))


def test_a_plugin_judges_failure_is_one_plugin_error_naming_it(scratch_kind):
    from vericite.errors import PluginError
    from vericite.fakes.judges import KeywordJudge
    from vericite.types import JudgePair

    class Broken(KeywordJudge):
        def judge(self, pairs):
            raise KeyError("premise")

    scratch_kind(r.judges, "broken", lambda arg, *, ctx, **o: Broken())
    j = load_judge("broken:x")
    assert isinstance(j, Broken) and j.id == "fake@1"
    with pytest.raises(PluginError, match=r"^judge 'broken:x' \(plugin\) failed: KeyError: 'premise'$"):
        j.judge([JudgePair("e", "c")])
