"""The call cache: a model call that was answered once is not paid for again.

One SQLite file (WAL journal, so concurrent processes read while one writes) at
``cache_dir()/calls.sqlite`` unless a path is given. The key of a call is the sha256 of the JSON of what
decides its answer: the model identity (with the weights' sha256 for local files), the method, the messages
or texts, and the parameters. Each entry also records the name of the model that answered (``model``), so
``vericite cache stats|clear --model NAME`` can count and delete one model's entries; entries written before
that column existed have none. ``CachedBackend`` wraps any backend; hits come back with ``cached=True``.

What a next-token call cost (``NextTokenUsage``) is stored beside its log-probabilities, as an entry of kind
``next_token_usage`` under its own key, so the ``next_token_logprobs`` entries keep the value they always had
(a vericite that does not know usage reads them unchanged); an entry without its usage (written before usage
was stored, or by a backend that does not report it) reads as "tokens unknown", never as zero tokens.

A cache that cannot be written, or a file that is not an intact SQLite database, is one ``CacheError`` line
that names the file and says what to do (``--no-cache``), at the first call that meets it. ``vericite cache
stats|clear`` (what it holds, its entries deleted) is ``cache_admin.py``'s.

One call may score many items (CONNER's LM measures send a measure's texts in one call, for many minutes): a
backend that works through them one by one says each answer as it has it (``progress.answered``), and the cache stores
it at once, so a call interrupted (Ctrl-C, a time limit) loses only the items it had not answered yet; the rest of
a call is stored when it returns, as always.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from ..paths import CacheError, cache_dir, make_folder
from ..progress import answers_to, item_done
from ..protocols import CacheKeyed, Closeable, ContinuationScorer, NextTokenScorer, NextTokenUsage, Tokenizer, TokenSpanScorer
from ..types import Completion, GenParams, Message, Usage
from .wrapping import CapabilityWrapper

SCHEMA_VERSION = 1
NO_CACHE = "pass --no-cache, or set VERICITE_CACHE to a writable folder"
_UNWRITABLE = ("unable to open", "readonly", "read-only", "disk i/o error", "permission", "access permission")

T = TypeVar("T")


def default_cache_path() -> Path:
    return cache_dir() / "calls.sqlite"


def cache_error(path: Path, e: sqlite3.Error) -> CacheError:
    """One line for what SQLite said about the cache file ``path``."""
    msg = str(e)
    low = msg.lower()
    if any(w in low for w in _UNWRITABLE):
        return CacheError(f"call cache {path} cannot be written ({msg}): {NO_CACHE}")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return CacheError(f"call cache {path} is corrupt ({msg}): delete it (`vericite cache clear`), or pass --no-cache")
    if "locked" in low or "busy" in low:
        return CacheError(f"call cache {path} is locked by another process ({msg}): wait for it, or pass --no-cache")
    return CacheError(f"call cache {path} cannot be used ({msg}): pass --no-cache")


def _sqlite_errors(method: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(method)
    def wrapper(self: "CallCache", *a: Any, **kw: Any) -> T:
        try:
            return method(self, *a, **kw)
        except sqlite3.Error as e:
            raise cache_error(self.path, e) from None

    return wrapper


class CallCache:
    """``CallCache(path=None)``: get/put JSON values by key. Safe across threads and processes."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 60.0) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        make_folder(self.path.parent, "call cache folder", NO_CACHE)
        self._timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: dict[threading.Thread, sqlite3.Connection] = {}  # every connection open, by the thread it serves
        self.hits = 0
        self.misses = 0
        self._setup()

    @_sqlite_errors
    def _setup(self) -> None:
        with self._conn() as c:
            c.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL, model TEXT)"
            )
            if "model" not in {row[1] for row in c.execute("PRAGMA table_info(calls)")}:
                try:  # a cache written before entries recorded their model
                    c.execute("ALTER TABLE calls ADD COLUMN model TEXT")
                except sqlite3.OperationalError as e:
                    if "duplicate column" not in str(e):  # another process added it first: fine
                        raise

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (one per thread), opened at its first use and after :meth:`close`."""
        conn = getattr(self._local, "conn", None)
        if conn is None or self._conns.get(threading.current_thread()) is not conn:  # none yet, or closed by close()
            # check_same_thread=False only so that close() (another thread) may close it; only this thread uses it
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
            with self._lock:
                gone = [t for t in self._conns if not t.is_alive()]  # threads that ended: nobody uses theirs now
                ended = [self._conns.pop(t) for t in gone]
                self._conns[threading.current_thread()] = conn
            for old in ended:
                old.close()
        return conn

    @staticmethod
    def key(material: Any) -> str:
        blob = json.dumps({"v": SCHEMA_VERSION, **material}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @_sqlite_errors
    def get(self, key: str, *, count: bool = True) -> Any | None:
        """The value under ``key``, or None; ``count``: add to ``hits`` / ``misses`` (not for a side entry)."""
        row = self._conn().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        if count:
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        return None if row is None else json.loads(row[0])

    @_sqlite_errors
    def put(self, key: str, kind: str, value: Any, model: str | None = None) -> None:
        """Store ``value`` under ``key``; ``model``: the name of the model that answered (for stats and clear)."""
        self._conn().execute(
            "INSERT OR REPLACE INTO calls (key, kind, value, created, model) VALUES (?, ?, ?, ?, ?)",
            (key, kind, json.dumps(value, ensure_ascii=False), time.time(), model),
        )

    @_sqlite_errors
    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    @_sqlite_errors
    def clear(self, model: str | None = None) -> int:
        """Delete every entry, or only ``model``'s; returns how many were deleted."""
        if model is None:
            return int(self._conn().execute("DELETE FROM calls").rowcount)
        return int(self._conn().execute("DELETE FROM calls WHERE model = ?", (model,)).rowcount)

    def vacuum(self) -> bool:
        """Give the space of deleted entries back to the file system (SQLite's ``VACUUM``); False, nothing changed,
        when that cannot be done now (another process writing the file: after the busy timeout)."""
        try:
            self._conn().execute("VACUUM")
        except sqlite3.Error:
            return False
        return True

    def close(self) -> None:
        """Close every connection this cache opened, whichever thread opened it: call it when no call of this
        cache is under way in another thread (a pool closes a worker's objects once its call is over). A use after
        it opens that thread's connection again, as at the first use."""
        with self._lock:
            conns = list(self._conns.values())
            self._conns.clear()
        self._local.conn = None
        for conn in conns:
            conn.close()

    def open_connections(self) -> int:
        """How many connections this cache holds open now (one per thread that used it since the last close)."""
        with self._lock:
            return len(self._conns)


def open_cache(arg: "bool | str | os.PathLike[str] | CallCache | None") -> "CallCache | None":
    """The call cache a ``cache=`` argument asks for: None or False, none; True, the default cache; a
    ``CallCache``, itself; a path, a cache in that file."""
    if arg is None or arg is False:
        return None
    if isinstance(arg, CallCache):
        return arg
    return CallCache() if arg is True else CallCache(os.fspath(arg))


class CachedBackend(CapabilityWrapper):
    """Wraps a backend: ``generate``, ``logprobs`` and the scoring capabilities answer from the cache when they
    can, call the backend once for all the misses of a batch, and store what it returns.

    The wrapper has exactly the capabilities (``vericite.protocols``) of the backend it wraps:
    ``CachedBackend(b)`` is an instance of a subclass with ``next_token_logprobs`` (cached) only when ``b`` is a
    ``NextTokenScorer``, ``continuation_logprobs`` (cached) only when ``b`` is a ``ContinuationScorer``,
    ``continuation_token_spans`` (cached) only when ``b`` is a ``TokenSpanScorer``, and
    ``next_token_logprobs_usage`` (cached, with the usage beside) only when ``b`` is a ``NextTokenUsage``,
    ``tokenize`` only when ``b`` is a ``Tokenizer``, so ``isinstance(wrapper, Capability)`` tells the truth.
    Other attributes of the wrapped backend (``stats``, ...) are passed through."""

    def __init__(self, backend: Any, cache: CallCache | str | os.PathLike[str] | None = None, *, owns_cache: bool | None = None) -> None:
        self.backend = backend
        # a cache opened here (a path, the default), or given with ``owns_cache``: closed by close()
        self._owns_cache = not isinstance(cache, CallCache) if owns_cache is None else bool(owns_cache)
        self.cache = cache if isinstance(cache, CallCache) else CallCache(cache)
        self._identity: dict[str, Any] | None = None

    def close(self) -> None:
        """Close the wrapped backend, and the call cache when this wrapper opened it (a ``CallCache`` given is its
        giver's)."""
        if isinstance(self.backend, Closeable):
            self.backend.close()
        self.close_cache()

    def close_cache(self) -> None:
        """Close the call cache's connections when this wrapper opened it, not the backend (one shared by the
        process, a local model's weights)."""
        if self._owns_cache:
            self.cache.close()

    def _material(self) -> dict[str, Any]:
        if self._identity is None:
            extra = self.backend.cache_key_extra() if isinstance(self.backend, CacheKeyed) else {}
            self._identity = {"model": self.backend.identity().to_dict(), "extra": extra}
        return self._identity

    def call_key(self, kind: str, **what: Any) -> str:
        """The cache key of a call of ``kind`` with ``what`` to this model (its identity included)."""
        return self.cache.key({"kind": kind, **self._material(), **what})

    def _model(self) -> str | None:
        return self._material()["model"].get("name")

    def generate(self, prompts: Sequence[Sequence[Message]], params: GenParams) -> list[Completion]:
        p = params.to_dict()
        keys = [self.call_key("generate", messages=[dict(m) for m in msgs], params=p) for msgs in prompts]
        out: list[Completion | None] = []
        for k in keys:
            hit = self.cache.get(k)
            out.append(None if hit is None else Completion.from_dict({**hit, "cached": True}))
        missing = [i for i, c in enumerate(out) if c is None]
        if missing:
            fresh = self.backend.generate([prompts[i] for i in missing], params)
            for i, c in zip(missing, fresh):
                self.cache.put(keys[i], "generate", {**c.to_dict(), "cached": False}, model=self._model())
                out[i] = c
        return out  # type: ignore[return-value]

    def logprobs(self, texts: Sequence[str]) -> list[list[float]]:
        texts = [str(t) for t in texts]
        return self._batched("logprobs", texts, lambda t: {"text": t}, self.backend.logprobs)

    def _batched(self, kind: str, inputs: list[Any], material: Callable[[Any], dict[str, Any]], compute: Callable[[list[Any]], list[Any]]) -> list[Any]:
        """``compute`` (the backend's method of ``kind``) asked once for the inputs the cache does not hold; each
        answer stored as soon as the backend says it (``progress.answered``), the others when the call returns."""
        keys = [self.call_key(kind, **material(x)) for x in inputs]
        out = [self.cache.get(k) for k in keys]
        missing = [i for i, v in enumerate(out) if v is None]
        item_done(len(out) - len(missing), at_once=True)  # the hits: a bar around the call moves (progress.items_of_call)
        if not missing:
            return out
        pending = {keys[i] for i in missing}

        def store(said_kind: str, item: Any, value: Any) -> None:
            key = self.call_key(kind, **material(item)) if said_kind == kind else None
            if key in pending:
                self.cache.put(key, kind, value, model=self._model())
                pending.discard(key)

        with answers_to(store):
            fresh = compute([inputs[i] for i in missing])
        for i, v in zip(missing, fresh):
            if keys[i] in pending:
                self.cache.put(keys[i], kind, v, model=self._model())
            out[i] = v
        return out

    def __repr__(self) -> str:
        return f"CachedBackend({self.backend!r}, {str(self.cache.path)!r})"


class _NextTokenCached(CachedBackend):
    def next_token_logprobs(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        if isinstance(self.backend, NextTokenUsage):  # the usage stored beside
            return [scores for scores, _ in self.next_token_logprobs_usage(prompts, candidates)]  # type: ignore[attr-defined]
        cands = list(candidates)
        return self._batched(
            "next_token_logprobs",
            list(prompts),
            lambda msgs: {"messages": [dict(m) for m in msgs], "candidates": cands},
            lambda asked: self.backend.next_token_logprobs(asked, cands),
        )


class _NextTokenUsageCached(CachedBackend):
    def next_token_logprobs_usage(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[tuple[dict[str, float], Usage | None]]:
        """Log-probabilities from their ``next_token_logprobs`` entry, usage from its ``next_token_usage`` entry
        (None when there is none: tokens unknown); the misses of the batch asked in one call, both stored."""
        cands = list(candidates)
        items = [{"messages": [dict(m) for m in msgs], "candidates": cands} for msgs in prompts]
        keys = [self.call_key("next_token_logprobs", **it) for it in items]
        scores = [self.cache.get(k) for k in keys]
        usage: list[Usage | None] = [None] * len(items)
        for i, s in enumerate(scores):
            if s is not None:
                u = self.cache.get(self.call_key("next_token_usage", **items[i]), count=False)
                usage[i] = Usage.from_dict(u) if isinstance(u, dict) else None
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            for i, (s, u) in zip(missing, self.backend.next_token_logprobs_usage([prompts[i] for i in missing], cands)):
                self.cache.put(keys[i], "next_token_logprobs", s, model=self._model())
                if u is not None:
                    self.cache.put(self.call_key("next_token_usage", **items[i]), "next_token_usage", u.to_dict(), model=self._model())
                scores[i], usage[i] = s, u
        return list(zip(scores, usage))  # type: ignore[arg-type]


def _pair(pair: tuple[str, str]) -> dict[str, Any]:
    return {"prefix": pair[0], "continuation": pair[1]}


class _ContinuationCached(CachedBackend):
    def continuation_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        pairs = [(str(p), str(c)) for p, c in pairs]
        return self._batched("continuation_logprobs", pairs, _pair, self.backend.continuation_logprobs)


class _TokenSpansCached(CachedBackend):
    def continuation_token_spans(self, pairs: Sequence[tuple[str, str]]) -> list[list[tuple[int, int, float]]]:
        pairs = [(str(p), str(c)) for p, c in pairs]
        rows = self._batched("continuation_token_spans", pairs, _pair, self.backend.continuation_token_spans)
        return [[(int(s), int(e), float(lp)) for s, e, lp in row] for row in rows]


class _Tokenizing(CachedBackend):
    def tokenize(self, text: str) -> list[int]:
        return self.backend.tokenize(text)


CachedBackend.capabilities = (
    (NextTokenScorer, _NextTokenCached), (ContinuationScorer, _ContinuationCached), (Tokenizer, _Tokenizing),
    (TokenSpanScorer, _TokenSpansCached), (NextTokenUsage, _NextTokenUsageCached),
)
