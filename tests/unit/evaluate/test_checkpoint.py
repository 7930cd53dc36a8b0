"""evaluate/checkpoint.py: the per-answer checkpoint's file (a torn last line, another evaluation's settings) and
the memoising judge."""

from __future__ import annotations

import json

import pytest

from vericite.errors import VericiteError
from vericite.evaluate.checkpoint import INDEX_CHANGED, NAME, VERSION, AnswerCheckpoint, MemoJudge, differences, pair_key
from vericite.fakes.judges import KeywordJudge
from vericite.types import JudgePair, Judgement

HEAD = {"config": {"judge": "fake", "task": "kalma"}, "input_sha256": "abc"}


def ok(pair):
    return Judgement("fake@1", pair.claim, pair.evidence, 0.9, "supported").to_dict()


def test_a_torn_last_line_is_cut_and_the_answers_before_it_kept(tmp_path):
    ck = AnswerCheckpoint.open(tmp_path, HEAD)
    ck.fresh["k1"] = ok(JudgePair("e", "c"))
    ck.add(0, "a", {"x": 1}, [])
    ck.add(1, "b", {"x": 2}, [])
    with open(tmp_path / NAME, "a", encoding="utf-8") as f:
        f.write('{"answer": 2, "id": "c", "judg')  # killed while writing
    again = AnswerCheckpoint.open(tmp_path, HEAD, resume=True)
    assert sorted(again.done) == [0, 1] and again.is_done(1, "b") and not again.is_done(1, "other") and not again.is_done(2, "c")
    assert list(again.memo) == ["k1"]
    again.add(2, "c", {}, [])
    assert [json.loads(line).get("answer") for line in (tmp_path / NAME).read_text().splitlines()] == [None, 0, 1, 2]


def test_another_evaluations_checkpoint_is_one_line_naming_what_differs(tmp_path):
    AnswerCheckpoint.open(tmp_path, HEAD)
    other = {"config": {"judge": "triple", "task": "kalma"}, "input_sha256": "def"}
    with pytest.raises(VericiteError, match=r"other settings \(judge, the input file\)"):
        AnswerCheckpoint.open(tmp_path, other, resume=True)
    assert differences(HEAD, HEAD) == "the settings"
    fresh = AnswerCheckpoint.open(tmp_path, other)  # without resume: started again
    assert not fresh.done and (tmp_path / NAME).read_text().count("\n") == 1


def test_only_ok_judgements_are_taken_back(tmp_path):
    ck = AnswerCheckpoint.open(tmp_path, HEAD)
    ck.fresh.update({"good": ok(JudgePair("e", "c")), "bad": {**ok(JudgePair("e", "d")), "status": "unparseable"}})
    ck.add(0, "a", {}, [])
    assert set(AnswerCheckpoint.open(tmp_path, HEAD, resume=True).memo) == {"good"}


def test_the_memo_judge_asks_each_pair_once_and_gives_the_judges_answers(tmp_path):
    real = KeywordJudge()
    memo, fresh = {}, {}
    judge = MemoJudge(real, memo, fresh)
    pairs = [JudgePair("Ann was a painter", "painter"), JudgePair("Ann was a painter", "poet"), JudgePair("x", "y", question="q?", context={"t": 1})]
    first = judge.judge(pairs + pairs[:1])
    assert [j.to_dict() for j in first] == [j.to_dict() for j in real.judge(pairs + pairs[:1])]
    assert judge.calls == 1 and len(memo) == 3 == len(fresh)
    assert [j.to_dict() for j in judge.judge(pairs)] == [j.to_dict() for j in first[:3]] and judge.calls == 1
    assert judge.id == "fake@1" and judge.options() == {}  # the rest is the judge's
    # the whole pair is the key: another question or context is another pair
    assert pair_key("fake@1", pairs[2]) != pair_key("fake@1", JudgePair("x", "y", question="q?", context={"t": 2}))
    assert pair_key("fake@1", pairs[0]) != pair_key("other@1", pairs[0])


def test_the_fingerprint_records_a_tasks_options_that_differ_from_its_defaults():
    from types import SimpleNamespace

    from vericite.evaluate.checkpoint import fingerprint
    from vericite.registry import create

    cfg = SimpleNamespace(judge="fake", threads=2, resamples=10, seed=0)
    default = fingerprint(cfg, create("tasks", "alce-asqa"), "abc")
    assert default["config"]["task_options"] == {}  # a task with options: recorded at the defaults too
    assert "task_options" not in fingerprint(cfg, create("tasks", "kalma"), "abc")["config"]  # a task without: none
    assert default == fingerprint(cfg, create("tasks", "alce-asqa:at_most_citations=3"), "abc")  # a default spelled out
    one = fingerprint(cfg, create("tasks", "alce-asqa:at_most_citations=1"), "abc")
    assert one["config"]["task"] == "alce-asqa" and one["config"]["task_options"] == {"at_most_citations": 1}
    assert differences(default, one) == "task option at_most_citations"
    every = fingerprint(cfg, create("tasks", "alce-asqa:at_most_citations=all"), "abc")
    assert every["config"]["task_options"] == {"at_most_citations": None} and differences(one, every) == "task option at_most_citations"
    assert fingerprint(cfg, create("tasks", "conner:shuffles=5"), "abc") == fingerprint(cfg, create("tasks", "conner"), "abc")
    assert differences(fingerprint(cfg, "conner", "abc"), fingerprint(cfg, create("tasks", "conner:shuffles=7,unrelated=2"), "abc")) == "task option shuffles, task option unrelated"


def damaged(tmp_path, text):
    """A checkpoint whose file is ``text`` (written after a good one, so the folder is a real evaluation's)."""
    AnswerCheckpoint.open(tmp_path, HEAD)
    (tmp_path / NAME).write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return (tmp_path / NAME).read_bytes()


GOOD_HEAD = json.dumps({"checkpoint": VERSION, **HEAD})
LINE = json.dumps({"answer": 0, "id": "a", "judged": {}, "scores": {}, "judgements": [], "usage": {}})


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "holds no header line"),
        ("\n\n", "holds no header line"),
        ('{"checkpoint": "evaluate-ans', "holds no header line"),  # the header itself torn: nothing to resume from
        ("not json\n" + LINE + "\n", r":1: not valid JSON"),
        ("[1, 2]\n", r":1: expected a JSON object"),
        ('{"config": {}}\n', "its first line is not a checkpoint header"),
        ('{"checkpoint": "evaluate-answers@9", "config": {}}\n', "evaluate-answers@9"),
        ('{"checkpoint": "%s", "config": "x"}\n' % VERSION, "its first line is not a checkpoint header"),
        (GOOD_HEAD + "\n" + LINE + "\n{oops\n" + LINE + "\n", r":3: not valid JSON"),
        (GOOD_HEAD + "\n" + '{"answer": "0", "id": "a"}\n', r":2: not an answer's line"),
        (GOOD_HEAD + "\n" + '{"answer": 0, "id": "a", "judged": []}\n', r":2: not an answer's line"),
        (GOOD_HEAD + "\n" + '{"id": "a"}\n', r":2: not an answer's line"),
        (GOOD_HEAD.encode() + b"\n\xff\xfe\n", r":2: not UTF-8"),
    ],
)
def test_a_damaged_checkpoint_is_one_line_naming_the_file_and_the_way_out_and_is_left_as_it_was(tmp_path, text, says):
    before = damaged(tmp_path, text)
    with pytest.raises(VericiteError, match=says) as e:
        AnswerCheckpoint.open(tmp_path, HEAD, resume=True)
    msg = str(e.value)
    assert "\n" not in msg and str(tmp_path / NAME) in msg and "delete it" in msg and "without --resume" in msg, msg
    assert (tmp_path / NAME).read_bytes() == before  # nothing cut, nothing rewritten: the user decides


def test_a_checkpoint_that_is_a_folder_is_one_line(tmp_path):
    (tmp_path / NAME).mkdir()
    with pytest.raises(VericiteError, match="not a file"):
        AnswerCheckpoint.open(tmp_path, HEAD, resume=True)


def test_a_torn_last_line_is_said_on_stderr(tmp_path, capsys):
    ck = AnswerCheckpoint.open(tmp_path, HEAD)
    ck.add(0, "a", {}, [])
    with open(tmp_path / NAME, "a", encoding="utf-8") as f:
        f.write('{"answer": 1, "id": "b", "judg')  # killed while writing
    again = AnswerCheckpoint.open(tmp_path, HEAD, resume=True)
    assert sorted(again.done) == [0]
    err = capsys.readouterr().err
    assert str(tmp_path / NAME) in err and "torn last line" in err and "1 answer" in err and len(err.strip().splitlines()) == 1, err
    AnswerCheckpoint.open(tmp_path, HEAD, resume=True)  # cut: nothing more to say
    assert capsys.readouterr().err == ""


def legacy(tmp_path, config):
    """A checkpoint as the previous header (evaluate-answers@1) wrote it, with one answer."""
    (tmp_path / NAME).write_text(json.dumps({"checkpoint": "evaluate-answers@1", "config": config, "input_sha256": "abc"}) + "\n" + LINE + "\n", encoding="utf-8")


def test_a_checkpoint_written_before_task_options_were_recorded_resumes_only_at_the_defaults_and_says_so(tmp_path, capsys):
    """The rule: a checkpoint without the record (the previous header, no ``task_options``) is taken as made with the
    task's defaults: it resumes an evaluation at the defaults, with a note on stderr (it cannot tell), and is refused
    for any other options, the line saying why; one that recorded options, or a task without options, says nothing."""
    from types import SimpleNamespace

    from vericite.evaluate.checkpoint import fingerprint
    from vericite.registry import create

    cfg = SimpleNamespace(judge="fake", threads=2, resamples=10, seed=0)
    at = lambda spec: fingerprint(cfg, create("tasks", spec), "abc")  # noqa: E731
    legacy(tmp_path, {"judge": "fake", "task": "alce-asqa"})
    ck = AnswerCheckpoint.open(tmp_path, at("alce-asqa:at_most_citations=3"), resume=True)
    assert ck.is_done(0, "a")
    err = capsys.readouterr().err
    assert "written before task options were recorded: resumed as made with alce-asqa's defaults" in err and str(tmp_path / NAME) in err, err
    before = (tmp_path / NAME).read_text()
    with pytest.raises(VericiteError, match=r"other settings \(task option at_most_citations; it was written before task options were recorded, so it is taken as made with the task's defaults\)"):
        AnswerCheckpoint.open(tmp_path, at("alce-asqa:at_most_citations=1"), resume=True)
    assert (tmp_path / NAME).read_text() == before
    legacy(tmp_path, {"judge": "fake", "task": "alce-asqa", "task_options": {"at_most_citations": 1}})  # recorded
    assert AnswerCheckpoint.open(tmp_path, at("alce-asqa:at_most_citations=1"), resume=True).is_done(0, "a")
    with pytest.raises(VericiteError, match=r"\(task option at_most_citations\); rerun"):
        AnswerCheckpoint.open(tmp_path, at("alce-asqa"), resume=True)
    legacy(tmp_path, {"judge": "fake", "task": "kalma"})  # no options to guess
    assert AnswerCheckpoint.open(tmp_path, at("kalma"), resume=True).is_done(0, "a")
    assert capsys.readouterr().err == ""
    AnswerCheckpoint.open(tmp_path, at("alce-asqa"))  # the header of now records the defaults: refused plainly
    with pytest.raises(VericiteError, match=r"\(task option at_most_citations\); rerun"):
        AnswerCheckpoint.open(tmp_path, at("alce-asqa:at_most_citations=1"), resume=True)


def test_the_task_recorded_is_the_evaluation_it_resolved_to_not_its_spelling(tmp_path):
    """``alce`` over ASQA answers is ``alce-asqa``: the same evaluation as ``--task alce-asqa``; ``alce-eli5`` is
    another. A previous header's task name is resolved over the same answers (``resolve``)."""
    from types import SimpleNamespace

    from vericite.evaluate.checkpoint import fingerprint
    from vericite.registry import create

    cfg = SimpleNamespace(judge="fake", threads=2, resamples=10, seed=0)
    auto = create("tasks", "alce")
    assert fingerprint(cfg, auto, "abc")["config"]["task"] == "alce"  # not read yet: its name
    auto.prepare([SimpleNamespace(qa_pairs=[{"question": "q", "short_answers": ["a"]}], answers=None, claims=None)])
    asqa = fingerprint(cfg, create("tasks", "alce-asqa"), "abc")
    assert fingerprint(cfg, auto, "abc") == asqa and asqa["config"]["task"] == "alce-asqa"
    eli5 = fingerprint(cfg, create("tasks", "alce-eli5"), "abc")
    assert differences(asqa, eli5) == "task"

    AnswerCheckpoint.open(tmp_path, fingerprint(cfg, auto, "abc"))
    assert AnswerCheckpoint.open(tmp_path, asqa, resume=True).header["config"]["task"] == "alce-asqa"
    with pytest.raises(VericiteError, match=r"other settings \(task\)"):
        AnswerCheckpoint.open(tmp_path, eli5, resume=True)

    legacy(tmp_path, {"judge": "fake", "task": "alce", "task_options": {}})  # the name as given, resolved now
    assert AnswerCheckpoint.open(tmp_path, asqa, resume=True, resolve={"alce": "alce-asqa"}.get).is_done(0, "a")
    with pytest.raises(VericiteError, match=r"other settings \(task\)"):
        AnswerCheckpoint.open(tmp_path, eli5, resume=True, resolve={"alce": "alce-asqa"}.get)
    with pytest.raises(VericiteError, match=r"other settings \(task\)"):  # a name that resolves to nothing known: kept
        AnswerCheckpoint.open(tmp_path, asqa, resume=True, resolve=lambda name: None)


def refuse_appending(monkeypatch, path, error=PermissionError):
    """A seam for a checkpoint that cannot be appended to (tests run as root, which chmod does not stop): the
    checkpoint module's ``open`` raises as the system would for ``path`` opened to append."""
    import builtins

    def guarded(file, mode="r", *args, **kwargs):
        if str(file) == str(path) and "a" in mode:
            raise error(13, "Permission denied", str(file))
        return builtins.open(file, mode, *args, **kwargs)

    monkeypatch.setattr("vericite.evaluate.checkpoint.open", guarded, raising=False)


def test_a_checkpoint_that_cannot_be_appended_to_is_one_line_naming_the_file(tmp_path, monkeypatch):
    ck = AnswerCheckpoint.open(tmp_path, HEAD)
    ck.add(0, "a", {"x": 1}, [])
    refuse_appending(monkeypatch, tmp_path / NAME)
    with pytest.raises(VericiteError) as e:
        ck.add(1, "b", {"x": 2}, [])
    msg = str(e.value)
    assert msg.startswith(f"cannot write the evaluation's checkpoint {tmp_path / NAME}: Permission denied"), msg
    assert "\n" not in msg and "rerun with --resume" in msg and "writable" in msg and "--out" in msg, msg
    assert not ck.is_done(1, "b") and ck.is_done(0, "a")  # the answer not written is not counted done
    assert e.value.__cause__ is None and e.value.__suppress_context__  # one line, no chained traceback


def test_a_checkpoint_that_cannot_be_created_is_one_line_naming_the_file(tmp_path, monkeypatch):
    import vericite.jsonl

    def refused(path, records):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(vericite.jsonl, "write_jsonl_atomic", refused)
    with pytest.raises(VericiteError, match=r"^cannot write the evaluation's checkpoint .*: Permission denied \(make the file and its folder writable, or use another --out\)$"):
        AnswerCheckpoint.open(tmp_path, HEAD)


def indexed(index, corpus):
    return {"config": {"judge": "fake", "task": "conner", "evidence_index": index}, "input_sha256": "abc", "index_corpus": {"sha256": corpus, "passages": 3}}


def test_an_evaluation_resumes_over_the_same_index_moved_elsewhere_and_not_over_another(tmp_path):
    """``evaluate --resume --index`` from another checkout: the index holds the same corpus, at another path."""
    AnswerCheckpoint.open(tmp_path, indexed("/a/shared/idx", "c1"))
    AnswerCheckpoint.open(tmp_path, indexed("/b/shared/idx", "c1"), resume=True)
    with pytest.raises(VericiteError, match=INDEX_CHANGED):
        AnswerCheckpoint.open(tmp_path, indexed("/b/shared/idx", "c2"), resume=True)
