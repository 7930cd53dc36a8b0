"""judges/trust.py: a four-class judge's measurement (CAQA) in words, in the report, and what evaluate attaches."""

from __future__ import annotations


def test_four_class_measurement_in_words():
    from vericite.judges.trust import trust_words

    meas = {"micro_f1": 0.366, "micro_f1_ci": [0.307, 0.418], "macro_f1": 0.242, "n": 287, "data": "CAQA test split"}
    assert trust_words(meas) == "measured four-class accuracy 0.366 [0.307, 0.418], macro F1 0.242 on CAQA test split (n 287)"
    assert trust_words({"micro_f1": 0.5}) == "measured four-class accuracy 0.500, macro F1 n/a on CAQA items"


def test_shipped_four_class_measurements_are_the_results_docs():
    # judges/measured.json's llm4 entries: the CAQA test-split figures docs/results-caqa.md reports
    from pathlib import Path

    from vericite.judges.trust import measured_trust

    doc = (Path(__file__).resolve().parents[3] / "docs" / "results-caqa.md").read_text(encoding="utf-8")
    for jid in ("llm4:qwen2.5-coder-1.5b@1", "llm4:smollm2-135m@1"):
        m = measured_trust(jid)
        assert m is not None and m["task"] == "caqa" and m["n"] == 287
        row = f"| `{jid}` | zero-shot, the whole test split |"
        line = next(x for x in doc.splitlines() if x.startswith(row))
        assert f"{m['micro_f1']:.3f} [{m['micro_f1_ci'][0]:.3f}, {m['micro_f1_ci'][1]:.3f}]" in line
        assert f"{m['macro_f1']:.3f}" in line


def test_report_shows_a_four_class_judges_accuracy():
    from vericite.report.sections import judges_section

    meas = {"micro_f1": 0.366, "micro_f1_ci": [0.307, 0.418], "macro_f1": 0.242, "n": 287, "data": "CAQA test split"}
    html = judges_section({"judges": {"attribution": {"id": "llm4:q@1", "measured": meas}}}, {})
    assert "four-class accuracy 0.366 [0.307, 0.418]" in html and "muted\">not measured<" not in html


def test_a_three_way_judges_three_way_figures_are_shown_beside_the_binary_ones():
    # judges/measured.json's llm3 entry held its three_way block as documentation only: evaluate and the report
    # showed the binary figures alone
    from pathlib import Path

    from vericite.judges.trust import measured_trust, three_way_words, trust_words
    from vericite.report.sections import judges_section

    m = measured_trust("llm3:qwen2.5-coder-1.5b@1")
    said = trust_words(m)
    assert said.startswith("measured balanced accuracy 0.620, ROC AUC 0.793; three-way balanced accuracy 0.480 [0.437, 0.521] on VitaminC"), said
    doc = (Path(__file__).resolve().parents[3] / "docs" / "results-conner.md").read_text(encoding="utf-8")
    assert "three-way balanced accuracy 0.480 [0.437, 0.521]" in doc  # the shipped figure is the results doc's
    html = judges_section({"judges": {"factuality": {"id": "llm3:qwen2.5-coder-1.5b@1", "measured": m}}}, {})
    assert "three-way balanced accuracy 0.480 [0.437, 0.521]" in html
    # no interval measured: the figure alone; a binary judge: nothing added
    assert three_way_words({"three_way": {"balanced_accuracy": 0.5}}) == "three-way balanced accuracy 0.500"
    assert three_way_words({"three_way": {"balanced_accuracy": None}}) is None
    assert "three-way" not in trust_words(measured_trust("llm:qwen2.5-coder-1.5b@2"))


#: the shipped llm3f measurement: the fit file runs/llm3f-qwen/fit.json of docs/judges.md (its whole sha256)
FIT_SHA = "d2306fb07b3b9d6155ca60262a4086a9fee677cebb837a25381b0355e77998de"
FIT_ID = "llm3f:qwen2.5-coder-1.5b:d2306fb07b3b@1"


def test_a_fitted_judges_measurement_is_its_fits_and_no_other_fits():
    # the table held no entry for a fitted judge: evaluate said "accuracy not measured" for the measured fit
    from vericite.judges.trust import measured_trust, trust_words

    m = measured_trust(FIT_ID, fit_sha256=FIT_SHA)
    assert m is not None and m["fit_sha256"] == FIT_SHA and m["task"] == "vitaminc-support" and m["n"] == 500
    assert trust_words(m) == ("measured balanced accuracy 0.679, ROC AUC 0.791; three-way balanced accuracy 0.552 "
                              "[0.502, 0.599] on VitaminC dev, first 500 pairs")
    assert measured_trust(FIT_ID, "kalma-alignment", fit_sha256=FIT_SHA) == m  # no such task: the primary one
    # another fit whose sha256 begins alike (so the same id), or a caller that does not know the fit: not measured
    assert measured_trust(FIT_ID, fit_sha256=FIT_SHA[:12] + "0" * 52) is None
    assert measured_trust(FIT_ID) is None and trust_words(measured_trust(FIT_ID)) == "accuracy not measured"
    # another fit of the same model has another id: not measured
    assert measured_trust("llm3f:qwen2.5-coder-1.5b:0123456789ab@1", fit_sha256="0123456789ab" + "1" * 52) is None
    # a judge that is not fitted gets no entry registered by a fit, and a fitted one none that is not
    assert measured_trust("llm3:qwen2.5-coder-1.5b@1", fit_sha256=FIT_SHA) is None
    assert measured_trust("llm3:qwen2.5-coder-1.5b@1") is not None


def test_shipped_fit_measurements_name_their_fit_and_are_the_judges_doc():
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    table = json.loads((root / "src" / "vericite" / "judges" / "measured.json").read_text(encoding="utf-8"))
    fitted = {k: v for k, v in table.items() if k.startswith("llm3f:")}
    assert FIT_ID in fitted
    for jid, entry in fitted.items():  # each keyed by its id, whose 12 hex are its whole fit sha256's first
        assert re.fullmatch(r"[0-9a-f]{64}", entry.get("fit_sha256") or ""), jid
        assert jid.rpartition("@")[0].endswith(":" + entry["fit_sha256"][:12]), jid
    doc = (root / "docs" / "judges.md").read_text(encoding="utf-8")
    m = fitted[FIT_ID]
    assert f"three-way balanced accuracy **{m['three_way']['balanced_accuracy']:.3f}** [{m['three_way']['ci']['balanced_accuracy'][0]:.3f}," in doc
    row = next(x for x in doc.splitlines() if x.startswith(f"| `{FIT_ID}`"))
    assert f"| {m['balanced_accuracy']:.3f} | {m['roc_auc']:.3f} | {m['f1_supports']:.3f} |" in row


def test_the_calibrated_three_way_judges_measurement_is_the_judges_doc():
    # judges/measured.json had no llm3c entry: evaluate said "accuracy not measured" for the judge docs/judges.md measured
    import re
    from pathlib import Path

    from vericite.judges.trust import measured_trust, trust_words

    m = measured_trust("llm3c:qwen2.5-coder-1.5b@1")
    assert m is not None and m["task"] == "vitaminc-support" and m["n"] == 500 and m["unparseable"] == 0.0
    assert trust_words(m) == ("measured balanced accuracy 0.686, ROC AUC 0.784; three-way balanced accuracy 0.454 "
                              "[0.425, 0.483] on VitaminC dev, first 500 pairs")
    doc = (Path(__file__).resolve().parents[3] / "docs" / "judges.md").read_text(encoding="utf-8")
    row = next(x for x in doc.splitlines() if x.startswith("| `llm3c:qwen2.5-coder-1.5b@1`"))
    assert f"| {m['balanced_accuracy']:.3f} | {m['roc_auc']:.3f} | {m['f1_supports']:.3f} |" in row
    text = " ".join(doc.split())
    three = m["three_way"]
    lo, hi = three["ci"]["balanced_accuracy"]
    assert f"three-way balanced accuracy **{three['balanced_accuracy']:.3f}** [{lo:.3f}, {hi:.3f}]" in text
    assert f"binary judge it is better: balanced accuracy **{m['balanced_accuracy']:.3f}**" in text
    said = re.search(r"F1 supports ([\d.]+) \(0\.517\), refutes ([\d.]+) \(0\.328\), not_enough_info ([\d.]+) \(0\.368\)", text)
    assert said and [float(x) for x in said.groups()] == [three["f1_supports"], three["f1_refutes"], three["f1_not_enough_info"]]
    assert three["said_not_enough_info"] == 0 and "says it for none of the 500 pairs (gold: 84)" in text and three["gold_not_enough_info"] == 84
