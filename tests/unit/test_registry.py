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
    assert b.base_url == "http://127.0.0.1:1/v1" and b.http.timeout == 3.0 and b.http.max_retries == 0
    b = load_model("openai:m", ctx=ctx, base_url="http://127.0.0.1:2", timeout=4.0)
    assert b.base_url == "http://127.0.0.1:2/v1" and b.http.timeout == 4.0 and b.http.max_retries == 0


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
    assert judge.backend.base_url == local_server and judge.backend.http.timeout == 7.0 and judge.backend.http.max_retries == 0
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


# --------------------------------------------------------------------------- every kind guarded


class _BrokenStore:
    """A plugin's document store whose search raises."""

    def add(self, passages):
        return len(list(passages))

    def get(self, passage_id):
        return None

    def search(self, query, k=10):
        raise OSError("index file truncated")


def test_every_kind_names_the_calls_it_guards():
    assert all(reg.guarded for reg in r.REGISTRIES.values())


def test_a_plugin_document_stores_failure_is_a_plugin_error_of_its_kind(scratch_kind):
    from vericite.errors import PluginError

    scratch_kind(r.docstores, "broken-store", lambda arg, *, ctx, **o: _BrokenStore())
    store = create("docstores", "broken-store:/srv/idx")
    assert type(store) is _BrokenStore and store.add([]) == 0
    with pytest.raises(PluginError, match=r"^document store 'broken-store:/srv/idx' \(plugin\) failed: OSError: index file truncated$") as e:
        store.search("q")
    assert e.value.kind == "document store"
    import pickle

    again = pickle.loads(pickle.dumps(e.value))  # Ray sends it back from a worker
    assert str(again) == str(e.value) and again.kind == "document store"


def test_a_plugin_factory_that_raises_is_one_plugin_error_and_its_own_errors_go_through(scratch_kind):
    from vericite.errors import DataError, PluginError

    def factory(arg, *, ctx, **o):
        if arg == "mine":
            raise DataError("no such graph: mine")
        return {}["graph"]

    scratch_kind(r.graphs, "unopenable", factory)
    with pytest.raises(PluginError, match=r"^graph 'unopenable:x' \(plugin\) cannot be built: KeyError: 'graph'$") as e:
        create("graphs", "unopenable:x")
    assert e.value.kind == "graph"
    with pytest.raises(DataError, match="^no such graph: mine$"):
        create("graphs", "unopenable:mine")


class _SlottedScorer:
    """A plugin's pair scorer that takes no attribute (``__slots__``): it used to be left unguarded."""

    __slots__ = ("id", "calls")

    def __init__(self) -> None:
        self.id = "slotted@1"
        self.calls = 0

    def score(self, pairs):
        self.calls += 1
        raise ValueError("bad pair")

    def __len__(self) -> int:
        return 7


def test_an_object_with_slots_is_guarded_through_a_proxy(scratch_kind):
    import copy
    import pickle

    from vericite.errors import PluginError
    from vericite.protocols import PairScorer

    scratch_kind(r.scorers, "slotted", lambda arg, *, ctx, **o: _SlottedScorer())
    s = create("scorers", "slotted")
    assert isinstance(s, r.GuardedProxy) and isinstance(s, _SlottedScorer) and isinstance(s, PairScorer)
    assert s.id == "slotted@1" and len(s) == 7
    with pytest.raises(PluginError, match=r"^pair scorer 'slotted' \(plugin\) failed: ValueError: bad pair$"):
        s.score([("q", "t")])
    s.id = "renamed@1"  # attributes are the object's own, read and written through
    assert s.calls == 1 and s.id == "renamed@1"
    for other in (copy.copy(s), pickle.loads(pickle.dumps(s))):
        assert isinstance(other, r.GuardedProxy) and other.id == "renamed@1"
        with pytest.raises(PluginError):
            other.score([])
    assert s.calls == 1  # a copy calls its own object


def test_a_copy_of_a_plugin_object_calls_its_own_methods(scratch_kind):
    import copy

    from vericite.fakes.pipeline import FakeMetric

    class Counting(FakeMetric):
        def __init__(self) -> None:
            self.seen = 0

        def compute(self, samples, answers):
            self.seen += 1
            return {}

    scratch_kind(r.metrics, "counting", lambda arg, *, ctx, **o: Counting())
    m = create("metrics", "counting")
    part = r.rebind_guards(copy.copy(m))
    part.compute([], [])
    assert (part.seen, m.seen) == (1, 0) and isinstance(vars(part)["compute"], r.GuardedCall)


def test_a_plugins_lazy_results_and_its_properties_are_guarded_too(scratch_kind):
    from vericite.errors import PluginError
    from vericite.fakes.pipeline import FakeDataset

    class Lazy(FakeDataset):
        def load(self, **options):
            yield from super().load(**options)[:1]
            raise EOFError("file ends mid-line")

    class BadProperty(FakeDataset):
        @property
        def name(self):
            raise LookupError("no name yet")

    scratch_kind(r.datasets, "lazy", lambda arg, *, ctx, **o: Lazy())
    scratch_kind(r.datasets, "bad-property", lambda arg, *, ctx, **o: BadProperty())
    read = create("datasets", "lazy").load()
    assert next(read).id
    with pytest.raises(PluginError, match=r"^dataset 'lazy' \(plugin\) failed: EOFError: file ends mid-line$"):
        next(read)
    with pytest.raises(PluginError, match=r"^dataset 'bad-property' \(plugin\) cannot be built: LookupError: no name yet$"):
        create("datasets", "bad-property")


def test_a_plugin_that_builds_a_class_gets_it_guarded_through_a_proxy_and_the_class_is_left_alone(scratch_kind):
    import inspect

    from vericite.errors import PluginError
    from vericite.protocols import PairScorer

    class Static:
        id = "static@1"

        @staticmethod
        def score(pairs):
            raise ValueError("static bug")

    scratch_kind(r.scorers, "static", lambda arg, *, ctx, **o: Static)
    s = create("scorers", "static")
    assert isinstance(s, r.GuardedProxy) and isinstance(s, PairScorer) and s.id == "static@1"
    inspect.getattr_static(s, "score"), inspect.getattr_static(s, "id")  # found statically (raises AttributeError if not): Protocol checks on 3.12
    with pytest.raises(PluginError, match=r"^pair scorer 'static' \(plugin\) failed: ValueError: static bug$"):
        s.score([])
    assert "score" in vars(Static) and not isinstance(vars(Static)["score"], r.GuardedCall)
