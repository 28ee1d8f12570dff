# Shared by build.sh and run.sh: find citator's Python without network access and keep all state in the index dir.
# Order: $CITATOR_PYTHON, the project's .venv, then an installed `citator` on PATH.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${CITATOR_PYTHON:-}" ]; then
    CITATOR_PY="$CITATOR_PYTHON"
elif [ -x "$here/.venv/bin/python" ]; then
    CITATOR_PY="$here/.venv/bin/python"
elif command -v citator >/dev/null 2>&1; then
    CITATOR_PY="$(head -1 "$(command -v citator)" | sed 's/^#!//')"
else
    echo "citator is not installed: run 'make demo' or 'make test' first (creates .venv)" >&2
    exit 2
fi
index_dir=""
prev=""
for arg in "$@"; do
    if [ "$prev" = "--index-dir" ]; then index_dir="$arg"; fi
    case "$arg" in --index-dir=*) index_dir="${arg#--index-dir=}";; esac
    prev="$arg"
done
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONDONTWRITEBYTECODE=1
if [ -n "$index_dir" ] && [ "${CITATOR_CREATE_INDEX:-0}" = 1 ]; then
    mkdir -p "$index_dir"
fi
if [ -n "$index_dir" ] && [ -d "$index_dir" ] && [ -w "$index_dir" ]; then
    export HF_HOME="$index_dir/.cache/hf" MPLCONFIGDIR="$index_dir/.cache/mpl" XDG_CACHE_HOME="$index_dir/.cache" CUDA_CACHE_PATH="$index_dir/.cache/nv"
fi
