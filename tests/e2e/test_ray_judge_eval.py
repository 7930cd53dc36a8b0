"""judge-eval on Ray (``--ray auto``: Ray started in-process, two actors) gives the local judgements and judge usage
on every task; cut, it resumes from its judgements and the actors' parts."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.support.ray_e2e import invoke, ray_local  # noqa: F401  (a fixture)
from vericite.cli.main import cli


def test_judge_eval_on_ray_gives_the_local_judgements(tmp_path, ray_local):
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"id": f"p{i}", "evidence": f"Q{i} occupation job{i}", "claim": f"occupation: job{i if i % 3 else i + 1}", "label": "supports" if i % 3 else "refutes"} for i in range(40)]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = ["judge-eval", "--judge", "fake", "--data", str(pairs), "--no-progress", "--batch-size", "8"]
    invoke([*common, "--out", str(tmp_path / "local")])
    invoke([*common, "--out", str(tmp_path / "ray"), "--ray", "auto", "--workers", "2"])
    assert (tmp_path / "ray" / "judgements.jsonl").read_bytes() == (tmp_path / "local" / "judgements.jsonl").read_bytes()
    rl, rr = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("local", "ray"))
    for key in ("balanced_accuracy", "roc_auc", "per_class_f1", "ci", "confusion", "judge", "judge_kind", "model", "n"):
        assert rr[key] == rl[key], key


def test_judge_eval_tasks_caqa_and_alce_human_judge_on_ray(tmp_path, ray_local):
    """--ray reaches every judge-eval task, not only labelled pairs: the judgements are the local ones, and the
    actors did the judging (their checkpoint)."""
    from tests.support.alce_human import write_mini
    from tests.support.caqa import write_pool

    data = tmp_path / "caqa.jsonl"
    invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "30", "--verbalise", "template", "--out", str(data), "-q"])
    mini = write_mini(tmp_path)
    for name, common in (
        ("caqa", ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--split", "train", "-q"]),
        ("alce", ["judge-eval", "--task", "alce-human", "--judge", "fake", "--data", str(mini), "-q"]),
    ):
        invoke([*common, "--out", str(tmp_path / f"{name}-local")])
        invoke([*common, "--out", str(tmp_path / f"{name}-ray"), "--ray", "auto", "--workers", "2"])
        local, ray = ((tmp_path / f"{name}-{d}" / "judgements.jsonl").read_text() for d in ("local", "ray"))
        assert local and ray == local, name
        assert (tmp_path / f"{name}-ray" / ".ray-calls.jsonl").read_text().count("\n") >= 2, name  # two actors' parts


class SentParts:
    """The parts of judge calls judge-eval --ray sends to its actors, counted from now on; ``cut_after``: the driver
    stops (KeyboardInterrupt) once that many parts have come back."""

    def __init__(self, monkeypatch, cut_after=None):
        from vericite.distributed import RayPool

        self.parts, self.cut_after = 0, cut_after
        real = getattr(RayPool.map, "real", RayPool.map)

        def map(pool, method, batches):
            batches = list(batches)
            self.parts += len(batches)
            for n, got in enumerate(real(pool, method, batches)):
                if self.cut_after is not None and self.parts - len(batches) + n == self.cut_after:
                    raise KeyboardInterrupt
                yield got

        map.real = real
        monkeypatch.setattr(RayPool, "map", map)


def test_judge_eval_on_ray_resumes_from_its_judgements_and_the_actors_parts(tmp_path, ray_local, monkeypatch):
    """judge-eval --task caqa --ray cut after 3 parts, as the 4th is given to the driver (one call of 2 parts
    written to judgements.jsonl, the next call's 2 parts only in .ray-calls.jsonl, the 4th kept by
    ``keep_finished``): --resume --ray keeps the 4 judgements and sends neither the finished call's parts nor the
    finished parts again; the judgements are an uninterrupted run's. --task pairs has no --resume, on Ray or not:
    one line."""
    from tests.support.caqa import write_pool

    data = tmp_path / "caqa.jsonl"
    invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "16", "--verbalise", "template", "--out", str(data), "-q"])
    common = ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--batch-size", "4", "-q", "--ray", "auto", "--workers", "2"]
    whole = SentParts(monkeypatch)
    invoke([*common, "--out", str(tmp_path / "whole")])
    assert whole.parts >= 8
    SentParts(monkeypatch, cut_after=3)
    r = CliRunner().invoke(cli, [*common, "--out", str(tmp_path / "cut")])
    assert r.exit_code == 130 and "--resume" in r.output, r.output
    assert (tmp_path / "cut" / ".ray-calls.jsonl").read_text().count("\n") == 4  # the part given at Ctrl-C too
    again = SentParts(monkeypatch)
    invoke([*common, "--out", str(tmp_path / "cut"), "--resume"])
    assert again.parts == whole.parts - 4  # nothing the actors finished is sent again
    res = json.loads((tmp_path / "cut" / "results.json").read_text())
    assert res["resumed_pairs"] == 4 and "the 4 judgements kept by --resume from judgements.jsonl are not counted" in res["judge_usage_note"]
    assert (tmp_path / "cut" / "judgements.jsonl").read_text() == (tmp_path / "whole" / "judgements.jsonl").read_text()
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"evidence": "P works as a cook.", "claim": "P is a cook.", "label": "supports"}) + "\n")
    for ray in ([], ["--ray", "auto"]):
        r = CliRunner().invoke(cli, ["judge-eval", "--judge", "fake", "--data", str(pairs), "--out", str(tmp_path / "p"), "-q", "--resume", *ray])
        assert r.exit_code != 0 and "--resume works with --task alce-human and caqa only" in r.output and "Traceback" not in r.output


def test_judge_eval_on_ray_reports_the_workers_judge_usage(tmp_path, ray_local):
    """judge-eval's judge_usage with --ray is what the workers' model calls cost: the local run's, on every task."""
    from tests.support.caqa import write_pool

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"evidence": f"P{i} works as job{i}.", "claim": f"P{i} is a job{i}.", "label": "supports"}) + "\n" for i in range(12)))
    data = tmp_path / "caqa.jsonl"
    invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "16", "--verbalise", "template", "--out", str(data), "-q"])
    for name, common in (
        ("pairs", ["judge-eval", "--judge", "llm:fake", "--data", str(pairs), "--batch-size", "4", "-q"]),
        ("caqa", ["judge-eval", "--task", "caqa", "--judge", "llm4:fake", "--data", str(data), "--batch-size", "4", "-q"]),
    ):
        invoke([*common, "--out", str(tmp_path / f"{name}-local")])
        invoke([*common, "--out", str(tmp_path / f"{name}-ray"), "--ray", "auto", "--workers", "2"])
        local, ray = (json.loads((tmp_path / f"{name}-{d}" / "results.json").read_text()) for d in ("local", "ray"))
        assert local["judge_usage"]["fake"]["calls"] > 0 and ray["judge_usage"] == local["judge_usage"], name
        assert ray["judge_usage_note"] == "", name
