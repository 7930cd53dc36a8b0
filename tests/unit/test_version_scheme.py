"""One version scheme, ``name@N``, for every versioned id vericite writes (judges, parsers, methods, prompts,
builders, metric families), and the ids written before it still accepted: the judge prompt ids
``judge.support.vN`` read as their ``judge-support@N``, a bare metric version ``"1"`` beside its family (results.json's
``metric_versions``) read as ``kalma@1`` where it is read back (compare, report)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import VericiteError
from vericite.judges.llm import DEFAULT_PROMPT, PROMPTS, LLMJudge, build_messages, prompt_id, prompt_version
from vericite.models.fake import FakeBackend
from vericite.types import JudgePair
from vericite.versions import same_version, version_number, versioned

NAME_AT_N = re.compile(r"[a-z0-9][\w.:/-]*@\d+")


def test_every_versioned_id_is_name_at_n():
    from vericite.attribution.kg import PARSER_ID as KG_PARSER
    from vericite.attribution.passages import PARSER_ID as PASSAGE_PARSER
    from vericite.bench.builders.biokalma.evolve import BUILDER_VERSION
    from vericite.bench.builders.biokalma.prompts import PROMPT_VERSION as BUILDER_PROMPT
    from vericite.generate.kalma import METHOD_ID
    from vericite.generate.prompts.kalma import Demonstration, KalmaPrompt
    from vericite.judges.calibrated import CALIBRATION_ID, CalibratedLLM3Judge
    from vericite.judges.fit_bias import FIT_ID
    from vericite.judges.fitted import FittedLLM3Judge
    from vericite.judges.nli import VERSION as NLI_VERSION
    from vericite.judges.triple import TripleJudge
    from vericite.metrics.geval import SPECS as GEVAL_SPECS
    from vericite.metrics.geval import GEval
    from vericite.metrics.kalma import SPECS as KALMA_SPECS
    from vericite.metrics.kalma import VERSION as KALMA_VERSION

    ids = [
        *PROMPTS, DEFAULT_PROMPT, KG_PARSER, PASSAGE_PARSER, BUILDER_VERSION, BUILDER_PROMPT, METHOD_ID,
        KalmaPrompt(Demonstration.load(None)).id, TripleJudge().id, GEval(FakeBackend()).id, f"nli:model@{NLI_VERSION}",
        LLMJudge(FakeBackend()).id, CalibratedLLM3Judge(FakeBackend()).id, CALIBRATION_ID,
        FittedLLM3Judge(FakeBackend(), {"model": FakeBackend().identity().to_dict(), "bias": dict.fromkeys(("supports", "refutes", "not_enough_info"), 0.0)}, "0" * 64).id,
        FIT_ID, KALMA_VERSION, *(s.version for s in (*KALMA_SPECS.values(), *GEVAL_SPECS.values())),
    ]
    assert [i for i in ids if not NAME_AT_N.fullmatch(i)] == []


def test_judge_prompt_ids_are_name_at_n():
    assert sorted(PROMPTS) == ["judge-support@1", "judge-support@2"] and DEFAULT_PROMPT == "judge-support@2"
    assert prompt_version(1) == "judge-support@1" and prompt_version("2") == "judge-support@2"
    judge = LLMJudge(FakeBackend(), "judge-support@1")
    assert judge.prompt_version == "judge-support@1" and judge.id.endswith("@1")
    with pytest.raises(VericiteError, match=r"unknown judge prompt number '7' \(known: 1, 2\)"):
        prompt_version(7)


@pytest.mark.parametrize("old, new", [("judge.support.v1", "judge-support@1"), ("judge.support.v2", "judge-support@2")])
def test_the_old_prompt_ids_are_still_accepted(old, new):
    assert prompt_id(old) == new and prompt_id(f" {old} ") == new and prompt_id(new) == new
    judge = LLMJudge(FakeBackend(), old)
    assert judge.prompt_version == new and judge.id.endswith("@" + new[-1])
    pair = JudgePair("Rome is in Italy.", "Rome is Italian.")
    assert judge.messages(pair) == LLMJudge(FakeBackend(), new).messages(pair) == build_messages(pair.evidence, pair.claim, old)
    with pytest.raises(VericiteError, match="unknown judge prompt version 'judge-support@9'"):
        LLMJudge(FakeBackend(), "judge.support.v9")


def test_a_judge_eval_file_written_with_the_old_prompt_id_shows_the_new_one():
    from vericite.report.judge_eval import judge_block

    for key in ("prompt", "prompt_version"):  # the two keys judge-eval has written the prompt under
        html = judge_block({"judge": "llm:m@2", "judge_kind": "llm", "judge_version": "2", key: "judge.support.v2"})
        assert "judge-support@2" in html and "judge.support" not in html


# --------------------------------------------------------------------------- metric versions

KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]


def test_versioned_reads_old_and_new_ids_alike():
    assert versioned("kalma", "1") == versioned("kalma", 1) == versioned("kalma", "kalma@1") == "kalma@1"
    assert versioned("kalma", None) is None and versioned("llm", "llm:qwen@2") == "llm:qwen@2"
    assert same_version("kalma", "1", "kalma@1") and not same_version("kalma", "1", "kalma@2")
    assert version_number("kalma@2") == "2" and version_number("3") == "3" and version_number(None) is None


@pytest.fixture
def two_runs(tmp_path):
    rec = {"id": "a", "question": "Where was Ann born?", "answer": "In Rome [Q1, place of birth: Rome].", "knowledge": KNOWLEDGE}
    (tmp_path / "in.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    for name in ("a", "b"):
        r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / name), "-q", "--resamples", "0"])
        assert r.exit_code == 0, r.output
    return tmp_path / "a", tmp_path / "b"


def set_kalma_version(folder, version):
    res = json.loads((folder / "results.json").read_text())
    res["metric_versions"]["kalma"] = version
    (folder / "results.json").write_text(json.dumps(res))


def test_results_write_name_at_n(two_runs):
    res = json.loads((two_runs[0] / "results.json").read_text())
    assert res["metric_versions"] == {"kalma": "kalma@1"}
    assert res["metrics"]["citation_correctness"]["version"] == "kalma@1" and res["evaluation"]["metrics"] == "kalma@1"


def test_compare_reads_a_bare_version_as_name_at_n(two_runs):
    a, b = two_runs
    set_kalma_version(a, "kalma@1")
    set_kalma_version(b, "1")  # written before the scheme
    r = CliRunner().invoke(cli, ["compare", str(a), str(b), "--json", "--resamples", "0"])
    assert r.exit_code == 0, r.output
    set_kalma_version(b, "2")
    r = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert r.exit_code != 0 and "kalma metric version 1 vs 2" in r.output


def test_report_shows_old_and_new_versions_as_name_at_n(two_runs):
    from vericite.report import write_report

    a, b = two_runs
    set_kalma_version(b, "1")
    pages = [write_report(x).read_text(encoding="utf-8") for x in (a, b)]
    assert all("kalma@1" in p and "kalma@kalma" not in p for p in pages)
