"""The metric table a command prints on stdout, in three formats (``--format``):

* ``table`` (default): a rich table for people;
* ``json`` (also ``--json``): one JSON document on stdout and nothing else, for scripts; progress bars,
  warnings and hints go to stderr;
* ``markdown``: a GitHub table (metric, value, 95 % CI, n, judge) for PR comments, followed by a few plain
  lines (judges, counts).

A metric that was not computed has value null (JSON) or "—" (markdown) and its reason, never 0.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Sequence

import click

from ..errors import VericiteError

FORMATS = ("table", "json", "markdown")
#: the keys of one metric in the JSON output
JSON_METRIC_KEYS = ("value", "ci", "n", "judge", "higher_is_better", "reason")


def format_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--format table|json|markdown`` and ``--json``; the command receives ``fmt`` and ``as_json``."""
    f = click.option("--json", "as_json", is_flag=True, help="print the metrics as JSON on stdout (same as --format json)")(f)
    f = click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="how the metric table is printed on stdout: table (for people), json (pure JSON, for scripts; "
        "progress and warnings go to stderr), markdown (a GitHub table for PR comments) [default: table]",
    )(f)
    return f


def resolve_format(fmt: str | None, as_json: bool) -> str:
    if as_json and fmt not in (None, "json"):
        raise VericiteError(f"--json and --format {fmt} ask for two formats: give one")
    return "json" if as_json else (fmt or "table")


def hint(text: str, fmt: str) -> None:
    """A line for people (where results were written): on stdout with the table, on stderr otherwise."""
    click.echo(text, err=fmt != "table")


# --------------------------------------------------------------------------- rows


def metric_rows(metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per metric of a results.json ``metrics`` object (evaluate, run)."""
    rows = []
    for name, m in metrics.items():
        m = m if isinstance(m, Mapping) else {}
        value = m.get("value")
        rows.append(
            {
                "metric": name,
                "value": value,
                "ci": m.get("ci") if value is not None else None,
                "n": m.get("n"),
                "judge": m.get("judge"),
                "higher_is_better": m.get("higher_is_better", True),
                "reason": None if value is not None else (m.get("reason") or "no reason given"),
            }
        )
    return rows


def rows_json(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["metric"]: {k: r.get(k) for k in JSON_METRIC_KEYS} for r in rows}


def echo_json(doc: Mapping[str, Any]) -> None:
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False, default=str, allow_nan=False))


# --------------------------------------------------------------------------- markdown


def md_cell(x: Any, *, code: bool = False) -> str:
    """Text safe in one cell of a GitHub table, a list item or a line of markdown (None: empty): one line (line
    breaks and runs of spaces made one space), "|" escaped, and "&", "<", ">" as HTML entities, so a name such as
    ``llm4:<model>``, ``no <metric> score`` or an answer's ``<b>`` shows as written rather than as an HTML tag
    that GitHub drops or renders. ``code``: for text put inside a code span (between backticks), where entities
    would show as written: "&", "<", ">" are left as they are. The one markdown escaping of every command
    (evaluate, run, judge-eval, compare)."""
    text = " ".join(str("" if x is None else x).split())
    if not code:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")


def _num(x: Any, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "—"


def ci_text(ci: Any) -> str:
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci):
        return f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    return ""


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A GitHub table: metric, value, 95% CI, n, judge (for a metric not computed: "not computed: <reason>")."""
    lines = ["| metric | value | 95% CI | n | judge |", "|---|---:|---|---:|---|"]
    for r in rows:
        value = r.get("value")
        judge = (r.get("judge") or "") if value is not None else f"not computed: {r.get('reason')}"
        n = r.get("n")
        cells = [r["metric"], _num(value), ci_text(r.get("ci")), "" if n is None else n, judge]
        lines.append("| " + " | ".join(md_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def markdown_grid(header: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    """Any GitHub table: the first column left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


# how citation parse statuses (stored as ParseStatus values, kept as they are in run folders) are printed: "ok"
# means well-formed (an entity of the knowledge given, a property, a value; a passage number in range), not
# correct, and must not read as a verdict next to a correctness score
STATUS_WORDS = {
    "ok": "well-formed", "unknown_entity": "unknown entity", "unknown_source": "out of range",
    "no_property": "no property", "no_value": "no value",
}  # fmt: skip


def status_words(counts: dict[str, int]) -> str:
    """``{"ok": 6, "no_property": 4}`` -> ``"no property 4, well-formed 6"``."""
    return ", ".join(f"{STATUS_WORDS.get(k, k)} {v}" for k, v in sorted(counts.items(), key=lambda kv: STATUS_WORDS.get(kv[0], kv[0])))
