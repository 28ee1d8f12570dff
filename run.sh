#!/usr/bin/env bash
# ./run.sh --index-dir INDEX_DIR --queries QUERIES.jsonl --output RESULTS.jsonl --top-k 10
# Uses the index's search server when it is alive and answers for this index; otherwise searches in-process.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/scripts/env.sh"
CITATOR_SCRIPT=run.sh exec "${CITATOR_CMD[@]}" search "$@"
