# Shared by build.sh and run.sh: find citator without network access and keep all state in the index dir.
# Order: $CITATOR_PYTHON, the project's .venv, then an installed `citator` on PATH. Sets CITATOR_CMD, the command
# line that runs citator's CLI.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${CITATOR_PYTHON:-}" ]; then
    CITATOR_CMD=("$CITATOR_PYTHON" -m citator.cli.main)
elif [ -x "$here/.venv/bin/python" ]; then
    CITATOR_CMD=("$here/.venv/bin/python" -m citator.cli.main)
elif command -v citator >/dev/null 2>&1; then
    # The installed entry point itself: its first line may be `#!/usr/bin/env python3` or pip's /bin/sh trampoline
    # (an interpreter path with a space), so it is run, not read.
    CITATOR_CMD=("$(command -v citator)")
else
    if [ -e "$here/.venv/bin/python" ] || [ -L "$here/.venv/bin/python" ]; then
        echo "$here/.venv/bin/python cannot be run by this user ($(id -un)): its base Python must be one every user" \
             "can run; rebuild it with 'make clean demo' (scripts/find_python.sh picks one)" >&2
    else
        echo "citator is not installed: run 'make demo' or 'make test' first (creates .venv)" >&2
    fi
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
# onnxruntime's telemetry (a device id in the user's cache, events it may send): off unless the user set it.
export ORT_DISABLE_TELEMETRY="${ORT_DISABLE_TELEMETRY:-1}"
if [ -n "$index_dir" ] && [ "${CITATOR_CREATE_INDEX:-0}" = 1 ]; then
    mkdir -p "$index_dir"
fi
if [ -n "$index_dir" ] && [ -d "$index_dir" ] && [ -w "$index_dir" ]; then
    export HF_HOME="$index_dir/.cache/hf" MPLCONFIGDIR="$index_dir/.cache/mpl" XDG_CACHE_HOME="$index_dir/.cache" CUDA_CACHE_PATH="$index_dir/.cache/nv"
    # Python's tempfile probes its directory by writing a file there: that too stays in the index dir.
    if mkdir -p "$index_dir/.cache/tmp" 2>/dev/null; then export TMPDIR="$index_dir/.cache/tmp"; fi
fi
