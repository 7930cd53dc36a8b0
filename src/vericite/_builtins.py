"""Built-in registrations. Every entry is lazy ("module:attr") so importing vericite stays cheap."""

from __future__ import annotations

from . import registry as r

# model backends: a factory taking (name, **options) and returning an LLMBackend
r.backends.register("llamacpp", "vericite.models.llamacpp:LlamaCppBackend")
r.backends.register("openai", "vericite.models.openai_compat:OpenAICompatBackend")
r.backends.register("fake", "vericite.models.fake:FakeBackend")

# embedded models: registered name -> ModelSpec (weights provisioned by vericite.models.provision)
r.models.register("qwen2.5-coder-1.5b", "vericite.models.provision:QWEN")
r.models.register("smollm2-135m", "vericite.models.provision:SMOLLM2")

# judges: a factory building a Judge (vericite.judges.load_judge parses "kind:argument" specs)
r.judges.register("nli", "vericite.judges.nli:NLIJudge")
r.judges.register("llm", "vericite.judges.llm:LLMJudge")
r.judges.register("triple", "vericite.judges.triple:TripleJudge")
