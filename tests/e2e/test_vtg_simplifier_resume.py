"""VTG's ``simplifier_strategy`` through ``vericite generate``: recorded in the manifest (and in the config only when
given); a folder written with halving goes on halving when resumed, its answers those of a run made with halving
throughout, leaving the option out on ``--resume`` goes on with the folder's (said in one line) and changing it is
refused in one line, as for the other options VTG keeps on resume (``repeat_overlap`` too); a folder written without it goes on with the strategy its manifest
records (greedy before the option), whatever the default is now; a bad value is one line, not a traceback."""

from __future__ import annotations

import functools
import json

import pytest

from tests.support.vtg import scripted
from tests.support.vtg_cli import manifest_of as manifest
from tests.support.vtg_cli import registered, samples
from tests.support.vtg_cli import generate as vtg_generate

generate = functools.partial(vtg_generate, model="vtg-simp")


@pytest.fixture
def model():
    """Paris cited wrongly ([2]): the memory verifier accepts the whole memory and the simplifier gets all four."""
    with registered("vtg-simp", lambda: scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[2]", "Rome": "title:Rome"})) as name:
        yield name


def strategies(folder):
    return set().union(*(strategies_of(line) for line in (folder / "samples.jsonl").read_text().splitlines()))


def strategies_of(line):
    """The simplifier's ``strategy`` in an answer's traces (None: the greedy pass's trace, which has none)."""
    return {t["simplifier"].get("strategy") for s in json.loads(line)["vtg"]["sentences"] for t in s["trials"] if t.get("simplifier")}


HALVING = ("--method-arg", "simplifier_strategy=halving")


def test_a_halving_folder_resumes_halving(tmp_path, model):
    generate(tmp_path, "all", *HALVING)
    generate(tmp_path, "part", *HALVING, "--limit", 1)
    generate(tmp_path, "part", "--resume", *HALVING)
    assert samples(tmp_path / "part") == samples(tmp_path / "all")
    assert strategies(tmp_path / "part") == {"halving"}
    m = manifest(tmp_path / "part")
    assert m["simplifier_strategy"] == "halving" and m["config"]["simplifier_strategy"] == "halving"
    # given at the start, it is part of the folder's config: changed on --resume, refused (as repeat_overlap) ...
    r = generate(tmp_path, "part", "--resume", "--method-arg", "simplifier_strategy=greedy", code=2)
    assert "simplifier_strategy: 'halving' -> 'greedy'" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    # ... left out, the folder's, said in one line
    generate(tmp_path, "left", *HALVING, "--limit", 1)
    r = generate(tmp_path, "left", "--resume")
    assert "with the folder's simplifier_strategy=halving" in r.output
    assert samples(tmp_path / "left") == samples(tmp_path / "all") and manifest(tmp_path / "left")["config"]["simplifier_strategy"] == "halving"


def test_a_folder_written_with_the_default_resumes_with_what_it_recorded(tmp_path, model):
    generate(tmp_path, "part", "--limit", 1)
    m = manifest(tmp_path / "part")
    assert m["simplifier_strategy"] == "greedy" and "simplifier_strategy" not in m["config"]  # recorded only when given
    m["simplifier_strategy"] = "halving"  # as if halving had been the default when it was written
    (tmp_path / "part" / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    generate(tmp_path, "part", "--resume")  # the manifest's strategy, not today's default
    assert manifest(tmp_path / "part")["simplifier_strategy"] == "halving"
    lines = (tmp_path / "part" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3 and [strategies_of(line) for line in lines] == [{None}, {"halving"}, {"halving"}]


def test_a_folder_written_before_the_option_resumes_greedy(tmp_path, model):
    generate(tmp_path, "greedy")
    generate(tmp_path, "old", "--limit", 1)
    m = manifest(tmp_path / "old")
    assert m["simplifier_strategy"] == "greedy" and "simplifier_strategy" not in m["config"]  # recorded only when given
    m.pop("simplifier_strategy")  # as a vericite before the option wrote it
    (tmp_path / "old" / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    generate(tmp_path, "old", "--resume")
    assert samples(tmp_path / "old") == samples(tmp_path / "greedy") and strategies(tmp_path / "old") == {None}
    assert manifest(tmp_path / "old")["simplifier_strategy"] == "greedy"
    r = generate(tmp_path, "old", "--resume", *HALVING, code=2)
    assert "simplifier_strategy" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_a_bad_strategy_is_one_line(tmp_path, model):
    r = generate(tmp_path, "bad", "--method-arg", "simplifier_strategy=binary", code=2)
    assert "simplifier_strategy" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "bad" / "samples.jsonl").exists()
    r = generate(tmp_path, "bad2", "--method-arg", "simplifier=halving", code=2)
    assert "simplifier_strategy=halving" in r.output and len(r.output.strip().splitlines()) == 1
