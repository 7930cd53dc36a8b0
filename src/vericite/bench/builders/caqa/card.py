"""A CAQA dataset's statistics (Table 4: classes and complexity per split), its checks, and its card."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from ....jsonl import write_text_atomic
from .queries import CLASSES, COMPLEXITIES, mentions

DEVIATIONS = """\
* **Source of queries.** The paper extends the logical queries of KGQA datasets (GrailQA, WebQuestionsSP over
  Freebase). vericite has no KGQA set over its graphs, so it samples the base queries from the graph itself:
  single-triple (e, r, ?a), two-hop path [e, r0, ?v, r1, ?a] (the first value an entity: in label-valued graphs
  such as BioKaLMA's, a value resolved to the one entity with exactly that label) and tree (two subjects sharing
  a value), drawn with the weights in the configuration below.
* **Extension (Table 3).** As the paper: a single query gets a union, either intersection, or nothing, equally
  likely; path and tree queries one of the two intersections. A union needs namesakes, which few graphs have:
  when a union is drawn, its subject is drawn among the namesake groups. A single query with a subject
  constraint counts as intersection (two facts about one common entity, the definition of Type III); a path
  with one stays a path (concatenation).
* **Types.** The paper replaces the answer by an entity of the same (Freebase) type; the graph's values are
  labels without types here, so "the same type" is "another value of the same relation" (another place of
  birth), never an answer of the query.
* **Questions.** The base question is a template of the base query (there is no KGQA question); in LLM mode the
  model extends it with the paper's Table 9 instruction when the query was extended.
* **Checks.** Every item is checked: a supportive citation states every answer, a contradictory one does not
  state the replaced answer, an irrelevant one states none; failures are dropped and counted (below).
"""


def table4(items: Sequence[dict[str, Any]]) -> list[str]:
    """Table 4 as markdown rows: classes and complexity levels, train / test / total."""
    from .build import counts

    c = counts(list(items))
    names = {"supportive": "Sup.", "insufficient": "Ins.", "contradictory": "Con.", "irrelevant": "Irr.",
             "single": "S.", "union": "U.", "intersection": "I.", "concatenation": "C."}
    rows = ["| | | train | test | total |", "|---|---|---:|---:|---:|"]
    tr, te = c["splits"].get("train", 0), c["splits"].get("test", 0)
    rows.append(f"| all | | {tr} | {te} | {tr + te} |")
    for key, order, title in (("classes", CLASSES, "class"), ("complexity", COMPLEXITIES, "complexity")):
        for k in order:
            r = c[key].get(k, {"train": 0, "test": 0, "total": 0})
            rows.append(f"| {title} | {k} ({names[k]}) | {r['train']} | {r['test']} | {r['total']} |")
    return rows


def check_items(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Problems of a built file: a question in both splits, a class or field missing, a citation that breaks
    its class's answer rule (the builder drops such items; a hand-edited file may hold them)."""
    problems = []
    split_of: dict[str, set[str]] = {}
    for it in items:
        split_of.setdefault(it.get("question", ""), set()).add(str(it.get("split")))
        for k in ("question", "answer", "citation", "label", "complexity", "split"):
            if k not in it:
                problems.append(f"{it.get('id')}: no {k}")
        answers = (it.get("meta") or {}).get("answer_entities") or []
        if it.get("label") == "supportive" and not all(mentions(it.get("citation", ""), a) for a in answers):
            problems.append(f"{it.get('id')}: supportive citation lacks the answer")
        if it.get("label") == "irrelevant" and any(mentions(it.get("citation", ""), a) for a in answers):
            problems.append(f"{it.get('id')}: irrelevant citation states the answer")
    both = [q for q, s in split_of.items() if len(s) > 1]
    problems += [f"question in both splits: {q[:80]}" for q in both[:20]]
    missing = [c for c in CLASSES if not any(it.get("label") == c for it in items)]
    return {"ok": not problems, "problems": problems, "n_problems": len(problems), "classes_missing": missing}


def format_stats(items: Sequence[dict[str, Any]]) -> Iterable[str]:
    from .build import counts

    c = counts(list(items))
    yield f"{len(items)} items, {sum(c['queries'].values())} queries (train {c['queries'].get('train', 0)}, test {c['queries'].get('test', 0)})"
    modes = sorted({str((it.get('meta') or {}).get('verbalisation')) for it in items})
    yield f"verbalisation: {', '.join(modes)}"
    yield from table4(items)


def card_text(items: Sequence[dict[str, Any]], log: dict[str, Any], name: str) -> str:
    cfg = log.get("config", {})
    g = log.get("graph", {})
    v = log.get("verbalisation", {})
    t = log.get("timing", {})
    lines = [
        f"# {name}: a CAQA-style four-class attribution benchmark",
        "",
        "Built by `vericite build caqa` (" + str(log.get("builder")) + f"), status **{log.get('status')}**. Facts from the graph "
        f"`{g.get('source')}`" + (f" ({cfg['provenance']})" if cfg.get("provenance") else "") + f"; text from vericite ({v.get('mode')} verbalisation"
        + (f", model `{(v.get('model') or {}).get('name')}`, prompts `{v.get('prompts')}`" if v.get("mode") == "llm" else "")
        + "). Classes: supportive, insufficient, contradictory, irrelevant (CAQA §3.2); complexity: single, union,"
        " intersection, concatenation (§3.3). Split by query: no question is in both splits.",
        "",
        "## Counts (Table 4)",
        "",
        *table4(items),
        "",
        "## Graph",
        "",
        f"- {g.get('entities')} entities with facts, {g.get('facts')} facts, {g.get('relations')} relations;"
        f" {g.get('namesake_groups')} namesake groups ({g.get('union_groups')} namesake pairs sharing a relation);"
        f" {g.get('two_hop_starts')} first hops of two-hop paths; {g.get('shared_values')} values shared by two or more subjects.",
        f"- values: " + ", ".join(f"{k} {n}" for k, n in (g.get("values") or {}).items())
        + " (a label value resolves when exactly one other entity has that label)",
        "",
        "## Drops",
        "",
        f"- queries tried {log.get('queries_tried')}, kept {log.get('queries')}; dropped: "
        + (", ".join(f"{k} {n}" for k, n in (log.get("query_drops") or {}).items()) or "none"),
        "- items dropped: " + (", ".join(f"{k} {n}" for k, n in (log.get("item_drops") or {}).items()) or "none"),
        "",
        "## Configuration and timing",
        "",
        f"- seed {cfg.get('seed')}, n {cfg.get('n')}, base weights {cfg.get('base_weights')}, test share {cfg.get('test_share')}",
        f"- median time per query {t.get('median_query_s')} s; median SPARQL grounding {t.get('median_grounding_ms')} ms; "
        f"{t.get('items_per_minute')} items per minute",
        "",
        "## How it differs from the paper",
        "",
        DEVIATIONS,
    ]
    return "\n".join(lines) + "\n"


def write_card(path: str | Path, items: Sequence[dict[str, Any]], log: dict[str, Any]) -> Path:
    p = Path(path)
    write_text_atomic(p, card_text(items, log, p.stem))
    return p
