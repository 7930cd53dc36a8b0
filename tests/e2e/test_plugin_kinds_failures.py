"""A plugin of any kind that raises (a bug of the plugin) never reaches the user as a traceback.

Where one item's failure can be counted and the run go on, it is: a plugin method, retriever, graph or embedder
that raises fails that question (``errors.jsonl``, as a model call that could not answer; when all fail, one
line and a non-zero exit); a plugin metric family that raises has its metrics not computed, with the line as the
reason, and the evaluation goes on. Where it cannot (a dataset that cannot load, a task, a pair scorer inside a
built-in family, a factory that cannot build), the command ends with one line naming the plugin, the exception's
class and message, exit 2. Each fake plugin is registered through the registry, as a plugin module would."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.fakes.knowledge import DEMO_FACTS, DictGraph, graph_from
from vericite.fakes.pipeline import FakeDataset, FakeExperiment, FakeMethod, FakeMetric, FakeTask
from vericite.fakes.scoring import FakeEmbedder, FakePairScorer


@pytest.fixture
def plugin():
    """Register ``factory`` as ``name`` in ``reg`` (a plugin's entry), removed after the test."""
    added: list[tuple[registry.Registry, str]] = []

    def add(reg: registry.Registry, name: str, make) -> None:
        reg.register(name, lambda arg, *, ctx, **o: make(), replace=True)
        added.append((reg, name))

    yield add
    for reg, name in added:
        reg.unregister(name)


def invoke(args: list[str]):
    return CliRunner().invoke(cli, args)


def one_line(r, exit_code: int | None = 2) -> str:
    """The command ended with ``exit_code`` (None: any but 0), no traceback and exactly one error line (besides a
    run's summary on stdout); that line."""
    assert (r.exit_code != 0 if exit_code is None else r.exit_code == exit_code), (r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Traceback" not in r.output, r.output
    lines = [line for line in r.output.splitlines() if line.strip().startswith("error:")]
    assert len(lines) == 1, r.output
    return lines[0]


def errors_of(out) -> list[str]:
    return [json.loads(x)["error"] for x in (out / "errors.jsonl").read_text().splitlines()]


def questions(tmp_path, passages: bool = True):
    """Two questions about the fake graph's entities; with ``passages``, carrying their documents (for the
    closed-book method's post-hoc citations)."""
    p = tmp_path / "q.jsonl"
    lines = [{"id": "q1", "question": "Who was the father of Ada Lovelace?", "passages": [{"id": "d1", "title": "Ada", "text": "Ada Lovelace was Byron's daughter."}]},
             {"id": "q2", "question": "Where was Lord Byron born?", "passages": [{"id": "d2", "title": "Byron", "text": "Lord Byron was born in London."}]}]  # fmt: skip
    if not passages:
        lines = [{k: v for k, v in x.items() if k != "passages"} for x in lines]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return p


# --------------------------------------------------------------------------- counted: the run goes on


class FlakyMethod(FakeMethod):
    """A plugin method whose first answer raises."""

    calls = 0

    def answer(self, sample):
        FlakyMethod.calls += 1
        if FlakyMethod.calls == 1:
            raise IndexError("list index out of range")
        return super().answer(sample)


def test_a_plugin_method_that_raises_fails_that_question_and_the_run_goes_on(tmp_path, plugin):
    FlakyMethod.calls = 0
    plugin(registry.methods, "flaky-method", FlakyMethod)
    out = tmp_path / "g"
    r = invoke(["generate", "--method", "flaky-method", "--model", "fake", "--dataset", "demo", "--out", str(out), "-q", "--no-cache", "--max-failures", "50%"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    assert errors_of(out) == ["method 'flaky-method:fake' (plugin) failed: IndexError: list index out of range"]
    assert len((out / "samples.jsonl").read_text().splitlines()) == 4


class BrokenRetriever:
    id = "broken@1"

    def retrieve(self, question):
        raise ConnectionResetError(f"lost the index while asking {question[:5]!r}")


def test_a_plugin_retriever_that_raises_fails_each_question_and_the_run_ends_in_one_line(tmp_path, plugin):
    plugin(registry.retrievers, "broken-retriever", BrokenRetriever)
    out = tmp_path / "g"
    r = invoke(["generate", "--method", "vanilla", "--model", "fake", "--dataset", "demo", "--index", str(tmp_path / "idx"), "--retriever", "broken-retriever",
                "--out", str(out), "-q", "--no-cache"])  # fmt: skip
    line = one_line(r, None)
    assert f"retriever 'broken-retriever:{tmp_path / 'idx'}' (plugin) failed: ConnectionResetError: lost the index while asking" in line
    assert "(the retriever failed on 3 questions in a row; finished samples are kept, rerun with --resume)" in line and "calls failed" not in line, line
    errors = errors_of(out)
    assert errors and all(e.startswith(f"retriever 'broken-retriever:{tmp_path / 'idx'}' (plugin) failed: ConnectionResetError") for e in errors)


class RetrieverFailsOnce(FakeMethod):
    """A plugin method whose retrieval fails for its first question (the PluginError its retriever's guard makes)."""

    calls = 0

    def answer(self, sample):
        RetrieverFailsOnce.calls += 1
        if RetrieverFailsOnce.calls == 1:
            from vericite.errors import PluginError

            raise PluginError("retriever 'flaky:idx' (plugin) failed: ConnectionResetError: gone", kind="retriever")
        return super().answer(sample)


def test_a_run_left_incomplete_by_a_plugin_retriever_says_so_by_its_name(tmp_path, plugin):
    RetrieverFailsOnce.calls = 0
    plugin(registry.methods, "retriever-fails-once", RetrieverFailsOnce)
    r = invoke(["generate", "--method", "retriever-fails-once", "--model", "fake", "--dataset", "demo", "--out", str(tmp_path / "g"), "-q", "--no-cache"])
    line = one_line(r, 1)
    assert line.startswith("error: run incomplete: the retriever failed for 1 of 5 questions (--max-failures 0); last error: retriever 'flaky:idx'"), line
    assert "model call" not in line


class CloseFailingMethod(FakeMethod):
    """A plugin method that answers every question and whose ``close`` raises."""

    def close(self) -> None:
        raise OSError("socket already closed")


def test_a_plugin_method_whose_close_raises_after_a_complete_run_is_a_warning_and_exit_0(tmp_path, plugin):
    plugin(registry.methods, "close-failing", CloseFailingMethod)
    out = tmp_path / "g"
    r = invoke(["generate", "--method", "close-failing", "--model", "fake", "--dataset", "demo", "--out", str(out), "-q", "--no-cache"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, (r.output, r.exception)
    warned = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert warned == ["warning: method 'close-failing:fake' (plugin) failed: OSError: socket already closed (on close, after the run;"
                      " its answers are written)"], r.stderr  # fmt: skip
    assert "error:" not in r.output
    assert len((out / "samples.jsonl").read_text().splitlines()) == 5 and not (out / "errors.jsonl").exists()
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"


class CloseFailingFlakyMethod(CloseFailingMethod):
    """A plugin method whose answers all raise and whose ``close`` raises too: the run's own error is the line."""

    def answer(self, sample):
        raise IndexError("list index out of range")


def test_a_plugin_close_that_raises_does_not_hide_the_error_the_run_ends_with(tmp_path, plugin):
    plugin(registry.methods, "close-failing-flaky", CloseFailingFlakyMethod)
    r = invoke(["generate", "--method", "close-failing-flaky", "--model", "fake", "--dataset", "demo", "--out", str(tmp_path / "g"), "-q", "--no-cache"])
    line = one_line(r, None)
    assert "IndexError: list index out of range" in line and "(the method failed on 3 questions in a row;" in line, line
    assert "warning: method 'close-failing-flaky:fake' (plugin) failed: OSError: socket already closed (on close" in r.stderr


class BrokenGraph(DictGraph):
    """A plugin graph (with the fake retriever's entity labels) whose one-hop lookup raises."""

    def __init__(self) -> None:
        demo = graph_from(DEMO_FACTS)
        super().__init__(demo.triples, demo.labels)

    def one_hop(self, entity_id):
        raise RuntimeError(f"store closed under {entity_id}")


def test_a_plugin_graph_that_raises_fails_the_questions_that_read_it(tmp_path, plugin):
    plugin(registry.graphs, "broken-graph", BrokenGraph)
    out = tmp_path / "g"
    r = invoke(["generate", "--method", "vanilla", "--model", "fake", "--dataset", str(questions(tmp_path, passages=False)), "--index", str(tmp_path / "idx"),
                "--retriever", "fake:broken-graph",
                "--out", str(out), "-q", "--no-cache"])  # fmt: skip
    line = one_line(r, None)
    assert "graph 'broken-graph' (plugin) failed: RuntimeError: store closed under Q" in line
    assert errors_of(out) == ["graph 'broken-graph' (plugin) failed: RuntimeError: store closed under Q1", "graph 'broken-graph' (plugin) failed: RuntimeError: store closed under Q2"]


class BrokenEmbedder(FakeEmbedder):
    def embed(self, texts):
        raise MemoryError("cannot allocate the batch")


def test_a_plugin_embedder_that_raises_fails_each_question_in_one_line(tmp_path, plugin):
    plugin(registry.embedders, "broken-embedder", BrokenEmbedder)
    out = tmp_path / "g"
    r = invoke(["generate", "--method", "closedbook", "--model", "fake", "--dataset", str(questions(tmp_path)), "--method-arg", "posthoc=embedder:broken-embedder",
                "--out", str(out), "-q", "--no-cache"])  # fmt: skip
    line = one_line(r, None)
    assert "embedder 'broken-embedder' (plugin) failed: MemoryError: cannot allocate the batch" in line
    assert errors_of(out) == ["embedder 'broken-embedder' (plugin) failed: MemoryError: cannot allocate the batch"] * 2


class BrokenMetric(FakeMetric):
    def compute(self, samples, answers):
        return {"fake_cited_share": 1 / 0}


class TaskWithPluginMetric(FakeTask):
    metrics = ("broken-metric",)

    def suite(self, settings, *, judge, ctx):
        return [registry.create("metrics", "broken-metric", ctx)]


def kalma_lines(tmp_path):
    knowledge = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]
    rec = {"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome].", "knowledge": knowledge}
    p = tmp_path / "in.jsonl"
    p.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return p


def test_a_plugin_metric_that_raises_is_not_computed_with_the_reason_and_the_evaluation_goes_on(tmp_path, plugin):
    plugin(registry.metrics, "broken-metric", BrokenMetric)
    plugin(registry.tasks, "with-broken-metric", TaskWithPluginMetric)
    r = invoke(["evaluate", "--task", "with-broken-metric", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    m = res["metrics"]["fake_cited_share"]
    assert m["value"] is None and m["reason"] == "metric 'broken-metric' (plugin) failed: ZeroDivisionError: division by zero"
    assert "fake" not in res["metric_versions"] and res["counts"]["sentences"] == 1


# --------------------------------------------------------------------------- cannot go on: one line, exit 2


class BrokenDataset(FakeDataset):
    name = "broken"

    def load(self, **options):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")


def test_a_plugin_dataset_that_cannot_load_ends_generate_in_one_line(tmp_path, plugin):
    plugin(registry.datasets, "broken-dataset", BrokenDataset)
    r = invoke(["generate", "--method", "fake", "--model", "fake", "--dataset", "broken-dataset", "--out", str(tmp_path / "g"), "-q", "--no-cache"])
    line = one_line(r)
    assert "dataset 'broken-dataset' (plugin) failed: UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte" in line


def test_a_plugin_factory_that_raises_ends_the_command_in_one_line(tmp_path, plugin):
    def cannot_open():
        raise PermissionError(13, "Permission denied", "/srv/graph")

    plugin(registry.datasets, "unopenable", cannot_open)
    r = invoke(["generate", "--method", "fake", "--model", "fake", "--dataset", "unopenable", "--out", str(tmp_path / "g"), "-q", "--no-cache"])
    assert "dataset 'unopenable' (plugin) cannot be built: PermissionError: [Errno 13] Permission denied: '/srv/graph'" in one_line(r)


class BrokenScorer(FakePairScorer):
    def score(self, pairs):
        raise TypeError("score() got an unexpected keyword argument 'batch'")


def test_a_plugin_scorer_that_raises_in_a_builtin_family_ends_evaluate_in_one_line(tmp_path, plugin):
    # a model of a built-in family (as a judge is): its failure is the evaluation's, as a judge's server failing
    plugin(registry.scorers, "broken-scorer", BrokenScorer)
    p = tmp_path / "k.jsonl"
    p.write_text(json.dumps({"id": "a", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare.", "answer": "Shakespeare"}) + "\n", encoding="utf-8")
    r = invoke(["evaluate", "--task", "conner", "-i", str(p), "-o", str(tmp_path / "ev"), "--judge", "fake-3way", "--lm", "fake", "--relevance-model", "broken-scorer", "-q"])
    assert "pair scorer 'broken-scorer' (plugin) failed: TypeError: score() got an unexpected keyword argument 'batch'" in one_line(r)


class TaskThatCannotCount(FakeTask):
    def counts(self, answers):
        raise KeyError("sentences")


def test_a_plugin_task_that_raises_ends_evaluate_in_one_line(tmp_path, plugin):
    plugin(registry.tasks, "cannot-count", TaskThatCannotCount)
    r = invoke(["evaluate", "--task", "cannot-count", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert "task 'cannot-count' (plugin) failed: KeyError: 'sentences'" in one_line(r)


class BrokenStatistics(FakeMetric):
    """A plugin family whose results compute, but whose statistics cannot be rebuilt from samples.jsonl."""

    @staticmethod
    def statistics_from_records(records):
        raise NotImplementedError("paired statistics are not written yet")


class TaskWithBrokenStatistics(FakeTask):
    metrics = ("broken-statistics",)

    def suite(self, settings, *, judge, ctx):
        return [registry.create("metrics", "broken-statistics", ctx)]


def test_compare_with_a_plugin_family_that_raises_shows_its_metrics_not_compared_with_the_reason(tmp_path, plugin):
    plugin(registry.metrics, "broken-statistics", BrokenStatistics)
    registry.metrics.get("broken-statistics").family = BrokenStatistics  # compare reads the family's class (FamilyFactory)
    plugin(registry.tasks, "with-broken-statistics", TaskWithBrokenStatistics)
    for run in ("a", "b"):
        r = invoke(["evaluate", "--task", "with-broken-statistics", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / run), "-q"])
        assert r.exit_code == 0, r.output
    r = invoke(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    m = json.loads(r.output)["metrics"]["fake_cited_share"]
    assert m["diff"] is None and m["reason"] == "not compared: metric 'broken-statistics' (plugin) failed: NotImplementedError: paired statistics are not written yet"
    own = [json.loads((tmp_path / run / "results.json").read_text())["metrics"]["fake_cited_share"]["value"] for run in ("a", "b")]
    assert None not in own and [m["a"], m["b"]] == own and m["ci"] is None  # each run's own value, no difference
    r = invoke(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp")])
    assert r.exit_code == 0 and invoke(["report", str(tmp_path / "cmp")]).exit_code == 0, r.output
    page = (tmp_path / "cmp" / "report.html").read_text()
    row = page[page.index('<tr class="metric not-computed" data-metric="fake_cited_share">') :].split("</tr>")[0]
    assert f'<td>fake_cited_share</td><td class="num">{own[0]:.3f}</td><td class="num">{own[1]:.3f}</td><td class="num">—</td>' in row, row


class BrokenExperiment(FakeExperiment):
    name = "broken-experiment"

    def samples_at(self, samples, level, seed=0, *, levels=None):
        raise AssertionError(f"level {level} is not a number")


def test_run_with_a_plugin_experiment_that_raises_ends_in_one_line(tmp_path, plugin):
    plugin(registry.experiments, "broken-experiment", BrokenExperiment)
    cfg = tmp_path / "broken.yaml"
    cfg.write_text(f"name: t\ndataset: {kalma_lines(tmp_path)}\nmodel: fake\nexperiment: broken-experiment\nlevels: [0, 1]\nresamples: 10\n")
    r = invoke(["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    assert "experiment 'broken-experiment' (plugin) failed: AssertionError: level 0 is not a number" in one_line(r)


class BrokenFormat:
    id = "broken-format@1"

    def parse(self, raw, knowledge=None):
        raise RecursionError("maximum recursion depth exceeded")


class TaskWithPluginFormat(FakeTask):
    citation_format = "broken-format"


def test_evaluate_with_a_plugin_citation_format_that_raises_ends_in_one_line(tmp_path, plugin):
    plugin(registry.formats, "broken-format", BrokenFormat)
    plugin(registry.tasks, "with-broken-format", TaskWithPluginFormat)
    r = invoke(["evaluate", "--task", "with-broken-format", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert "citation format 'broken-format' (plugin) failed: RecursionError: maximum recursion depth exceeded" in one_line(r)


class JudgedBrokenMetric(FakeMetric):
    """A plugin family with a judge (scored answer by answer into evaluate's checkpoint) whose judged part fails."""

    def __init__(self) -> None:
        from vericite.fakes.judges import KeywordJudge

        self.judge = KeywordJudge()

    def judging_part(self):
        raise ValueError("no judged part")

    def compute(self, samples, answers):
        raise ValueError("cannot score")


class TaskWithJudgedBrokenMetric(FakeTask):
    metrics = ("judged-broken",)

    def suite(self, settings, *, judge, ctx):
        return [registry.create("metrics", "judged-broken", ctx)]


class NewPartBrokenMetric(JudgedBrokenMetric):
    """Its judged part is a new object (not built by the registry) whose computation fails."""

    def judging_part(self):
        return BrokenMetric()


@pytest.mark.parametrize("family", [JudgedBrokenMetric, NewPartBrokenMetric])
def test_a_plugin_family_with_a_judge_that_fails_is_not_computed_and_the_evaluation_goes_on(tmp_path, plugin, family):
    plugin(registry.metrics, "judged-broken", family)
    plugin(registry.tasks, "with-judged-broken", TaskWithJudgedBrokenMetric)
    r = invoke(["evaluate", "--task", "with-judged-broken", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert r.exit_code == 0 and r.exception is None, r.output
    m = json.loads((tmp_path / "ev" / "results.json").read_text())["metrics"]["fake_cited_share"]
    assert m["value"] is None and m["reason"] == "metric 'judged-broken' (plugin) failed: ValueError: cannot score"


INSTALLED = '''
from vericite.fakes.pipeline import FakeDataset


class Broken(FakeDataset):
    def load(self, **options):
        return [None][1]


def from_spec(arg, *, ctx, **options):
    return Broken()
'''


def test_an_installed_plugin_dataset_that_raises_is_one_stderr_line(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    site = tmp_path / "site"
    info = site / "vericite_baddata-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vericite-baddata\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[vericite.plugins]\ndatasets.baddata = vericite_baddata:from_spec\n", encoding="utf-8")
    (site / "vericite_baddata.py").write_text(INSTALLED, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(root / "src"), str(root)])}
    p = subprocess.run([sys.executable, "-m", "vericite", "generate", "--method", "fake", "--model", "fake", "--dataset", "baddata", "--out", str(tmp_path / "g"), "-q",
                        "--no-cache"], env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout, p.stderr
    assert p.stderr.splitlines() == ["error: dataset 'baddata' (plugin vericite-baddata) failed: IndexError: list index out of range"], p.stderr


def test_docs_index_with_a_plugin_embedder_that_raises_ends_in_one_line(tmp_path, plugin):
    plugin(registry.embedders, "broken-embedder", BrokenEmbedder)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Hamlet", "text": "Hamlet is a play by Shakespeare."}) + "\n", encoding="utf-8")
    r = invoke(["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "--retriever", "dense", "--embedder", "broken-embedder", "-q"])
    assert "embedder 'broken-embedder' (plugin) failed: MemoryError: cannot allocate the batch" in one_line(r)
