"""``build_dataset``: pairs -> entries, appended to a JSONL file as each is finished; resumable.

Files, for ``--out datasets/NAME.jsonl``:

* ``NAME.jsonl`` — one entry per line (``vericite generate --dataset`` reads it), written and fsynced as each
  entry finishes; a torn last line left by a crash is cut before a resumed build appends;
* ``NAME.skipped.jsonl`` — one line per pair that gave no entry, with the reason (appended, fsynced; a pair
  tried again on resumption replaces its line, and a pair that then gives an entry loses it);
* ``NAME.log.json`` — the configuration, the pair selection's drop counts, skip reasons, events (retries,
  format failures, skipped triples), timings; rewritten after every entry, so a killed build leaves it current;
* ``NAME.md`` — the dataset card (``card.py``), written when the build stops (finished or interrupted).

Resuming (``resume=True``) re-selects the pairs (deterministic), skips the pairs already in ``NAME.jsonl`` and
tries the others again; every LLM call goes through the call cache, so a pair that failed before fails again
from the cache at no cost. The configuration must match the one the file was started with (``n`` may change).

One process at a time builds a given file: ``NAME.lock`` beside it is locked (``outputs.PathLock``) for the
whole build, and a second ``build`` of the same ``--out`` is refused in one line.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ....errors import VericiteError
from ....jsonl import append, read_appended, write_json_atomic, write_jsonl_atomic
from ....outputs import PathLock
from ..resume import check_out, open_for_resume
from .card import timing_summary
from .evolve import BUILDER_VERSION, EntryBuilder, EvolveOptions
from .graph import GraphPool
from .pool import DEFAULT_EXCLUDE, DEFAULT_RELATIONS, pair_knowledge, select_pairs
from .prompts import load_demonstrations
from .scoring import PerplexityScorer


class BuildConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pool: str | None = None  # a graph file (BioKaLMA .json, .jsonl, .nt, .ttl), loaded in memory
    store: str | None = None  # or an on-disk graph store
    out: str
    n: int = Field(default=100, ge=1)
    iterations: int = Field(default=5, ge=1, le=20)
    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    model: str = "qwen2.5-coder-1.5b"
    scorer: str | None = None  # perplexity model; None: the same as model
    scoring: Literal["auto", "prefix", "batch", "single"] = "auto"
    relations: list[str] = Field(default_factory=lambda: list(DEFAULT_RELATIONS))
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    count_scope: Literal["graph", "pool"] = "graph"
    min_gold: int = Field(default=3, ge=1)
    candidates_per_round: int = Field(default=2, ge=1)
    retries: int = Field(default=1, ge=0)
    max_tokens: int = Field(default=96, ge=8)
    seed: int = 0
    threads: int | None = Field(default=None, ge=1)
    cache: bool = True
    base_url: str | None = None
    timeout: float | None = Field(default=None, gt=0)  # seconds per request to a model server [300]
    request_retries: int | None = Field(default=None, ge=0)  # ("retries" is the builder's, per reply)

    # what may differ between a build and its resumption
    RESUMABLE: ClassVar[frozenset[str]] = frozenset({"n", "threads", "cache", "out", "scoring", "base_url", "timeout", "request_retries"})

    def fingerprint(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if k not in self.RESUMABLE}


def side_paths(out: str | Path) -> dict[str, Path]:
    p = Path(out)
    stem = p.with_suffix("") if p.suffix == ".jsonl" else p
    return {
        "out": p,
        "skipped": stem.with_name(stem.name + ".skipped.jsonl"),
        "log": stem.with_name(stem.name + ".log.json"),
        "card": stem.with_name(stem.name + ".md"),
        "lock": stem.with_name(stem.name + ".lock"),
    }


def open_pool(cfg: BuildConfig) -> GraphPool:
    if bool(cfg.pool) == bool(cfg.store):
        raise VericiteError("give the graph to build from: --pool FILE or --store DIR (one of them)")
    return GraphPool.from_file(cfg.pool) if cfg.pool else GraphPool.from_store(cfg.store)  # type: ignore[arg-type]


def build_dataset(
    cfg: BuildConfig,
    *,
    resume: bool = False,
    progress: bool = True,
    generator: Any = None,
    scorer_backend: Any = None,
    echo: Callable[[str], None] | None = None,
    stop_after: int | None = None,
) -> dict[str, Any]:
    """Build (or continue) the dataset ``cfg.out``; returns the build log (also written to ``NAME.log.json``).

    ``generator`` / ``scorer_backend``: ready backends (tests); by default ``load_model(cfg.model)`` and
    ``load_model(cfg.scorer or cfg.model)``, both through the call cache unless ``cfg.cache`` is false.
    ``stop_after``: stop after that many pairs were tried in this call (tests of interruption)."""
    echo = echo or (lambda _m: None)
    paths = side_paths(cfg.out)
    out = check_out(paths, resume)
    with PathLock(paths["lock"], f"dataset {out}"):  # before anything is read, cut or appended
        return _build_locked(cfg, paths, resume, progress, generator, scorer_backend, echo, stop_after)


def _build_locked(
    cfg: BuildConfig,
    paths: dict[str, Path],
    resume: bool,
    progress: bool,
    generator: Any,
    scorer_backend: Any,
    echo: Callable[[str], None],
    stop_after: int | None,
) -> dict[str, Any]:
    from ....progress import progress_bar

    out = paths["out"]
    previous = open_for_resume(paths, cfg.fingerprint(), resume)

    t_setup = time.perf_counter()
    pool = open_pool(cfg)
    try:
        selection = select_pairs(pool, cfg.relations, exclude=cfg.exclude, min_candidates=max(1, cfg.iterations - 1))
        counts, n_triples = pool.relation_counts()
        if not selection.pairs:
            why = ", ".join(f"{k} {v}" for k, v in selection.dropped.most_common()) or "no edge with any of the relations"
            raise VericiteError(
                f"no eligible pair of people in {pool.source} ({selection.candidate_edges} candidate edges; dropped: {why}); "
                f"relations looked for: {', '.join(cfg.relations)}"
            )
        pairs = sorted(selection.pairs, key=lambda p: p.id)
        random.Random(f"{cfg.seed}:pairs").shuffle(pairs)

        done: dict[str, dict[str, Any]] = {str(r.get("meta", {}).get("pair_id")): r for r in read_appended(out)}
        from ....models import load_model, model_options

        if generator is None:
            generator = load_model(cfg.model, **model_options(cfg))
        if scorer_backend is None:
            if (cfg.scorer or cfg.model) == cfg.model:
                scorer_backend = generator
            else:
                scorer_backend = load_model(cfg.scorer, **model_options(cfg))  # type: ignore[arg-type]
        scorer = PerplexityScorer(scorer_backend, cfg.scoring)
        demos = load_demonstrations()
        meta = {
            "model": generator.identity().to_dict(),
            "scorer": scorer_backend.identity().to_dict(),
            "scoring_mode": scorer.mode,
            "seed": cfg.seed,
            "source": pool.source,
        }
        opts = EvolveOptions(
            iterations=cfg.iterations, alpha=cfg.alpha, count_scope=cfg.count_scope, exclude=tuple(cfg.exclude),
            min_gold=cfg.min_gold, candidates_per_round=cfg.candidates_per_round, retries=cfg.retries,
            max_tokens=cfg.max_tokens, seed=cfg.seed,
        )
        builder = EntryBuilder(generator, scorer, counts, n_triples, demos, opts, meta=meta, log=echo)
        setup_s = time.perf_counter() - t_setup

        # one line per pair: the last one written (a resumed build retries skipped pairs), none for a pair that
        # has an entry (it may have been skipped before, and the build killed before its line was dropped)
        skipped_lines = list(read_appended(paths["skipped"]))
        skipped_records: dict[str, dict[str, Any]] = {
            k: r for r in skipped_lines if (k := str(r.get("pair"))) not in done
        }
        if len(skipped_records) != len(skipped_lines):
            write_jsonl_atomic(paths["skipped"], skipped_records.values())
        skipped: dict[str, str] = {k: str(r.get("reason")) for k, r in skipped_records.items()}
        questions_seen = {str(r.get("question", "")).strip().lower() for r in done.values()}
        log: dict[str, Any] = {}

        def write_log(status: str) -> dict[str, Any]:
            entries = list(read_appended(out))
            # events per pair, each pair counted once however often it was retried across resumptions
            events: Counter = Counter()
            for e in entries:
                events.update(e.get("meta", {}).get("events", {}))
            for r in skipped_records.values():
                events.update(r.get("events", {}))
            log.clear()
            log.update(
                {
                    "builder": BUILDER_VERSION,
                    "status": status,
                    "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "config": cfg.model_dump(),
                    "fingerprint": cfg.fingerprint(),
                    "graph": {"source": pool.source, "triples_N": n_triples, "properties": len(counts)},
                    "pair_selection": selection.to_dict(),
                    "entries": len(entries),
                    "pairs_tried": len(entries) + len(skipped),
                    "skipped": dict(Counter(skipped.values()).most_common()),
                    "events": dict(sorted(events.items())),
                    "models": {"generator": meta["model"], "scorer": meta["scorer"], "scoring_mode": scorer.mode},
                    "demonstrations": demos.source,
                    "timing": {"setup_s": round(setup_s, 3), **timing_summary(entries)},
                    "resumed": list(previous.get("resumed", [])) + ([time.strftime("%Y-%m-%dT%H:%M:%S")] if previous else []),
                }
            )
            write_json_atomic(paths["log"], log)
            return log

        write_log("running")
        tried_now = 0
        llm_errors = 0  # consecutive pairs lost to model errors: a dead server should stop the build, not skip it all
        with progress_bar(cfg.n, "building entries", enabled=progress, completed=min(len(done), cfg.n)) as advance:
            try:
                for pair in pairs:
                    if len(done) >= cfg.n or (stop_after is not None and tried_now >= stop_after):
                        break
                    if pair.id in done:
                        continue
                    tried_now += 1
                    advance.running(f"pair {pair.a_label} / {pair.b_label}")
                    knowledge = pair_knowledge(pool, pair)
                    res = builder.build(pair, knowledge)
                    entry = res.entry
                    if entry is not None and entry["question"].strip().lower() in questions_seen:
                        entry, res.skip_reason = None, "duplicate_question"
                    llm_errors = llm_errors + 1 if res.skip_reason == "llm_error" else 0
                    if entry is None:
                        skipped[pair.id] = res.skip_reason
                        rec = {"pair": pair.id, "people": [pair.a_label, pair.b_label], "reason": res.skip_reason, "events": dict(res.events), "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
                        retried = pair.id in skipped_records
                        skipped_records[pair.id] = rec
                        if retried:  # replace its line rather than add a second one
                            write_jsonl_atomic(paths["skipped"], skipped_records.values())
                        else:
                            append(paths["skipped"], rec)
                    else:
                        entry["meta"]["pair_id"] = pair.id
                        entry["meta"]["events"] = dict(res.events)
                        append(out, entry)
                        done[pair.id] = entry
                        skipped.pop(pair.id, None)
                        if skipped_records.pop(pair.id, None) is not None:
                            write_jsonl_atomic(paths["skipped"], skipped_records.values())
                        questions_seen.add(entry["question"].strip().lower())
                        advance(1)
                        echo(f"{len(done)}/{cfg.n} {pair.a_label} / {pair.b_label} ({pair.relation}): {len(entry['gold'])} triples, {res.timing.get('total_s', 0):.0f}s")
                    write_log("running")
                    if llm_errors >= 3:
                        raise VericiteError(
                            f"the model failed on {llm_errors} pairs in a row (last: {res.error}); fix it and rerun with --resume"
                        )
            finally:
                status = "complete" if len(done) >= cfg.n else ("exhausted" if tried_now and len(done) < cfg.n and all(p.id in done or p.id in skipped for p in pairs) else "interrupted")
                final = write_log(status)
                from .card import write_card

                write_card(paths["card"], list(read_appended(out)), final)
        return final
    finally:
        pool.close()


__all__ = ["BuildConfig", "build_dataset", "open_pool", "side_paths"]


class BiokalmaBuilder:
    """The :class:`~vericite.protocols.Builder` registered as ``biokalma``: :func:`build_dataset` with the
    options of :class:`BuildConfig` (all but ``out``) and the build context's threads, cache and server."""

    id = BUILDER_VERSION

    def __init__(
        self,
        *,
        progress: bool = False,
        echo: Callable[[str], None] | None = None,
        generator: Any = None,
        scorer_backend: Any = None,
        **options: Any,
    ) -> None:
        self.options = options
        self.progress = progress
        self.echo = echo  # one line per entry and skip (``vericite build biokalma -v``)
        self.backends = {"generator": generator, "scorer_backend": scorer_backend}  # ready backends (tests)
        BuildConfig(out="-", **options)  # refuse bad options now, not after the first pairs

    def build(self, out: str | os.PathLike[str], *, resume: bool = False) -> dict[str, Any]:
        cfg = BuildConfig(out=str(out), **self.options)
        return build_dataset(cfg, resume=resume, progress=self.progress, echo=self.echo, **self.backends)


def from_spec(arg: str, *, ctx: Any, **options: Any) -> BiokalmaBuilder:
    """Registry factory: ``biokalma`` or ``biokalma:<pool file>`` (else give ``pool=`` or ``store=``);
    ``ctx`` gives threads, cache, base_url, timeout and retries (``request_retries``) unless the options do."""
    from pydantic import ValidationError

    from ....errors import InvalidOptionsError

    settings = {
        "threads": ctx.threads,
        "base_url": ctx.base_url,
        "timeout": ctx.timeout,
        "request_retries": ctx.retries,
        "pool": arg or None,
    }
    if ctx.cache is not None and not isinstance(ctx.cache, bool):
        raise VericiteError("the biokalma builder takes cache=True or False (it uses the default call cache)")
    settings["cache"] = ctx.cache is not False and ctx.cache is not None
    merged = {**{k: v for k, v in settings.items() if v is not None}, **options}
    try:
        return BiokalmaBuilder(**merged)
    except ValidationError as e:
        raise InvalidOptionsError("builder biokalma", e) from None
