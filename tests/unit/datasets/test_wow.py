"""wow-seen-500 / wow-unseen-500 read CONNER's files in place: the history as the query, topic, page views,
reference knowledge and response in meta; a bad line is one error naming it."""

from __future__ import annotations

import pytest

from vericite.datasets.wow import load_wow
from vericite.errors import DataError


def test_a_file_of_the_released_shape(tmp_path):
    p = tmp_path / "seen_random_testset.txt"
    p.write_text("Beard\ti like beards. [SEP] Adult males grow them!\tBeards are hair.\tIndeed!\n", encoding="utf-8")
    (tmp_path / "seen_topic_pageviews.txt").write_text("Beard\t1959542\n", encoding="utf-8")
    [s] = load_wow("seen", p)
    assert s.id == "wow-seen-1" and s.question == "i like beards.\nAdult males grow them!" and s.answers is None
    assert s.meta == {"topic": "Beard", "last_utterance": "Adult males grow them!", "reference_knowledge": "Beards are hair.", "response": "Indeed!", "page_views": 1959542}
    p.write_text("Beard\tonly two\n", encoding="utf-8")
    with pytest.raises(DataError, match=":1: expected 4"):
        load_wow("seen", p)
    with pytest.raises(DataError, match="seen or unseen"):
        load_wow("other", p)


@pytest.mark.shared
def test_the_shared_files():
    from tests.support.guards import need
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "conner" / "wow").is_dir(), "../shared/data/conner is not beside this checkout (set VERICITE_DATA)")
    for split in ("seen", "unseen"):
        got = load_wow(split)
        assert len(got) == 500 and all(s.meta.get("page_views") is not None for s in got[:50])


def test_its_corpus_is_the_gold_knowledge(tmp_path):
    from vericite import registry
    from vericite.knowledge.docs.loaders import read_corpus

    p = tmp_path / "seen_random_testset.txt"
    p.write_text("Beard\ti like beards.\tBeards are hair.\tIndeed!\nBeard\tmore?\tBeards are hair.\tYes.\nTea\tTea?\tTea is a drink.\tOk.\n", encoding="utf-8")
    ds = registry.create("datasets", f"wow-seen-500:{p}")
    assert ds.corpus_file() == str(p)
    docs = list(read_corpus(ds.corpus_file()))
    assert [(d.title, d.text) for d in docs] == [("Beard", "Beards are hair."), ("Tea", "Tea is a drink.")]
