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

A plugin's calls are guarded: an object of a kind whose registry names ``guarded`` methods (model backends and
models: every model call, ``identity`` and ``close``; judges: ``judge``), built from any entry that
``_builtins.py`` did not register, has those methods wrapped so that an exception other than a
:class:`~vericite.errors.BackendError` raised in them becomes a :class:`~vericite.errors.PluginError` (a
``BackendError``) naming the plugin, the exception's class and message. Wherever a model that cannot answer is
handled (a failed question in ``errors.jsonl``, three in a row stop the run; one line and a non-zero exit), a
plugin's bug is handled the same, never as a traceback. ``KeyboardInterrupt`` and ``SystemExit`` go through.
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
        against this kind's Protocol."""
        name, arg = self.split(spec)
        factory = self.get(name)
        obj = factory(arg, ctx=ctx if ctx is not None else BuildContext(), **options)
        self.check(obj, name)
        if self.guarded and name not in self._builtin:
            where = f"plugin {self._origin[name]}" if name in self._origin else "plugin"
            guard_calls(obj, self.guarded, f"{self.kind} {str(spec).strip()!r} ({where})")
        return obj  # type: ignore[no-any-return]

    def check(self, obj: Any, name: str = "") -> None:
        if self.protocol is None or isinstance(obj, self.protocol):
            return
        missing = ", ".join(n for n in protocol_members(self.protocol) if not hasattr(obj, n)) or "?"
        raise VericiteError(f"{self.kind} {name!r} built a {type(obj).__name__}, which is not a {self.protocol.__name__} (missing: {missing})")


class GuardedCall:
    """A method of an object built from a plugin, with an exception other than a ``BackendError`` raised in it
    turned into a :class:`PluginError`: ``"<label> failed: <class>: <message>"``, on one line. ``KeyboardInterrupt``
    and ``SystemExit`` (which are no ``Exception``) go through as they are."""

    def __init__(self, method: Callable[..., Any], label: str) -> None:
        self.method = method
        self.label = label

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.method(*args, **kwargs)
        except BackendError:
            raise
        except Exception as e:  # noqa: BLE001 - a plugin's failure is the plugin's: one line, handled as a failed call
            message = " ".join(str(e).split())
            message = message if len(message) <= 300 else message[:299] + "…"
            raise PluginError(f"{self.label} failed: {type(e).__name__}" + (f": {message}" if message else "")) from e

    def __repr__(self) -> str:
        return f"GuardedCall({self.method!r})"


def guard_calls(obj: Any, methods: tuple[str, ...], label: str) -> None:
    """Wrap each of ``methods`` that ``obj`` has in a :class:`GuardedCall` (on the object itself, so its class,
    capabilities and attributes are unchanged); a method already guarded is left as it is, and an object that
    takes no attribute (``__slots__``) keeps its methods unguarded."""
    for name in methods:
        method = getattr(obj, name, None)
        if not callable(method) or isinstance(method, GuardedCall):
            continue
        try:
            object.__setattr__(obj, name, GuardedCall(method, label))
        except (AttributeError, TypeError):
            return


def protocol_members(protocol: type) -> list[str]:
    """The public members a Protocol asks for: its attributes, then its methods."""
    names = list(vars(protocol).get("__annotations__", {})) + list(vars(protocol))
    return list(dict.fromkeys(n for n in names if not n.startswith("_")))


# --------------------------------------------------------------------------- the registries

#: the methods of a plugin's model backend whose failures become a PluginError: its model calls, identity and close
BACKEND_CALLS = ("generate", "logprobs", "next_token_logprobs", "next_token_logprobs_usage", "continuation_logprobs",
                 "continuation_token_spans", "tokenize", "identity", "cache_key_extra", "close")  # fmt: skip

backends: Registry[P.LLMBackend] = Registry("backend", P.LLMBackend, BACKEND_CALLS)
models: Registry[P.LLMBackend] = Registry("model", P.LLMBackend, BACKEND_CALLS)  # embedded models: name -> ModelSpec
judges: Registry[P.Judge] = Registry("judge", P.Judge, ("judge",))
metrics: Registry[P.Metric] = Registry("metric", P.Metric)
methods: Registry[P.Method] = Registry("method", P.Method)
datasets: Registry[P.Dataset] = Registry("dataset", P.Dataset)
builders: Registry[P.Builder] = Registry("builder", P.Builder)
experiments: Registry[P.Experiment] = Registry("experiment", P.Experiment)
tasks: Registry[P.Task] = Registry("task", P.Task)
graphs: Registry[P.KnowledgeGraph] = Registry("graph", P.KnowledgeGraph)
docstores: Registry[P.DocumentStore] = Registry("document store", P.DocumentStore)
retrievers: Registry[P.Retriever] = Registry("retriever", P.Retriever)
formats: Registry[P.CitationFormat] = Registry("citation format", P.CitationFormat)
scorers: Registry[P.PairScorer] = Registry("pair scorer", P.PairScorer)
embedders: Registry[P.Embedder] = Registry("embedder", P.Embedder)

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
            try:
                ep.load()
            except Exception as e:  # noqa: BLE001 - isolate every plugin
                where = f"{ep.name} = {ep.value} ({_dist_name(ep)})"
                _warn_once(f"load:{where}", f"vericite plugin {where} failed to load and is left out: {type(e).__name__}: {e}")


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
