#!/usr/bin/env bash
# ./build.sh --corpus CORPUS.jsonl --index-dir INDEX_DIR [--model PATH]
# Builds the index into INDEX_DIR (the only place written) and starts its search server, detached.
set -euo pipefail
CITATOR_CREATE_INDEX=1 source "$(dirname "${BASH_SOURCE[0]}")/scripts/env.sh"
# Trained artifacts: --artifacts, else $CITATOR_ARTIFACTS, else artifacts/ beside this script if it holds a manifest.
if [ -z "${CITATOR_ARTIFACTS+set}" ] && [ -f "$here/artifacts/manifest.json" ]; then
    export CITATOR_ARTIFACTS="$here/artifacts"
fi
CITATOR_SCRIPT=build.sh exec "${CITATOR_CMD[@]}" build "$@"
