"""``build_caqa``: logical queries sampled from a graph -> four-class attribution items, appended to a JSONL file
as each query is finished; resumable; one writer at a time.

Files, for ``--out datasets/NAME.jsonl``: ``NAME.jsonl`` (one item per line: ``id``, ``question``, ``answer``,
``citation``, ``label``, ``complexity``, ``split``, ``query``, ``subgraph``, ``answers``; it also reads as samples), ``NAME.skipped.jsonl`` (one line per query that gave
no item, with the reason), ``NAME.log.json`` (configuration, graph summary, drops by reason, timings; rewritten
after every query), ``NAME.md`` (the dataset card, ``card.py``), ``NAME.lock`` (held while building).

Queries are numbered; query ``i`` is sampled with ``random.Random(f"{seed}:{i}")``, so a build is the same on
every machine and a resumed build continues where it stopped: queries already written or skipped are not tried
again, a query whose items were cut short by a crash is written again, LLM calls come from the call cache.
A query's items are written together; the build stops once ``n`` items are written (so it may write up to three
more). The split is by query (``test_share`` of queries, by a hash of the query), so no question is in both.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ....errors import VericiteError
from ....jsonl import append, read_appended, write_json_atomic, write_jsonl_atomic
from ....outputs import PathLock
from ..resume import check_out, open_for_resume
from .graph import DEFAULT_EXCLUDE, FactGraph, value_key
from .items import Sampler, make_items
from .queries import CLASSES
from .verbalise import PROMPT_VERSION, LLMVerbaliser, TemplateVerbaliser

BUILDER_VERSION = "caqa-builder@1"


class CaqaConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    store: str | None = None  # an on-disk graph store
    pool: str | None = None  # or a graph file (.json BioKaLMA, .jsonl, .nt, .ttl), loaded in memory
    out: str
    n: int = Field(default=2000, ge=1)
    verbalise: Literal["llm", "template"] = "llm"
    model: str = "qwen2.5-coder-1.5b"
    max_tokens: int = Field(default=96, ge=8)
    base_weights: dict[str, float] = Field(default_factory=lambda: {"single": 0.5, "path": 0.4, "tree": 0.1})
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    test_share: float = Field(default=0.15, ge=0.0, le=1.0)
    seed: int = 0
    provenance: str | None = None  # where the graph's facts come from, for the card ("Wikidata via BioKaLMA")
    max_queries: int | None = Field(default=None, ge=1)  # give up after this many queries [20 n]
    threads: int | None = Field(default=None, ge=1)
    cache: bool = True
    base_url: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    request_retries: int | None = Field(default=None, ge=0)

    RESUMABLE: ClassVar[frozenset[str]] = frozenset({"n", "threads", "cache", "out", "base_url", "timeout", "request_retries", "max_queries", "provenance"})

    def fingerprint(self) -> dict[str, Any]:
        d = {k: v for k, v in self.model_dump().items() if k not in self.RESUMABLE}
        if self.verbalise == "template":
            d.pop("model", None)
            d.pop("max_tokens", None)
        return d


def side_paths(out: str | Path) -> dict[str, Path]:
    p = Path(out)
    stem = p.with_suffix("") if p.suffix == ".jsonl" else p
    return {k: stem.with_name(stem.name + suffix) for k, suffix in
            (("skipped", ".skipped.jsonl"), ("log", ".log.json"), ("card", ".md"), ("lock", ".lock"))} | {"out": p}


def open_graph(cfg: CaqaConfig) -> FactGraph:
    from ....knowledge.store import OxigraphStore, open_store

    if bool(cfg.pool) == bool(cfg.store):
        raise VericiteError("give the graph to build from: --store DIR or --pool FILE (one of them)")
    if cfg.store:
        return FactGraph(open_store(cfg.store), f"store:{cfg.store}", cfg.exclude)
    from ....knowledge.loaders import load_into_store

    store = OxigraphStore()
    load_into_store(Path(cfg.pool), store)  # type: ignore[arg-type]
    return FactGraph(store, str(cfg.pool), cfg.exclude)


def split_of(seed: int, key: str, share: float) -> str:
    h = int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "big") / 2**64
    return "test" if h < share else "train"


def build_caqa(
    cfg: CaqaConfig,
    *,
    resume: bool = False,
    progress: bool = True,
    generator: Any = None,
    echo: Callable[[str], None] | None = None,
    stop_after: int | None = None,
) -> dict[str, Any]:
    """Build (or continue) ``cfg.out``; returns the build log. ``generator``: a ready backend (tests);
    ``stop_after``: stop after that many queries were tried in this call (tests of interruption)."""
    paths = side_paths(cfg.out)
    out = check_out(paths, resume)
    with PathLock(paths["lock"], f"dataset {out}"):
        return _build_locked(cfg, paths, resume, progress, generator, echo or (lambda _m: None), stop_after)


def _item_groups(out: Path) -> tuple[dict[int, list[dict[str, Any]]], bool]:
    """Items by query number, whole queries only; True when a query cut short by a crash was dropped."""
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in read_appended(out):
        groups[int(r["meta"]["query_index"])].append(r)
    whole = {i: rs for i, rs in groups.items() if len(rs) == rs[0]["meta"]["items_in_query"]}
    return whole, len(whole) != len(groups)


def _build_locked(cfg: CaqaConfig, paths: dict[str, Path], resume: bool, progress: bool, generator: Any,
                  echo: Callable[[str], None], stop_after: int | None) -> dict[str, Any]:
    from ....progress import progress_bar

    out = paths["out"]
    previous = open_for_resume(paths, cfg.fingerprint(), resume)
    groups, cut = _item_groups(out)
    if cut:
        write_jsonl_atomic(out, [r for i in sorted(groups) for r in groups[i]])

    t0 = time.perf_counter()
    g = open_graph(cfg)
    try:
        sampler = Sampler(g, cfg)
        if not sampler.bases():
            raise VericiteError(f"{g.source} has no fact to ask about (after leaving out {', '.join(cfg.exclude[:4])}, ...)")
        setup_s = time.perf_counter() - t0
        if cfg.verbalise == "llm":
            if generator is None:
                from ....models import load_model, model_options

                generator = load_model(cfg.model, **model_options(cfg))
            verb: Any = LLMVerbaliser(generator, cfg.max_tokens)
            model = generator.identity().to_dict()
        else:
            verb, model = TemplateVerbaliser(), None
        skipped: dict[int, dict[str, Any]] = {int(r["query_index"]): r for r in read_appended(paths["skipped"])}
        seen_keys = {rs[0]["meta"]["query_key"] for rs in groups.values()}
        n_items = sum(len(rs) for rs in groups.values())
        drops: Counter = Counter()
        for r in skipped.values():
            drops[r["reason"]] += 1
        item_drops: Counter = Counter(previous.get("item_drops", {}))
        times: list[float] = []  # this call's seconds per query (a resumed build times its own part)
        items_now = 0
        log: dict[str, Any] = {}

        def write_log(status: str) -> dict[str, Any]:
            items = [r for i in sorted(groups) for r in groups[i]]
            log.clear()
            log.update({
                "builder": BUILDER_VERSION,
                "status": status,
                "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "config": cfg.model_dump(),
                "fingerprint": cfg.fingerprint(),
                "verbalisation": {"mode": cfg.verbalise, "prompts": PROMPT_VERSION if cfg.verbalise == "llm" else None, "model": model},
                "graph": g.summary() | {"union_groups": len(sampler.union_groups), "shared_values": len(sampler.shared)},
                "items": len(items),
                "entries": len(items),  # what every builder's log says it wrote
                "queries": len(groups),
                "queries_tried": len(groups) + len(skipped),
                "query_drops": dict(drops.most_common()),
                "item_drops": dict(item_drops.most_common()),
                "counts": counts(items),
                "timing": {
                    "setup_s": round(setup_s, 3),
                    "queries_timed": len(times),
                    "seconds": round(sum(times), 3),
                    "median_query_s": round(statistics.median(times), 4) if times else None,
                    "queries_grounded": len(sampler.grounding_s),
                    "grounded_to_nothing": sampler.grounded_to_nothing,
                    "median_grounding_ms": round(1000 * statistics.median(sampler.grounding_s), 3) if sampler.grounding_s else None,
                    "items_per_minute": round(60 * items_now / sum(times), 1) if times and sum(times) > 0 else None,
                    "earlier": _earlier(previous),
                },
                "resumed": list(previous.get("resumed", [])) + ([time.strftime("%Y-%m-%dT%H:%M:%S")] if previous else []),
            })
            write_json_atomic(paths["log"], log)
            return log

        write_log("running")
        max_queries = cfg.max_queries or 20 * cfg.n
        tried_now = 0
        i = -1
        llm_errors = 0
        status = "interrupted"
        with progress_bar(cfg.n, f"building CAQA items ({cfg.verbalise})", enabled=progress, completed=min(n_items, cfg.n)) as advance:
            try:
                while n_items < cfg.n:
                    i += 1
                    if i >= max_queries:
                        status = "exhausted"
                        break
                    if i in groups or i in skipped:
                        continue
                    if stop_after is not None and tried_now >= stop_after:
                        break
                    tried_now += 1
                    t = time.perf_counter()
                    q, why, rng = sampler.query(i)
                    if q is not None and q.key() in seen_keys:
                        q, why = None, "duplicate_query"
                    items: list[dict[str, Any]] = []
                    if q is not None:
                        advance.running(f"query {i}: {q.complexity}")
                        try:
                            items, dropped = make_items(g, sampler, q, rng, verb)
                            llm_errors = 0
                        except VericiteError as e:
                            llm_errors += 1
                            if llm_errors >= 3:
                                raise VericiteError(f"the model failed on {llm_errors} queries in a row (last: {e}); fix it and rerun with --resume") from None
                            continue  # not recorded: a resumed build tries it again
                        item_drops.update(dropped)
                        if not items:
                            why = "every_item_dropped"
                    if not items:
                        rec = {"query_index": i, "reason": why, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
                        skipped[i] = rec
                        drops[why] += 1
                        append(paths["skipped"], rec)
                        echo(f"query {i}: skipped ({why})")
                    else:
                        key = q.key()  # type: ignore[union-attr]
                        split = split_of(cfg.seed, key, cfg.test_share)
                        for k, it in enumerate(items):
                            it["id"] = f"caqa-{i:06d}-{it['label']}"
                            it["split"] = split
                            it["meta"].update({"query_index": i, "query_key": key, "items_in_query": len(items), "verbalisation": cfg.verbalise})
                        with open(out, "a", encoding="utf-8") as f:  # a query's items in one write
                            from ....jsonl import dumps_line

                            f.write("".join(dumps_line(it) for it in items))
                            f.flush()
                            import os

                            os.fsync(f.fileno())
                        groups[i] = items
                        seen_keys.add(key)
                        n_items += len(items)
                        items_now += len(items)
                        advance(len(items))
                        echo(f"query {i}: {q.complexity}, {len(items)} items ({', '.join(it['label'] for it in items)}), {split}")  # type: ignore[union-attr]
                    times.append(time.perf_counter() - t)
                    write_log("running")
                else:
                    status = "complete"
            finally:
                final = write_log(status)
                from .card import write_card

                write_card(paths["card"], [r for k in sorted(groups) for r in groups[k]], final)
        return final
    finally:
        g.store.close()


def _earlier(previous: dict[str, Any]) -> list[dict[str, Any]]:
    """The timings of the calls before a resumed one, each without its own ``earlier``."""
    t = dict(previous.get("timing") or {})
    if not t:
        return []
    return list(t.pop("earlier", [])) + [t]


def counts(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Table 4: items by class and by complexity, per split, and the queries per split."""
    out: dict[str, Any] = {"classes": {}, "complexity": {}, "splits": {}, "queries": {}}
    for key, names in (("classes", CLASSES), ("complexity", ("single", "union", "intersection", "concatenation"))):
        field = "label" if key == "classes" else "complexity"
        c: dict[str, dict[str, int]] = {n: {"train": 0, "test": 0, "total": 0} for n in names}
        for it in items:
            row = c.setdefault(str(it.get(field)), {"train": 0, "test": 0, "total": 0})
            row[str(it.get("split", "train"))] = row.get(str(it.get("split", "train")), 0) + 1
            row["total"] += 1
        out[key] = c
    out["splits"] = dict(Counter(str(it.get("split")) for it in items))
    q: dict[str, set] = defaultdict(set)
    for it in items:
        q[str(it.get("split"))].add(it.get("meta", {}).get("query_index"))
    out["queries"] = {k: len(v) for k, v in q.items()}
    return out


class CaqaBuilder:
    """The :class:`~vericite.protocols.Builder` registered as ``caqa``: :func:`build_caqa` with the options of
    :class:`CaqaConfig` (all but ``out``)."""

    id = BUILDER_VERSION

    def __init__(self, *, progress: bool = False, echo: Callable[[str], None] | None = None, generator: Any = None, **options: Any) -> None:
        self.options = options
        self.progress = progress
        self.echo = echo
        self.generator = generator
        CaqaConfig(out="-", **options)

    def build(self, out: Any, *, resume: bool = False) -> dict[str, Any]:
        cfg = CaqaConfig(out=str(out), **self.options)
        return build_caqa(cfg, resume=resume, progress=self.progress, echo=self.echo, generator=self.generator)


def from_spec(arg: str, *, ctx: Any, **options: Any) -> CaqaBuilder:
    """Registry factory: ``caqa`` or ``caqa:<store folder>``; ``ctx`` gives threads, cache, server."""
    from pydantic import ValidationError

    from ....errors import InvalidOptionsError

    settings = {"threads": ctx.threads, "base_url": ctx.base_url, "timeout": ctx.timeout, "request_retries": ctx.retries, "store": arg or None}
    settings["cache"] = ctx.cache is not False and ctx.cache is not None
    merged = {**{k: v for k, v in settings.items() if v is not None}, **options}
    try:
        return CaqaBuilder(**merged)
    except ValidationError as e:
        raise InvalidOptionsError("builder caqa", e) from None


__all__ = ["BUILDER_VERSION", "CaqaBuilder", "CaqaConfig", "build_caqa", "counts", "from_spec", "side_paths", "value_key"]
