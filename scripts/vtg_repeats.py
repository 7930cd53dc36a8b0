"""How many sentences of VTG run folders the near-repeat rule (``--method-arg repeat_overlap=X``,
``vtg_steps.repeat_of``) would have dropped, per threshold: each kept sentence is checked against the sentences
kept before it in its answer, as ``read_sentence`` checks a candidate against the answer so far. Read-only.

    python scripts/vtg_repeats.py runs/vtg-ablation-long/level-0 runs/vtg/eli5-s3m3 [--thresholds 0.6,0.7,0.8,0.9]
        [--show 0.8]

A static count: the rule changes what follows a dropped sentence in a new run (the model is asked again with a
shorter answer so far), which a folder written without it cannot show. ``--show X`` lists each sentence dropped at
X with the written sentence it repeats and its containment.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vericite.generate.vtg_steps import content_tokens, containment, repeat_of


def answers(folder: Path) -> list[tuple[str, list[str]]]:
    """(question id, its kept sentences, citations removed as the generator wrote them) per answer."""
    out = []
    for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        kept = []
        for s in (r.get("vtg") or {}).get("sentences", []):
            if s.get("kept") and s.get("trials"):
                kept.append(s["trials"][-1]["sentence"])
        out.append((str(r.get("id")), kept))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--thresholds", default="0.5,0.6,0.7,0.8,0.9,1.0")
    ap.add_argument("--show", type=float, default=None)
    a = ap.parse_args(argv)
    thresholds = [float(t) for t in a.thresholds.split(",")]
    for folder in a.folders:
        if not (folder / "samples.jsonl").is_file():
            print(f"{folder}: no samples.jsonl", file=sys.stderr)
            return 1
        got = answers(folder)
        n = sum(len(k) for _, k in got)
        later = sum(max(len(k) - 1, 0) for _, k in got)
        print(f"{folder}: {len(got)} answers, {n} kept sentences ({later} after an answer's first)")
        for t in thresholds:
            dropped = sum(1 for _, k in got for i, s in enumerate(k) if i and repeat_of(s, k[:i], t) is not None)
            print(f"  repeat_overlap={t:g}: {dropped} would be dropped")
        if a.show is not None:
            for qid, k in got:
                for i, s in enumerate(k):
                    hit = repeat_of(s, k[:i], a.show) if i else None
                    if hit is not None:
                        print(f"  [{qid} #{i + 1}] {hit[1]:.2f} of {k[hit[0]]!r}\n      drops {s!r}")
            # the closest calls kept: the highest containment under the threshold
            near = sorted(
                ((max(containment(content_tokens(s), content_tokens(w)) for w in k[:i]), qid, i, s) for qid, k in got for i, s in enumerate(k) if i and repeat_of(s, k[:i], a.show) is None),
                reverse=True,
            )[:3]
            for c, qid, i, s in near:
                print(f"  kept [{qid} #{i + 1}] {c:.2f}: {s!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
