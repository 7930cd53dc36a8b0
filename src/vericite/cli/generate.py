"""``vericite generate``: a generation method (KaLMA by default) over a dataset into a run folder."""

from __future__ import annotations

from typing import Any

import click
from pydantic import ValidationError

from ..errors import VericiteError, validation_message
from ..generate.vtg_build import VTG_K_WITH_STORE  # noqa: F401  (re-exported: the line vtg_k_note says)
from ..runs.config import GenerateConfig
from .options import SERVER_OPTIONS, ray_options, ray_settings
from .output import status_words


def build_config(base: dict[str, Any], overrides: dict[str, Any]) -> GenerateConfig:
    """Defaults < YAML (``base``) < flags the user gave (``overrides`` without Nones); a flat key that is not
    the config's own is an option of the method (``method_args``)."""
    from ..runs.config import build_config as build

    try:
        return build(GenerateConfig, base, overrides)  # type: ignore[no-any-return]
    except ValidationError as e:
        raise VericiteError(f"invalid {validation_message(e)}") from None
    except ValueError as e:  # an option given twice
        raise VericiteError(f"invalid option {e}") from None


def parse_method_args(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    """``--method-arg KEY=VALUE`` pairs as a mapping; values read as YAML scalars (``3``, ``0.5``, ``null``)."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise VericiteError(f"--method-arg wants KEY=VALUE, got {pair!r}")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out or None


def vtg_flags(opts: dict[str, Any]) -> None:
    """VTG's flags as its options: the ``--no-*`` ablations as ``false`` (left out when not given), ``--judge`` as
    the verifiers' judge (``verifier_judge``) when the method is vtg."""
    for flag, option in (("no_query_generation", "query_generation"), ("no_verifier", "verifier"), ("no_simplifier", "simplifier")):
        if opts.pop(flag, False):
            opts[option] = False
    if opts.get("method") == "vtg" and opts.get("rerank_judge") is not None:
        opts["verifier_judge"] = opts.pop("rerank_judge")
    if opts.get("rerank_judge") is not None:  # said as the flag, not as "invalid option rerank_judge"
        from ..runs.config import DEFAULT_METHOD, method_options_model

        method = opts.get("method") or DEFAULT_METHOD
        model = method_options_model(method)
        if model is not None and "rerank_judge" not in model.model_fields:
            raise VericiteError(f"--judge is an option of --method rerank and vtg (their judge), not of {method}")


def vtg_k_note(cfg: Any) -> None:
    """The method's notes on its options, one warning line each (``GenerateConfig.method_notes``): VTG given ``k``
    (``--k``, ``--method-arg k=``) with a graph store and no ``kg_k``: k bounds documents only
    (``generate/vtg_build.py: k_with_store_note``; `vericite run` says them once per distinct line over its levels,
    ``runs/runner.py``)."""
    for said in cfg.method_notes():
        click.secho(said, fg="yellow", err=True)


def print_summary(manifest: dict[str, Any], out: str) -> None:
    s = manifest.get("summary", {})
    unanswered = f", unanswered: {s['unanswered']}" if s.get("unanswered") else ""
    click.echo(f"{s.get('n_done', 0)} answers in {out}/samples.jsonl  (failed calls: {s.get('failed_calls', 0)}{unanswered})")
    tok = s.get("tokens", {})
    unknown = f" (and {tok['uncounted_calls']} calls of unknown tokens: a lower bound)" if tok.get("uncounted_calls") else ""
    click.echo(f"tokens: {tok.get('prompt', 0)} prompt + {tok.get('completion', 0)} completion{unknown}")
    if s.get("citation_status"):
        parts = status_words(s["citation_status"])
        click.echo(f"citations: {parts}; [NA]: {s.get('na_count', 0)}")
    r = s.get("retrieval") or {}
    if r.get("no_entity_found"):
        click.secho(
            f"warning: no entity of the graph was found for {r['no_entity_found']} of {r['questions']} questions, which were"
            f" answered without knowledge (see retrieval.not_found in {out}/samples.jsonl)",
            fg="yellow", err=True,
        )
    got = s.get("retrieved") or {}
    if s.get("empty_knowledge"):  # conner-knowledge
        why = f"; the retriever found no passage for {got['none_found']}" if got.get("none_found") else ""
        click.secho(f"warning: {s['empty_knowledge']} of {s.get('n_done', 0)} knowledge texts are empty{why} (evaluate --task conner leaves"
                    f" them out; see output in {out}/samples.jsonl)", fg="yellow", err=True)
    elif got.get("none_found"):  # ALCE's baselines and VTG with --index
        click.secho(f"warning: the retriever found no document for {got['none_found']} of {got['questions']} questions, which were answered"
                    f" without documents (see retrieval.found in {out}/samples.jsonl)", fg="yellow", err=True)
    if s.get("rerank_unreadable_judgements"):  # rerank: its choice among the samples rests on these
        click.secho(f"warning: rerank: {s['rerank_unreadable_judgements']} judgements could not be read (samples whose recall could not be"
                    f" computed rank last; see rerank in {out}/samples.jsonl)", fg="yellow", err=True)
    problems = (s.get("vtg") or {}).get("problems") or {}
    if problems.get("judge_errors") or problems.get("empty_answer"):  # a component that failed, not the model's choices
        said = [f"{problems['judge_errors']} judge calls failed (their pairs judged not entailed; vtg.judge_error names the first)"] if problems.get("judge_errors") else []
        said += [f"{problems['empty_answer']} answers empty"] if problems.get("empty_answer") else []
        click.secho(f"warning: vtg: {'; '.join(said)}; see vtg.problems in {out}/samples.jsonl", fg="yellow", err=True)
    if s.get("retrieval_accuracy"):
        ra = s["retrieval_accuracy"]
        click.echo(f"retrieval: entity recall {ra['entity_recall']:.3f}, precision {ra['entity_precision']:.3f} over {ra['n']} questions with gold entities")


def common_generation_options(f):
    for opt in reversed(
        [
            click.option("--model", "-m", help="registered model name, openai:<model>, or llamacpp:<file.gguf> [default: qwen2.5-coder-1.5b]"),
            *SERVER_OPTIONS,  # --base-url, --timeout, --retries
            click.option("--threads", type=int, help="CPU threads for llama.cpp [default: $VERICITE_THREADS or 2]"),
            click.option("--no-cache", "no_cache", is_flag=True, default=False, help="do not read or write the call cache"),
            click.option("--max-tokens", type=int, help="longest answer in tokens [default: KaLMA 384, ALCE's methods 300, conner-knowledge 150; vtg: each sentence, 100]"),
            click.option("--seed", type=int, help="sampling seed; ALCE's methods also draw their demos with it (ALCE's default: 42) [default: 0]"),
        ]
    ):
        f = opt(f)
    return f


@click.command()
@click.option("--method", help="generation method: a registered name (kalma; ALCE's vanilla, summ, snippet, rerank, closedbook; vtg; conner-knowledge, CONNER's knowledge of a query; fake, the test stand-in; or a plugin's) [default: kalma]")
@click.option("--method-arg", "method_arg", multiple=True, metavar="KEY=VALUE", help="an option of the method (repeatable); KaLMA's are also flags: --knowledge, --store, --demonstration, --max-tokens, --temperature; ALCE's: --ndoc, --shot, --index, --retriever, --judge, --max-tokens, --temperature; VTG's: --k, --queries, --docs-per-query, --trials, --judge, --no-query-generation, --no-verifier, --no-simplifier, --index, --retriever, --store, --max-tokens, --temperature, and kg_k=N (a memory of triples: only the top N re-ranked triples in the long-term memory; default all of them, a resumed run keeps its own), repeat_overlap=X (a sentence whose content words one written sentence holds at X or more is skipped as a repeat; (0, 1], 1.0 exact repeats only; default 0.8, a resumed run keeps its own), repeat_retries=N (short of min_sentences, a completion of repeats is drawn again with another seed at most N times before the answer ends; default 2, 0 ends at once, a resumed run keeps its own), short_retries=N (likewise for a prompt echo, End. before it is offered or an empty completion short of min_sentences; default 2, 0 ends at once, a resumed run keeps its own), strip_preamble=true|false (cut a sentence's leading phrase that names the sources, such as 'Based on the provided search results,'; default true, a resumed run keeps its own), strip_source_leads=true|false (cut a sentence's lead that names its source by its markers, such as 'Document [2] mentions that' or 'As stated in [1],'; default true, a resumed run keeps its own), drop_source_remarks=true|false (skip a sentence that only remarks on the sources, such as 'This information can be found in documents [1], [2], and [5].', as a repeat is skipped; default true, a resumed run keeps its own), tidy_citations=true|false (remove a sentence's list of markers with the separators between them: 'in documents.', not 'in documents,, and.'; default true, a resumed run keeps its own), strip_list_markers=true|false (read a completion written as a list as its items: '1.', '-' and '**' cut, a bare '2.' and a lead-in such as 'The types include:' skipped; default true, a resumed run keeps its own), question_quotes=true|false (read a sentence that quotes the question, such as 'The answer to the question \"Why ...?\" is that', as a prompt echo: drawn again short of min_sentences, else the answer ends; default true, a resumed run keeps its own), sentence_prompt, min_sentences, max_sentences, simplifier_batch (the greedy simplifier's next checks in one judge call), simplifier_strategy=greedy|halving (how the simplifier drops citations: greedy, the paper's, one judge call per citation; halving, chunks of them dropped at once and halved while they cannot be: the same citations under a monotone judge, fewer judge calls when few of many stay (a memory of triples); not with simplifier_batch; default greedy, a resumed run keeps its own); conner-knowledge's: --shot, --index, --max-tokens, --temperature, and source, top_p, demo_words, demo_draw=dataset|run (few-shot without pool: demonstrations from the whole dataset's other questions with reference knowledge (read as the run reads it: --phrasing, --data-path), the same whatever --limit, or from the run's other questions, which --limit changes; default dataset, a resumed run keeps its own, run for one written before the option), reference_file=FILE (CONNER's NQ file the gold passages a file of questions names by meta.gold_document are in; default the dataset's own, nq-500's file), select (none|knowledge|demonstrations), candidates, pool, gamma, select_judge, select_lm, select_relevance_model, select_coherence_model, select_evidence_k")
@click.option("--dataset", "-d", help="biokalma, biokalma-mini, demo, nq-500, wow-seen-500, wow-unseen-500 (any registered dataset), a JSONL file of questions, or an ALCE .json file [default: biokalma]")
@click.option("--phrasing", type=click.Choice(["specific", "general"]), help="BioKaLMA question phrasing [default: specific]")
@click.option("--data-path", help="where the dataset lives (default for biokalma: ../shared/data/biokalma)")
@click.option("--limit", type=int, help="answer only the first N questions")
@click.option("--out", "-o", required=True, help="run folder to write (samples.jsonl, manifest.json)")
@click.option("--resume", is_flag=True, help="continue a run that was interrupted, skipping finished samples; only with the folder's settings and method (its version, model, prompt files: manifest.json), else one line says what differs")
@click.option("--knowledge", type=click.Choice(["auto", "given", "retrieve"]), help="use the knowledge given with each question, or retrieve it from --store [default: auto]")
@click.option("--store", help="graph store folder to retrieve knowledge from (see `vericite kg load`); vtg: a memory of triples retrieved from it")
@click.option("--demonstration", help="one-shot demonstration file (vericite JSON or a BioKaLMA prompt file) [default: the dataset's (BioKaLMA's released prompt for biokalma and biokalma-gold), else vericite's own]")
@click.option("--temperature", type=float, help="sampling temperature [default: KaLMA 0, ALCE's methods 0.5, conner-knowledge 0, vtg's sentences 0.5 (its citations and queries greedy)]")
@click.option("--ndoc", type=int, help="ALCE methods: documents given with each question [default: 5]")
@click.option("--shot", type=int, help="ALCE methods: demonstrations drawn (by --seed) from the prompt file [default: 2]; conner-knowledge: 0 zero-shot, n few-shot with n demonstrations drawn from the dataset's other questions (demo_draw=run: the run's), never the item itself [default: 0]")
@click.option("--index", help="ALCE methods: index folder to retrieve documents from for questions that carry none (see `vericite docs index`); conner-knowledge: the index of source=retrieve and of Q_know's evidence; vtg: the long-term memory's top --k for questions that carry no documents, and the evidence finder's searches")
@click.option("--retriever", help="ALCE methods: the retriever that reads --index [default: bm25]")
@click.option("--judge", "rerank_judge", help="rerank: the judge whose citation recall picks the best of the samples; vtg: the verifiers' judge, binary or three-way (llm3:, llm3c:, llm3f:<fit file>, nli3:; entailed at P(supports) >= 0.5), not four-class [default: llm:<--model>]")
@click.option("--k", "k", type=int, help="vtg: documents in the long-term memory at the start (not triples: a memory of triples starts with all of KaLMA's retrieval, or its top N with --method-arg kg_k=N) [default: 5]")
@click.option("--queries", type=int, help="vtg: queries the evidence finder writes (M) [default: 2]")
@click.option("--docs-per-query", "docs_per_query", type=int, help="vtg: documents retrieved per query (N) [default: 2]")
@click.option("--trials", type=int, help="vtg: evidence-finder rounds per sentence (T) [default: 3]")
@click.option("--no-query-generation", "no_query_generation", is_flag=True, default=False, help="vtg: retrieve with the sentence itself (ablation)")
@click.option("--no-verifier", "no_verifier", is_flag=True, default=False, help="vtg: keep every sentence with its generated citations (ablation)")
@click.option("--no-simplifier", "no_simplifier", is_flag=True, default=False, help="vtg: keep the verified citations unsimplified (ablation)")
@click.option("--max-failures", help="questions that may go unanswered (their model call, or a plugin's retriever, graph ..., failed) before the run fails (exit 1, manifest \"incomplete\"): a count or a percentage such as 10% [default: 0; a run where every question failed always fails]")
@common_generation_options
@ray_options
@click.option("--concurrency", type=click.IntRange(min=1), metavar="N", help="openai:<model>: answer up to N questions at once, each request with --timeout and --retries; the answers are written in the order of the questions [default: 1]")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
def generate(out: str, resume: bool, no_cache: bool, quiet: bool, method_arg: tuple[str, ...], **opts: Any) -> None:
    """Answer questions with a generation method, one JSON line per sample: by default KaLMA, knowledge-graph
    citations and [NA]; ALCE's baselines (--method vanilla|summ|snippet|rerank|closedbook) cite documents."""
    from ..runs.loop import IncompleteRun, generate_run

    vtg_flags(opts)
    ray, workers = ray_settings(opts)
    concurrency = opts.pop("concurrency", None) or 1
    cfg = build_config({}, {**opts, "method_args": parse_method_args(method_arg), "cache": False if no_cache else None})
    vtg_k_note(cfg)
    if concurrency > 1 and not cfg.model.startswith("openai:"):
        raise VericiteError(f"--concurrency is for a model server (openai:<model> with --base-url), not {cfg.model!r}: an embedded model answers one question at a time (use --ray to run several)")
    if concurrency > 1 and ray:
        raise VericiteError("give --ray or --concurrency, not both")
    try:
        if ray or concurrency > 1:
            from ..runs.distributed import GEN_BATCH, generate_pooled

            manifest = generate_pooled(
                cfg, out, ray=ray, workers=workers if ray else concurrency, resume=resume, progress=not quiet, batch_size=GEN_BATCH if ray else 1
            )
        else:
            manifest = generate_run(cfg, out, resume=resume, progress=not quiet)
    except IncompleteRun as e:
        print_summary(e.manifest, out)
        raise
    print_summary(manifest, out)
