"""`vericite cache stats|clear [--model NAME]` (issue 9): what the call cache holds, per model, and deleting it."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.types import GenParams


def msgs(text):
    return [{"role": "user", "content": text}]


@pytest.fixture()
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "vc"))
    return tmp_path / "vc"


def fill(n_a=3, n_b=2):
    cache = CallCache()
    a = CachedBackend(FakeBackend("fake:a"), cache)
    b = CachedBackend(FakeBackend("fake:b"), cache)
    a.generate([msgs(f"q{i}") for i in range(n_a)], GenParams())
    a.next_token_logprobs([msgs("judge me")], ["Yes", "No"])
    b.generate([msgs(f"q{i}") for i in range(n_b)], GenParams())
    cache.close()


def cache_cmd(*args):
    return CliRunner().invoke(cli, ["cache", *args])


def test_stats_counts_entries_per_model(cache_home):
    fill()
    r = cache_cmd("stats")
    assert r.exit_code == 0, r.output
    assert f"call cache: {cache_home / 'calls.sqlite'}" in r.output and "entries: 7" in r.output
    assert "fake:a        5  generate 3, next_token_logprobs 1, next_token_usage 1" in r.output and "fake:b        2  generate 2" in r.output
    s = json.loads(cache_cmd("stats", "--json").output)
    assert s["entries"] == 7 and s["bytes"] > 0 and [(m["model"], m["entries"]) for m in s["models"]] == [("fake:a", 5), ("fake:b", 2)]
    s = json.loads(cache_cmd("stats", "--json", "--model", "fake:b").output)
    assert [m["model"] for m in s["models"]] == ["fake:b"]


def test_clear_one_model_then_all(cache_home):
    fill()
    r = cache_cmd("clear", "--model", "fake:a")
    assert r.exit_code == 0 and "deleted 5 entries of model 'fake:a'" in r.output and "2 left" in r.output, r.output
    s = json.loads(cache_cmd("stats", "--json").output)
    assert [(m["model"], m["entries"]) for m in s["models"]] == [("fake:b", 2)]
    # fake:b's answers are still hits, fake:a's are asked again
    fa, fb = FakeBackend("fake:a"), FakeBackend("fake:b")
    cache = CallCache()
    CachedBackend(fa, cache).generate([msgs("q0")], GenParams())
    CachedBackend(fb, cache).generate([msgs("q0")], GenParams())
    cache.close()
    assert fa.calls["generate"] == 1 and fb.calls["generate"] == 0
    r = cache_cmd("clear")
    assert r.exit_code == 0 and "deleted 3 entries from" in r.output and "0 left" in r.output, r.output
    assert json.loads(cache_cmd("stats", "--json").output)["entries"] == 0


def test_clear_of_an_unknown_model_says_which_models_there_are(cache_home):
    fill()
    r = cache_cmd("clear", "--model", "fake:c")
    assert r.exit_code == 2 and "no entries of model 'fake:c'" in r.output and "fake:a (5), fake:b (2)" in r.output
    assert json.loads(cache_cmd("stats", "--json").output)["entries"] == 7  # nothing deleted


def test_stats_of_no_cache_creates_nothing(cache_home):
    r = cache_cmd("stats")
    assert r.exit_code == 0 and "does not exist yet" in r.output
    assert not cache_home.exists()
    assert cache_cmd("clear").exit_code == 0 and not cache_home.exists()


def test_a_cache_from_before_models_were_recorded(cache_home):
    cache_home.mkdir()
    con = sqlite3.connect(cache_home / "calls.sqlite")
    con.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL)")
    con.execute("INSERT INTO calls VALUES ('k', 'generate', '{}', 0)")
    con.commit()
    con.close()
    r = cache_cmd("stats")
    assert r.exit_code == 0 and "(not recorded)        1  generate 1" in r.output, r.output
    fill(1, 0)  # opening it for writing adds the column; old entries stay
    s = json.loads(cache_cmd("stats", "--json").output)
    assert {m["model"]: m["entries"] for m in s["models"]} == {None: 1, "fake:a": 3}  # a generate, a next-token entry and its usage


def test_corrupt_cache_stats_is_one_line_and_clear_deletes_it(cache_home):
    cache_home.mkdir()
    (cache_home / "calls.sqlite").write_bytes(b"garbage " * 1000)
    r = cache_cmd("stats")
    assert r.exit_code == 2 and "is corrupt" in r.output and "Traceback" not in r.output
    r = cache_cmd("clear")
    assert r.exit_code == 0 and "deleted the corrupt call cache" in r.output
    assert not (cache_home / "calls.sqlite").exists()


def test_cache_is_in_the_help():
    r = CliRunner().invoke(cli, ["--help"])
    assert "cache" in r.output
    r = cache_cmd("clear", "--help")
    assert "--model" in r.output
