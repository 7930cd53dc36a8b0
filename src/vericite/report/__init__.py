"""``report.html``: one self-contained page for a run folder (docs/results-format.md).

Everything is inline: CSS, SVG charts drawn here, and a few lines of vanilla JavaScript that filter the answers.
Nothing is fetched. Every piece of text read from the run folder is escaped — model output is untrusted — and a
Content-Security-Policy allows only the page's own script (by hash), so even text that slipped through
escaping could not run.

What the page holds: the run's identity (kind, model and its sha256, prompt, versions, seed, date); the metric
table (value, n, 95 % CI, direction, judge; a metric that was not computed shows its reason, never 0); bar
charts with CI whiskers; the experiment curves (KaLMA Figures 4 and 5) when ``experiments`` exists, and for an
experiment that declares ``token_figure`` (VTG's: ``vtg-methods``, the sweeps, the ablations) VTG's Figure 4, tokens
per question against citation F1 from each level's folder; CONNER §4.4's long-tail and long-form
figures (factuality by page views and by number of sentences) when the samples have CONNER scores; the judges
and how far each can be trusted; counts and tokens; and one collapsible entry per answer with each citation
coloured by status. Only the first ``max_samples`` answers are written (the counts cover them all), so a run of
thousands of samples gives a page of a few megabytes.

Modules: ``page`` (assembly, ``build_report``/``write_report``), ``sections`` (the page's sections),
``charts`` (SVG bar, line and cost charts, standalone SVG files), ``token_figure`` (VTG's Figure 4 from run
folders, for the page and benchmarks/bench_vtg.py), ``conner`` (CONNER §4.4's analyses, for the page and scripts/conner_figures.py), ``answers`` (one answer, a renderer per citation
kind), ``presentation`` (how each metric is grouped, ranged and named, and each experiment drawn: read from
results.json), ``legacy`` (the same for files written before results.json said it), ``format`` (escaping and
numbers), ``inputs`` (reading the run folder), ``assets/`` (the stylesheet and script).
"""

from .page import DEFAULT_MAX_SAMPLES, build_report, write_report

__all__ = ["DEFAULT_MAX_SAMPLES", "build_report", "write_report"]
