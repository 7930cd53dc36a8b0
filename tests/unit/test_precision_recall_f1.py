"""``stats.precision_recall_f1``: one class's figures from its counts, shared by the binary and the three-way
judge-eval figures (``judges/meta_three.py`` imported ``judges/meta.py``'s private ``_prf`` across modules)."""

from __future__ import annotations

import ast
from pathlib import Path

import vericite.judges as judges
from vericite.stats import precision_recall_f1


def test_the_figures_and_their_undefined_cases():
    assert precision_recall_f1(3, 1, 1) == {"precision": 0.75, "recall": 0.75, "f1": 0.75, "support": 4}
    assert precision_recall_f1(0, 0, 2) == {"precision": None, "recall": 0.0, "f1": 0.0, "support": 2}  # never predicted
    assert precision_recall_f1(0, 2, 0) == {"precision": 0.0, "recall": None, "f1": 0.0, "support": 0}  # never occurs
    assert precision_recall_f1(0, 0, 0) == {"precision": None, "recall": None, "f1": None, "support": 0}
    assert precision_recall_f1(0, 1, 1)["f1"] == 0.0


def test_the_judge_eval_figures_import_no_private_helper_of_another_module():
    for name in ("meta.py", "meta_three.py"):
        tree = ast.parse((Path(judges.__file__).parent / name).read_text(encoding="utf-8"))
        private = [a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        assert private == [], (name, private)


def test_f1_of_counts_is_the_point_f1_on_every_resample_and_counts_intervals_are_whole():
    import numpy as np

    from vericite.stats import bootstrap_cis, f1_of_counts

    for tp, fp, fn in ((3, 1, 1), (0, 0, 2), (0, 2, 0), (2, 0, 0)):
        t, f, m = [1.0] * tp + [0.0] * (fp + fn), [0.0] * tp + [1.0] * fp + [0.0] * fn, [0.0] * (tp + fp) + [1.0] * fn
        assert f1_of_counts(t, f, m)(np.ones((1, len(t))))[0] == precision_recall_f1(tp, fp, fn)["f1"]
    assert np.isnan(f1_of_counts([0.0], [0.0], [0.0])(np.ones((1, 1))))[0]
    v = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    cis = bootstrap_cis({"count": lambda w: w @ v, "share": lambda w: (w @ v) / 7}, 7, resamples=200, counts=["count"])
    lo, hi = cis["count"]
    assert isinstance(lo, int) and isinstance(hi, int) and lo <= 4 <= hi
