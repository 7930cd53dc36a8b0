"""Evaluate answers produced anywhere, for any task: compute only.

* ``inputs.py``: read a JSONL of answers for a task (bad lines, duplicate ids, bytes that are not UTF-8);
* ``pipeline.py``: run the task's metric suite over the answers (the results body, the per-sample records);
* ``answer_scoring.py``: each answer scored alone into the checkpoint first, here or on a pool's workers (``--ray``);
* ``thresholds.py``: the ``--fail-under`` / ``--max-bad-lines`` gate.

Writing the files (results.json, samples.jsonl, bad_lines.jsonl) and ``evaluate_file`` are ``runs/results.py``.
"""

from __future__ import annotations

from .inputs import DEFAULT_TASK, AnswerItem, ReadResult, input_file, item_from_record, load_task, read_answers
from .pipeline import EvaluateConfig, build_context, evaluate_items
from .thresholds import check_bad_lines, check_thresholds, parse_thresholds

__all__ = [
    "DEFAULT_TASK",
    "AnswerItem",
    "EvaluateConfig",
    "ReadResult",
    "build_context",
    "check_bad_lines",
    "check_thresholds",
    "evaluate_items",
    "input_file",
    "item_from_record",
    "load_task",
    "parse_thresholds",
    "read_answers",
]
