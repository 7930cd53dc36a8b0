"""Every extension point of vericite, one small Protocol each.

An implementation is any object with these members (no base class to inherit); each kind has a registry in
``vericite.registry`` and is built by ``registry.create(kind, spec, ctx)``, which checks the result with
``isinstance`` against the Protocol named here. All Protocols are ``runtime_checkable``.

What a caller may rely on beyond the core of a Protocol is a *capability*: its own small Protocol, checked with
``isinstance(obj, Capability)`` rather than found with ``getattr``. An LLM backend's core is ``identity``,
``generate`` and ``logprobs``; ``next_token_logprobs``, ``continuation_logprobs``, ``continuation_token_spans``, ``tokenize``,
``cache_key_extra``, ``close`` and ``wrapped_backend`` (a wrapper's) are capabilities, so a plugin backend implements
what it can.

Records (``Sample``, ``Judgement``, ...) live in ``vericite.types``; this package imports them only for type
checking, so it imports nothing at run time and sits on the ground floor beside them. ``models.py`` holds the
Protocols of language models, scorers and embedders; ``evidence.py`` those of graphs, document stores, retrievers,
citation formats and judges; ``pipeline.py`` those of metrics, methods, datasets, builders, experiments and tasks.
Import them from here.
"""

from __future__ import annotations

from . import evidence, models, pipeline
from .models import LLMBackend, NextTokenScorer, NextTokenUsage, ContinuationScorer, TokenSpanScorer, Tokenizer, CacheKeyed, Closeable, BackendWrapper, PairScorer, Embedder, QueryEmbedder
from .evidence import KnowledgeGraph, DocumentStore, Retriever, CitationFormat, Judge, Configurable
from .pipeline import Metric, AnswerScorer, PairedStatistics, FamilyFactory, Method, MethodOptions, SampleChecking, SamplesPrepared, DatasetReading, ReferenceProviding, ManifestUpgrading, ProgressShowing, StepShowing, Summarising, Dataset, Demonstrating, CorpusProviding, Builder, Experiment, GenerationVarying, LevelSamples, Task, RecordReading, CorpusPreparing

__all__ = [*models.__all__, *evidence.__all__, *pipeline.__all__]
