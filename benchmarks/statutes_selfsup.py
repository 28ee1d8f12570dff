"""Self-supervised tuning of the hybrid arm's query encoder on a statute corpus, read on the dev and fresh sets.

No labels: every section of the corpus gives one pseudo-query, and the query side of MiniLM is fine-tuned to find
that section's opening passage among all the corpus's opening passages (`citator.stance.learn.finetune`: the
passage vectors stay the stock encoder's, so the cached caption and passage vectors are reused unchanged). Two kinds
of pseudo-query:

  * heading: the section's heading ("Persons required to make report"); headings shared by 5 or more sections
    ("Definitions.", "Repealed.") are skipped;
  * sentence: one sentence of the section's text (8 to 40 words, drawn with a fixed seed), so that a question
    worded like the text, not like a heading, learns to reach the section.

Each tuned encoder then asks the hybrid arm's queries (the arm unchanged, only its query vectors differ), and the
pool's coverage and Hit@1/5/10 and RR are compared with the stock encoder's on every suite.

    .venv/bin/python benchmarks/statutes_selfsup.py [--suites nrs dc fresh-nrs fresh-dc] [--epochs 1]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from statute_suites import CORPORA, ROOT, add_suite_arguments, corpus_key, display_path, paths, write_results
from statutes_retrieval import KEYS, _score

KINDS = ("heading", "sentence")
_SENTENCE = re.compile(r"(?<=[.;:])\s+(?=[A-Z(])")


def pseudo_queries(sections, kind: str, seed: int = 13) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    """(text, section index) pairs made from the corpus alone."""
    out: list[tuple[str, int]] = []
    if kind == "heading":
        common = Counter(s.heading.strip().lower() for s in sections)
        for i, s in enumerate(sections):
            heading = s.heading.strip().rstrip(".")
            if heading and s.text.strip() and common[s.heading.strip().lower()] < 5:
                out.append((heading, i))
        return out
    rng = random.Random(seed)
    for i, s in enumerate(sections):
        sentences = [t.strip() for t in _SENTENCE.split(" ".join(s.text.split())) if 8 <= len(t.split()) <= 40]
        if sentences:
            out.append((rng.choice(sentences), i))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_suite_arguments(parser, "statutes_selfsup.json", suites=("nrs", "dc", "fresh-nrs", "fresh-dc"))
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "work" / "statutes-selfsup",
                        help="where the tuned encoders are written (one per corpus and kind; reused when present)")
    args = parser.parse_args()

    from citator.data.statutes import read_sections, read_suite
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path, load_encoder
    from citator.stance.learn.finetune import FinetuneConfig, QueryExample, finetune_query_encoder
    from citator.statutes.hybrid import HybridIndex
    from citator.statutes.keyword import KeywordIndex
    from citator.statutes.pool import POOL_SIZE
    from citator.statutes.vectors import SectionVectors, section_passages

    stock = load_encoder(device="cpu")
    fingerprint = model_fingerprint()
    config = FinetuneConfig(epochs=args.epochs, pair_weight=0.0)
    results: dict[str, object] = {"config": {"epochs": config.epochs, "batch_size": config.batch_size,
                                             "learning_rate": config.learning_rate, "temperature": config.temperature,
                                             "frozen_layers": config.frozen_layers, "seed": config.seed}}
    corpora: dict[str, tuple] = {}
    for key in dict.fromkeys(corpus_key(s) for s in args.suites):
        sections = read_sections(paths(args.data, key)[0])
        vectors = SectionVectors(sections, stock, fingerprint, args.index_dir / key)
        start = time.perf_counter()
        openings = vectors.passages([section_passages(s)[0] for s in sections])
        encoders = {"stock": stock}
        training: dict[str, object] = {"opening_passages_seconds": round(time.perf_counter() - start, 1)}
        for kind in args.kinds:
            pairs = pseudo_queries(sections, kind)
            out_dir = args.work / key / f"{kind}-e{args.epochs}"
            start = time.perf_counter()
            if not (out_dir / "config.json").is_file():
                examples = [QueryExample(text, "all", (i,)) for text, i in pairs]
                stats = finetune_query_encoder(default_encoder_path(), examples, openings, np.arange(len(sections)),
                                               out_dir, config)
            else:
                stats = {"reused": True}
            training[kind] = {"pseudo_queries": len(pairs), "seconds": round(time.perf_counter() - start, 1), **stats}
            encoders[kind] = load_encoder(out_dir, device="cpu")
        corpora[key] = (sections, vectors, encoders)
        results[f"training-{key}"] = training
        print(f"{CORPORA[key]}: {json.dumps(training)}", flush=True)

    print(f"{'suite':<9} {'query encoder':<14} {'n':>3} " + " ".join(f"{k:>8}" for k in KEYS))
    for name in args.suites:
        sections, vectors, encoders = corpora[corpus_key(name)]
        suite_path = paths(args.data, name)[1]
        queries = [q for q in read_suite(suite_path, {s.doc_id for s in sections}) if q.kind == "ranking"]
        keyword = KeywordIndex(sections)
        rows: dict[str, dict[str, float]] = {}
        for label, encoder in encoders.items():
            index = HybridIndex(sections, vectors, encoder, keyword=keyword)
            pools = {q.query_id: [sections[h.index].doc_id for h in index.search(q.text, POOL_SIZE)] for q in queries}
            rows[label] = _score(pools, queries)
            print(f"{name:<9} {label:<14} {rows[label]['queries']:>3} "
                  + " ".join(f"{rows[label][k]:>8.3f}" for k in KEYS), flush=True)
        results[name] = {"suite": display_path(suite_path, args.data), "rows": rows}
    results["command"] = "python benchmarks/statutes_selfsup.py " + " ".join(sys.argv[1:])
    write_results(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
