"""Graph store benchmark: load rate and lookup latency of ``OxigraphStore`` against rdflib.

A synthetic, Wikidata-shaped graph is generated deterministically (``--seed``): ``triples / 20`` entities with
person-like labels (common names collide, as in Wikidata), an ``instance of`` each, and 20 properties drawn with
Zipf-skewed frequencies whose values are dates, small vocabularies, or labels of other entities (popular
entities are cited far more often). Measured:

- load rate (triples/s) into an on-disk ``OxigraphStore`` in a temporary folder, from Python triples
  (``add_triples``, which also writes the label index) and from the N-Triples dump of the same graph
  (``load_into_store``: Oxigraph's bulk loader plus label indexing);
- rdflib 7 in-memory ``Graph``: parse of the same N-Triples dump;
- one-hop lookup latency (p50/p99 over ``--lookups`` random entities, per run, median over ``--runs`` runs):
  ``OxigraphStore.one_hop`` (facts as labelled ``Triple`` records) versus a prepared rdflib SPARQL query that
  returns the same facts with the predicates' labels (``SELECT ?p ?o ?pl { ?s ?p ?o OPTIONAL { ?p rdfs:label
  ?pl } }`` with ``?s`` bound);
- exact label lookup: ``find_entities(label, case_insensitive=False)`` (entities with label, types, aliases)
  versus rdflib SPARQL with the label bound returning the entities with their types and aliases.

rdflib loads slowly; ``--rdflib-triples`` runs it (and a same-size Oxigraph comparison) on a smaller graph made
by the same generator. Loads are repeated ``--load-runs`` times (default 3: a 1M load takes a while); lookups
``--runs`` times. Example: ``.venv/bin/python benchmarks/bench_graph.py --triples 1000000 --runs 5``; quick:
``--triples 20000 --runs 2 --lookups 200``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import pyoxigraph

from vericite.knowledge import terms
from vericite.knowledge.loaders import load_into_store
from vericite.knowledge.store import OxigraphStore
from vericite.types import Triple

FIRST = ("Anna Ben Carla Dario Elena Franz Greta Hugo Ines Jonas Karin Luca Maria Nils Olga Pavel Rosa Sven Tara "
         "Ugo Vera Walt Xenia Yusuf Zoe Ada Boris Clara Dmitri Edith Felix Gilda Hans Irene Jakob Lena Milo Nora "
         "Otto Pia Rolf Sara Timo Ulla Viktor Wanda").split()  # fmt: skip
LAST = [f"{a}{b}" for a in ("Berg Stein Wald Feld Bach Brun Hof Kirch Lind Mohr Roth Schwarz Weiss Gold Eisen "
                             "Adler Falk Fuchs Haas Wolf").split() for b in ("", "er", "mann", "ner", "ling")]  # fmt: skip
CLASSES = [("human", 0.7), ("city", 0.1), ("organization", 0.1), ("written work", 0.1)]
# (property, kind, weight before Zipf skew): kind says what its values are
PROPERTIES = [
    ("country of citizenship", "country"), ("sex or gender", "gender"), ("occupation", "occupation"),
    ("date of birth", "date"), ("place of birth", "entity"), ("given name", "given"), ("languages spoken", "language"),
    ("date of death", "date"), ("father", "entity"), ("place of death", "entity"), ("member of", "entity"),
    ("employer", "entity"), ("award received", "entity"), ("educated at", "entity"), ("spouse", "entity"),
    ("child", "entity"), ("notable work", "entity"), ("mother", "entity"), ("religion", "religion"),
    ("student of", "entity"),
]  # fmt: skip
VOCAB = {
    "country": [f"Country {i}" for i in range(190)],
    "gender": ["male", "female", "non-binary"],
    "occupation": [f"occupation {i}" for i in range(400)],
    "language": [f"Language {i}" for i in range(120)],
    "religion": [f"Religion {i}" for i in range(30)],
    "given": FIRST,
}


def synthetic_graph(n_triples: int, seed: int = 0) -> tuple[list[Triple], list[str]]:
    """Exactly ``n_triples`` distinct triples (names and ``instance of`` included) and the entity ids."""
    rng = random.Random(seed)
    n_entities = max(10, n_triples // 20)
    ids = [f"Q{1000 + i}" for i in range(n_entities)]
    labels = [f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in ids]
    triples: list[Triple] = []
    seen: set[tuple[str, str, str]] = set()

    def add(t: Triple) -> None:
        if len(triples) < n_triples and (t.subject, t.property, t.value) not in seen:
            seen.add((t.subject, t.property, t.value))
            triples.append(t)

    classes, class_w = zip(*CLASSES)
    for qid, label in zip(ids, labels):
        add(Triple(qid, "name", label))
        add(Triple(qid, "instance of", rng.choices(classes, class_w)[0]))
    weights = [1.0 / (k + 1) for k in range(len(PROPERTIES))]  # Zipf: the first property is 20x the last
    while len(triples) < n_triples:
        s = rng.randrange(n_entities)
        prop, kind = rng.choices(PROPERTIES, weights)[0]
        if kind == "entity":
            value = labels[int(n_entities * rng.random() ** 3)]  # popular entities are cited more
        elif kind == "date":
            value = f"{rng.randint(1500, 2000)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        else:
            value = rng.choice(VOCAB[kind])
        add(Triple(ids[s], prop, value))
    return triples, ids


def percentile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def time_calls(fn: Callable[[str], object], keys: Sequence[str], runs: int) -> tuple[float, float]:
    """Median over ``runs`` of the p50 and p99 latency (µs) of ``fn`` over ``keys``."""
    for k in keys[: min(100, len(keys))]:  # warm caches (both sides get the same)
        fn(k)
    p50s, p99s = [], []
    for _ in range(runs):
        lat = []
        for k in keys:
            t = time.perf_counter_ns()
            fn(k)
            lat.append((time.perf_counter_ns() - t) / 1000)
        p50s.append(percentile(lat, 0.50))
        p99s.append(percentile(lat, 0.99))
    return statistics.median(p50s), statistics.median(p99s)


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def oxigraph_side(triples: list[Triple], workdir: Path, load_runs: int, tag: str) -> tuple[OxigraphStore, Path, dict]:
    """Load ``load_runs`` times from Python and from N-Triples; return the last store (open) and the dump."""
    out: dict = {}
    secs = []
    for i in range(load_runs):
        d = workdir / f"{tag}-py-{i}"
        with OxigraphStore(d) as s:
            secs.append(timed(lambda: (s.add_triples(triples), s.store.flush())))
            quads = s.count()
            if i == 0:
                dump = workdir / f"{tag}.nt"
                s.dump(dump)
    out["py_rate"] = len(triples) / statistics.median(secs)
    out["py_secs"] = secs
    out["quads"] = quads
    with open(dump, "rb") as f:
        out["nt_lines"] = sum(1 for _ in f)
    out["nt_mb"] = dump.stat().st_size / 1e6
    secs = []
    store = None
    for i in range(load_runs):
        if store is not None:
            store.close()
        store = OxigraphStore(workdir / f"{tag}-nt-{i}")
        secs.append(timed(lambda: load_into_store(dump, store)))
    out["nt_rate"] = out["nt_lines"] / statistics.median(secs)
    out["nt_secs"] = secs
    assert store is not None
    return store, dump, out


def rdflib_side(dump: Path, load_runs: int):
    import rdflib
    from rdflib.plugins.sparql import prepareQuery

    secs = []
    g = None
    for _ in range(load_runs):
        g = None
        gc.collect()
        g2 = rdflib.Graph()
        secs.append(timed(lambda: g2.parse(str(dump), format="nt")))
        g = g2
    assert g is not None
    hop_q = prepareQuery(
        "SELECT ?p ?o ?pl WHERE { ?s ?p ?o . OPTIONAL { ?p rdfs:label ?pl } }",
        initNs={"rdfs": rdflib.RDFS},
    )
    # the same answer as find_entities: the entities, their types and aliases
    label_q = prepareQuery(
        "SELECT ?e ?t ?a WHERE { ?e rdfs:label ?l . OPTIONAL { ?e ?inst ?t } OPTIONAL { ?e skos:altLabel ?a } }",
        initNs={"rdfs": rdflib.RDFS, "skos": rdflib.SKOS},
    )
    inst = rdflib.URIRef(terms.property_iri(terms.INSTANCE_OF))

    def hop(eid: str) -> list:
        return list(g.query(hop_q, initBindings={"s": rdflib.URIRef(terms.entity_iri(eid))}))

    def lookup(label: str) -> list:
        return list(g.query(label_q, initBindings={"l": rdflib.Literal(label), "inst": inst}))

    return g, hop, lookup, secs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triples", type=int, default=1_000_000, help="graph size for Oxigraph (default 1,000,000)")
    ap.add_argument("--rdflib-triples", type=int, default=None, help="graph size for rdflib (default: --triples)")
    ap.add_argument("--runs", type=int, default=5, help="lookup runs; medians reported (default 5)")
    ap.add_argument("--load-runs", type=int, default=3, help="load repetitions; medians reported (default 3)")
    ap.add_argument("--rdflib-load-runs", type=int, default=1, help="rdflib load repetitions (default 1)")
    ap.add_argument("--lookups", type=int, default=1000, help="random entities per lookup run (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rdf_n = args.rdflib_triples or args.triples

    import rdflib

    print(
        f"python {platform.python_version()}, pyoxigraph {pyoxigraph.__version__}, rdflib {rdflib.__version__}, "
        f"{platform.machine()}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f} at start"
    )
    sizes = [args.triples] + ([rdf_n] if rdf_n != args.triples else [])
    with tempfile.TemporaryDirectory(prefix="vericite-bench-graph-") as tmp:
        work = Path(tmp)
        results = {}
        for n in sizes:
            t0 = time.perf_counter()
            triples, ids = synthetic_graph(n, args.seed)
            gen = time.perf_counter() - t0
            rng = random.Random(args.seed + 1)
            keys = [rng.choice(ids) for _ in range(args.lookups)]
            label_of = {t.subject: t.value for t in triples if t.property == "name"}
            label_keys = [label_of[k] for k in keys]
            print(f"\n== {n:,} triples, {len(ids):,} entities (generated in {gen:.1f}s); {args.lookups} lookups x {args.runs} runs")
            store, dump, ox = oxigraph_side(triples, work, args.load_runs, f"g{n}")
            print(
                f"Oxigraph on disk, load from Python (add_triples): {ox['py_rate']:>10,.0f} triples/s  "
                f"(median of {args.load_runs}: {', '.join(f'{s:.1f}' for s in ox['py_secs'])} s; store holds {ox['quads']:,} quads with labels/index)"
            )
            print(
                f"Oxigraph on disk, load N-Triples (bulk loader):   {ox['nt_rate']:>10,.0f} triples/s  "
                f"(median of {args.load_runs}: {', '.join(f'{s:.1f}' for s in ox['nt_secs'])} s; {ox['nt_lines']:,} lines, {ox['nt_mb']:.0f} MB)"
            )
            hop_ox = time_calls(store.one_hop, keys, args.runs)
            find_ox = time_calls(lambda l: store.find_entities(l, case_insensitive=False), label_keys, args.runs)
            print(f"Oxigraph one_hop        p50 {hop_ox[0]:8.1f} us   p99 {hop_ox[1]:8.1f} us")
            print(f"Oxigraph find_entities  p50 {find_ox[0]:8.1f} us   p99 {find_ox[1]:8.1f} us  (exact label)")
            sample_hop = store.one_hop(keys[0])
            store.close()
            results[n] = {"hop": hop_ox, "find": find_ox}
            del triples
            if n != rdf_n:
                continue
            g, hop, lookup, secs = rdflib_side(dump, args.rdflib_load_runs)
            rate = ox["nt_lines"] / statistics.median(secs)
            print(
                f"rdflib in memory, parse N-Triples:               {rate:>10,.0f} triples/s  "
                f"(median of {args.rdflib_load_runs}: {', '.join(f'{s:.1f}' for s in secs)} s)"
            )
            facts = [r for r in hop(keys[0]) if str(r[0]) != terms.LABEL_KEY]  # one_hop hides the index key
            assert len(facts) == len(sample_hop), "both sides must return the same facts"
            hop_rd = time_calls(hop, keys, args.runs)
            find_rd = time_calls(lookup, label_keys, args.runs)
            print(f"rdflib SPARQL one-hop   p50 {hop_rd[0]:8.1f} us   p99 {hop_rd[1]:8.1f} us")
            print(f"rdflib SPARQL label     p50 {find_rd[0]:8.1f} us   p99 {find_rd[1]:8.1f} us  (exact label)")
            print(
                f"ratio rdflib/Oxigraph   one-hop p50 {hop_rd[0] / hop_ox[0]:.1f}x, p99 {hop_rd[1] / hop_ox[1]:.1f}x; "
                f"label lookup p50 {find_rd[0] / find_ox[0]:.1f}x, p99 {find_rd[1] / find_ox[1]:.1f}x; "
                f"N-Triples load {ox['nt_rate'] / rate:.1f}x"
            )
            del g
    sys.stdout.flush()


if __name__ == "__main__":
    main()
