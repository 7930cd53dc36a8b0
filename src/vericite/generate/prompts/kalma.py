"""KaLMA's answer prompt (``kalma-answer@1``): its instruction, the one-shot demonstration (vericite's or
BioKaLMA's released prompt files) and the chat messages built from them. Versioned as every prompt is (see
``generate/prompts/__init__.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from ...errors import DataError
from ...knowledge.render import flatten_knowledge
from ...paths import display_path, file_sha256, package_data
from ...types import Message, Triple, normalise_property

# KaLMA's instruction (paper, Table 13), asking for triple citations and [NA], followed by one sentence of
# vericite's: without it the embedded 1.5B model marks [NA] on claims the given information does support.
KALMA_INSTRUCTION = (
    "You answer the question based on your knowledge, with the given information for annotation, "
    "following the given format. Use [NA] for claims that need annotation but is unprovided. "
    "Cite every claim that the given information supports, right after the claim, as [QID, property: value], "
    "copying the property and value exactly as given. Use [NA] only for claims the given information does not contain."
)


#: how a manifest names a demonstration file shipped inside vericite: not its path, which is wherever vericite is
#: installed (a run resumed from another install or checkout is the same run)
PACKAGED = "vericite:"


def packaged_source(recorded: str) -> str:
    """A manifest's ``demonstration`` as this version records it: an absolute path to vericite's own data folder (what
    versions before :data:`PACKAGED` recorded, e.g. ``/old/venv/.../vericite/data/demonstration.json``) becomes
    ``vericite:demonstration.json``; any other source is itself."""
    parts = Path(recorded).parts
    if not recorded.startswith(PACKAGED) and len(parts) >= 3 and parts[-3:-1] == ("vericite", "data"):
        return PACKAGED + parts[-1]
    return recorded


@dataclass(frozen=True)
class Demonstration:
    question: str
    knowledge: tuple[Triple, ...]
    answer: str
    source: str  # where the file is (paths.display_path), or vericite:<name> for vericite's own (PACKAGED)
    sha256: str = ""  # of the file's bytes

    @classmethod
    def from_vericite_file(cls, path: Path) -> "Demonstration":
        d = json.loads(path.read_text(encoding="utf-8"))
        return cls(d["question"], tuple(Triple.from_dict(t) for t in d["knowledge"]), d["answer"], str(path), file_sha256(path))

    @classmethod
    def from_biokalma_prompt(cls, path: Path) -> "Demonstration":
        """BioKaLMA's released prompt files: ``[question, answer, [entity dicts with qid]]``."""
        question, answer, entities = json.loads(path.read_text(encoding="utf-8"))
        triples = []
        for e in entities:
            qid = e.get("qid", "")
            label = e.get("name", "")
            for k, v in e.items():
                if k != "qid" and v not in ("", None):
                    triples.append(Triple(qid, normalise_property(k), str(v), label))
        return cls(question, tuple(triples), answer, str(path), file_sha256(path))

    @classmethod
    def load(cls, path: str | Path | None) -> "Demonstration":
        p = package_data("demonstration.json") if path is None else Path(path)
        if not p.is_file():
            raise DataError(f"demonstration file not found: {p}")
        try:
            raw = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise DataError(f"{p}: not valid JSON ({e.msg}, line {e.lineno})") from None
        try:
            demo = cls.from_biokalma_prompt(p) if isinstance(raw, list) else cls.from_vericite_file(p)
        except (KeyError, ValueError, TypeError) as e:
            raise DataError(f"{p}: not a demonstration (expected vericite's or BioKaLMA's prompt format: {e})") from None
        packaged = p.resolve().parent == package_data(p.name).parent
        return replace(demo, source=PACKAGED + p.name if packaged else display_path(p))


@dataclass(frozen=True)
class KalmaPrompt:
    """KaLMA's one-shot prompt as chat messages: system instruction, the demonstration as a user/assistant
    turn, then the question with its knowledge. The shared prefix (instruction + demonstration) comes first,
    so backends that reuse a prompt prefix evaluate it once per run."""

    demonstration: Demonstration
    instruction: str = KALMA_INSTRUCTION
    name: str = "kalma-answer"
    version: int = 1
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    @staticmethod
    def user_turn(question: str, triples: Sequence[Triple]) -> str:
        return f"Question: Considering the information:\n{flatten_knowledge(triples)}\n{question}\n\nAnswer:"

    def messages(self, question: str, triples: Sequence[Triple]) -> list[Message]:
        demo = self.demonstration
        return [
            {"role": "system", "content": self.instruction},
            {"role": "user", "content": self.user_turn(demo.question, demo.knowledge)},
            {"role": "assistant", "content": demo.answer},
            {"role": "user", "content": self.user_turn(question, triples)},
        ]
