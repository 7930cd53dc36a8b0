"""A run folder: ``manifest.json`` (what was run, with every version), ``samples.jsonl`` (one line per finished
sample, written and fsynced as it finishes) and ``errors.jsonl`` (samples that failed; a resumed run retries
them).

Nothing is lost on a crash: a killed run leaves at worst a half-written last line, which ``open`` cuts off
before appending again, so a resumed run neither loses nor duplicates a sample.

One process at a time writes a run folder: ``open`` takes an OS lock on ``FOLDER/.lock`` (released by ``close``,
and by the OS when the process ends, however it ends) before it reads or cuts anything, and refuses a second
writer in one line.

A user's file is known by its content, not its path (``paths.file_identity``): the manifest's ``files`` records each
file or folder its config names (:data:`PATH_KEYS`) by its sha256 beside where it was (shown relative to the shared
data folder or the current folder), and the method records its own (ALCE's prompt files, KaLMA's demonstration) so
too. A resume compares them by content (``paths.reconcile_files``): from another checkout whose files have the same
bytes it continues; a file whose bytes changed since is refused in one line naming it. A manifest written before
``files`` compares its config's paths as they were given, as before.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from .. import __version__, jsonl
from ..errors import DataError, VericiteError
from ..outputs import PathLock, check_out_dir
from ..paths import file_identity, reconcile_files

SAMPLES = "samples.jsonl"
ERRORS = "errors.jsonl"
MANIFEST = "manifest.json"
RESULTS = "results.json"
LOCK = ".lock"
#: config keys that may name a user's file or folder (a dataset as ``name:<file>`` too): the manifest's ``files``
PATH_KEYS = ("dataset", "data_path", "demonstration", "prompt", "index", "store", "reference_file")
#: of those, the files compared by where they are, not by their bytes: a dataset's questions are compared one by
#: one (``loop.check_same_questions``), so a dataset file with questions appended still resumes
WHERE_ONLY = frozenset({"dataset", "data_path"})


class RunDir:
    """Open with ``RunDir.open(out, manifest, resume)`` (or ``with RunDir.open(...) as run:``); then
    ``done_ids``, ``append``, ``fail``, ``finish``; ``close`` releases the folder's lock."""

    #: manifest keys that are not the method's (its ``manifest()``): the config (checked on its own), the run's
    #: bookkeeping
    # (``deviations``: where a method departs from its paper, in words; they follow from the method and its inputs)
    NOT_THE_METHOD = frozenset({"config", "files", "n_samples", "status", "started", "resumed", "finished", "summary", "vericite_version", "deviations"})
    # config keys that may change between a run and its resumption
    RESUMABLE_CHANGES = frozenset({"limit", "resume", "out", "progress", "threads", "cache", "max_failures", "timeout", "request_retries"})

    def __init__(self, path: Path, manifest: dict[str, Any], lock: PathLock | None = None) -> None:
        self.path = path
        self.manifest = manifest
        self.samples_path = path / SAMPLES
        self.errors_path = path / ERRORS
        self.done_ids: set[str] = {str(r.get("id")) for r in self.records()}
        self._lock = lock

    @classmethod
    def open(
        cls, out: str | Path, manifest: Mapping[str, Any], resume: bool = False, defaults: Mapping[str, Any] | None = None, check: Callable[["RunDir"], None] | None = None,
        upgrade: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    ) -> "RunDir":
        """``defaults``: the config's defaults (its own and its method's options): a key the folder's config lacks
        (written before that option existed) is the same when the new config holds its default. ``check``: called
        with the folder as it is (nothing written yet) when a run is resumed, after the config and the method were
        found the same; what it raises refuses the resume with the folder untouched. ``upgrade``: the method's
        ``upgrade_manifest`` (``protocols.ManifestUpgrading``): the folder's manifest as this version would have
        recorded it, compared with ``manifest`` in its place (a key an older manifest lacks, with what its absence
        meant)."""
        path = Path(out)
        if resume and not path.exists():
            raise VericiteError(f"nothing to resume: {path} does not exist")
        check_out_dir(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise VericiteError(f"cannot create --out {path}: {e.strerror or e}") from None
        lock = PathLock(path / LOCK, f"run folder {path}").acquire()
        try:
            return cls._open_locked(path, dict(manifest), resume, lock, defaults or {}, check, upgrade)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open_locked(cls, path: Path, manifest: dict[str, Any], resume: bool, lock: PathLock, defaults: Mapping[str, Any], check: Any = None, upgrade: Any = None) -> "RunDir":
        manifest = with_files(manifest)
        existing = path / MANIFEST
        if existing.exists() or (path / SAMPLES).exists():
            if not resume:
                raise VericiteError(f"run folder {path} already holds a run: pass --resume to continue it, or choose another --out")
            try:
                old = json.loads(existing.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                raise DataError(f"cannot resume: {existing} is missing or unreadable") from None
            upgraded = dict(upgrade(old)) if upgrade is not None else old
            cls._check_compatible(old.get("config", {}), manifest.get("config", {}), path, defaults, old.get("files"), manifest.get("files"), ran=(old, upgraded))
            cls._check_same_method(upgraded, manifest, path)
            if check is not None:
                check(cls(path, old))
            manifest["started"] = old.get("started", manifest.get("started"))
            manifest["resumed"] = list(old.get("resumed", [])) + [time.strftime("%Y-%m-%dT%H:%M:%S")]
            jsonl.cut_torn_line(path / SAMPLES)
            jsonl.cut_torn_line(path / ERRORS)
        manifest.setdefault("vericite_version", __version__)
        manifest.setdefault("started", time.strftime("%Y-%m-%dT%H:%M:%S"))
        manifest["status"] = "running"
        run = cls(path, manifest, lock)
        jsonl.write_json_atomic(existing, manifest)
        return run

    def close(self) -> None:
        """Release the folder's lock (another process may write it now). Safe to call twice."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> "RunDir":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def _check_compatible(
        cls, old: Mapping[str, Any], new: Mapping[str, Any], path: Path, defaults: Mapping[str, Any] | None = None, old_files: Any = None, new_files: Any = None,
        ran: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None,
    ) -> None:
        """The configs must be the same but for :attr:`RESUMABLE_CHANGES`; a path both ``files`` record is compared
        by what they record of it (module docstring), not as given. ``ran``: the folder's manifest as written and as
        the method upgrades it, which say in the refusal what an option its config does not hold ran with
        (:func:`_shown`)."""
        defaults = defaults or {}
        same_files = set()
        if isinstance(old_files, Mapping) and isinstance(new_files, Mapping):
            old_files, changed = reconcile_files(old_files, new_files)
            refuse_changed(path, changed)
            same_files = {k for k in old_files if k in new_files and old_files[k] == new_files[k]}
        keys = (set(old) | set(new)) - cls.RESUMABLE_CHANGES - same_files
        added = {k for k in keys if k not in old and k in new and k in defaults and new[k] == defaults[k]}  # an option newer than the folder, at its default
        diff = sorted(k for k in keys - added if old.get(k) != new.get(k))
        if diff:
            written, upgraded = ran or ({}, {})
            shown = ", ".join(f"{k}: {_shown(old, k, defaults, written, upgraded)} -> {_shown(new, k)}" for k in diff[:4])
            raise VericiteError(f"cannot resume {path}: the configuration differs ({shown}); use another --out")

    @classmethod
    def _check_same_method(cls, old: Mapping[str, Any], new: Mapping[str, Any], path: Path) -> None:
        """What the method recorded besides the config (its versioned id, the model's identity, prompt ids and files
        with their sha256, the parser, the retriever, the sampling parameters) must be what the folder's manifest
        records: a ``summ@1`` folder is not continued by a ``summ@2``, nor with an edited prompt file or another model
        file under the same name. Only what both record is compared (a key that one vericite records and the
        other does not, or a prompt file of a sub-task not met yet, cannot be told apart), recursively."""
        new = json.loads(jsonl.dumps_line(dict(new)))  # as the manifest holds it (a tuple is a list there)
        old, changed = reconcile_files(dict(old), new)  # a file is its content, wherever it is now
        refuse_changed(path, changed)
        keys = [k for k in new if k not in cls.NOT_THE_METHOD and k in old]
        diff = [d for k in keys for d in _differing(old[k], new[k], k)]
        if diff:
            shown = ", ".join(f"{k}: {_short(a)} -> {_short(b)}" for k, a, b in diff[:4])
            raise VericiteError(f"cannot resume {path}: its answers were made otherwise ({shown}); use another --out")

    def append(self, record: Mapping[str, Any]) -> None:
        jsonl.append(self.samples_path, record)
        self.done_ids.add(str(record.get("id")))

    def fail(self, sample_id: str, error: str) -> None:
        rec = {"id": sample_id, "error": error, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        jsonl.append(self.errors_path, rec)

    def records(self) -> list[dict[str, Any]]:
        """The finished samples (a torn last line and a bad line are skipped)."""
        return list(jsonl.read_appended(self.samples_path))

    def finish(self, status: str = "complete", **summary: Any) -> None:
        """Record the summary and the final status: "complete", or "incomplete" when samples are missing."""
        self.manifest.update(summary)
        self.manifest["status"] = status
        self.manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        jsonl.write_json_atomic(self.path / MANIFEST, self.manifest)


def config_files(config: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The manifest's ``files``: what ``config``'s :data:`PATH_KEYS` name that exists (``paths.file_identity``)."""
    files = {}
    for key in PATH_KEYS:
        value = config.get(key)
        if not isinstance(value, str) or not value:
            continue
        p = Path(value)
        if not p.exists() and ":" in value:  # a dataset spec naming its file: alce:<file>
            p = Path(value.split(":", 1)[1])
        if p.exists():
            files[key] = file_identity(p, content=key not in WHERE_ONLY)
    return files


def with_files(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``manifest`` with its ``files`` (:func:`config_files`) after its config, when it names any and has none."""
    files = config_files(manifest.get("config") or {}) if "files" not in manifest else {}
    if not files:
        return dict(manifest)
    out: dict[str, Any] = {}
    for k, v in manifest.items():
        out[k] = v
        if k == "config":
            out["files"] = files
    out.setdefault("files", files)
    return out


def refuse_changed(path: Path, changed: list[tuple[str, str]]) -> None:
    """One line naming the files whose content changed since the run began (``paths.reconcile_files``), if any."""
    if changed:
        shown = ", ".join(f"{where} ({name})" for name, where in changed[:3])
        raise VericiteError(f"cannot resume {path}: {shown} changed since the run began (its sha256 differs); use another --out")


def _differing(a: Any, b: Any, name: str) -> list[tuple[str, Any, Any]]:
    """Where ``a`` and ``b`` differ, by dotted name: two mappings in the keys both have, two lists of one length item
    by item, anything else as a whole."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return [d for k in a if k in b for d in _differing(a[k], b[k], f"{name}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differing(x, y, f"{name}.{i}")]
    return [] if a == b else [(name, a, b)]


def _shown(config: Mapping[str, Any], key: str, options: Mapping[str, Any] | None = None, written: Mapping[str, Any] | None = None, upgraded: Mapping[str, Any] | None = None) -> str:
    """``key`` of ``config`` as a resume refusal shows it: its value, else in words, not as None: an option the config
    does not hold (recorded only when given, or newer than the folder) was ``not given``; for a folder's config,
    with what the folder ran with when its manifest says (``written``), or when the method's upgrade of a manifest
    written before the option does (``upgraded``, ``protocols.ManifestUpgrading``)."""
    if key in config:
        return _short(config[key])
    ran = lambda m: m is not None and key in (options or {}) and key in m and not isinstance(m[key], (Mapping, list))  # noqa: E731
    if ran(written):
        return f"not given (the folder ran with {_short(written[key])})"  # type: ignore[index]
    if ran(upgraded):
        return f"not recorded (written before the option: the folder ran with {_short(upgraded[key])})"  # type: ignore[index]
    return "not given"


def _short(value: Any, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters (a one-line message)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def load_results(run_dir: Path) -> dict[str, Any]:
    """The ``results.json`` of an evaluated run folder (``vericite evaluate`` or ``run``), its top-level sections
    checked to be objects; a missing folder or file is a one-line DataError saying what to do."""
    if not run_dir.exists():
        raise DataError(f"run folder not found: {run_dir}")
    if not run_dir.is_dir():
        raise DataError(f"{run_dir} is not a run folder")
    path = run_dir / RESULTS
    if not path.is_file():
        raise DataError(f"{run_dir} has no results.json: evaluate the run first (vericite evaluate or vericite run)")
    results = jsonl.read_json_object(path, "the corpus numbers")
    for key in ("metrics", "judges", "counts", "tokens", "experiments"):
        if key in results and results[key] is not None and not isinstance(results[key], dict):
            raise DataError(f"{path}: '{key}' must be an object, not {type(results[key]).__name__}")
    return results
