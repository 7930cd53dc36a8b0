"""What judge-eval's results.json records (issue 9, defect 7): the vericite version, the judge's id, kind and
version, its model's identity with sha256; bootstrap CIs and confusion counts; and why a judge cannot judge data
that does not fit it (the triple judge on free-text claims)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from vericite import __version__
from vericite.cli.main import cli
from vericite.judges.llm import LLMJudge
from vericite.judges.meta import roc_auc, run_judge_eval
from vericite.judges.meta_figures import auc_statistic, figure_cis, folder_sha256, judge_identity
from vericite.judges.triple import TripleJudge
from vericite.models.fake import FakeBackend
from vericite.types import Judgement, ModelIdentity

TRIPLE_PAIRS = [
    ("She was born in Rome.", "place of birth: Rome", "supports"),
    ("She was born in Paris.", "place of birth: Rome", "refutes"),
    ("He played the piano.", "instrument: piano", "supports"),
    ("He played the violin.", "instrument: piano", "not_enough_info"),
    ("Born in 1871.", "date of birth: 1871-11-01", "supports"),
    ("He died in Princeton.", "place of death: Princeton", "refutes"),  # a wrong gold label: the judge errs once
]
FREE_TEXT = [
    ("The film grossed $5 million.", "The film made more than $1 million.", "supports"),
    ("The film grossed $5 million.", "The film made less than $1 million.", "refutes"),
    ("Rome is the capital of Italy.", "Rome is in Italy.", "supports"),
]


def write_pairs(path, rows):
    path.write_text("".join(json.dumps({"id": str(i), "evidence": e, "claim": c, "label": g}) + "\n" for i, (e, c, g) in enumerate(rows)), encoding="utf-8")
    return path


class StubModel(FakeBackend):
    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="stub-1b", backend="llamacpp", model="stub-1b-q4.gguf", sha256="ab" * 32)


def test_results_say_what_was_measured(tmp_path):
    data = write_pairs(tmp_path / "pairs.jsonl", TRIPLE_PAIRS)
    res = run_judge_eval(TripleJudge(), data, tmp_path / "out", batch_size=4)
    on_disk = json.loads((tmp_path / "out" / "results.json").read_text())
    assert on_disk == json.loads(json.dumps(res))
    assert res["kind"] == "judge-eval" and res["vericite_version"] == __version__ and res["created"]
    assert (res["judge"], res["judge_kind"], res["judge_version"], res["model"]) == ("triple@1", "triple", "1", None)
    assert res["judge_options"] == {"partial_dates": "support", "require_entity": False}
    assert res["config"]["data"] == str(data) and res["config"]["seed"] == 0 and res["config"]["resamples"] == 1000


def test_llm_judge_records_its_model_and_sha256(tmp_path):
    data = write_pairs(tmp_path / "pairs.jsonl", FREE_TEXT)
    judge = LLMJudge(StubModel(replies={"more than": "Yes", "less than": "No"}), prompt_version="judge-support@2")
    res = run_judge_eval(judge, data, tmp_path / "out")
    assert res["model"] == {"name": "stub-1b", "backend": "llamacpp", "model": "stub-1b-q4.gguf", "sha256": "ab" * 32}
    assert (res["judge_kind"], res["judge_version"], res["prompt"]) == ("llm", "2", "judge-support@2")
    assert res["judge"] == "llm:stub-1b@2"


def test_nli_judge_records_the_sha256_of_its_model_folder(tmp_path, monkeypatch):
    from tests.support.guards import requires
    from tests.support.nli import NLI3, build_classifier

    requires("torch")
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "vc"))  # remembered file hashes go there
    from vericite.judges.nli import NLIJudge

    folder = tmp_path / "nli"
    build_classifier(folder, NLI3)
    ident = judge_identity(NLIJudge(str(folder)))
    assert ident["judge_kind"] == "nli" and ident["judge_version"] == "1"
    model = ident["model"]
    assert model["name"] == str(folder) and model["backend"] == "transformers" and len(model["sha256"]) == 64
    from vericite.models.provision import file_sha256

    files = {str(f.relative_to(folder)): file_sha256(f, use_cache=False) for f in folder.rglob("*") if f.is_file()}
    assert model["sha256"] == folder_sha256(files)
    build_classifier(folder, NLI3, seed=3)  # other weights in the same folder: another sha256
    assert judge_identity(NLIJudge(str(folder)))["model"]["sha256"] != model["sha256"]


def test_cis_and_confusion(tmp_path):
    data = write_pairs(tmp_path / "pairs.jsonl", TRIPLE_PAIRS * 5)
    res = run_judge_eval(TripleJudge(), data, tmp_path / "out")
    # gold supports: 15, all said supported; gold not_supports: 15, 10 said not_supported, 5 (Princeton) supported
    assert res["confusion"] == {"supports": {"supported": 15, "not_supported": 0, "abstained": 0},
                                "not_supports": {"supported": 5, "not_supported": 10, "abstained": 0}}
    assert res["ci_level"] == 0.95 and res["resamples"] == 1000
    for name, value in [("balanced_accuracy", res["balanced_accuracy"]), ("roc_auc", res["roc_auc"]), ("accuracy", res["accuracy"]),
                        ("f1_supports", res["per_class_f1"]["supports"]["f1"]), ("unparseable", res["unparseable"])]:
        lo, hi = res["ci"][name]
        assert lo <= value <= hi, name
    assert res["ci"]["balanced_accuracy"][0] < res["ci"]["balanced_accuracy"][1]  # not degenerate
    # the same seed gives the same intervals
    again = run_judge_eval(TripleJudge(), data, tmp_path / "out2")
    assert again["ci"] == res["ci"]


def test_weighted_auc_equals_the_auc_of_the_drawn_pairs():
    rng = np.random.default_rng(1)
    scores = rng.choice([0.1, 0.3, 0.5, 0.5, 0.9], size=40).astype(float)
    positive = rng.random(40) < 0.5
    scored = rng.random(40) < 0.9
    stat = auc_statistic(scores, positive, scored)
    for _ in range(20):
        w = rng.multinomial(40, np.full(40, 1 / 40)).astype(float)
        drawn = [i for i in range(40) for _ in range(int(w[i])) if scored[i]]
        want, _ = roc_auc([scores[i] for i in drawn], [bool(positive[i]) for i in drawn])
        got = stat(w[None, :])[0]
        assert (want is None and np.isnan(got)) or got == pytest.approx(want)


def test_cis_leave_out_resamples_without_a_class():
    j = [Judgement("x@1", "c", "e", p, None) for p in (0.9, 0.1)]
    cis = figure_cis(["supports", "refutes"], j, resamples=200)
    assert cis["balanced_accuracy"] == [1.0, 1.0] and cis["roc_auc"] == [1.0, 1.0]


# --------------------------------------------------------------------------- data that does not fit the judge


def test_triple_judge_on_free_text_says_why(tmp_path):
    data = write_pairs(tmp_path / "pairs.jsonl", FREE_TEXT + TRIPLE_PAIRS[:1])
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "triple", "--data", str(data), "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 0, r.output
    # up front, on stderr, before judging
    assert 'warning: 3 of 4 pairs (75.0%) cannot be judged by triple@1: the triple judge only judges "property: value" claims' in r.stderr
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert res["unparseable"] == 0.75
    assert res["data_fit"]["unfit"] == 3 and res["data_fit"]["pairs"] == 4
    assert "free-text claims such as VitaminC's are not of that shape" in res["data_fit"]["reason"]
    assert res["data_fit"]["example_claim"] == FREE_TEXT[0][1]
    # and next to the figure on stdout
    assert "unparseable 0.750: 3 of 4 pairs cannot be judged: the triple judge only judges" in " ".join(r.stdout.split())


def test_triple_judge_refuses_data_it_cannot_judge_at_all(tmp_path):
    data = write_pairs(tmp_path / "pairs.jsonl", FREE_TEXT)
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "triple", "--data", str(data), "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "triple@1 cannot judge any of the 3 pairs" in r.stderr and "not of that shape" in r.stderr
    assert "The film made more than $1 million." in r.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_judges_that_judge_anything_have_no_fit_note(tmp_path):
    data = write_pairs(tmp_path / "pairs.jsonl", FREE_TEXT)
    res = run_judge_eval(LLMJudge(FakeBackend(replies={"more": "Yes"})), data, tmp_path / "o")
    assert res["data_fit"] is None
