"""benchmarks/bench_vtg_simplifier.py on biokalma-mini's first questions: both strategies keep the same triples
under its monotone judge, halving with fewer checks and fewer words for llama.cpp to evaluate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_halving_keeps_the_greedy_triples_for_less(tmp_path):
    out = tmp_path / "b.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_vtg_simplifier.py"), "--questions", "3", "--needed", "1,2", "--json", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text())
    assert len(got["rows"]) == 6 and all(row["same_kept"] for row in got["rows"]) and " NO" not in r.stdout
    for k in (1, 2):
        g, h = got["totals"][f"{k}:greedy"], got["totals"][f"{k}:halving"]
        assert g["checks"] == g["calls"] > h["checks"] == h["calls"] > 0
        assert g["evaluated_words"] > h["evaluated_words"] and h["evaluated_words"] < h["evaluated_words_other_order"]
