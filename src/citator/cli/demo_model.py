"""`citator demo-model`: write a machinery-only Qwen3 (random weights, the real tokenizer) to try the Qwen3 paths."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from citator.cli.arguments import whole


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo-model", help="write a tiny random-weight Qwen3 with the real tokenizer: it runs every "
                                          "Qwen3 path (rerank, the local grader) but knows nothing (machinery only)")
    p.add_argument("--out", required=True, type=Path,
                   help="folder to write (new, empty, or one this command wrote before; make demo uses "
                        ".demo/qwen3-random)")
    p.add_argument("--kind", choices=("causal", "embedding"), default="causal",
                   help="causal (a reranker or grader, default) or embedding (an encoder for build --model)")
    p.add_argument("--seed", type=whole(0, 2**32 - 1), default=0, help="the weights' seed (default 0)")
    p.set_defaults(func=run_demo_model)


def run_demo_model(args: argparse.Namespace) -> int:
    from citator.models.demo_qwen3 import write

    start = time.monotonic()
    out = write(args.out, args.kind, args.seed)
    what = "causal LM" if args.kind == "causal" else "embedding model"
    print(f"wrote {out}: a machinery-only Qwen3 {what} (random weights from seed {args.seed}, the real Qwen3 "
          f"tokenizer), {time.monotonic() - start:.1f} s", file=sys.stderr)
    print("  it runs every Qwen3 path but knows nothing: its scores mean nothing; give a real Qwen3 folder for "
          "real results", file=sys.stderr)
    return 0


def note_machinery_only(model_dir: str | Path | None) -> None:
    """Say, before a command's results, that they come from a machinery-only model (and so mean nothing)."""
    from citator.models.demo_qwen3 import machinery_only

    if model_dir is not None and machinery_only(model_dir) is not None:
        print(f"note: {model_dir} is a machinery-only Qwen3 (random weights): the run shows the machinery; its "
              "scores mean nothing", file=sys.stderr)
