"""What an evaluation does with the families and models it built around the judging (``pipeline.evaluate_items``):
their ``preload()`` before the first answer is judged, and their closing once the evaluation ends."""

from __future__ import annotations

from typing import Any, Sequence


def preload(suite: Sequence[Any]) -> None:
    """Each family of ``suite`` with a ``preload()`` loads now what its corpus's scoring would load first (CONNER's
    relevance model, ALCE's ``--reader``), before any answer is judged: a model that cannot be loaded (a missing or
    corrupt file, a bad spec) is one line in seconds, not after every answer was judged; the corpus's scoring then
    uses the instance loaded. Only the driver calls it: the workers of ``--ray`` build the suite to judge, never
    these models. A plugin family whose ``preload`` fails (a bug: ``PluginError``) is left to its corpus run, which
    says why its metrics are not computed. A ``preload`` may return a line: what will not be computed and why (ALCE's
    QA model that cannot be had here: its metrics are not computed with the reason, by design), said on stderr as
    the commands' warnings are (``progress.warn``) now, before the judging, once per evaluation."""
    from ..errors import PluginError
    from ..progress import warn

    for m in suite:
        try:
            load = getattr(m, "preload", None)
            if callable(load):
                said = load()
                if isinstance(said, str) and said:  # what will not be computed, and why (ALCE's QA model): said once, now
                    warn(said)
        except PluginError as e:
            if e.kind != "metric":
                raise


def close_evaluation(built: Sequence[Any], loaded: Sequence[Any]) -> None:
    """Close what an evaluation without a pool built, as a pool's worker closes its own (``models.close_all``):
    ``built`` (the judge it loaded, the suite's families: those with ``close()``), then the models ``loaded`` for
    them (``models.release``), each once. It runs on the way out, finished or not: a close that fails (a
    ``BackendError``, a plugin's ``PluginError``) is a warning on stderr, not the end of an evaluation whose
    numbers are there (nor does it hide the error an evaluation that failed is ending with)."""
    from ..errors import BackendError
    from ..models import close_all
    from ..progress import warn

    try:
        close_all(built, loaded)
    except BackendError as e:
        warn(f"warning: {e} (on close, after the evaluation)")
