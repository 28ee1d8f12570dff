"""`citator train`: learn artifacts (fine-tuned encoder, proposition memory, fusion) from labeled propositions."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from citator.cli.arguments import COUNT, number, whole


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="learn stance-retrieval artifacts from labeled propositions (train/dev only)")
    p.add_argument("--corpus", required=True, type=Path, help="corpus JSONL the propositions are labeled against")
    p.add_argument("--queries", required=True, type=Path, action="append", help="repeatable; `split` other than train is skipped")
    p.add_argument("--ground-truth", required=True, type=Path, action="append", help="one per --queries")
    p.add_argument("--dev-queries", type=Path, action="append", default=[], help="default: the split=dev part of --queries")
    p.add_argument("--dev-ground-truth", type=Path, action="append", default=[], help="one per --dev-queries")
    p.add_argument("--out", required=True, type=Path, help="artifacts directory (e.g. artifacts/)")
    p.add_argument("--model", type=Path, help="base encoder directory (default: the bundled MiniLM)")
    p.add_argument("--base-index", type=Path, help="reuse the passage vectors of an index built from the same corpus")
    # The defaults are FinetuneConfig's, the settings chosen on CaseFacts dev: no flag is needed for the best model.
    # (Written out, not imported: the CLI parses its arguments without importing numpy; a test keeps them equal.)
    p.add_argument("--epochs", type=COUNT, default=3, help="fine-tuning epochs (default 3, chosen on CaseFacts dev)")
    p.add_argument("--batch-size", type=COUNT, default=32, help="fine-tuning batch size (default 32)")
    p.add_argument("--learning-rate", type=number(above=0), default=5e-5,
                   help="fine-tuning learning rate (default 5e-5, chosen on CaseFacts dev)")
    p.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                   help="fine-tuning's forward pass: auto (default) = bf16 on a GPU or a CPU with bf16 units "
                        "(AMX, AVX-512 BF16), else fp32; the manifest records which")
    p.add_argument("--folds", type=whole(2), default=2,
                   help="folds (by proposition) for the ranker's out-of-fold training features (default 2)")
    p.add_argument("--memory-train-only", action="store_true",
                   help="keep dev's propositions out of the shipped memory (by default they join it after selection)")
    p.add_argument("--no-side-by-side", action="store_true",
                   help="fine-tune the encoders one after another in this process (by default, on a CPU with two "
                        "cores or more and no GPU, two single-thread processes fine-tune them side by side once "
                        "there are 100 steps or more in all)")
    p.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    from citator.errors import CitatorError
    from citator.stance.learn.finetune import FinetuneConfig
    from citator.stance.learn.train import TrainingOptions, train

    from citator.data.atomic import output_dir

    output_dir(args.out, make=False)
    if len(args.queries) != len(args.ground_truth) or len(args.dev_queries) != len(args.dev_ground_truth):
        raise CitatorError("give one --ground-truth per --queries (and one --dev-ground-truth per --dev-queries)")
    config = FinetuneConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                            precision=args.precision)
    options = TrainingOptions(args.model, config, base_index=args.base_index,
                              memory_with_dev=not args.memory_train_only, folds=args.folds,
                              side_by_side=False if args.no_side_by_side else None)
    model = train(args.corpus, list(zip(args.queries, args.ground_truth)),
                  list(zip(args.dev_queries, args.dev_ground_truth)), args.out, options)
    print(json.dumps({"fusion": model.fusion, "ranker": model.ranker, "dev_ndcg@10": model.report["dev_ndcg@10"],
                      "timings": model.report["timings"]}, indent=2), file=sys.stderr)
    return 0
