"""What decides a run, composed of parts: the questions (``dataset``, ``phrasing``, ``data_path``, ``limit``),
the method (``method``, its own ``method_args``, ``model``, ``seed``), the loop (``max_failures``), the models'
server and limits (``base_url``, ``threads``, ``cache``, ``timeout``, ``request_retries``), and for
``vericite run`` the evaluation (``judge`` ...) and the experiment (``experiment``, ``levels``).

``method_args`` are the method's own options, validated by the pydantic model its registry factory declares
(``options_model``, lm-eval task-config style), which also gives their defaults. Configs written before methods
were pluggable keep working: a key that is not one of the config's own is an option of its method and goes
into ``method_args`` (``knowledge: given`` is KaLMA's ``method_args: {knowledge: given}``), and a key unknown
to both is refused by the method's model in one line.

The config recorded in a run's manifest and results.json (``record()``) stays flat, as it was before: the
method's options (defaults filled) in place of ``method_args``, and ``method`` only when it is not the default
``kalma``, so run folders written before ``--method`` existed resume, and ``vericite compare`` lines up old and
new results.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .. import registry
from ..errors import VericiteError, validation_message
from ..evaluate.inputs import DEFAULT_TASK
from ..protocols import MethodOptions

DEFAULT_METHOD = "kalma"


def method_options_model(name: str) -> type[BaseModel] | None:
    """The pydantic model of method ``name``'s options, when its factory declares one (an unknown method is an
    UnknownNameError with did-you-mean)."""
    factory = registry.methods.get(name)
    return factory.options_model if isinstance(factory, MethodOptions) else None


def split_flat(data: Mapping[str, Any], own: Iterable[str]) -> dict[str, Any]:
    """``data`` with every key that is not in ``own`` moved into ``method_args``. A key given both flat and in
    ``method_args`` is refused (a ValueError)."""
    own = set(own)
    out = {k: v for k, v in data.items() if k in own}
    extra = {k: v for k, v in data.items() if k not in own}
    if not extra:
        return out
    args = out.get("method_args")
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        return out  # pydantic says what is wrong with method_args
    twice = sorted(set(extra) & set(args))
    if twice:
        raise ValueError(f"{twice[0]} is given twice, at the top level and in method_args")
    out["method_args"] = {**args, **extra}
    return out


def compose(layers: Iterable[Mapping[str, Any]], own: Iterable[str]) -> dict[str, Any]:
    """Layers of settings (defaults < YAML < flags) merged into one: later layers win, key by key, and so do
    their method options (each layer's flat keys are its method options first, see :func:`split_flat`)."""
    own = set(own)
    merged: dict[str, Any] = {}
    for layer in layers:
        flat = split_flat(layer, own)
        args = flat.pop("method_args", None)
        merged.update(flat)
        if isinstance(args, Mapping) and isinstance(merged.get("method_args", {}), Mapping):
            merged["method_args"] = {**merged.get("method_args", {}), **args}
        elif args is not None:
            merged["method_args"] = args
    return merged


class GenerationFields(BaseModel):
    """The fields of a generation run, shared by :class:`GenerateConfig` and :class:`RunConfig`."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = "biokalma"
    phrasing: Literal["specific", "general"] = "specific"
    data_path: str | None = None
    model: str = "qwen2.5-coder-1.5b"
    base_url: str | None = None
    limit: int | None = Field(default=None, ge=1)
    method: str = DEFAULT_METHOD  # a name in registry.methods
    method_args: dict[str, Any] = Field(default_factory=dict)  # the method's own options
    seed: int = 0
    threads: int | None = Field(default=None, ge=1)
    cache: bool = True
    timeout: float | None = Field(default=None, gt=0)  # seconds per request to a model server [300]
    request_retries: int | None = Field(default=None, ge=0)
    # questions whose model call may fail before the run fails: a count ("3") or a share ("10%"). A run in
    # which every call failed fails whatever this says.
    max_failures: str = "0"

    @model_validator(mode="before")
    @classmethod
    def _flat_keys(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        try:
            return split_flat(data, cls.model_fields)
        except ValueError as e:
            raise PydanticCustomError("given_twice", str(e)) from None

    @field_validator("method_args")
    @classmethod
    def _args_are_the_methods(cls, v: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(v) & set(cls.model_fields))
        if clash:
            raise PydanticCustomError("not_a_method_option", f"{clash[0]} is an option of the run, not of its method: set it at the top level")
        return v

    @field_validator("max_failures", mode="before")
    @classmethod
    def _check_max_failures(cls, v: Any) -> str:
        from .loop import allowed_failures

        text = str(v).strip()
        try:
            allowed_failures(text, 1)
        except ValueError:
            raise ValueError(f"max_failures must be a count (e.g. 3) or a percentage (e.g. 10%), not {v!r}") from None
        return text

    def method_options(self) -> dict[str, Any]:
        """``method_args`` validated by the method's options model, with its defaults filled (raises its
        ValidationError); as given when the method declares no model."""
        model = method_options_model(self.method)
        if model is None:
            return dict(self.method_args)
        clash = sorted(set(model.model_fields) & set(type(self).model_fields))
        if clash:
            raise VericiteError(f"method {self.method!r} declares options named like the run's own: {', '.join(clash)}")
        dumped = model(**self.method_args).model_dump()
        for name in getattr(model, "recorded_when_set", ()):  # protocols.MethodOptions: only when set
            if dumped.get(name) is None:
                dumped.pop(name, None)
        return dumped

    def method_notes(self) -> list[str]:
        """The warning lines the method's options model has for ``method_args`` (its classmethod ``notes``,
        ``protocols.MethodOptions``: VTG's k with a store); none when it declares none."""
        model = method_options_model(self.method)
        notes = getattr(model, "notes", None)
        return [str(n) for n in notes(dict(self.method_args))] if callable(notes) else []

    def checked_method_options(self) -> dict[str, Any]:
        """:meth:`method_options`, a bad option said in one line (VericiteError)."""
        try:
            return self.method_options()
        except ValidationError as e:
            raise VericiteError(f"invalid {validation_message(e)}") from None

    def record_defaults(self) -> dict[str, Any]:
        """The defaults of what :meth:`generation_record` holds: the run's own fields' and its method's options'
        (a resumed folder written before an option existed is the same run when the option is at its default)."""
        out = {k: f.get_default(call_default_factory=True) for k, f in GenerationFields.model_fields.items() if not f.is_required() and k not in ("method", "method_args")}
        model = method_options_model(self.method)
        if model is not None:
            out.update((k, f.get_default(call_default_factory=True)) for k, f in model.model_fields.items() if not f.is_required())
        return json.loads(json.dumps(out, default=str))  # as a manifest holds them

    def generation_record(self) -> dict[str, Any]:
        """The generation fields as recorded (module docstring): flat, in field order."""
        out: dict[str, Any] = {}
        for name in GenerationFields.model_fields:
            if name == "method":
                if self.method != DEFAULT_METHOD:
                    out["method"] = self.method
            elif name == "method_args":
                out.update(self.checked_method_options())
            else:
                out[name] = getattr(self, name)
        return out


class GenerateConfig(GenerationFields):
    """Everything that decides what a generation run produces. Defaults < YAML < CLI flags."""

    def record(self) -> dict[str, Any]:
        return self.generation_record()


#: evaluation settings of one task (conner) recorded only when given, so other runs' records stay as they were
OPTIONAL_EVALUATION = ("evidence_index", "lm", "relevance_model", "attribution_judge", "reader")


class RunConfig(GenerationFields):
    """A ``vericite run`` config: its name, a generation (:meth:`generation`), its evaluation
    (:meth:`evaluation`) and the experiment whose levels it runs."""

    name: str = "run"
    description: str = ""
    # the evaluation: EvaluateConfig's fields (every one of them, tests/unit/runs/test_config.py checks)
    judge: str = "triple"
    geval_model: str | None = None
    hypothesis: Literal["property", "entity"] = "property"
    match: Literal["exact", "normalised"] = "exact"
    resamples: int = Field(default=1000, ge=0)
    task: str = DEFAULT_TASK  # a name in registry.tasks: how the answers are read and which metrics score them
    metrics: list[str] | None = None  # compute only these metrics of the task's suite
    evidence_index: str | None = None  # conner: an index folder giving each knowledge sentence its evidence
    lm: str | None = None  # conner: the causal LM of its LM measures (default: an llm3 judge's model)
    relevance_model: str | None = None  # conner: the relevance scorer [ms-marco]
    attribution_judge: str | None = None  # kalma, alce: a four-class judge classifying every (sentence, citation) pair
    reader: str | None = None  # alce short answers: llm:<model> reading each output's final answer for answer_em/f1
    # an experiment: a name in registry.experiments, and its levels (default: the experiment's)
    experiment: str | None = None
    levels: list[int] | None = None

    def generation(self) -> GenerateConfig:
        """The generation of each level (the run's limit is applied to the questions before the levels)."""
        return GenerateConfig(**{k: getattr(self, k) for k in GenerateConfig.model_fields if k != "limit"})

    def evaluation(self) -> Any:
        """The evaluation of each level: an ``EvaluateConfig`` of this config's fields."""
        from ..evaluate import EvaluateConfig

        # the judge only when the config names one, so a task's own default judge applies otherwise (alce: none)
        fields = [k for k in EvaluateConfig.model_fields if k != "judge" or k in self.model_fields_set]
        return EvaluateConfig(**{k: getattr(self, k) for k in fields})

    def record(self) -> dict[str, Any]:
        """Flat, as recorded in results.json: the generation's fields, then the run's own (``task`` only when it
        is not the default, like ``method``, and ``metrics`` only when given, so run folders written before them
        compare as before)."""
        out = self.generation_record()
        out.update(
            (k, getattr(self, k)) for k in type(self).model_fields
            if k not in GenerationFields.model_fields and not (k == "task" and self.task == DEFAULT_TASK)
            and not (k in ("metrics", *OPTIONAL_EVALUATION) and getattr(self, k) is None)
        )  # fmt: skip
        return out


def build_config(kind: type[GenerationFields], base: Mapping[str, Any], overrides: Mapping[str, Any]) -> Any:
    """A config of ``kind``: defaults < ``base`` (a YAML file's mapping) < ``overrides`` (the flags given; None
    is a flag not given), its method's options checked too. Raises pydantic's ValidationError, or a ValueError
    for an option given twice, for the caller to word."""
    merged = compose([base, {k: v for k, v in overrides.items() if v is not None}], kind.model_fields)
    cfg = kind(**merged)
    cfg.method_options()
    return cfg
