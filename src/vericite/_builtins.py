"""Built-in registrations. Every entry is lazy ("module:attr") so importing vericite stays cheap."""

from __future__ import annotations

from . import registry as r

# model backends: a factory taking (name, **options) and returning an LLMBackend
r.backends.register("llamacpp", "vericite.models.llamacpp:LlamaCppBackend")
r.backends.register("openai", "vericite.models.openai_compat:OpenAICompatBackend")
r.backends.register("fake", "vericite.models.fake:FakeBackend")
