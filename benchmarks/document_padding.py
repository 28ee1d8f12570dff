"""What padding to a fixed width costs: the encoder's document passes with each text padded to its token count
rounded up to 32 (what the encoder does for documents and queries: a vector is then the same bits in any batch)
against padding each batch to its longest text (written here, the encoder has no such mode), side by side on the
same passages.

    .venv/bin/python benchmarks/document_padding.py [--passages 1000] [--repeats 2]

Passages: the first CaseFacts opinions (../shared/data/stance/casefacts/corpus.jsonl) cut as an index cuts them.
Writes benchmarks/results/document_padding.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from citator.data import write_json_atomic
from citator.models.load import default_encoder_path, load_encoder
from citator.engines.passages import PassageSpec, passage_layout

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "stance" / "casefacts" / "corpus.jsonl"


def encode_to_longest(encoder, texts: list[str], batch_size: int = 32) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Vectors with each batch (of similar lengths) padded to its longest text."""
    import torch.nn.functional as F

    out = np.zeros((len(texts), encoder.dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        batch = encoder.tokenizer([texts[i] for i in idx], truncation=True, padding=True,
                                  max_length=encoder.max_length, return_tensors="pt").to(encoder.device)
        hidden = encoder._forward(batch)
        out[idx] = F.normalize(encoder._pool(hidden, batch["attention_mask"]), p=2, dim=-1).cpu().numpy()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    docs = [json.loads(line) for line in CORPUS.open()]
    passages, _ = passage_layout([d["title"] for d in docs], [d["text"] for d in docs], PassageSpec())
    passages = passages[:args.passages]
    encoder = load_encoder(default_encoder_path())
    encoder.encode_documents(passages[:64])  # first-call costs paid before timing
    texts = [encoder.format_document(t) for t in passages]
    ways = {"fixed width (builds)": lambda: encoder._encode(texts, 32), "batch's longest": lambda: encode_to_longest(encoder, texts)}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    vectors = {}
    for _ in range(args.repeats):
        for name, encode in ways.items():
            began = time.perf_counter()
            vectors[name] = encode()
            seconds[name].append(time.perf_counter() - began)
    widths = encoder._batches(passages, 32)
    padded = sum(len(idx) * width for idx, width in widths)
    lengths = sum(len(ids) for ids in encoder.tokenizer(passages, truncation=True,
                                                          max_length=encoder.max_length)["input_ids"])
    rows = [{"padding": name, "seconds": round(statistics.median(s), 2),
             "passages_per_s": round(len(passages) / statistics.median(s), 1)} for name, s in seconds.items()]
    a, b = vectors.values()
    result = {"passages": len(passages), "tokens": lengths, "fixed_width_tokens": padded, "rows": rows,
              "max_abs_vector_difference": float(np.abs(a - b).max())}
    for row in rows:
        print(f"{row['padding']:22s} {row['seconds']:7.2f} s {row['passages_per_s']:6.1f} passages/s")
    print(f"tokens {lengths}, padded to fixed widths {padded}; vectors differ by at most "
          f"{result['max_abs_vector_difference']:.1e}")
    write_json_atomic(ROOT / "benchmarks" / "results" / "document_padding.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
