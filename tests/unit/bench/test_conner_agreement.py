"""The agreement statistics of bench/conner_agreement.py, checked by hand."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from vericite.bench.conner_agreement import chunked, conner_nq, somers_d, spearman
from vericite.errors import VericiteError
from vericite.fakes.scoring import FakePairScorer
from vericite.models.fake import FakeBackend
from vericite.models.lm_scoring import perplexity


def test_spearman_ties_share_their_mean_rank():
    # x ranks 3.5, 1, 3.5, 2 against 1, 2, 3, 4: sum dx*dy = -1, sum dx^2 = 4.5, sum dy^2 = 5
    assert spearman([3, 1, 3, 2], [1, 2, 3, 4]) == pytest.approx(-1 / 22.5**0.5)


def test_spearman():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1, 2], [1, 2]) is None


def test_somers_d_of_y_given_x():
    # pairs untied on x: (1,2) concordant, (1,3) concordant, (2,3) tied on y -> (2 - 0) / 3
    assert somers_d([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / 3)
    assert somers_d([1, 1], [1, 2]) is None


def test_spearman_refuses_nan_rather_than_being_poisoned_by_it():
    with pytest.raises(ValueError, match="leave the NaN out"):
        spearman([1.0, float("nan"), 3.0, 4.0], [1.0, 2.0, 3.0, 4.0])


def _nq_data(tmp_path, monkeypatch, passages, ppl):
    d = tmp_path / "data" / "conner" / "nq" / "random_testset"
    d.mkdir(parents=True)
    (d / "nq_ref").write_text("\n".join(passages) + "\n", encoding="utf-8")
    (d / "nq_ref_rel").write_text("\n".join(str(0.1 * i) for i in range(len(passages) - 1)) + "\n")
    (d / "nq_ref_avg_sent_ppl").write_text(json.dumps(ppl).replace("null", "NaN") + "\n0.5")
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path / "data"))
    import vericite.datasets.nq as nq

    monkeypatch.setattr(nq, "load_nq", lambda *a, **k: [SimpleNamespace(question=f"q{i}") for i in range(len(passages))])


def test_conner_nq_sentence_perplexity_and_coherence_signs(tmp_path, monkeypatch):
    """Their file holds mean sentence PPL; coherence_sentence is mean 1/PPL: it is compared with 1/theirs, so a
    model that ranks like CONNER's gives +1 on both rows. NaN and over-long passages are left out, counted."""
    passages = ["Alpha beta gamma.", "Delta epsilon.", "Zeta eta theta iota kappa lambda mu nu.", "Xi omicron pi rho.", "Sigma tau."]
    lm = FakeBackend()
    mine = [perplexity(lps) for lps in lm.continuation_logprobs([("", p) for p in passages])]  # one sentence each
    ppl = [mine[0], mine[1], None, mine[3], mine[4]]  # CONNER's NaN on the third
    _nq_data(tmp_path, monkeypatch, passages, ppl)
    out = conner_nq(FakePairScorer(), lm, None, max_words=6)
    sp, coh = out["sentence_perplexity"], out["coherence_sentence"]
    assert sp["n"] == coh["n"] == 4  # the third: over 6 words (and NaN)
    assert sp["their_nan_left_out"] == 0  # the NaN passage was already out for its length
    assert sp["spearman"] == pytest.approx(1.0) and coh["spearman"] == pytest.approx(1.0)
    assert "1 of them over 6 words left out" in sp["passages"]
    assert out["relevance"]["n"] == 4  # their 4 relevance values, by position
    reversed_ppl = [1 / p if p else None for p in ppl]
    (tmp_path / "data" / "conner" / "nq" / "random_testset" / "nq_ref_avg_sent_ppl").write_text(json.dumps(reversed_ppl).replace("null", "NaN"))
    out = conner_nq(FakePairScorer(), lm, 4)
    assert out["sentence_perplexity"]["spearman"] == pytest.approx(-1.0) and out["coherence_sentence"]["n"] == 3
    assert out["sentence_perplexity"]["their_nan_left_out"] == out["coherence_sentence"]["their_nan_left_out"] == 1


def test_conner_nq_reports_its_reference_files_and_refuses_an_all_nan_one(tmp_path, monkeypatch):
    passages = ["Alpha beta gamma.", "Delta epsilon.", "Xi omicron pi rho.", "Sigma tau."]
    _nq_data(tmp_path, monkeypatch, passages, [10.0, 20.0, None, 40.0])
    d = tmp_path / "data" / "conner" / "nq" / "random_testset"
    (d / "nq_ref_avg_coh_para").write_text("[1.5, -2.0, 3.25, 0.5]\n3.25\t-2.0")
    (d / "nq_ref_avg_lm_entropy").write_text("[NaN, NaN, NaN, NaN]\nNaN")
    out = conner_nq(FakePairScorer(), FakeBackend(), None)
    files = out["reference_files"]
    assert files["sentence_perplexity"] == {"file": "nq_ref_avg_sent_ppl", "values": 4, "nan": 1, "summary_lines": [[0.5]]}
    assert files["paragraph_coherence"] == {"file": "nq_ref_avg_coh_para", "values": 4, "nan": 0, "summary_lines": [[3.25, -2.0]]}
    ent = files["lm_entropy"]
    assert ent["values"] == ent["nan"] == 4 and ent["note"] == "all 4 values are NaN: no comparison is possible"
    assert files["relevance"]["values"] == 3 and files["relevance"]["summary_lines"] == []
    assert out["sentence_perplexity"]["n"] == 3 and out["sentence_perplexity"]["their_nan_left_out"] == 1
    # a perplexity file that is all NaN: both LM rows say why they were not run
    (d / "nq_ref_avg_sent_ppl").write_text("[NaN, NaN, NaN, NaN]\n0.5")
    out = conner_nq(FakePairScorer(), FakeBackend(), None)
    msg = "nq_ref_avg_sent_ppl: all 4 values are NaN, so nothing can be compared with it"
    assert out["sentence_perplexity"] == out["coherence_sentence"] == {"not_run": msg}
    (d / "nq_ref_avg_coh_para").unlink()
    assert conner_nq(FakePairScorer(), None, None)["reference_files"]["paragraph_coherence"] == {"file": "nq_ref_avg_coh_para", "missing": True}


def test_chunked_scores_a_chunk_per_call_so_a_cut_off_run_resumes_from_the_cache(capsys):
    calls = []

    def score(ts, ss):
        calls.append(list(ts))
        return [t.upper() for t in ts]

    assert chunked(score, list("abcde"), [None] * 5, "things", size=2) == list("ABCDE")
    assert calls == [["a", "b"], ["c", "d"], ["e"]]
    assert "things: 5/5" in capsys.readouterr().err


def test_interleave_takes_one_of_each_group_in_turn():
    from vericite.bench.conner_agreement import interleave

    assert interleave([[1, 2, 3], [10], [20, 21]]) == [1, 10, 20, 2, 21, 3]
    assert interleave([]) == []


def test_conner_nq_counts_a_passage_with_no_scored_sentence(tmp_path, monkeypatch):
    """A passage none of whose sentences the LM scores has no perplexity of ours: it is left out and counted,
    never dropped silently."""
    import vericite.models.lm_scoring as lm_scoring

    passages = ["Alpha beta gamma.", "Delta epsilon.", "Xi omicron pi rho.", "Sigma tau."]
    _nq_data(tmp_path, monkeypatch, passages, [10.0, 20.0, 30.0, 40.0])
    real = lm_scoring.sentence_logprobs

    def no_tokens_for_delta(lm, texts, spans, **kw):
        rows = real(lm, texts, spans, **kw)
        return [[[] for _ in row] if t.startswith("Delta") else row for t, row in zip(texts, rows)]

    monkeypatch.setattr(lm_scoring, "sentence_logprobs", no_tokens_for_delta)
    out = conner_nq(FakePairScorer(), FakeBackend(), None)
    sp = out["sentence_perplexity"]
    assert sp["n"] == 3 and sp["no_perplexity_left_out"] == out["coherence_sentence"]["no_perplexity_left_out"] == 1
    assert "1 with no sentence" in sp["passages"]


def test_ctrl_c_is_one_line_and_exit_130_and_the_lm_is_released(tmp_path, monkeypatch, capsys):
    """Ctrl-C (here inside the NQ part) ends the command with one line on stderr and code 130, no traceback and no
    JSON; the model it loaded is released (its call cache closed) on the way out."""
    import vericite.bench.conner_agreement as ca
    import vericite.models as models

    _nq_data(tmp_path, monkeypatch, ["Alpha beta gamma.", "Delta epsilon.", "Sigma tau."], [10.0, 20.0, 30.0])
    released = []
    monkeypatch.setattr(models, "load_model", lambda name, **kw: FakeBackend())
    monkeypatch.setattr(models, "release", lambda lm: released.append(lm))
    monkeypatch.setattr(ca, "alce_utility", lambda *a, **k: pytest.fail("not reached"))

    def ctrl_c(scorer, lm, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(ca, "conner_nq", ctrl_c)
    monkeypatch.setattr("vericite.registry.create", lambda kind, name: FakePairScorer())
    out = tmp_path / "out.json"
    assert ca.main(["--lm", "fake", "--out", str(out)]) == 130
    cap = capsys.readouterr()
    assert cap.err.strip() == ca.INTERRUPTED and cap.out == "" and not out.exists()
    assert len(released) == 1 and isinstance(released[0], FakeBackend)


class RecordingScorer(FakePairScorer):
    def __init__(self):
        super().__init__()
        self.pairs = []

    def score(self, pairs):
        self.pairs.extend(pairs)
        return super().score(pairs)


def _nq_folder(d, tag, n=4):
    """A CONNER NQ folder: its questions file (topic, question, passage, answer), nq_ref and two figures files."""
    d.mkdir(parents=True)
    rows = [(f"T{i}", f"{tag} question {i}", f"{tag} passage {i} .", "a") for i in range(n)]
    (d / "nq_test_random_testset.txt").write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    (d / "nq_ref").write_text("".join(r[2] + "\n" for r in rows), encoding="utf-8")
    (d / "nq_ref_rel").write_text("".join(f"{0.1 * i}\n" for i in range(n)))
    (d / "nq_ref_avg_sent_ppl").write_text(json.dumps([10.0 * (i + 1) for i in range(n)]))
    return d


def test_conner_nq_reads_the_data_it_is_given_and_the_shared_folder_by_default(tmp_path, monkeypatch):
    """``--data-path`` (a folder or its NQ file): the questions, passages and figures of that folder, not the shared
    one's; without it, the shared data's folder, as before."""
    import vericite.bench.conner_agreement as ca

    _nq_folder(tmp_path / "shared" / "conner" / "nq" / "random_testset", "shared")
    mine = _nq_folder(tmp_path / "mine", "mine")
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path / "shared"))
    for given in (mine, mine / "nq_test_random_testset.txt"):
        scorer = RecordingScorer()
        out = conner_nq(scorer, None, None, data_path=given)
        assert out["source"] == str(mine) and out["relevance"]["n"] == 4
        assert scorer.pairs == [(f"mine question {i}", f"mine passage {i} .") for i in range(4)]
    scorer = RecordingScorer()
    assert conner_nq(scorer, None, 2)["source"] == str(tmp_path / "shared" / "conner" / "nq" / "random_testset")
    assert scorer.pairs == [(f"shared question {i}", f"shared passage {i} .") for i in range(2)]
    with pytest.raises(VericiteError, match="nq_ref"):
        conner_nq(RecordingScorer(), None, None, data_path=tmp_path / "nowhere")
    # the command: --data-path with --skip-alce needs no shared data
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path / "no-shared-data"))
    monkeypatch.setattr("vericite.registry.create", lambda kind, name: RecordingScorer())
    res = tmp_path / "out.json"
    assert ca.main(["--data-path", str(mine), "--skip-alce", "--out", str(res)]) == 0
    assert json.loads(res.read_text())["conner_nq_reference"]["source"] == str(mine)


def test_alce_utility_counts_an_answer_the_lm_scores_nothing_of(tmp_path, monkeypatch):
    """ALCE's rows likewise: an answer with no sentence the LM scores is left out of coherence and counted
    (``no_perplexity_left_out``), and of informativeness when none of its tokens is (``no_tokens_left_out``)."""
    import vericite.models.lm_scoring as lm_scoring
    import vericite.paths as paths
    from vericite.bench.conner_agreement import alce_utility

    rated = {f"q{i}": {"question": f"Question {i}?", "output": o, "utility_score": u}
             for i, (o, u) in enumerate([("Alpha beta gamma.", 5), ("Delta epsilon.", 1), ("Xi omicron pi rho.", 3), ("Sigma tau upsilon.", 2)])}
    f = tmp_path / "alce" / "human_eval" / "human_eval_utility_completed.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"asqa": {"system": rated}}), encoding="utf-8")
    monkeypatch.setattr(paths, "shared_data_dir", lambda required=True: tmp_path)
    real = lm_scoring.sentence_logprobs

    def no_tokens_for_delta(lm, texts, spans, **kw):
        rows = real(lm, texts, spans, **kw)
        return [[[] for _ in row] if t.startswith("Delta") else row for t, row in zip(texts, rows)]

    monkeypatch.setattr(lm_scoring, "sentence_logprobs", no_tokens_for_delta)
    out = alce_utility(FakePairScorer(), FakeBackend(), None, resamples=20)
    coh, info = out["coherence_sentence"], out["informativeness"]
    assert coh["n"] == 3 and coh["no_perplexity_left_out"] == 1
    assert info["n"] == 4 and info["no_tokens_left_out"] == 0 and out["relevance"]["n"] == 4
