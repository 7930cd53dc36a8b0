"""VTG's near-repeat rule and ``--resume``: a folder written before ``repeat_overlap`` existed (its manifest records
none, in its config or its method's part) goes on with the exact rule it began with (1.0), its answers those of a
run made with the exact rule throughout, the local loop's and a pool's alike, ``vericite run``'s levels too; a new
folder goes on with the threshold it recorded; giving another threshold to either is refused in one line. The same
for ``repeat_retries`` and ``short_retries`` (0 for a folder written before them), with ``min_sentences=3``, and
``strip_preamble``, ``strip_source_leads``, ``drop_source_remarks``, ``tidy_citations`` and ``strip_list_markers`` (false)."""

from __future__ import annotations

import functools
import json

import pytest

from tests.support.vtg import PARIS, PARIS_AGAIN, REMARK_MANGLED, leading, remarking, restating, saying
from tests.support.vtg_cli import level_configs, manifest_of, records_of, registered, repeating, samples, write_items
from tests.support.vtg_cli import generate as vtg_generate
from tests.support.vtg_cli import run as run_cli


#: what a vericite before the options did: exact repeats only, no retry
OLD_RULES = ("--method-arg", "repeat_overlap=1.0", "--method-arg", "repeat_retries=0", "--method-arg", "short_retries=0", "--method-arg", "strip_preamble=false",
             "--method-arg", "strip_source_leads=false", "--method-arg", "drop_source_remarks=false", "--method-arg", "tidy_citations=false", "--method-arg", "strip_list_markers=false")  # fmt: skip


@pytest.fixture
def model():
    with registered("vtg-repeats", repeating) as name:
        yield name


generate = functools.partial(vtg_generate, model="vtg-repeats")


def resumed_new(tmp_path, *extra, model):
    """A new folder ``new`` (``extra`` given) written one answer at a time then resumed: its answers."""
    generate(tmp_path, "new", *extra, "--limit", 1, model=model)
    generate(tmp_path, "new", *extra, "--resume", model=model)
    return records_of(tmp_path / "new")


def as_before_the_option(folder, keys=("repeat_overlap", "repeat_retries", "short_retries", "strip_preamble", "strip_source_leads", "drop_source_remarks", "tidy_citations", "strip_list_markers")):
    """The folder as a vericite before ``repeat_overlap`` (and ``repeat_retries``, ``short_retries``,
    ``strip_preamble``, ``strip_source_leads``, ``drop_source_remarks``, ``tidy_citations``, ``strip_list_markers``) wrote it: its manifest without the keys."""
    path = folder / "manifest.json"
    m = json.loads(path.read_text())
    for key in keys:
        m.pop(key)
        m["config"].pop(key, None)
    path.write_text(json.dumps(m), encoding="utf-8")


def test_a_folder_written_before_the_option_resumes_with_the_exact_rule(tmp_path, model):
    generate(tmp_path, "exact", *OLD_RULES)  # the exact rule throughout
    generate(tmp_path, "old", *OLD_RULES, "--limit", 1)  # what the old code wrote ...
    as_before_the_option(tmp_path / "old")  # ... and how it recorded it
    generate(tmp_path, "old", "--limit", 2, "--resume")  # not given: the folder's rule
    generate(tmp_path, "old", "--resume")  # the manifest now records 1.0: still the same run
    assert samples(tmp_path / "old") == samples(tmp_path / "exact")
    assert "The capital of France is Paris [1]." in samples(tmp_path / "old") and "near_repeated_sentence" not in samples(tmp_path / "old")
    manifest = manifest_of(tmp_path / "old")
    assert manifest["repeat_overlap"] == 1.0 and "repeat_overlap" not in manifest["config"]  # the config as given
    r = generate(tmp_path, "old", "--resume", "--method-arg", "repeat_overlap=0.8", code=2)
    assert "repeat_overlap" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_a_new_folder_uses_and_keeps_the_default(tmp_path, model):
    generate(tmp_path, "new", "--limit", 1)
    manifest = manifest_of(tmp_path / "new")
    assert manifest["repeat_overlap"] == 0.8 and "repeat_overlap" not in manifest["config"]
    generate(tmp_path, "new", "--resume")
    records = records_of(tmp_path / "new")
    assert [r["output"] for r in records] == ["Paris is the capital of France [1]."] * 3  # the near repeat skipped, then the end
    assert all(r["vtg"]["problems"]["near_repeated_sentence"] == 1 and r["vtg"]["end"] == "repeated" for r in records)
    r = generate(tmp_path, "new", "--resume", "--method-arg", "repeat_overlap=1.0", code=2)
    assert "repeat_overlap" in r.output and "Traceback" not in r.output


def test_a_pool_resumes_an_old_folder_with_the_exact_rule(tmp_path, model):
    from vericite.runs.config import GenerateConfig
    from vericite.runs.distributed import generate_pooled

    data = write_items(tmp_path)
    args = {"k": 4, "docs_per_query": 1, "trials": 0, "verifier_judge": "fake"}
    exact = GenerateConfig(dataset=str(data), method="vtg", model="vtg-repeats", cache=False, method_args={**args, "repeat_overlap": 1.0, "repeat_retries": 0, "short_retries": 0, "strip_preamble": False, "strip_source_leads": False, "drop_source_remarks": False, "tidy_citations": False, "strip_list_markers": False, "question_quotes": False})
    generate_pooled(exact, tmp_path / "exact", ray=None, workers=2, backend_factory=repeating, progress=False, batch_size=1)
    generate_pooled(exact.model_copy(update={"limit": 1}), tmp_path / "old", ray=None, workers=2, backend_factory=repeating, progress=False, batch_size=1)
    as_before_the_option(tmp_path / "old")
    plain = GenerateConfig(dataset=str(data), method="vtg", model="vtg-repeats", cache=False, method_args=args)
    generate_pooled(plain, tmp_path / "old", ray=None, workers=2, backend_factory=repeating, progress=False, batch_size=1, resume=True)
    assert samples(tmp_path / "old") == samples(tmp_path / "exact")


def test_run_resumes_an_experiments_old_levels_with_the_exact_rule(tmp_path, model):
    given = "repeat_overlap: 1.0, repeat_retries: 0, short_retries: 0, strip_preamble: false, strip_source_leads: false, drop_source_remarks: false, tidy_citations: false, strip_list_markers: false,"
    exact, plain = level_configs(tmp_path, "vtg-repeats", given)
    run = functools.partial(run_cli, tmp_path)
    run(exact, "exact")
    run(exact, "old", "--limit", "1")
    for level in (0, 3):
        as_before_the_option(tmp_path / "old" / f"level-{level}")
    run(plain, "old", "--resume")
    for level in (0, 3):
        assert samples(tmp_path / "old" / f"level-{level}") == samples(tmp_path / "exact" / f"level-{level}")
    assert "The capital of France is Paris" in samples(tmp_path / "old" / "level-0")


def test_giving_the_value_a_folder_ran_with_continues_it(tmp_path, model):
    """--method-arg repeat_overlap=<the folder's own value> continues it as leaving the option out does: 1.0 on a
    folder written before the option, the default 0.8 on one written with it; the config recorded stays the
    folder's (the option not given)."""
    generate(tmp_path, "exact", *OLD_RULES)
    generate(tmp_path, "old", *OLD_RULES, "--limit", 1)
    as_before_the_option(tmp_path / "old")
    generate(tmp_path, "old", "--resume", "--method-arg", "repeat_overlap=1.0")
    assert samples(tmp_path / "old") == samples(tmp_path / "exact")
    assert "repeat_overlap" not in manifest_of(tmp_path / "old")["config"]

    generate(tmp_path, "default", "--limit", 3)
    generate(tmp_path, "new", "--limit", 1)
    generate(tmp_path, "new", "--resume", "--method-arg", "repeat_overlap=0.8")
    assert samples(tmp_path / "new") == samples(tmp_path / "default")
    manifest = manifest_of(tmp_path / "new")
    assert manifest["repeat_overlap"] == 0.8 and "repeat_overlap" not in manifest["config"]


ROME_THEN_BERLIN = ("Rome is the capital of Italy.", "Berlin is the capital of Germany.")


def test_a_folder_written_before_repeat_retries_resumes_without_them(tmp_path):
    """A model that restates Paris on each sentence's first draw and writes the next when drawn again: a new folder
    (``min_sentences=3``) retries and has three sentences; one written before ``repeat_retries`` (its manifest
    records ``repeat_overlap`` 0.8 and no retries) goes on ending after Paris, as it began."""
    backend = lambda: restating([PARIS, *ROME_THEN_BERLIN], PARIS_AGAIN, {"Rome": "title:Rome", "Berlin": "title:Berlin"})  # noqa: E731
    with registered("vtg-restating", backend):
        three = ("--method-arg", "min_sentences=3")
        no_retry = ("--method-arg", "repeat_retries=0", "--method-arg", "short_retries=0")
        generate(tmp_path, "none", *three, *no_retry, model="vtg-restating")  # no retry throughout
        generate(tmp_path, "old", *three, *no_retry, "--limit", 1, model="vtg-restating")
        as_before_the_option(tmp_path / "old", ("repeat_retries", "short_retries"))
        generate(tmp_path, "old", *three, "--resume", model="vtg-restating")
        assert samples(tmp_path / "old") == samples(tmp_path / "none")
        records = records_of(tmp_path / "old")
        assert [r["output"] for r in records] == ["Paris is the capital of France [1]."] * 3 and "short_answer" not in records[0]["vtg"]["problems"]
        assert manifest_of(tmp_path / "old")["repeat_retries"] == 0
        r = generate(tmp_path, "old", *three, "--resume", "--method-arg", "repeat_retries=2", code=2, model="vtg-restating")
        assert "repeat_retries" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1

        records = resumed_new(tmp_path, *three, model="vtg-restating")
        assert all(r["output"].count("[") == 3 and r["vtg"]["problems"]["repeat_retries"] == 2 for r in records)
        assert manifest_of(tmp_path / "new")["repeat_retries"] == 2


ECHO = "The answer so far already answers the question completely. End."


def test_a_folder_written_before_short_retries_resumes_without_them(tmp_path):
    """A model that echoes the prompt on each sentence's first draw and writes the next when drawn again: a new
    folder (``min_sentences=3``) draws the echo again and has three sentences; one written before ``short_retries``
    (its manifest records ``repeat_retries`` and no ``short_retries``) goes on ending after Paris, as it began."""
    backend = lambda: restating([PARIS, *ROME_THEN_BERLIN], ECHO, {"Rome": "title:Rome", "Berlin": "title:Berlin"})  # noqa: E731
    with registered("vtg-echoing", backend):
        three = ("--method-arg", "min_sentences=3")
        generate(tmp_path, "none", *three, "--method-arg", "short_retries=0", model="vtg-echoing")  # no retry throughout
        generate(tmp_path, "old", *three, "--method-arg", "short_retries=0", "--limit", 1, model="vtg-echoing")
        as_before_the_option(tmp_path / "old", ("short_retries",))
        generate(tmp_path, "old", *three, "--resume", model="vtg-echoing")
        assert samples(tmp_path / "old") == samples(tmp_path / "none")
        records = records_of(tmp_path / "old")
        assert [r["output"] for r in records] == ["Paris is the capital of France [1]."] * 3 and "prompt_echo_retries" not in records[0]["vtg"]["problems"]
        assert manifest_of(tmp_path / "old")["short_retries"] == 0
        r = generate(tmp_path, "old", *three, "--resume", "--method-arg", "short_retries=2", code=2, model="vtg-echoing")
        assert "short_retries" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1

        records = resumed_new(tmp_path, *three, model="vtg-echoing")
        assert all(r["output"].count("[") == 3 and r["vtg"]["problems"]["prompt_echo_retries"] == 2 for r in records)
        assert manifest_of(tmp_path / "new")["short_retries"] == 2


def test_a_folder_written_before_strip_preamble_resumes_without_it(tmp_path):
    """A model that opens its sentences with "Based on the provided search results,": a folder written before
    ``strip_preamble`` goes on keeping the phrase, as it began; a new folder cuts it."""
    with registered("vtg-saying", saying):
        generate(tmp_path, "none", "--method-arg", "strip_preamble=false", model="vtg-saying")
        generate(tmp_path, "old", "--method-arg", "strip_preamble=false", "--limit", 1, model="vtg-saying")
        as_before_the_option(tmp_path / "old", ("strip_preamble",))
        generate(tmp_path, "old", "--resume", model="vtg-saying")
        assert samples(tmp_path / "old") == samples(tmp_path / "none")
        records = records_of(tmp_path / "old")
        assert all(r["output"].startswith("Based on the provided search results,") for r in records)
        assert manifest_of(tmp_path / "old")["strip_preamble"] is False
        r = generate(tmp_path, "old", "--resume", "--method-arg", "strip_preamble=true", code=2, model="vtg-saying")
        assert "strip_preamble" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1

        records = resumed_new(tmp_path, model="vtg-saying")
        assert all(r["output"].startswith("Paris is the capital of France") and r["vtg"]["problems"]["preamble_stripped"] == 2 for r in records)
        assert manifest_of(tmp_path / "new")["strip_preamble"] is True


def test_a_folder_written_before_drop_source_remarks_resumes_keeping_them(tmp_path):
    """A model that writes "This information can be found in documents [1], [2], and [3].": a folder written before
    ``drop_source_remarks`` and ``tidy_citations`` goes on keeping it as ALCE's removal leaves it, as it began; a new
    folder drops it."""
    old = ("--method-arg", "drop_source_remarks=false", "--method-arg", "tidy_citations=false")
    with registered("vtg-remarking", remarking):
        generate(tmp_path, "none", *old, model="vtg-remarking")
        generate(tmp_path, "old", *old, "--limit", 1, model="vtg-remarking")
        as_before_the_option(tmp_path / "old", ("drop_source_remarks", "tidy_citations"))
        generate(tmp_path, "old", "--resume", model="vtg-remarking")
        assert samples(tmp_path / "old") == samples(tmp_path / "none")
        records = records_of(tmp_path / "old")
        assert all(REMARK_MANGLED[:-1] in r["output"] for r in records) and len(records) == 3
        manifest = manifest_of(tmp_path / "old")
        assert manifest["drop_source_remarks"] is False and manifest["tidy_citations"] is False
        for key in ("drop_source_remarks", "tidy_citations"):
            r = generate(tmp_path, "old", "--resume", "--method-arg", f"{key}=true", code=2, model="vtg-remarking")
            assert key in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1

        records = resumed_new(tmp_path, model="vtg-remarking")
        assert [r["output"] for r in records] == ["Paris is the capital of France [1]. Rome is the capital of Italy [3]."] * 3
        assert all(r["vtg"]["problems"]["source_remark_dropped"] == 2 for r in records)
        manifest = manifest_of(tmp_path / "new")
        assert manifest["drop_source_remarks"] is True and manifest["tidy_citations"] is True


def test_a_folder_written_before_strip_source_leads_resumes_keeping_them(tmp_path):
    """A model that opens its sentences with "Document [1] mentions that": a folder written before
    ``strip_source_leads`` (its manifest records ``strip_preamble: true``, which never cut such a lead) goes on
    keeping the lead as its markers' removal leaves it, as it began; a new folder cuts it."""
    with registered("vtg-leading", leading):
        generate(tmp_path, "none", "--method-arg", "strip_source_leads=false", model="vtg-leading")
        generate(tmp_path, "old", "--method-arg", "strip_source_leads=false", "--limit", 1, model="vtg-leading")
        as_before_the_option(tmp_path / "old", ("strip_source_leads",))
        assert manifest_of(tmp_path / "old")["strip_preamble"] is True
        generate(tmp_path, "old", "--resume", model="vtg-leading")
        assert samples(tmp_path / "old") == samples(tmp_path / "none")
        records = records_of(tmp_path / "old")
        assert all(r["output"].startswith("Document mentions that Paris") for r in records) and len(records) == 3
        assert manifest_of(tmp_path / "old")["strip_source_leads"] is False
        r = generate(tmp_path, "old", "--resume", "--method-arg", "strip_source_leads=true", code=2, model="vtg-leading")
        assert "strip_source_leads" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1

        records = resumed_new(tmp_path, model="vtg-leading")
        assert [r["output"] for r in records] == ["Paris is the capital of France [1]. Rome is the capital of Italy [3]."] * 3
        assert manifest_of(tmp_path / "new")["strip_source_leads"] is True
