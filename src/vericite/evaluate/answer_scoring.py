"""Each answer of an evaluation scored alone into its checkpoint (``evaluate/checkpoint.py``), here or on a pool's
workers (``--ray``), before the corpus is scored (``pipeline.py``): the parts of a suite that hold a judge, their
judges memoised in the checkpoint (:func:`judged_parts`); one answer scored (:func:`score_one`, what a pool's
``AnswerWorker`` calls too); the answers not yet checkpointed scored one by one (:func:`score_answer_by_answer`) or
in batches of :data:`ANSWER_BATCH` by a pool's workers (:func:`score_answers_on_pool`); and the checkpointed scores
handed back to the families that reuse them in the corpus's scoring (:func:`reuse_checkpointed_scores`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..metrics.base import MetricRun
from .inputs import AnswerItem

def reuse_checkpointed_scores(suite: Sequence[Any], samples: Sequence[Any], answers: Sequence[Any], checkpoint: Any) -> None:
    """Each family of ``suite`` with a ``reuse_checkpointed(samples, answers, scores)`` (CONNER's: its reader's answers
    and the evidence it retrieved) is given the scores the checkpoint holds by answer index (read back, scored here or
    on a worker), so the corpus's scoring does not ask its models again for what the answer-by-answer pass asked."""
    from ..errors import PluginError

    scores = getattr(checkpoint, "scores", None)
    if not scores:
        return
    for m in suite:
        try:
            reuse = getattr(m, "reuse_checkpointed", None)
            if callable(reuse):
                reuse(samples, answers, scores)
        except PluginError as e:  # a plugin family's bug: its corpus run asks its models again (and says why if it fails)
            if e.kind != "metric":
                raise


def judged_parts(suite: Sequence[Any], memo: dict[str, Any], fresh: dict[str, Any]) -> list[Any]:
    """The parts of ``suite`` scored answer by answer: each family that holds a judge (its ``judging_part()`` when it
    has one), with no bootstrap. Each such family's judge is made a ``MemoJudge`` over ``memo`` (new judgements also
    go into ``fresh``), in ``suite`` itself too, so the corpus's scoring after this asks no judge again."""
    import copy

    from ..errors import PluginError
    from ..registry import guard_like
    from .checkpoint import MemoJudge

    judged = []
    for m in suite:
        try:
            judge = getattr(m, "judge", None)  # a plugin family's property may raise when read
            if judge is None:
                continue
            if not isinstance(judge, MemoJudge):
                try:
                    m.judge = MemoJudge(judge, memo, fresh)
                except AttributeError:  # a plugin family's read-only property: scored over the corpus only, its judge asked then
                    continue
            # a family that scores more than its judge decides (ALCE's ROUGE and QA model, CONNER's LM measures)
            # gives its judged part: the rest is computed once, over the corpus
            part = m.judging_part() if hasattr(m, "judging_part") else copy.copy(m)
        except PluginError as e:  # a plugin family's bug: not scored answer by answer; its corpus run says why
            if e.kind != "metric":
                raise
            continue
        part = guard_like(part, m)  # a plugin family's part is guarded as it is, a copy calling its own methods
        if part is not None:
            if hasattr(part, "resamples"):
                part.resamples = 0  # one answer's corpus numbers are not kept: no bootstrap
            judged.append(part)
    return judged


def score_one(parts: Sequence[Any], sample: Any, answer: Any, meters: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """One answer scored by the judged ``parts``: its scores, its judgements, and what its judging's model calls
    cost by model name (from ``meters``: only those with calls)."""
    before = {name: m.usage for name, m in (meters or {}).items()}
    runs = [MetricRun.of(m, [sample], [answer]) for m in parts]
    scores = {k: v for run in runs for k, v in run.scores[0].items()}
    used = {name: m.usage - before[name] if name in before else m.usage for name, m in (meters or {}).items()}
    usage = {name: u.to_dict() for name, u in used.items() if u.calls}
    return scores, [j for run in runs for j in run.judgements[0]], usage


def score_answer_by_answer(suite: Sequence[Any], items: Sequence[AnswerItem], checkpoint: Any, progress: bool = False, meters: Mapping[str, Any] | None = None) -> None:
    """The judged families of ``suite`` (:func:`judged_parts`) score each answer not yet in ``checkpoint`` alone,
    their judges memoised in it (``evaluate/checkpoint.py``); each answer's line is appended as it is scored. The
    families keep the memoising judges, so the corpus's scoring after this asks no judge again. ``meters``: by
    model name, what each answer's judging costs goes into its line."""
    from ..progress import progress_bar

    judged = judged_parts(suite, checkpoint.memo, checkpoint.fresh)
    todo = [i for i, it in enumerate(items) if not checkpoint.is_done(i, it.sample.id)]
    if not judged:
        return
    with progress_bar(len(items), "scoring answers", enabled=progress, completed=len(items) - len(todo)) as advance:
        for i in todo:
            it = items[i]
            scores, judgements, usage = score_one(judged, it.sample, it.answer, meters)
            checkpoint.add(i, it.sample.id, scores, judgements, usage)
            advance(1)


#: answers per batch sent to a worker (``--ray``): small, so a crash loses little and the workers stay busy
ANSWER_BATCH = 4


def score_answers_on_pool(
    suite: Sequence[Any], items: Sequence[AnswerItem], checkpoint: Any, open_pool: Any, progress: bool = False, meters: dict[str, Any] | None = None, batch_size: int | None = None
) -> None:
    """:func:`score_answer_by_answer` with the answers scored by a pool's workers (``--ray``): the answers not yet in
    ``checkpoint`` go in batches of ``batch_size`` (:data:`ANSWER_BATCH`) to ``open_pool()``'s workers (each built the task's suite once:
    ``runs/distributed.py``'s ``AnswerWorker``), which score each answer alone as the local loop does and send back
    its checkpoint line; the driver appends each line as its batch comes back, its judgements into the memo of
    ``suite``'s judges (so the corpus's scoring after this asks no judge again), its usage into ``meters``. On
    Ctrl-C the lines of the batches the workers had finished that the driver had not written yet are written first
    (``distributed.keep_finished``), so ``--resume`` does not judge them again. The pool is opened only when some
    answer is left to judge, and closed at the end."""
    from ..distributed import keep_finished
    from ..progress import progress_bar

    if not judged_parts(suite, checkpoint.memo, checkpoint.fresh):
        return
    todo = [i for i, it in enumerate(items) if not checkpoint.is_done(i, it.sample.id)]
    if not todo:
        return
    size = batch_size or ANSWER_BATCH
    batches = [todo[k : k + size] for k in range(0, len(todo), size)]
    send = [(f"answers:{b[0]}-{b[-1]}", [(i, items[i].sample, items[i].answer) for i in b]) for b in batches]
    pool = open_pool()
    try:
        with progress_bar(len(items), "scoring answers", enabled=progress, completed=len(items) - len(todo)) as advance:
            try:
                for _key, lines in pool.map("score", send):
                    advance(_write_lines(items, checkpoint, lines, meters))
            except KeyboardInterrupt:  # a batch being written, others finished meanwhile: their lines kept
                keep_finished(pool, lambda _key, lines: _write_lines(items, checkpoint, lines, meters))
                raise
    finally:
        pool.close()


def _write_lines(items: Sequence[AnswerItem], checkpoint: Any, lines: Sequence[dict[str, Any]], meters: dict[str, Any] | None) -> int:
    """A worker's answer lines appended to ``checkpoint`` (those not there yet: after Ctrl-C, part of a batch may
    be), their usage into ``meters``; how many lines there were."""
    from ..errors import VericiteError
    from ..models.usage import UsageMeter
    from ..types import Usage

    for line in lines:
        i = line["answer"]
        if items[i].sample.id != line["id"]:
            raise VericiteError(f"a worker scored answer {i} as {line['id']!r}, not {items[i].sample.id!r}")
        if checkpoint.is_done(i, line["id"]):
            continue
        checkpoint.add_line(line)
        for name, used in (line.get("usage") or {}).items() if meters is not None else ():
            meters.setdefault(name, UsageMeter()).add(Usage.from_dict(used))
    return len(lines)
