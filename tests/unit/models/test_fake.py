"""FakeBackend: deterministic, registered as backend ``fake``, reachable through load_model."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vericite import registry
from vericite.errors import ModelUnavailableError, UnknownNameError
from vericite.models import load_model, split_name
from vericite.models.fake import DEFAULT_PREFIX, FakeBackend
from vericite.protocols import LLMBackend
from vericite.types import GenParams


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def test_registered_and_protocol():
    assert isinstance(registry.create("backends", "fake"), FakeBackend)
    b = load_model("fake", cache=False)
    assert isinstance(b, FakeBackend) and isinstance(b, LLMBackend)
    assert b.identity().backend == "fake" and b.identity().name == "fake"
    assert load_model("fake:judge", cache=False).identity().name == "fake:judge"


def test_canned_replies_by_substring_then_default():
    b = FakeBackend(replies={"capital": "Paris [Q90, capital of: France].", "painter": "[NA]"})
    out = b.generate([user("What is the capital?"), user("Who was the painter?"), user("Anything else?")], GenParams())
    assert out[0].text == "Paris [Q90, capital of: France]."
    assert out[1].text == "[NA]"
    assert out[2].text == DEFAULT_PREFIX + "Anything else?"
    assert out[0].completion_tokens == 5 and out[0].prompt_tokens == 6 and out[0].finish_reason == "stop"
    assert b.calls["generate"] == 3 and b.n_calls == 3 and len(b.prompts) == 3


def test_callable_reply_sees_messages_and_params():
    seen = []

    def reply(messages, params):
        seen.append(params.seed)
        return messages[-1]["content"].upper()

    b = FakeBackend(replies=reply)
    assert b.generate([user("abc")], GenParams(seed=7))[0].text == "ABC"
    assert seen == [7]


def test_stop_and_max_tokens():
    b = FakeBackend(default="one two three. four five")
    assert b.generate([user("q")], GenParams(stop=("."),))[0].text == "one two three"
    c = b.generate([user("q")], GenParams(max_tokens=2))[0]
    assert c.text == "one two" and c.finish_reason == "length" and c.completion_tokens == 2


def test_top_logprobs_one_dict_per_token():
    b = FakeBackend(default="Yes it does")
    c = b.generate([user("q")], GenParams(top_logprobs=3))[0]
    assert c.top_logprobs is not None and len(c.top_logprobs) == 3
    assert all(len(d) == 3 for d in c.top_logprobs)
    assert max(c.top_logprobs[0], key=c.top_logprobs[0].get) == "Yes"
    assert b.generate([user("q")], GenParams())[0].top_logprobs is None


def test_logprobs_deterministic_across_processes():
    b = FakeBackend()
    texts = ["the quick brown fox", "a", ""]
    lp = b.logprobs(texts)
    assert [len(x) for x in lp] == [3, 0, 0]
    assert all(-6.0 <= v < 0 for v in lp[0])
    assert lp == b.logprobs(texts)
    code = "from vericite.models.fake import FakeBackend; print(FakeBackend().logprobs(['the quick brown fox']))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert other.strip() == str([lp[0]])


def test_next_token_logprobs_follows_canned_reply():
    b = FakeBackend(replies={"good": "Yes, it does.", "bad": "No."})
    rows = b.next_token_logprobs([user("good claim"), user("bad claim")], ["Yes", " No", "Maybe"])
    assert rows[0]["Yes"] > rows[0][" No"] and rows[0]["Yes"] > rows[0]["Maybe"]
    assert rows[1][" No"] > rows[1]["Yes"]
    assert b.calls["next_token_logprobs"] == 2
    plain = FakeBackend().next_token_logprobs([user("x")], ["Yes", "No"])
    assert plain == FakeBackend().next_token_logprobs([user("x")], ["Yes", "No"])
    assert all(v < -1.0 for v in plain[0].values())


def test_split_name():
    assert split_name("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert split_name("llamacpp:/m/x.gguf") == ("llamacpp", "/m/x.gguf")
    assert split_name("fake") == ("fake", "")
    assert split_name("qwen2.5-coder-1.5b") == (None, "qwen2.5-coder-1.5b")
    assert split_name("C:\\models\\x.gguf") == (None, "C:\\models\\x.gguf")


def test_unknown_names_get_did_you_mean():
    with pytest.raises(UnknownNameError, match="did you mean 'qwen2.5-coder-1.5b'"):
        load_model("qwen2.5-coder")
    with pytest.raises(UnknownNameError, match="did you mean 'openai'"):
        load_model("opneai:gpt-4o")


def test_llamacpp_prefix_needs_an_existing_file(tmp_path):
    with pytest.raises(ModelUnavailableError, match="not found"):
        load_model(f"llamacpp:{tmp_path / 'missing.gguf'}")
    with pytest.raises(ModelUnavailableError, match="needs a model file"):
        load_model("llamacpp:")


def test_openai_prefix_builds_a_backend_without_network(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    b = load_model("openai:some-model", cache=False)
    assert b.base_url == "https://api.openai.com/v1" and b.model == "some-model"
    b = load_model("openai:m", base_url="http://127.0.0.1:9/", cache=False)
    assert b.base_url == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://example.invalid:8000/v1")
    assert load_model("openai:m", cache=False).base_url == "http://example.invalid:8000/v1"


def test_llamacpp_backend_without_llama_cpp_says_how_to_install(tmp_path, monkeypatch):
    from vericite.errors import BackendError
    from vericite.models.llamacpp import LlamaCppBackend

    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now raises ImportError
    with pytest.raises(BackendError, match=r"needs llama-cpp-python==0.3.36.*make install"):
        LlamaCppBackend(f)


def test_local_weights_are_loaded_once_per_process(monkeypatch, tmp_path):
    """load_model shares one instance of local weights between its callers (generation, judges, G-Eval)."""
    from vericite import models
    from vericite.models import llamacpp, local

    made = []

    class Dummy(FakeBackend):
        def __init__(self, path, **kw):
            super().__init__()
            made.append((path, kw))

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(local, "_LOCAL", {})
    monkeypatch.setattr(llamacpp, "LlamaCppBackend", Dummy)
    a = models.load_model(f"llamacpp:{gguf}", cache=False)
    b = models.load_model(f"llamacpp:{gguf}", cache=False)
    c = models.load_model(f"llamacpp:{gguf}", threads=1, cache=False)
    assert a is b and c is not a and len(made) == 2
    assert made[1] == (str(gguf), {"n_threads": 1, "name": f"llamacpp:{gguf}"})
    # $VERICITE_STATE_CACHE_MB is part of the instance's settings: set after a load, it gets its own instance
    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "64")
    d = models.load_model(f"llamacpp:{gguf}", cache=False)
    assert d is not a and len(made) == 3 and models.load_model(f"llamacpp:{gguf}", cache=False) is d
    e = models.load_model(f"llamacpp:{gguf}", cache=False, state_cache_mb=0)  # given explicitly: the env is not read
    assert e is not a and e is not d and len(made) == 4


def test_a_registered_name_and_llamacpp_of_its_file_share_one_instance(monkeypatch, tmp_path):
    """Shared local weights are keyed by the file (resolved: a symlink or another spelling of the path is the same
    file) and the settings, not by the spec string: ``llamacpp:<file>`` and the registered name of that file give
    one instance, in either order, named as registered (its name and known hash); another file is another."""
    import hashlib

    from vericite import models, registry
    from vericite.models import llamacpp, local, provision
    from vericite.models.provision import ModelSpec

    made = []

    class Dummy(FakeBackend):  # LlamaCppBackend's name and known hash, and its register_as (tested below)
        def __init__(self, path, name=None, sha256=None, **kw):
            super().__init__()
            self.name, self.sha256 = name, sha256
            made.append(path)

        def register_as(self, name, sha256=None):
            self.name, self.sha256 = name, sha256 or self.sha256

    folder = tmp_path / "pkg"
    folder.mkdir()
    gguf = folder / "tiny.gguf"
    gguf.write_bytes(b"GGUF tiny weights")
    spec = ModelSpec("tiny-model", "llamacpp", "tiny.gguf", hashlib.sha256(gguf.read_bytes()).hexdigest(), gguf.stat().st_size, "package", package="x")
    monkeypatch.setattr(provision, "_package_dir", lambda _pkg: folder)
    monkeypatch.setitem(registry.models._entries, "tiny-model", spec)
    monkeypatch.setattr(registry.models, "_builtin", {*registry.models._builtin, "tiny-model"})  # a built-in's spec: not guarded as a plugin's
    monkeypatch.setattr(llamacpp, "LlamaCppBackend", Dummy)
    link = tmp_path / "link.gguf"
    link.symlink_to(gguf)

    for first, second in (("tiny-model", f"llamacpp:{gguf}"), (f"llamacpp:{link}", "tiny-model")):
        monkeypatch.setattr(local, "_LOCAL", {})
        monkeypatch.setattr(local, "_REGISTERED", set())
        made.clear()
        a = models.load_model(first, cache=False)
        b = models.load_model(second, cache=False)
        assert a is b and len(made) == 1, (first, second)
        assert a.name == "tiny-model" and a.sha256 == spec.sha256  # named as registered, whichever came first
        assert models.load_model(f"llamacpp:{folder}/../pkg/tiny.gguf", cache=False) is a
        assert models.load_model("tiny-model", threads=1, cache=False) is not a  # other settings: another instance
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF other")
    assert models.load_model(f"llamacpp:{other}", cache=False) is not a


def test_a_llamacpp_instance_registered_as_a_name_takes_its_name_and_hash(monkeypatch, tmp_path):
    """``LlamaCppBackend.register_as``: what the shared instance of a file made under ``llamacpp:<path>`` becomes when
    its registered name asks for it (no model is loaded: llama_cpp is a stand-in)."""
    from types import SimpleNamespace

    from vericite.models import llamacpp

    class Llama:
        def __init__(self, model_path=None, n_ctx=512, n_threads=None):
            raise AssertionError("not loaded")

    monkeypatch.setattr(llamacpp, "_import_llama_cpp", lambda: SimpleNamespace(Llama=Llama))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    b = llamacpp.LlamaCppBackend(gguf, n_threads=1)
    assert b.name == f"llamacpp:{gguf}"
    b.register_as("tiny-model", "ab" * 32)
    assert b.name == "tiny-model" and b.identity().name == "tiny-model" and b.identity().sha256 == "ab" * 32
