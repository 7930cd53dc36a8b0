"""VTG's verifier with a three-way judge (``verifier_judge: llm3:<model>``, ``llm3c:``, ``llm3f:<fit>``, ``fake-3way``):
every verifier (generation, memory, the simplifier, greedy or halving) reads a judgement as entailed when its
P(supports) is at least 0.5, not when supports is merely its likeliest label (``vtg_judge.VERIFIER_RULE``); the
manifest records the judge; a four-class judge is refused in one line; a judge of the method's own model runs on
the method's backend (one load), whatever its kind."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.errors import VericiteError
from vericite.fakes.judges import ThreeWayJudge
from vericite.generate.vtg import build
from vericite.models.fake import FakeBackend
from vericite.registry import BuildContext
from vericite.types import Judgement, Sample

from tests.support.vtg import DOCS, QUESTION, scripted

PARIS, ROME = "Paris is the capital of France.", "Rome is the capital of Italy."


def vtg(judge=None, backend=None, **opts):
    backend = backend or scripted([PARIS, ROME], cites={"Paris": "[2][1][4]", "Rome": "[4]"})
    opts = {"k": 4, "docs_per_query": 1, "trials": 0, **opts}
    return build("", ctx=BuildContext(cache=False), backend=backend, **({"judge": judge} if judge is not None else {}), **opts)


def answer(m):
    return m.answer(Sample("q1", QUESTION, passages=list(DOCS)))


@pytest.mark.parametrize("strategy", ["greedy", "halving"])
def test_fake_3way_verifies_by_citations_and_by_memory_and_simplifies(strategy):
    m = vtg(verifier_judge="fake-3way", simplifier_strategy=strategy)
    r = answer(m)
    assert m.manifest()["judge"] == "fake-3way@1"  # the manifest records which judge verified
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    paris, rome = (s["trials"][0] for s in r["vtg"]["sentences"][:2])
    # Paris: its citations [2][1][4] entail it (document 1 does); the simplifier keeps only 1
    assert paris["outcome"] == "verified-citations" and paris["generation_verifier"]["probability"] == 0.8
    assert sorted(paris["simplifier"]["removed"]) == [2, 4] and paris["citations"] == [1]
    # Rome: [4] (Madrid) does not (not_enough_info, P(supports) 0.1); the whole memory does, simplified to Rome's
    assert rome["generation_verifier"] == {"entailed": False, "probability": 0.1, "status": "ok"}
    assert rome["outcome"] == "verified-memory" and rome["memory_verifier"]["entailed"] and rome["citations"] == [3]
    assert r["vtg"]["problems"]["unreadable_judgements"] == 0 and r["vtg"]["problems"]["judge_errors"] == 0


class Leaning(ThreeWayJudge):
    """``fake-3way``'s labels, but supports said at ``p`` (the other two labels share the rest, each below ``p``)."""

    def __init__(self, p):
        self.p = p
        self.id = f"leaning-{p}@1"

    def judge(self, pairs):
        out = []
        for j in super().judge(pairs):
            if j.label != "supports":
                out.append(j)
                continue
            scores = {"supports": self.p, "refutes": round((1 - self.p) * 0.4, 6), "not_enough_info": round((1 - self.p) * 0.6, 6)}
            out.append(Judgement(self.id, j.claim, j.evidence, self.p, "supports", json.dumps(scores), "ok", scores))
        return out


@pytest.mark.parametrize("p, verified", [(0.45, False), (0.5, True), (0.55, True)])
def test_a_three_way_judge_verifies_at_p_supports_0_5_not_at_its_likeliest_label(p, verified):
    r = answer(vtg(Leaning(p)))
    first = r["vtg"]["sentences"][0]
    assert first["verified"] is verified
    assert first["trials"][0]["generation_verifier"] == {"entailed": verified, "probability": p, "status": "ok"}
    assert r["vtg"]["problems"]["unverified_sentences"] == (0 if verified else 2)


@pytest.mark.parametrize("spec", ["fake-4class"])
def test_a_four_class_judge_is_refused_in_one_line(spec):
    with pytest.raises(VericiteError) as e:
        vtg(verifier_judge=spec)
    said = str(e.value)
    assert "\n" not in said and said.startswith("method vtg: verifier_judge fake-4class@1 is a four-class judge") and "llm3:<model>" in said


def test_a_ready_four_class_judge_is_refused_too():
    from vericite.fakes.judges import FourClassJudge

    with pytest.raises(VericiteError, match="four-class judge"):
        vtg(FourClassJudge())


@pytest.fixture
def counted():
    """Backend ``counted:<name>``: a fake model named ``counted:<name>`` (a three-way judge's prompt gets its hashed
    scores); ``loads`` lists the names loaded, one entry a load."""
    loads: list[str] = []

    def factory(arg, *, ctx, **options):
        loads.append(arg)
        b = FakeBackend("counted")
        b.name = f"counted:{arg}"  # the name the model is loaded by, as a registered model's identity gives it
        return b

    registry.backends.register("counted", factory, replace=True)
    yield loads
    registry.backends.unregister("counted")


def fit_of(tmp_path, backend):
    """An ``llm3f`` fit file of ``backend``'s model (two labelled pairs a label)."""
    from vericite.judges.fit_bias import fit_on_pairs

    labels = ("supports", "refutes", "not_enough_info")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"evidence": f"e{i}", "claim": f"c{i}", "label": labels[i % 3]}) + "\n" for i in range(6)), encoding="utf-8")
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(fit_on_pairs(backend, pairs)), encoding="utf-8")
    return fit


@pytest.mark.parametrize("kind", ["llm:counted:m@1", "llm3:counted:m", "llm3c:counted:m", "llm3f"])
@pytest.mark.parametrize("ready", [False, True])
def test_a_judge_of_the_methods_model_runs_on_the_methods_backend(tmp_path, counted, kind, ready):
    """Built without the run loop's shared loader (the Python API, the registry): one load, not two."""
    spec = f"llm3f:{fit_of(tmp_path, FakeBackend('counted'))}" if kind == "llm3f" else kind
    if kind == "llm3f":  # the fit as one of the model loaded as counted:m records it
        fit = json.loads((tmp_path / "fit.json").read_text())
        fit["model"] = {**fit["model"], "name": "counted:m", "model": "counted:m"}
        (tmp_path / "fit.json").write_text(json.dumps(fit), encoding="utf-8")
    backend = registry.backends.create("counted:m", BuildContext(cache=False)) if ready else None
    counted.clear()
    m = build("counted:m", ctx=BuildContext(cache=False), backend=backend, verifier_judge=spec)
    assert counted == ([] if ready else ["m"])
    assert m.judge.backend is m.backend


def test_a_judge_of_another_model_still_loads_it(counted):
    m = build("counted:m", ctx=BuildContext(cache=False), verifier_judge="llm3:counted:other")
    assert counted == ["m", "other"] and m.judge.backend is not m.backend


ITEMS = [{"question": QUESTION, "answer": "Paris and Rome.", "docs": [{"title": d.title, "text": d.text} for d in DOCS]}]


@pytest.fixture
def script_backend():
    registry.backends.register("vtg3", lambda arg, *, ctx, **o: scripted([PARIS, ROME], cites={"Paris": "[2][1][4]", "Rome": "[4]"}), replace=True)
    yield "vtg3:m"
    registry.backends.unregister("vtg3")


def generate(tmp_path, model, *judge_args):
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    args = ["generate", "--method", "vtg", "--dataset", str(data), "--model", model, *judge_args, "--k", "4", "--docs-per-query", "1",
            "--trials", "0", "--out", str(tmp_path / "out"), "-q", "--no-cache", "--method-arg", "simplifier_strategy=halving"]  # fmt: skip
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("how", [("--judge", "fake-3way"), ("--method-arg", "verifier_judge=fake-3way")])
def test_generate_vtg_with_a_three_way_verifier(tmp_path, script_backend, how):
    r = generate(tmp_path, script_backend, *how)
    assert r.exit_code == 0, r.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["judge"] == "fake-3way@1" and manifest["config"]["verifier_judge"] == "fake-3way"
    record = json.loads((tmp_path / "out" / "samples.jsonl").read_text().splitlines()[0])
    assert record["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    assert [s["trials"][0]["outcome"] for s in record["vtg"]["sentences"][:2]] == ["verified-citations", "verified-memory"]


def test_generate_vtg_refuses_a_four_class_verifier_in_one_line(tmp_path, script_backend):
    r = generate(tmp_path, script_backend, "--judge", "fake-4class")
    assert r.exit_code != 0 and "Traceback" not in r.output
    said = [line for line in r.output.splitlines() if line.strip()]
    assert len(said) == 1 and "verifier_judge fake-4class@1 is a four-class judge" in said[0], r.output


def test_a_refused_judge_built_here_is_closed(monkeypatch):
    from vericite.fakes.judges import FourClassJudge

    closed = []
    monkeypatch.setattr(FourClassJudge, "close", lambda self: closed.append(self.id), raising=False)
    with pytest.raises(VericiteError):
        vtg(verifier_judge="fake-4class")
    assert closed == ["fake-4class@1"]
