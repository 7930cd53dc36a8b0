"""What the evaluate and run resume tests share: the fake judges' calls counted, and cut (KeyboardInterrupt) at one;
the index retriever's queries counted; CONNER knowledge lines (and an index of their evidence) and an ALCE result
file to evaluate."""

from __future__ import annotations

import json

from vericite.fakes.judges import FourClassJudge, KeywordJudge, ThreeWayJudge


class Cut:
    """Counts the fake judges' calls (and the pairs they were given) from now on, in place of an earlier Cut;
    raises KeyboardInterrupt at call ``at``."""

    def __init__(self, monkeypatch, at=None):
        self.calls, self.pairs, self.at = 0, 0, at
        for cls in (KeywordJudge, FourClassJudge, ThreeWayJudge):
            monkeypatch.setattr(cls, "judge", self.wrap(getattr(cls.judge, "real", cls.judge)))  # a later Cut replaces it

    def wrap(self, real):
        def judge(judge_self, pairs):
            self.calls += 1
            if self.at is not None and self.calls == self.at:
                raise KeyboardInterrupt
            self.pairs += len(pairs)
            return real(judge_self, pairs)

        judge.real = real  # type: ignore[attr-defined]
        return judge


def conner_lines(n=4):
    """``n`` CONNER knowledge lines, each with its evidence."""
    return [
        {"id": f"c{i}", "query": f"What is city {i}?", "knowledge": f"City {i} is the capital of land {i}. It is old.", "evidence": [f"City {i} is the capital of land {i} and is old."]}
        for i in range(n)
    ]


CONNER = conner_lines(4)


def conner_index(folder, n=4):
    """An index (``vericite docs index``) in ``folder``/idx of the evidence of :func:`conner_lines`' ``n`` lines, for
    those lines without their own (``evaluate --task conner --index``); its path."""
    from click.testing import CliRunner

    from vericite.cli.main import cli

    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "title": f"Land {i}", "text": x["evidence"][0]}) + "\n" for i, x in enumerate(conner_lines(n))), encoding="utf-8")
    r = CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(folder / "idx")])
    assert r.exit_code == 0, r.output
    return folder / "idx"


class Searches:
    """The queries the index retriever is asked (its ``search``) in this process, counted from now on, in place of
    an earlier Searches."""

    def __init__(self, monkeypatch):
        from vericite.knowledge.docs.retrievers import IndexRetriever

        self.queries: list[str] = []
        real = getattr(IndexRetriever.search, "real", IndexRetriever.search)

        def search(retriever, query, k=None):
            self.queries.append(query)
            return real(retriever, query, k)

        search.real = real  # type: ignore[attr-defined]
        monkeypatch.setattr(IndexRetriever, "search", search)


def alce_file(tmp_path, n=4):
    """An ALCE result file of ``n`` ASQA answers citing two documents."""
    docs = [{"title": "Paul Simon", "text": "Paul Simon is an American musician.", "summary": "", "extraction": ""},
            {"title": "Silence", "text": "The Sound of Silence is a song by Paul Simon.", "summary": "", "extraction": ""}]  # fmt: skip
    items = [
        {"sample_id": f"q{i}", "question": f"Who is {i}?", "docs": docs, "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}],
         "annotations": [{"long_answer": "Paul Simon."}], "output": f"Paul Simon is an American musician [1]. He wrote a song {i} [2]."}
        for i in range(n)
    ]  # fmt: skip
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"args": {"dataset_name": "asqa", "ndoc": 2}, "data": items}), encoding="utf-8")
    return result
