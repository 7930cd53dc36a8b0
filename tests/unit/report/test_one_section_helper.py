"""Every section of the report page is made by ``report/sections.py``'s ``section`` (id, escaped heading, body):
report/conner.py and report/token_figure.py built theirs by hand."""

from __future__ import annotations

from tests.support.paths import SRC


def test_no_report_module_but_sections_writes_a_section_tag():
    hand_made = [p.name for p in sorted((SRC / "report").glob("*.py")) if p.name != "sections.py" and "<section" in p.read_text(encoding="utf-8")]
    assert hand_made == []

