"""scripts/conner_figures.py on small synthetic CONNER evaluation folders: two well-formed SVG files with the
buckets' bars and labels, one folder or two side by side, the numbers as a Markdown table; bad arguments said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def evaluation(path: Path, shift: float) -> Path:
    """Eight WoW-like items: page views 10^3 ... 10^6 in pairs, 1-4 sentences, factuality i/10 + shift."""
    path.mkdir()
    recs = []
    for i in range(8):
        conner = {"factuality": i / 10 + shift, "factuality_label": "non_verified", "n_sentences": 1 + i % 4}
        recs.append({"id": f"w{i}", "question": "q", "output": "k", "meta": {"page_views": 10 ** (3 + i // 2)}, "scores": {"conner": conner}})
    (path / "results.json").write_text(json.dumps({"kind": "evaluate", "metrics": {}}), encoding="utf-8")
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def script(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "conner_figures.py"), *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def svg(path: Path) -> ElementTree.Element:
    text = path.read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n') and "<style>" in text
    return ElementTree.fromstring(text.encode("utf-8"))


def texts(root: ElementTree.Element, cls: str) -> list[str | None]:
    return [t.text for t in root.iter(SVG + "text") if t.get("class") == cls]


def bars(root: ElementTree.Element) -> int:
    return sum(1 for r in root.iter(SVG + "rect") if r.get("class") == "bar")


def test_one_folder(tmp_path):
    r = script(evaluation(tmp_path / "e1", 0.0), "--img", tmp_path / "img", "--prefix", "w")
    assert r.returncode == 0, r.stderr
    tail, form = svg(tmp_path / "img" / "w-longtail.svg"), svg(tmp_path / "img" / "w-longform.svg")
    assert texts(tail, "chart-title") == ["factuality by page views (quartiles)"] and bars(tail) == 4
    assert texts(tail, "bar-value") == ["0.050", "0.250", "0.450", "0.650"]
    assert texts(form, "bar-label") == ["1 sentence", "2 sentences", "3 sentences", "4 sentences"] and bars(form) == 4
    assert texts(form, "bar-value") == ["0.200", "0.300", "0.400", "0.500"]  # (0 + 0.4) / 2, (0.1 + 0.5) / 2, ...
    assert f"wrote {tmp_path / 'img' / 'w-longtail.svg'}" in r.stdout
    assert "| long tail | Q1: 1.0k–1.0k views | " in r.stdout and "| long form | 4 sentences | " in r.stdout


def test_two_folders_side_by_side(tmp_path):
    a, b = evaluation(tmp_path / "a", 0.0), evaluation(tmp_path / "b", 0.2)
    r = script(a, b, "--label", "judge llm3:", "--label", "judge llm3f:", "--img", tmp_path / "img")
    assert r.returncode == 0, r.stderr
    tail = svg(tmp_path / "img" / "conner-longtail.svg")
    assert texts(tail, "legend") == ["judge llm3:", "judge llm3f:"] and bars(tail) == 8
    assert texts(tail, "bar-value")[:2] == ["0.050", "0.250"]
    assert texts(svg(tmp_path / "img" / "conner-longform.svg"), "legend") == ["judge llm3:", "judge llm3f:"]
    assert "judge llm3f: — 8 items with factuality, 0 without, 8 with page views" in r.stdout


def test_bad_arguments_are_said(tmp_path):
    a = evaluation(tmp_path / "a", 0.0)
    r = script(a, "--label", "x", "--label", "y", "--img", tmp_path / "img")
    assert r.returncode == 2 and "2 labels for 1 folders" in r.stderr
    r = script(tmp_path / "missing", "--img", tmp_path / "img")
    assert r.returncode == 1 and "no samples.jsonl" in r.stderr
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "samples.jsonl").write_text(json.dumps({"id": "x", "scores": {"kalma": {}}}) + "\n", encoding="utf-8")
    r = script(tmp_path / "other", "--img", tmp_path / "img")
    assert r.returncode == 1 and "no item has CONNER scores" in r.stderr
    assert not (tmp_path / "img").exists()
