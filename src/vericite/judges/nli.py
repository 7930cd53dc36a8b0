"""NLI judges: Hugging Face sequence-classification cross-encoders and TRUE-style seq2seq models.

No NLI model can be installed from a package registry (docs/models.md), so nothing here is embedded: the user
points ``model`` at a local folder or a hub id. Two kinds are recognised from the model's config:

* **cross-encoders** (``AutoModelForSequenceClassification``, e.g. ``cross-encoder/nli-deberta-v3-base``):
  the input is the pair (premise = evidence, hypothesis = claim); P(supported) is the softmax probability of the
  entailment class. Which class that is comes from ``config.id2label``: the one label whose name, lower-cased,
  is one of :data:`ENTAILMENT_NAMES` ("entailment", "ENTAILMENT", "entails", "supports"...). Generic names such as
  ``LABEL_0``/``LABEL_1`` say nothing, and the conventions differ between models (roberta-large-mnli puts
  entailment at 2, the cross-encoder/nli-* models at 1), so vericite never guesses: it raises a clear error
  asking for ``entailment_label=`` (an index or a label name), which is the documented fallback.
* **TRUE-style seq2seq models** (``AutoModelForSeq2SeqLM``, e.g. ``google/t5_xxl_true_nli_mixture``): the input is
  ``"premise: {evidence} hypothesis: {claim}"``; P(supported) is the softmax of the first decoder step's logits
  restricted to the tokens of "1" and "0".

Pairs are tokenised once, sorted by length and padded per batch (dynamic padding), so a batch costs what its
longest pair costs; probabilities are rounded to 6 decimals, so a pair's score does not depend on the batch it
was in (float32 arithmetic differs in the 7th digit between batch shapes). Only the premise is ever truncated
(``only_first``) to ``max_length`` tokens: cutting the claim would judge a different claim. A pair whose claim
alone does not fit is judged with the claim truncated too, and its judgement says so in ``raw``.

Judgements are cached like model calls (``cache``: the call cache of ``vericite.models.cache``): the key is the
judge version, the model's identity (the sha256 of every file of a local folder; the commit of a hub model),
the kind, the entailment class, ``max_length``, the hypothesis template and the pair, so a pair judged once by
the same model is not judged again. A hub model whose commit is unknown is not cached.

torch and transformers are optional (``pip install 'vericite[nli]'``) and imported only when a judge is built.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

from ..errors import VericiteError, checked_batch_size
from ..types import NOT_SUPPORTED, SUPPORTED, JudgePair, Judgement

VERSION = 1

#: label names (lower-cased, "-" and " " read as "_") that mean "the premise entails the hypothesis"
ENTAILMENT_NAMES = frozenset({"entailment", "entailed", "entails", "entail", "support", "supports", "supported"})

DEFAULT_HYPOTHESIS_TEMPLATE = "{claim}"

#: probabilities are rounded to this many decimals (see NLIJudge.judge)
DIGITS = 6


def _require_backend() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as e:  # the one line a user sees, not a traceback
        raise VericiteError(
            f"the NLI judge needs torch and transformers ({e.name or e} is not installed): pip install 'vericite[nli]'"
        ) from None
    return torch, transformers


def _norm_label(name: str) -> str:
    return "_".join(str(name).strip().lower().replace("-", " ").split())


def find_entailment_index(id2label: dict[Any, str], entailment_label: int | str | None = None, *, model: str = "") -> int:
    """The class index that means "entailed", from ``config.id2label``.

    ``entailment_label`` (an index, or a label name compared case-insensitively) overrides the names.
    Without it, exactly one label must be an entailment name; otherwise this raises VericiteError."""
    labels = {int(k): str(v) for k, v in id2label.items()}
    shown = ", ".join(f"{k}: {v!r}" for k, v in sorted(labels.items()))
    if entailment_label is not None:
        if isinstance(entailment_label, int) or (isinstance(entailment_label, str) and entailment_label.strip().isdigit()):
            idx = int(entailment_label)
            if idx not in labels:
                raise VericiteError(f"entailment_label={idx} is not a class of {model or 'the model'} (id2label: {shown})")
            return idx
        hits = [k for k, v in labels.items() if _norm_label(v) == _norm_label(str(entailment_label))]
        if len(hits) != 1:
            raise VericiteError(f"entailment_label={entailment_label!r} names no single class of {model or 'the model'} (id2label: {shown})")
        return hits[0]
    hits = [k for k, v in labels.items() if _norm_label(v) in ENTAILMENT_NAMES]
    if len(hits) == 1:
        return hits[0]
    why = "several labels look like entailment" if hits else "no label is named entailment"
    raise VericiteError(
        f"cannot tell which class of {model or 'the model'} means entailment ({why}; id2label: {shown}): "
        "pass entailment_label=<index or label name>"
    )


def _is_local(model: str) -> bool:
    return Path(model).expanduser().exists()


class NLIJudge:
    """Does the evidence entail the claim? Judged by an NLI cross-encoder or a TRUE-style seq2seq model.

    ``model``: a local folder or a hub id (a hub id needs the network the first time). ``kind``: "auto" (from
    the config: encoder-decoder models are seq2seq), "classifier" or "seq2seq". ``hypothesis_template`` turns the
    claim into the hypothesis (``{claim}`` is replaced). ``threads`` sets torch's intra-op thread count.
    The judgement's ``label`` is "supported" when P(supported) >= ``threshold``, else "not_supported"; ``raw``
    holds every class probability as JSON."""

    labels = ("supported", "not_supported")

    def __init__(
        self,
        model: str,
        batch_size: int = 16,
        max_length: int = 512,
        device: str = "cpu",
        hypothesis_template: str = DEFAULT_HYPOTHESIS_TEMPLATE,
        *,
        kind: str = "auto",
        entailment_label: int | str | None = None,
        threshold: float = 0.5,
        threads: int | None = None,
        cache: Any = None,
    ) -> None:
        checked_batch_size(batch_size)
        if max_length < 8:
            raise VericiteError(f"max_length must be at least 8 tokens, not {max_length}")
        if "{claim}" not in hypothesis_template:
            raise VericiteError(f"hypothesis_template must contain {{claim}}: {hypothesis_template!r}")
        if kind not in ("auto", "classifier", "seq2seq"):
            raise VericiteError(f"kind must be auto, classifier or seq2seq, not {kind!r}")
        torch, transformers = _require_backend()
        if str(model).startswith(("/", "./", "../", "~")) and not _is_local(str(model)):
            raise VericiteError(f"NLI model folder not found: {model}")
        self._torch = torch
        self.model_name = str(model)
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.hypothesis_template = hypothesis_template
        self.threshold = threshold
        self.id = f"nli:{self.model_name}@{VERSION}"
        if threads:
            torch.set_num_threads(int(threads))
        try:
            config = transformers.AutoConfig.from_pretrained(self.model_name)
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_name)
            if kind == "auto":
                kind = "seq2seq" if getattr(config, "is_encoder_decoder", False) else "classifier"
            self.kind = kind
            if kind == "seq2seq":
                self.model = transformers.AutoModelForSeq2SeqLM.from_pretrained(self.model_name)
            else:
                self.model = transformers.AutoModelForSequenceClassification.from_pretrained(self.model_name)
        except (OSError, ValueError) as e:
            where = "local folder" if _is_local(self.model_name) else "hub id (needs the network the first time)"
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise VericiteError(f"cannot load NLI model {self.model_name!r} as a {where}: {first}") from None
        self.model.to(device)
        self.model.eval()
        if self.kind == "classifier":
            self.labels = [str(self.model.config.id2label[i]) for i in range(self.model.config.num_labels)]
            self.entailment_index = find_entailment_index(self.model.config.id2label, entailment_label, model=self.model_name)
        else:
            self.labels = ["0", "1"]
            self._yes_id, self._no_id = self._answer_token_ids()
        pad = self.tokenizer.pad_token_id
        if pad is None:
            raise VericiteError(f"the tokenizer of {self.model_name!r} has no padding token, so pairs cannot be batched")
        from ..models.cache import open_cache

        self.cache = open_cache(cache)
        fingerprint = self._fingerprint() if self.cache is not None else None
        if fingerprint is None:
            self.cache = None
        self._cache_material = {
            "kind": "nli-judgement", "judge_version": VERSION, "model": fingerprint, "model_kind": self.kind,
            "entailment": getattr(self, "entailment_index", None), "max_length": self.max_length,
            "template": self.hypothesis_template,
        }

    def model_identity(self) -> dict[str, Any]:
        """What results record about the model: name, backend, kind, and sha256 (of a local folder: one hash of
        every file's sha256, ``meta_figures.folder_sha256``; a hub model: its commit instead, sha256 null)."""
        fp = (self._cache_material.get("model") if self.cache is not None else None) or self._fingerprint() or {}
        from .meta_figures import folder_sha256

        files = fp.get("files")
        return {
            "name": self.model_name, "backend": "transformers", "model": self.kind,
            "sha256": folder_sha256(files) if files else None, "commit": fp.get("commit"),
        }

    def _fingerprint(self) -> dict[str, Any] | None:
        """What identifies the weights: the sha256 of every file of a local folder (remembered per size and
        mtime, so a large file is hashed once), or a hub model's commit; None when unknown."""
        if _is_local(self.model_name):
            from ..models.provision import file_sha256

            folder = Path(self.model_name).expanduser()
            # every file of the folder, hidden ones (.git, editor files) and their folders left out
            files = sorted(f for f in folder.rglob("*") if f.is_file() and not any(x.startswith(".") for x in f.relative_to(folder).parts))
            return {"files": {str(f.relative_to(folder)): file_sha256(f) for f in files}}
        commit = getattr(self.model.config, "_commit_hash", None)
        return {"hub": self.model_name, "commit": commit} if commit else None

    # ------------------------------------------------------------------ encoding

    def _answer_token_ids(self) -> tuple[int, int]:
        """Token ids of "1" and "0" as the first decoder token. A tokenizer may put a shared piece in front
        (sentencepiece's "▁"), so the first token where the two encodings differ is used."""
        one = self.tokenizer.encode("1", add_special_tokens=False)
        zero = self.tokenizer.encode("0", add_special_tokens=False)
        for a, b in zip(one, zero):
            if a != b:
                unk = self.tokenizer.unk_token_id
                if unk is not None and unk in (a, b):
                    break
                return a, b
        raise VericiteError(f"the tokenizer of {self.model_name!r} has no distinct tokens for '1' and '0': not a TRUE-style model")

    def _encode(self, pair: JudgePair) -> tuple[list[int], list[int] | None, bool]:
        """(input_ids, token_type_ids or None, claim_truncated) for one pair, premise truncated first."""
        hypothesis = self.hypothesis_template.replace("{claim}", pair.claim)
        if self.kind == "seq2seq":
            tok = self.tokenizer
            hyp = tok.encode(" hypothesis: " + hypothesis, add_special_tokens=True)
            prem = tok.encode("premise: " + pair.evidence, add_special_tokens=False)
            room = self.max_length - len(hyp)
            clipped = room < 1
            if clipped:  # the claim alone is too long: keep the start of both
                room = self.max_length // 2
                hyp = hyp[: self.max_length - room - 1] + hyp[-1:]
            return prem[:room] + hyp, None, clipped
        kwargs = dict(max_length=self.max_length, add_special_tokens=True)
        try:
            enc = self.tokenizer(pair.evidence, hypothesis, truncation="only_first", **kwargs)
            clipped = False
        except Exception:  # noqa: BLE001  the claim alone exceeds max_length: only_first cannot fit it
            enc = self.tokenizer(pair.evidence, hypothesis, truncation="longest_first", **kwargs)
            clipped = True
        if len(enc["input_ids"]) > self.max_length:  # slow tokenizers warn instead of raising
            enc = self.tokenizer(pair.evidence, hypothesis, truncation="longest_first", **kwargs)
            clipped = True
        return list(enc["input_ids"]), (list(enc["token_type_ids"]) if "token_type_ids" in enc else None), clipped

    def _batch_tensors(self, encoded: list[tuple[list[int], list[int] | None, bool]]) -> dict[str, Any]:
        torch = self._torch
        width = max(len(ids) for ids, _, _ in encoded)
        pad = self.tokenizer.pad_token_id
        right = getattr(self.tokenizer, "padding_side", "right") != "left"
        ids_rows, mask_rows, type_rows = [], [], []
        for ids, types, _ in encoded:
            n = width - len(ids)
            ids_rows.append(ids + [pad] * n if right else [pad] * n + ids)
            mask_rows.append([1] * len(ids) + [0] * n if right else [0] * n + [1] * len(ids))
            if types is not None:
                type_rows.append(types + [0] * n if right else [0] * n + types)
        out = {
            "input_ids": torch.tensor(ids_rows, dtype=torch.long, device=self.device),
            "attention_mask": torch.tensor(mask_rows, dtype=torch.long, device=self.device),
        }
        if type_rows and len(type_rows) == len(ids_rows):
            out["token_type_ids"] = torch.tensor(type_rows, dtype=torch.long, device=self.device)
        return out

    # ------------------------------------------------------------------ judging

    def _probabilities(self, batch: dict[str, Any]) -> list[list[float]]:
        """Per row, the probability of each class (classifier) or of ["0", "1"] (seq2seq)."""
        torch = self._torch
        with torch.inference_mode():
            if self.kind == "seq2seq":
                start = self.model.config.decoder_start_token_id
                if start is None:
                    start = self.tokenizer.pad_token_id
                rows = batch["input_ids"].shape[0]
                dec = torch.full((rows, 1), int(start), dtype=torch.long, device=self.device)
                out = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], decoder_input_ids=dec)
                logits = out.logits[:, 0, :]
                pair = torch.stack([logits[:, self._no_id], logits[:, self._yes_id]], dim=-1)
                probs = torch.softmax(pair.float(), dim=-1)
            else:
                out = self.model(**batch)
                probs = torch.softmax(out.logits.float(), dim=-1)
        return probs.cpu().tolist()

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        if not pairs:
            return []
        keys: list[str | None] = [None] * len(pairs)
        found: dict[int, tuple[list[float], bool]] = {}
        if self.cache is not None:
            for i, p in enumerate(pairs):
                keys[i] = self.cache.key({**self._cache_material, "evidence": p.evidence, "claim": p.claim})
                hit = self.cache.get(keys[i])
                if hit is not None:
                    found[i] = (list(hit["row"]), bool(hit["claim_truncated"]))
        todo = [i for i in range(len(pairs)) if i not in found]
        encoded = {i: self._encode(pairs[i]) for i in todo}
        # longest first: the first batch shows at once whether the longest pairs fit in memory
        order = sorted(todo, key=lambda i: (-len(encoded[i][0]), i))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            probs = self._probabilities(self._batch_tensors([encoded[i] for i in idx]))
            for i, row in zip(idx, probs):
                # float32 results differ in the 7th digit between batch shapes (different matmul blocking);
                # 6 decimals make a pair's score the same batched or alone (bar a value on a rounding edge)
                found[i] = ([round(float(v), DIGITS) for v in row], encoded[i][2])
                if self.cache is not None and all(math.isfinite(v) for v in found[i][0]):
                    self.cache.put(keys[i], "nli-judgement", {"row": found[i][0], "claim_truncated": found[i][1]}, model=f"nli:{self.model_name}")  # type: ignore[arg-type]
        return [self._judgement(p, *found[i]) for i, p in enumerate(pairs)]

    def _judgement(self, pair: JudgePair, row: list[float], claim_truncated: bool) -> Judgement:
        p_support = row[1] if self.kind == "seq2seq" else row[self.entailment_index]
        raw: dict[str, Any] = dict(zip(self.labels, row))
        if claim_truncated:
            raw["claim_truncated"] = True
        ok = math.isfinite(p_support)
        return Judgement(
            judge=self.id,
            claim=pair.claim,
            evidence=pair.evidence,
            probability=float(p_support) if ok else None,
            label=(SUPPORTED if p_support >= self.threshold else NOT_SUPPORTED) if ok else None,
            raw=json.dumps(raw, sort_keys=True),
            status="ok" if ok else "failed",
        )


def from_spec(arg: str, *, ctx: Any, **options: Any) -> NLIJudge:
    """Registry factory: ``nli:<local folder or hub id>``, with ``ctx.threads`` and ``ctx.cache``."""
    if not arg:
        raise VericiteError("the nli judge needs a model: nli:<local folder or hub id>")
    return NLIJudge(arg, threads=ctx.threads, cache=ctx.cache, **options)
