"""``models.check_model``: a model name checked as ``load_model`` would build it, without loading anything (what
``vericite run`` checks of the models an evaluation loads late, before it generates)."""

from __future__ import annotations

import pytest

from vericite.errors import ModelUnavailableError, VericiteError
from vericite.models import check_model, provision


def test_names_that_would_build_pass_without_loading(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"not read")  # only its presence is checked: nothing is loaded
    for name in ("fake", "fake:anything", f"llamacpp:{gguf}", "openai:gpt-4o"):
        check_model(name)


def test_unknown_names_and_missing_files_are_refused(tmp_path, monkeypatch):
    with pytest.raises(VericiteError, match="no-such-model"):
        check_model("no-such-model")
    with pytest.raises(ModelUnavailableError, match="GGUF model file not found"):
        check_model(f"llamacpp:{tmp_path / 'gone.gguf'}")
    with pytest.raises(ModelUnavailableError, match="needs a model file"):
        check_model("llamacpp:")
    monkeypatch.setattr(provision.ModelSpec, "is_installed", lambda self: False)
    with pytest.raises(ModelUnavailableError, match="'smollm2-135m' is not installed: run `make models`"):
        check_model("smollm2-135m")
    monkeypatch.setattr(provision, "installed_part_dirs", lambda: None)
    with pytest.raises(ModelUnavailableError, match="is not installed"):
        check_model("qwen2.5-coder-1.5b")
    monkeypatch.setattr(provision, "installed_part_dirs", lambda: [tmp_path])  # parts installed: assembled when loaded
    check_model("qwen2.5-coder-1.5b")
