"""judge-eval on a pool of workers (``--ray auto|ADDRESS --workers N``): the judge side of ``runs/distributed.py``,
which re-exports its names.

judge-eval: the metrics stay in the driver, as locally; the judge is :class:`PoolJudge`, which
splits each call's pairs (never the pairs of one evidence text, as ``judge_corpus`` does) over the workers, each
of which loaded the judge once, and puts the judgements back in the order of the pairs. Each finished part is
checkpointed under the sha256 of the judge's id, the settings that change what it says (:func:`judge_settings`:
the server its model asks, its recorded options, its model's output settings; never a key) and its pairs, so a
judge-eval run again with ``--resume`` judges only what was not judged yet, and a run against another server or
with other judge settings judges its parts anew. On Ctrl-C the parts the workers had finished that the driver had
not checkpointed yet are checkpointed first (``distributed.keep_finished``, as generate's), so ``--resume`` does
not judge them again. Each part comes back with what the worker's judge model calls cost
(``PoolJudge.worker_usage``: judge-eval's ``judge_usage``).
"""

from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path
from typing import Any, Sequence

from ..distributed import Checkpoint, Pool, keep_finished, open_pool
from ..errors import VericiteError
from ..types import JudgePair, Judgement, Usage


def _load_judge(spec: str, options: dict[str, Any]) -> Any:
    from ..judges import load_judge

    return load_judge(spec, **options)


class JudgeWorker:
    """What a worker holds for :class:`PoolJudge`: one judge; ``judge_pairs`` takes whole pairs (question and
    context included) and gives plain data; ``judge_pairs_usage`` gives them with what the judge's model calls
    cost (``usage``, null for a judge without a model) and the model's name; ``close()`` closes the judge and its
    model."""

    def __init__(self, judge: Any) -> None:
        from ..models.usage import UsageMeter, metered

        self.judge = judge
        self.meter = UsageMeter()
        backend = vars(judge).get("backend") if hasattr(judge, "__dict__") else None  # an LLM judge's own model
        backend = backend if callable(getattr(backend, "identity", None)) else None
        self.model = backend.identity().name if backend is not None else None
        self.loaded = [backend] if backend is not None else []  # loaded with the judge, for this worker: close()
        if backend is not None:
            judge.backend = metered(backend, self.meter)

    def close(self) -> None:
        """Close the judge (when it has ``close()``) and its model (its client, its call cache)."""
        from .distributed import close_worker  # not at the top: distributed.py imports this module

        close_worker([self.judge], self.loaded)
        self.judge, self.loaded = None, []

    def judge_pairs(self, pairs: list[JudgePair]) -> list[dict[str, Any]]:
        return [j.to_dict() for j in self.judge.judge(list(pairs))]

    def judge_pairs_usage(self, pairs: list[JudgePair]) -> dict[str, Any]:
        before = self.meter.usage  # a worker judges one call at a time
        judgements = self.judge_pairs(pairs)
        return {"judgements": judgements, "model": self.model, "usage": self.meter.since(before).to_dict() if self.model else None}


def _judge_worker(spec: str, options: dict[str, Any]) -> JudgeWorker:
    return JudgeWorker(_load_judge(spec, options))


#: option and setting names that hold credentials: never part of a checkpoint key (a key is no part of what a
#: judge says, and a rotated one must not make finished parts judged again)
_SECRET = re.compile(r"api_?key|token|secret|password|authori[sz]ation|credential", re.IGNORECASE)


def _without_secrets(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _without_secrets(v) for k, v in x.items() if not _SECRET.search(str(k))}
    if isinstance(x, (list, tuple)):
        return [_without_secrets(v) for v in x]
    return x


def judge_settings(local: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What, besides its id, changes what a pooled judge says, for its parts' checkpoint keys: the server its
    model asks (``options``' ``base_url``, else ``$OPENAI_BASE_URL``: two servers may serve one model name),
    the judge's recorded settings (``options()``, a :class:`~vericite.protocols.Configurable`'s: a table's sha256,
    the triple judge's flags) and its model's output settings (``cache_key_extra()``, a
    :class:`~vericite.protocols.CacheKeyed` backend's: its server, llama.cpp's sampling). Never a key: names such
    as ``api_key`` or ``token`` are left out at any depth. Threads, the call cache, time limits and retries change
    how it is asked, not what it says: left out, so a part stays done when only they change."""
    from ..protocols import CacheKeyed, Configurable

    settings: dict[str, Any] = {}
    base_url = (options or {}).get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if base_url:
        settings["base_url"] = str(base_url)
    if isinstance(local, Configurable):
        settings["options"] = local.options()
    backend = vars(local).get("backend") if hasattr(local, "__dict__") else None
    if isinstance(backend, CacheKeyed):
        settings["model"] = backend.cache_key_extra()
    return _without_secrets(settings)  # type: ignore[no-any-return]


class PoolJudge:
    """A judge whose ``judge(pairs)`` is done by a pool of workers, each holding the judge ``spec`` built with
    ``options`` (``BuildContext`` fields). Everything else (``id``, ``labels``, ``options()``, ``cannot_judge``,
    its model's identity) is the local judge's, which is built but whose model is never loaded for judging.
    ``options``: the workers' build options, of which those that change verdicts key the checkpointed parts
    (:func:`judge_settings`)."""

    def __init__(self, local: Any, pool: Pool, checkpoint: Checkpoint | None = None, options: dict[str, Any] | None = None) -> None:
        from ..judges.batches import JUDGE_CHUNK

        self._local = local
        self._pool = pool
        self._checkpoint = checkpoint
        self._settings = judge_settings(local, options)
        #: ``judge_corpus`` sends calls this large, so each worker gets about JUDGE_CHUNK pairs of a call
        self.pairs_per_call = JUDGE_CHUNK * pool.workers
        self._usage: dict[str, Usage] = {}  # by model name, what the workers' judge calls cost
        self._usage_unknown = False  # a part read from a checkpoint written before usage was kept

    def __getattr__(self, name: str) -> Any:
        return getattr(self._local, name)

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        from ..judges.batches import sentence_chunks
        from .distributed import batch_key  # not at the top: distributed.py imports this module

        pairs = list(pairs)
        if not pairs:
            return []
        size = max(1, math.ceil(len(pairs) / self._pool.workers))
        parts = list(sentence_chunks(pairs, size))
        jid = str(getattr(self._local, "id", ""))
        # the whole pair goes to the workers and into the key: the question (CAQA's llm4) and the context (the
        # triple judge reads the cited triple there) are part of what is judged, not only the two texts; and so do
        # the judge's settings (another server, another table: other verdicts)
        keyed = [(batch_key("judge", [jid, self._settings, [[p.evidence, p.claim, p.question, p.context] for p in part]]), part) for part in parts]
        ck = self._checkpoint
        results: dict[str, list[dict[str, Any]]] = {k: ck.get(k) for k, _ in keyed if ck is not None and k in ck}
        send = [(k, list(part)) for k, part in keyed if k not in results]
        try:
            for key, result in self._pool.map("judge_pairs_usage", send):
                if ck is not None:
                    ck.put(key, result)
                results[key] = result
        except KeyboardInterrupt:  # the parts the workers finished that are not checkpointed yet: kept for --resume
            if ck is not None:
                keep_finished(self._pool, ck.put, ck.__contains__)
            raise
        out: list[Judgement] = []
        for key, part in keyed:
            got = results[key]
            if isinstance(got, dict):  # judgements with their usage
                if got.get("model") and got.get("usage") is not None:
                    self._usage[got["model"]] = self._usage.get(got["model"], Usage()) + Usage.from_dict(got["usage"])
                got = got.get("judgements") or []
            else:  # a checkpoint line written before usage was kept: judgements only
                self._usage_unknown = True
            if len(got) != len(part):
                raise VericiteError(f"judge {jid} returned {len(got)} judgements for {len(part)} pairs")
            out.extend(Judgement.from_dict(d) for d in got)
        return out

    def worker_usage(self) -> dict[str, Usage] | None:
        """What the workers' judge calls cost so far, by model name (calls read back from the checkpoint count with
        the usage they had); None when some of it is unknown (a checkpoint written before usage was kept)."""
        return None if self._usage_unknown else dict(self._usage)

    def close(self) -> None:
        self._pool.close()


def pool_judge(local: Any, spec: str, options: dict[str, Any], *, ray: str, workers: int, out: str | Path | None = None, resume: bool = False) -> PoolJudge:
    """``local`` (the judge ``spec`` built with ``options``) with its judging done by ``workers`` Ray actors at
    ``ray``; with ``out``, each part judged is checkpointed in ``out/.ray-calls.jsonl`` (read back with ``resume``),
    keyed by the judge's id, the settings of ``options`` and of ``local`` that change its verdicts, and the pairs."""
    pool = open_pool(functools.partial(_judge_worker, spec, dict(options)), workers, ray)
    ck = Checkpoint(out, resume=resume) if out is not None else None
    return PoolJudge(local, pool, ck, options)
