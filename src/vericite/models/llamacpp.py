"""The embedded backend: any GGUF model through llama-cpp-python (``pip install vericite[llamacpp]``).

What matters here (docs/models.md):
- chat completions use the model's own chat template (``create_chat_completion``);
- the thread count is configurable: with another CPU-bound process running, 2 threads collapse (OpenMP spin
  barriers) where 1 keeps full speed; default ``$VERICITE_THREADS`` or 2;
- prompt log-probabilities come from a separate scorer instance with ``logits_all=True`` and a small context
  (``reset(); eval(tokens)``; ``scores[i]`` predicts token ``i+1``), never from ``create_completion(echo=True)``,
  which returns wrong prompt log-probs in 0.3.36;
- the generator instance keeps ``logits_all=False`` (with it llama.cpp would allocate ``n_ctx x n_vocab``
  floats): per-token alternatives and a judge's next-token log-probs are read from the last position's logits
  (``llama_get_logits_ith(ctx, -1)``) the moment a token is sampled;
- llama-cpp-python keeps the evaluated tokens of the previous call and evaluates only what follows the longest
  common token prefix, so consecutive prompts on one instance that share a one-shot demonstration evaluate it
  once (``reuse_prefix=True``; with False the state is reset before each prompt);
- only the *last* prompt's tokens are kept that way: a method that alternates prompts (VTG: sentence, citation,
  judge, sentence...) re-evaluates the part they share with their own earlier prompts every time. With
  ``state_cache_mb`` (default ``$VERICITE_STATE_CACHE_MB``, else 0: off) the generating instance keeps the
  llama.cpp state after each call in a RAM cache of that many MiB (``llama_cpp.LlamaRAMCache``, least recently
  used dropped first) and, before a prompt, restores the cached state that shares the longest token prefix with
  it when that is longer than what the live context shares; only the rest is evaluated. The state kept is the
  KV cache of the evaluated tokens, not llama-cpp-python's ``scores`` (an ``n_batch x n_vocab`` array it would
  copy on every save, unused when ``logits_all=False``, and not counted in the cache's capacity);
- the scorer reuses its prefix too (``reuse_scorer_prefix=True``): a window of tokens to score keeps the longest
  prefix it shares with what the scorer holds (the KV cache and the logits of every position, ``logits_all``) and
  evaluates only the rest, and the texts of one call are scored in the order of their tokens (sorted), so texts
  that share a beginning (CONNER's knowledge, then the same knowledge followed by a question) come one after
  another; results come back in the order asked. The log-probabilities are those of one evaluation of each text,
  up to the floating-point noise of evaluating a suffix apart (measured in docs/benchmarks.md).
"""

from __future__ import annotations

import inspect
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import BackendError, ModelUnavailableError, PromptTooLongError, did_you_mean
from ..types import Completion, GenParams, Message, ModelIdentity, Usage
from .llamacpp_scoring import ScoringMixin, log_softmax, prefix_order, shared_prefix  # noqa: F401  (prefix_order, shared_prefix re-exported)
from .llamacpp_interrupt import interruptible, set_abort_callback
from .llamacpp_state import default_state_cache_mb, default_threads, load_kv_state, save_kv_state

DEFAULT_N_CTX = 4096
DEFAULT_SCORER_N_CTX = 512
MIB = 1 << 20


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as e:
        raise BackendError(
            "the llama.cpp backend needs llama-cpp-python==0.3.36: run `make install` (it builds the wheel with "
            'CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF") or `pip install vericite[llamacpp]`'
            f" ({e.msg})"
        ) from None
    return llama_cpp


_llama_class: Any = None


def _counting_llama_class() -> Any:
    """A Llama that counts the tokens it evaluates (so prefix reuse is observable) and lets one call add a
    stopping criterion to the completion that ``create_chat_completion`` starts (its chat handler does not
    pass one through)."""
    global _llama_class
    if _llama_class is not None:
        return _llama_class
    llama_cpp = _import_llama_cpp()

    class _Llama(llama_cpp.Llama):  # type: ignore[misc,name-defined]
        evaluated_tokens = 0
        restored_states = 0  # states loaded from the state cache
        restored_tokens = 0  # tokens those states held
        _observer: Callable[..., bool] | None = None

        def eval(self, tokens: Sequence[int]) -> None:
            self.evaluated_tokens += len(tokens)
            with interruptible(self.reset) as armed:  # Ctrl-C stops a long decode (llamacpp_interrupt)
                set_abort_callback(llama_cpp, self, armed)
                return super().eval(tokens)

        def save_state(self) -> Any:
            return super().save_state() if self._logits_all else save_kv_state(llama_cpp, self)

        def load_state(self, state: Any) -> None:
            if self._logits_all:
                return super().load_state(state)
            load_kv_state(llama_cpp, self, state)
            self.restored_states += 1
            self.restored_tokens += int(state.n_tokens)

        def create_completion(self, *args: Any, **kwargs: Any) -> Any:
            observer = self._observer
            if observer is not None:
                inner = kwargs.get("stopping_criteria")

                def criteria(input_ids: Any, logits: Any) -> bool:
                    stop = bool(observer(input_ids, logits))
                    return stop or bool(inner is not None and inner(input_ids, logits))

                kwargs["stopping_criteria"] = criteria
            return super().create_completion(*args, **kwargs)

    _llama_class = _Llama
    return _Llama


class LlamaCppBackend(ScoringMixin):
    """``LlamaCppBackend(model_path, *, name=None, sha256=None, n_threads=None, n_ctx=4096, ...)``.

    ``model_path``: a GGUF file. ``sha256``: its known hash (embedded models), else computed on first
    ``identity()`` and remembered. The Llama is loaded lazily, once per instance; use one instance per
    thread of work (calls on one instance are serialised by a lock).
    """

    backend = "llamacpp"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        name: str | None = None,
        sha256: str | None = None,
        n_threads: int | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_batch: int = 512,
        scorer_n_ctx: int = DEFAULT_SCORER_N_CTX,
        reuse_prefix: bool = True,
        reuse_scorer_prefix: bool = True,
        state_cache_mb: int | None = None,
        top_k: int = 40,
        min_p: float = 0.05,
        repeat_penalty: float = 1.1,
        verbose: bool = False,
        **llama_kwargs: Any,
    ) -> None:
        llama_cpp = _import_llama_cpp()  # fail now, with the install hint, rather than at the first call
        known = set(inspect.signature(llama_cpp.Llama.__init__).parameters) - {"self", "kwargs", "model_path"}
        unknown = sorted(set(llama_kwargs) - known)
        if unknown:  # Llama() would silently ignore them
            options = known | {"n_ctx", "n_threads", "reuse_prefix", "reuse_scorer_prefix", "scorer_n_ctx", "state_cache_mb"}
            hints = ", ".join(f"{u!r}" + (f" ({hint})" if (hint := did_you_mean(u, options)) else "") for u in unknown)
            raise BackendError(f"unknown llama.cpp option {hints}")
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ModelUnavailableError(f"GGUF model file not found: {self.model_path}")
        self.name = name or f"llamacpp:{self.model_path}"
        self._sha256 = sha256
        self.n_threads = int(n_threads) if n_threads else default_threads()
        if self.n_threads < 1:
            raise BackendError(f"n_threads must be at least 1, not {self.n_threads}")
        self.n_ctx = int(n_ctx)
        self.n_batch = int(n_batch)
        self.scorer_n_ctx = int(scorer_n_ctx)
        self.reuse_prefix = reuse_prefix
        self.reuse_scorer_prefix = bool(reuse_scorer_prefix)
        # $VERICITE_STATE_CACHE_MB does not apply to an instance asked not to reuse prefixes; an explicit
        # state_cache_mb with reuse_prefix=False is a contradiction
        self.state_cache_mb = (default_state_cache_mb() if reuse_prefix else 0) if state_cache_mb is None else int(state_cache_mb)
        if self.state_cache_mb < 0:
            raise BackendError(f"state_cache_mb must be 0 (off) or more, not {self.state_cache_mb}")
        if self.state_cache_mb and not reuse_prefix:
            raise BackendError("state_cache_mb reuses cached prefixes: it cannot be used with reuse_prefix=False")
        # llama-cpp-python's chat defaults, made explicit so they are recorded in the cache key
        self.sampling = {"top_k": int(top_k), "min_p": float(min_p), "repeat_penalty": float(repeat_penalty)}
        self.verbose = verbose
        self.llama_kwargs = llama_kwargs
        self._llm: Any = None
        self._scorer: Any = None
        self.lock = threading.RLock()
        self.load_seconds = 0.0

    # ------------------------------------------------------------------ loading

    def _new_llama(self, **kw: Any) -> Any:
        cls = _counting_llama_class()
        t0 = time.perf_counter()
        try:
            llm = cls(
                model_path=str(self.model_path),
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                verbose=self.verbose,
                **{**self.llama_kwargs, **kw},
            )
        except (ValueError, RuntimeError) as e:
            raise BackendError(f"llama.cpp could not load {self.model_path}: {e}") from None
        self.load_seconds += time.perf_counter() - t0
        return llm

    @property
    def llama(self) -> Any:
        """The generating Llama (loaded on first use)."""
        with self.lock:
            if self._llm is None:
                self._llm = self._new_llama(n_ctx=self.n_ctx, n_batch=self.n_batch, logits_all=False)
                if self.state_cache_mb:
                    self._llm.set_cache(_import_llama_cpp().LlamaRAMCache(capacity_bytes=self.state_cache_mb * MIB))
            return self._llm

    @property
    def scorer(self) -> Any:
        """A second Llama with ``logits_all=True`` and a small context, used only by ``logprobs``."""
        with self.lock:
            if self._scorer is None:
                n = self.scorer_n_ctx
                self._scorer = self._new_llama(n_ctx=n, n_batch=min(n, self.n_batch), logits_all=True)
            return self._scorer

    def close(self) -> None:
        with self.lock:
            for llm in (self._llm, self._scorer):
                if llm is not None:
                    llm.close()
            self._llm = self._scorer = None

    # ------------------------------------------------------------------ identity

    def identity(self) -> ModelIdentity:
        if self._sha256 is None:
            from .provision import file_sha256

            self._sha256 = file_sha256(self.model_path)
        return ModelIdentity(name=self.name, backend="llamacpp", model=self.model_path.name, sha256=self._sha256)

    def register_as(self, name: str, sha256: str | None = None) -> None:
        """This instance's file is the registered model ``name`` (``sha256``: its known hash, verified against the
        file): named so, as when it is loaded by that name (``models/local.py`` shares one instance per file)."""
        self.name = name
        if sha256 is not None:
            self._sha256 = sha256

    def cache_key_extra(self) -> dict[str, Any]:
        """Settings beyond the identity that change outputs (recorded in the call cache's key)."""
        return {"sampling": self.sampling}

    @property
    def evaluated_tokens(self) -> int:
        """Tokens the generating Llama has evaluated so far (prompt and generated): shows prefix reuse."""
        return 0 if self._llm is None else int(self._llm.evaluated_tokens)

    @property
    def scored_tokens(self) -> int:
        """Tokens the scorer (``logprobs`` and the continuation methods) has evaluated so far: shows its prefix reuse."""
        return 0 if self._scorer is None else int(self._scorer.evaluated_tokens)

    @property
    def state_cache_stats(self) -> dict[str, int]:
        """What the state cache (``state_cache_mb``) did: states restored, the tokens they held, states and bytes
        kept now."""
        llm = self._llm
        cache = None if llm is None else llm.cache
        return {
            "restored_states": 0 if llm is None else int(llm.restored_states),
            "restored_tokens": 0 if llm is None else int(llm.restored_tokens),
            "states": 0 if cache is None else len(cache.cache_state),
            "bytes": 0 if cache is None else int(cache.cache_size),
        }

    # ------------------------------------------------------------------ generation

    def _last_logits(self) -> np.ndarray:
        llama_cpp = _import_llama_cpp()
        llm = self.llama
        ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),))

    def _token_text(self, token: int) -> str:
        return self.llama.detokenize([int(token)]).decode("utf-8", errors="replace")

    def _chat(self, messages: Sequence[Message], observer: Callable[..., bool] | None, **kw: Any) -> dict:
        llm = self.llama
        if not self.reuse_prefix:
            llm.reset()
        llm._observer = observer
        try:
            return llm.create_chat_completion(messages=[dict(m) for m in messages], **kw)
        except ValueError as e:  # e.g. prompt longer than the context
            kind = PromptTooLongError if "exceed context window" in str(e) else BackendError
            raise kind(f"llama.cpp: {e}") from None
        finally:
            llm._observer = None

    def generate(self, prompts: Sequence[Sequence[Message]], params: GenParams) -> list[Completion]:
        out = []
        with self.lock:
            for messages in prompts:
                out.append(self._generate_one(messages, params))
        return out

    def _generate_one(self, messages: Sequence[Message], params: GenParams) -> Completion:
        k = int(params.top_logprobs)
        steps: list[dict[str, float]] = []

        def record(_input_ids: Any, _logits: Any) -> bool:
            # called right after each token is sampled, while the context's last logits are those it was
            # sampled from: the model's own distribution (before temperature and penalties)
            lp = log_softmax(self._last_logits())
            top = np.argpartition(-lp, k - 1)[:k] if k < lp.shape[0] else np.arange(lp.shape[0])
            alts: dict[str, float] = {}
            for t in sorted(top.tolist(), key=lambda t: -lp[t]):
                text = self._token_text(t)
                alts.setdefault(text, float(lp[t]))  # two tokens with one text: keep the likelier
            steps.append(alts)
            return False

        t0 = time.perf_counter()
        r = self._chat(
            messages,
            record if k > 0 else None,
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            seed=params.seed,
            stop=list(params.stop) or None,
            **self.sampling,
        )
        seconds = time.perf_counter() - t0
        choice = r["choices"][0]
        usage = r.get("usage") or {}
        n_out = int(usage.get("completion_tokens", 0))
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=n_out,
            # the criterion also runs for the end-of-generation token and once after the loop: keep one per
            # generated token
            top_logprobs=steps[:n_out] if k > 0 else None,
            finish_reason=choice.get("finish_reason") or "",
            seconds=seconds,
        )

    def next_token_logprobs(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        """For each chat prompt, the log-probability that the assistant's reply starts with each candidate's
        first token. Only the last position's logits are computed; consecutive prompts reuse their common
        token prefix (put the shared instruction first)."""
        return [scores for scores, _ in self.next_token_logprobs_usage(prompts, candidates)]

    def next_token_logprobs_usage(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str]
    ) -> list[tuple[dict[str, float], Usage]]:
        """:meth:`next_token_logprobs` with each prompt's usage: the chat prompt's tokens (the tokenizer's count,
        as ``generate`` reports it, a reused prefix included) and the one completion token sampled to read the
        distribution."""
        if not candidates:
            raise ValueError("next_token_logprobs needs at least one candidate")
        out = []
        with self.lock:
            llm = self.llama
            first_tokens = {}
            for c in candidates:
                toks = llm.tokenize(c.encode("utf-8"), add_bos=False, special=False)
                if not toks:
                    raise ValueError(f"candidate {c!r} has no tokens")
                first_tokens[c] = toks[0]
            for messages in prompts:
                captured: list[np.ndarray] = []

                def capture(_input_ids: Any, _logits: Any) -> bool:
                    if not captured:
                        captured.append(log_softmax(self._last_logits()))
                    return True  # one sampled token is enough; it is never evaluated

                r = self._chat(messages, capture, max_tokens=1, temperature=0.0, **self.sampling)
                if not captured:
                    raise BackendError("llama.cpp returned no logits for the next token")
                lp = captured[0]
                usage = r.get("usage") or {}
                out.append(({c: float(lp[t]) for c, t in first_tokens.items()}, Usage(int(usage.get("prompt_tokens", 0)), 1, 1)))
        return out

    # ------------------------------------------------------------------ scoring

    def tokenize(self, text: str) -> list[int]:
        """The model's tokens for ``text`` (with BOS when the model's tokenizer adds one)."""
        with self.lock:
            llm = self._llm if self._llm is not None else self.scorer
            return list(llm.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    def __repr__(self) -> str:
        return f"LlamaCppBackend({str(self.model_path)!r}, n_threads={self.n_threads}, n_ctx={self.n_ctx})"

