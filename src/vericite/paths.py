"""Where vericite keeps things: the cache (built wheels, assembled models, call cache) and the shared data; and
a file's sha256 (``file_sha256``), how a file's identity is recorded everywhere: a manifest records a user's file by
its content (:func:`file_identity`: its sha256 beside :func:`display_path`, where it was, shown only), and a resume
compares two manifests by it (:func:`reconcile_files`), so a run folder resumes from another checkout whose files
have the same bytes, and not over a file whose bytes changed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Mapping

from .errors import DataError, VericiteError


class CacheError(VericiteError):
    """The cache folder, or a file in it, cannot be used (not writable, corrupt)."""


def cache_dir() -> Path:
    """``$VERICITE_CACHE``, else ``$XDG_CACHE_HOME/vericite``, else ``~/.cache/vericite``. Only named here, not
    created: whoever writes into it makes it (``make_folder``), so reading works in a read-only cache."""
    env = os.environ.get("VERICITE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vericite"


def os_reason(e: OSError) -> str:
    """``Permission denied``, ``Not a directory``, ...: the reason of an OSError without its path."""
    return e.strerror or type(e).__name__


def make_folder(folder: Path, what: str, advice: str = "set VERICITE_CACHE to a writable folder") -> Path:
    """``folder``, created if needed; a CacheError naming it, ``what`` it is for and ``advice`` if it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CacheError(f"{what} {folder} cannot be created ({os_reason(e)}): {advice}") from None
    return folder


def repo_root() -> Path:
    # src/vericite/paths.py -> repository root when running from a checkout
    return Path(__file__).resolve().parents[2]


def shared_data_dir(required: bool = True) -> Path | None:
    """The data folder beside the project: ``$VERICITE_DATA``, else ``../shared/data`` next to the checkout
    or next to the current directory."""
    env = os.environ.get("VERICITE_DATA")
    candidates = [Path(env)] if env else [repo_root().parent / "shared" / "data", Path.cwd().parent / "shared" / "data", Path.cwd() / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c
    if required:
        where = env or str(candidates[0])
        raise DataError(
            f"shared data not found at {where}: set VERICITE_DATA to the folder holding biokalma/, alce/, conner/, vitaminc/"
        )
    return None


def package_data(name: str) -> Path:
    return Path(__file__).resolve().parent / "data" / name


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks (``models.provision.file_sha256`` remembers it for
    large model files)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: how :func:`display_path` names a file under the shared data folder (``$VERICITE_DATA``, else ``../shared/data``)
SHARED_DATA = "data:"
#: the keys of a file's (a folder's) identity that say where it was: shown, compared only when no sha256 is recorded
WHERE = ("file", "folder")


def display_path(path: str | os.PathLike[str]) -> str:
    """Where a user's file is, as a manifest shows it, the same from any checkout: ``data:alce/prompts/x.json``
    under the shared data folder (:func:`shared_data_dir`), a relative path under the current folder, else absolute."""
    p = Path(path).resolve()
    try:
        here: Path | None = Path.cwd()
    except OSError:  # the current folder was removed
        here = None
    for prefix, root in ((SHARED_DATA, shared_data_dir(required=False)), ("", here)):
        if root is not None and p.is_relative_to(root.resolve()):
            return prefix + p.relative_to(root.resolve()).as_posix()
    return str(p)


def file_identity(path: str | os.PathLike[str], content: bool = True) -> dict[str, str]:
    """What a manifest records of a user's file: ``{"file": display_path, "sha256": of its bytes}``; a folder (an
    index, a graph store), or a file whose ``content`` is checked otherwise (a dataset: question by question), by
    where it is only (``{"folder": ...}`` / ``{"file": ...}``)."""
    p = Path(path)
    if p.is_dir():
        return {"folder": display_path(p)}
    return {"file": display_path(p), **({"sha256": file_sha256(p)} if content else {})}


def reconcile_files(old: Any, new: Any, name: str = "") -> tuple[Any, list[tuple[str, str]]]:
    """``old`` (a manifest, or part of one) as compared with ``new``: where both record a file by its content, the
    same content is the same file wherever it is (``old``'s path is taken as ``new``'s); and, by dotted name with
    ``new``'s path, the files whose content differs. A file's content is ``sha256`` beside ``file`` / ``folder``
    (:func:`file_identity`), or a key ``K`` beside ``K_sha256`` (KaLMA's ``demonstration``) or ``K_corpus`` (an
    index's corpus: ``index`` beside ``index_corpus``); what only one side records is left as it is."""
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = [reconcile_files(a, b, f"{name}.{i}".lstrip(".")) for i, (a, b) in enumerate(zip(old, new))]
        return [a for a, _ in pairs], [c for _, ch in pairs for c in ch]
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)):
        return old, []
    out: dict[str, Any] = dict(old)
    changed: list[tuple[str, str]] = []
    where = [k for k in WHERE if k in old and k in new]
    if where and "sha256" in old and "sha256" in new:
        if old["sha256"] != new["sha256"]:
            return out, [(name, str(new[where[0]]))]
        return {**out, **{k: new[k] for k in where}}, []
    for key in (k for k in old if k in new):
        sha, corpus = f"{key}_sha256", f"{key}_corpus"
        if sha in old and sha in new and old[sha] and new[sha]:
            if old[sha] != new[sha]:
                changed.append((f"{name}.{key}".lstrip("."), str(new[key])))
            out[key] = new[key]
        elif old.get(corpus) is not None and old.get(corpus) == new.get(corpus):
            out[key] = new[key]  # the index's corpus is compared as itself
        else:
            out[key], more = reconcile_files(old[key], new[key], f"{name}.{key}".lstrip("."))
            changed += more
    return out, changed
