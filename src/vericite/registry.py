"""One typed registry per kind of extension point, one way to build from them, and plugins.

Kinds (the name ``create`` takes, and the Protocol of ``vericite.protocols`` what it builds must satisfy):
backends and models (LLMBackend), judges (Judge), metrics (Metric), methods (Method), datasets (Dataset),
builders (Builder), experiments (Experiment), tasks (Task), graphs (KnowledgeGraph), docstores
(DocumentStore), retrievers (Retriever), formats (CitationFormat), scorers (PairScorer), embedders (Embedder).

An entry is a *factory* ``(arg, *, ctx, **options) -> object``, registered as the object or lazily as
``"module:attr"`` (imported only when built, so heavy optional backends cost nothing until asked for). Every
entry, built-in (``vericite/_builtins.py``) or plugin, is built the one way::

    create("judges", "llm:qwen2.5-coder-1.5b", ctx, threshold=0.6)

``spec`` is ``name`` or ``name:argument`` (split at the first colon; the argument may hold more colons). The
factory gets the argument, the :class:`BuildContext` (threads, cache, server, key, time limits, and how to load
a model), and the options; it checks its own argument. What it returns is checked against the kind's
Protocol. An unknown name is answered with a did-you-mean error.

Plugins are entry points in the group ``vericite.plugins``, in either form::

    judges.my-judge = my_package.judge:from_spec    # one entry of one kind, registered lazily
    my-plugin = my_package.plugin                   # a module that calls register() when imported

The first form is read from the package metadata at the first lookup and imports nothing until built; a
module of the second form is imported when a name is not found or when ``names()`` is asked. A plugin that
fails to load warns once (:class:`PluginWarning`) and is left out: other lookups go on.

A plugin's calls are guarded, for every kind: an object built from any entry that ``_builtins.py`` did not
register (an entry point, a plugin module's ``register``, a built-in name registered again) has the methods its
registry names ``guarded`` wrapped (model backends and models: every model call, ``identity`` and ``close``;
judges: ``judge``; metrics: ``compute``, ``score_answers``; retrievers: ``retrieve``; ... each registry below), so
that an exception other than a :class:`~vericite.errors.BackendError` raised in them becomes a
:class:`~vericite.errors.PluginError` (a ``BackendError``) naming the plugin, the exception's class and message,
with the registry's ``kind``; a model backend's ``generate``, next-token scoring, ``logprobs``,
``continuation_logprobs`` or ``continuation_token_spans`` that returns something other than one well-shaped
result per input, or ``tokenize`` other than token ids, gives one too, before the call cache stores anything
(``guard_results.RESULT_CHECKS``). A plugin's factory that raises something other than a ``VericiteError`` gives one
too (``... cannot be built: <class>: <message>``). Where a model that cannot answer is handled (a question that
fails goes to ``errors.jsonl`` and the run goes on, three in a row stop it; else one line and exit 2), a plugin's
failure is handled the same, never as a traceback; a plugin metric family that fails has its metrics not
computed, with the line as the reason (``metrics.base.MetricRun.of``). ``KeyboardInterrupt`` and ``SystemExit``
go through. An object that takes no attribute (``__slots__``), or whose class computes an attribute when read (a
property), is returned wrapped in a :class:`GuardedProxy`, which guards those reads too (``guard.py``).
"""

from __future__ import annotations

import importlib
import threading
import warnings
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Callable, Generic, Iterator, TypeVar

from . import protocols as P
from .errors import BackendError, PluginError, UnknownNameError, VericiteError, did_you_mean
from .guard import describe, GuardedCall, guard_calls, rebind_guards, GuardedProxy, protocol_members  # noqa: F401  (re-exported: registry.GuardedCall, registry.describe, ...)

T = TypeVar("T")

PLUGIN_GROUP = "vericite.plugins"


class PluginWarning(UserWarning):
    """A vericite plugin could not be loaded or registered; it is left out."""


@dataclass(frozen=True)
class BuildContext:
    """What every factory gets besides its argument: the settings shared by everything one command builds.

    ``threads``: CPU threads for local models (None: ``$VERICITE_THREADS`` or 2). ``cache``: the call cache
    (True: the default file, False/None: off, a path, or a ``CallCache``). ``base_url``, ``api_key``: the
    server of ``openai:`` models and its key (None: ``$OPENAI_BASE_URL`` / ``$OPENAI_API_KEY``). ``timeout``,
    ``retries``: per-request limits of network backends and endpoints (None: each one's default).
    ``load_model``: how a factory that needs a model (an LLM judge, G-Eval, a method) loads it; None means
    ``vericite.models.load_model`` with this same context (``vericite.models.model_loader(ctx)``)."""

    threads: int | None = None
    cache: Any = True
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None
    retries: int | None = None
    load_model: Callable[[str], Any] | None = field(default=None, repr=False, compare=False)


Factory = Callable[..., Any]  # (arg: str, *, ctx: BuildContext, **options) -> an object of the kind


class Registry(Generic[T]):
    """Names to factories of one kind. ``kind`` is the singular word used in messages ("judge"); ``guarded``: the
    methods of an object built from a plugin's entry whose failures become a ``PluginError`` (module docstring)."""

    def __init__(self, kind: str, protocol: type | None = None, guarded: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.protocol = protocol
        self.guarded = guarded
        self._entries: dict[str, Factory | str] = {}
        self._origin: dict[str, str] = {}  # name -> the plugin (distribution) that declared it
        self._builtin: set[str] = set()  # names registered by vericite/_builtins.py (and not replaced since)

    # ------------------------------------------------------------------ registration

    def register(self, name: str, obj: Factory | str | None = None, *, replace: bool = False) -> Any:
        """``register(name, factory)``, ``register(name, "module:attr")`` (lazy) or ``@register(name)``."""
        if obj is None:

            def deco(o: Factory) -> Factory:
                self.register(name, o, replace=replace)
                return o

            return deco
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = obj
        self._origin.pop(name, None)
        self._builtin.discard(name)
        return obj

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)
        self._origin.pop(name, None)
        self._builtin.discard(name)

    def is_builtin(self, name: str) -> bool:
        """Whether ``name`` is vericite's own entry (registered by ``_builtins.py``), not a plugin's."""
        return name in self._builtin

    # ------------------------------------------------------------------ lookup

    def __contains__(self, name: object) -> bool:
        _discover()
        if name not in self._entries:
            _load_module_plugins()
        return name in self._entries

    def names(self) -> list[str]:
        """Every registered name, plugin entries included."""
        _discover()
        _load_module_plugins()
        return sorted(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> Factory:
        """The factory registered as ``name`` (imported now if it was registered lazily)."""
        if name not in self:
            raise UnknownNameError(self.unknown_message(name))
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._resolve(name, entry)
        return entry

    def _resolve(self, name: str, ref: str) -> Factory:
        module, _, attr = ref.partition(":")
        try:
            obj = importlib.import_module(module.strip())
            if attr:
                obj = attrgetter(attr.strip())(obj)
        except Exception as e:  # noqa: BLE001 - a plugin's import error is the plugin's, said in one line
            if name not in self._origin:
                raise
            raise VericiteError(f"{self.kind} {name!r} from plugin {self._origin[name]} cannot be loaded from {ref} ({type(e).__name__}: {e})") from None
        self._entries[name] = obj
        return obj

    def unknown_message(self, name: str) -> str:
        hint = did_you_mean(name, self.names(), n=3, cutoff=0.5)
        hint = f"; {hint}" if hint else ""
        known = ", ".join(self.names()) or "none"
        return f"unknown {self.kind} {name!r}{hint} (known: {known})"

    # ------------------------------------------------------------------ construction

    def split(self, spec: str) -> tuple[str, str]:
        """``"name:argument"`` -> (name, argument); a registered name is taken whole."""
        spec = str(spec).strip()
        if spec in self._entries:
            return spec, ""
        name, _, arg = spec.partition(":")
        return name.strip(), arg.strip()

    def create(self, spec: str, ctx: BuildContext | None = None, **options: Any) -> T:
        """Build ``spec`` (``name`` or ``name:argument``): ``factory(argument, ctx=ctx, **options)``, checked
        against this kind's Protocol. A plugin's object comes back guarded (module docstring)."""
        name, arg = self.split(spec)
        factory = self.get(name)
        ctx = ctx if ctx is not None else BuildContext()
        if name in self._builtin:
            obj = factory(arg, ctx=ctx, **options)
            self.check(obj, name)
            return obj  # type: ignore[no-any-return]
        label = self.plugin_label(name, spec)
        try:
            obj = factory(arg, ctx=ctx, **options)
            self.check(obj, name)  # a property of the plugin's object may raise when it is looked at
            return guard_calls(obj, self.guarded, label, kind=self.kind) if self.guarded else obj  # type: ignore[no-any-return]
        except VericiteError:
            raise  # the plugin's own one-line message (a bad argument, a missing file), or not of the kind's Protocol
        except Exception as e:  # noqa: BLE001 - a plugin's failure is the plugin's: one line
            raise PluginError(f"{label} cannot be built: {describe(e)}", kind=self.kind) from e

    def plugin_label(self, name: str, spec: str) -> str:
        """How a plugin's object is named in its failures: ``judge 'broken:x' (plugin vericite-broken)``."""
        where = f"plugin {self._origin[name]}" if name in self._origin else "plugin"
        return f"{self.kind} {str(spec).strip()!r} ({where})"

    def check(self, obj: Any, name: str = "") -> None:
        if self.protocol is None or isinstance(obj, self.protocol):
            return
        missing = ", ".join(n for n in protocol_members(self.protocol) if not hasattr(obj, n)) or "?"
        raise VericiteError(f"{self.kind} {name!r} built a {type(obj).__name__}, which is not a {self.protocol.__name__} (missing: {missing})")


# --------------------------------------------------------------------------- the registries

#: the methods of a plugin's model backend whose failures become a PluginError: its model calls, identity and close
BACKEND_CALLS = ("generate", "logprobs", "next_token_logprobs", "next_token_logprobs_usage", "continuation_logprobs",
                 "continuation_token_spans", "tokenize", "identity", "cache_key_extra", "close")  # fmt: skip

backends: Registry[P.LLMBackend] = Registry("backend", P.LLMBackend, BACKEND_CALLS)
models: Registry[P.LLMBackend] = Registry("model", P.LLMBackend, BACKEND_CALLS)  # embedded models: name -> ModelSpec
judges: Registry[P.Judge] = Registry("judge", P.Judge, ("judge", "options"))
#: a plugin metric family's runs (a failure: its metrics not computed, with the line as the reason)
metrics: Registry[P.Metric] = Registry("metric", P.Metric, ("compute", "score_answers", "judging_part", "reuse_checkpointed"))
methods: Registry[P.Method] = Registry("method", P.Method, ("answer", "manifest", "check_samples", "summarise", "show_progress", "close"))
datasets: Registry[P.Dataset] = Registry("dataset", P.Dataset, ("load", "demonstration", "corpus_file"))
builders: Registry[P.Builder] = Registry("builder", P.Builder, ("build",))
experiments: Registry[P.Experiment] = Registry("experiment", P.Experiment, ("samples_at", "presentation", "generation_at"))
tasks: Registry[P.Task] = Registry("task", P.Task, ("metric_names", "suite", "counts", "read_records", "convert_record", "prepare", "spec_options"))
graphs: Registry[P.KnowledgeGraph] = Registry("graph", P.KnowledgeGraph, ("find_entities", "entity", "one_hop", "close"))
docstores: Registry[P.DocumentStore] = Registry("document store", P.DocumentStore, ("add", "get", "search", "close"))
retrievers: Registry[P.Retriever] = Registry("retriever", P.Retriever, ("retrieve", "search", "options", "close"))
formats: Registry[P.CitationFormat] = Registry("citation format", P.CitationFormat, ("parse",))
scorers: Registry[P.PairScorer] = Registry("pair scorer", P.PairScorer, ("score", "close"))
embedders: Registry[P.Embedder] = Registry("embedder", P.Embedder, ("embed", "embed_queries", "close"))

REGISTRIES: dict[str, Registry[Any]] = {
    "backends": backends,
    "models": models,
    "judges": judges,
    "metrics": metrics,
    "methods": methods,
    "datasets": datasets,
    "builders": builders,
    "experiments": experiments,
    "tasks": tasks,
    "graphs": graphs,
    "docstores": docstores,
    "retrievers": retrievers,
    "formats": formats,
    "scorers": scorers,
    "embedders": embedders,
}


def guard_like(obj: Any, like: Any) -> Any:
    """``obj`` guarded as ``like`` is (same label, kind and methods), when ``like`` is a guarded plugin object and
    ``obj`` something it made (a metric family's ``judging_part()``: a copy, rebound, or a new object); ``obj`` as
    it is otherwise. Returns the object to use."""
    if obj is None:
        return obj
    if isinstance(like, GuardedProxy):
        methods, label, kind = object.__getattribute__(like, "_vericite_guard")
    else:
        calls = [c for c in vars(like).values() if isinstance(c, GuardedCall)] if hasattr(like, "__dict__") else []
        if not calls:
            return obj
        label, kind = calls[0].label, calls[0].kind
        methods = next((reg.guarded for reg in REGISTRIES.values() if reg.kind == kind), tuple(n for n, c in vars(like).items() if isinstance(c, GuardedCall)))
    return guard_calls(rebind_guards(obj), methods, label, kind=kind)


def mark_builtins() -> None:
    """Every name registered so far, of every kind, is vericite's own (``_builtins.py`` calls this last): its
    objects are not guarded. A name registered, or replaced, afterwards is a plugin's."""
    for reg in REGISTRIES.values():
        reg._builtin.update(reg._entries)


def registry_for(kind: str) -> Registry[Any]:
    if kind in REGISTRIES:
        return REGISTRIES[kind]
    hint = did_you_mean(kind, REGISTRIES, cutoff=0.5)
    hint = f"; {hint}" if hint else ""
    raise UnknownNameError(f"unknown kind {kind!r}{hint} (kinds: {', '.join(REGISTRIES)})")


def create(kind: str, spec: str, ctx: BuildContext | None = None, **options: Any) -> Any:
    """Build ``spec`` of ``kind`` (see the module docstring): the one construction path for built-ins and
    plugins alike."""
    return registry_for(kind).create(spec, ctx, **options)


# --------------------------------------------------------------------------- plugins

_lock = threading.RLock()
_discovered = False
_pending: list[Any] = []  # module-form entry points not imported yet
_declared: list[tuple[Registry[Any], str]] = []  # entries declared by entry-point name
_warned: set[str] = set()
_module_names: set[tuple[str, str]] = set()  # (kind, name) registered by the plugin modules of entry points


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, PluginWarning, stacklevel=4)


def _dist_name(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", None) or ep.value)


def _discover() -> None:
    """Read the ``vericite.plugins`` entry points once: declared entries are registered lazily, plugin modules
    are queued for :func:`_load_module_plugins`."""
    global _discovered
    if _discovered:
        return
    with _lock:
        if _discovered:
            return
        _discovered = True
        try:
            from importlib.metadata import entry_points

            eps = list(entry_points(group=PLUGIN_GROUP))
        except Exception as e:  # noqa: BLE001 - broken metadata must not break vericite
            _warn_once("metadata", f"cannot read the {PLUGIN_GROUP} entry points ({type(e).__name__}: {e}); no plugins loaded")
            return
        seen: set[tuple[str, str]] = set()
        for ep in eps:
            if (ep.name, ep.value) in seen:  # one distribution found twice on sys.path
                continue
            seen.add((ep.name, ep.value))
            kind, dot, name = ep.name.partition(".")
            if not (dot and kind in REGISTRIES):
                _pending.append(ep)
                continue
            reg = REGISTRIES[kind]
            where = f"{ep.name} = {ep.value} ({_dist_name(ep)})"
            if not name or ":" not in ep.value:
                _warn_once(f"form:{where}", f"vericite plugin entry {where} is left out: want {kind}.<name> = <module>:<factory>")
            elif name in reg._entries:
                _warn_once(f"dup:{where}", f"vericite plugin entry {where} is left out: {reg.kind} {name!r} is already registered")
            else:
                reg._entries[name] = ep.value
                reg._origin[name] = _dist_name(ep)
                _declared.append((reg, name))


def _load_module_plugins() -> None:
    """Import the plugin modules not imported yet, each on its own: one that fails warns once and is skipped."""
    if not _pending:
        return
    with _lock:
        while _pending:
            ep = _pending.pop(0)
            before = _all_names()
            try:
                ep.load()
            except Exception as e:  # noqa: BLE001 - isolate every plugin
                where = f"{ep.name} = {ep.value} ({_dist_name(ep)})"
                _warn_once(f"load:{where}", f"vericite plugin {where} failed to load and is left out: {type(e).__name__}: {e}")
            finally:
                _module_names.update(_all_names() - before)  # a process started elsewhere imports them too


def _all_names() -> set[tuple[str, str]]:
    return {(kind, name) for kind, reg in REGISTRIES.items() for name in reg._entries}


def runtime_entries() -> dict[str, dict[str, Any]]:
    """The entries registered in this process at run time, by kind: neither vericite's own (``_builtins.py``, unless
    registered again) nor a plugin's (an entry point, or a name the plugin module of an entry point registered),
    which another process finds by itself: a user's script's ``register(...)``. What a pool's workers in other
    processes (``--ray``'s actors) are given (``distributed/pool.py``), as they would not know these names."""
    out: dict[str, dict[str, Any]] = {}
    for kind, reg in REGISTRIES.items():
        got = {n: e for n, e in reg._entries.items() if n not in reg._builtin and n not in reg._origin and (kind, n) not in _module_names}
        if got:
            out[kind] = got
    return out


def reset_plugins() -> None:
    """Forget the entries declared by entry points and read the entry points again at the next lookup (tests,
    or a process that installed a plugin). Registrations made by plugin modules already imported stay."""
    global _discovered
    with _lock:
        for reg, name in _declared:
            if name in reg._origin:
                reg._entries.pop(name, None)
                reg._origin.pop(name, None)
        _declared.clear()
        _pending.clear()
        _warned.clear()
        _discovered = False
