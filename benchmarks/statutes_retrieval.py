"""Statute pools by retrieval arm: the keyword arm, the hybrid arm and the hybrid arm's parts, on the dev suites.

For each suite (the dev suites, and the fresh hand-written sets that confirm on new questions what was chosen on
dev: statute_suites.py), the ranking queries' pool of 30 under each retrieval: target coverage of the pool and Hit@1/5/10
and RR of the pool's own order (no reranker). Each ablation drops or changes one part of the hybrid arm, so what
each part adds is measured on the same queries. MiniLM vectors are cached under --index-dir (built once).

    .venv/bin/python benchmarks/statutes_retrieval.py [--data ../shared/data/statutes] [--suites nrs dc fresh-nrs fresh-dc fresh2-nrs fresh2-dc fresh3-nrs fresh3-dc]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace

from statute_suites import add_suite_arguments, corpus_key, display_path, paths, write_results

KEYS = ("coverage", "hit@1", "hit@5", "hit@10", "rr")


def _variants():  # type: ignore[no-untyped-def]
    from citator.statutes.hybrid import DEFAULT

    w = dict(DEFAULT.weights)
    return {
        "hybrid (declared)": DEFAULT,
        "- structure (no neighbours, citations, definitions)": replace(DEFAULT, seeds=0),
        "- structure signal (reached sections get passages only)": replace(DEFAULT, weights={**w, "structure": 0.0}),
        "structure signal weight 0.5": replace(DEFAULT, weights={**w, "structure": 0.5}),
        "structure signal weight 1": replace(DEFAULT, weights={**w, "structure": 1.0}),
        "- definitions": replace(DEFAULT, definitions=False),
        "- cross-references": replace(DEFAULT, crossrefs=False),
        "+ sections citing a seed (5 per seed)": replace(DEFAULT, cited_by=5),
        "+ passage windows 2 (best of the first two)": replace(DEFAULT, windows=2),
        "- dense_passage": replace(DEFAULT, weights={**w, "dense_passage": 0.0}),
        "- dense_caption": replace(DEFAULT, weights={**w, "dense_caption": 0.0}),
    }


def _score(pools, suite) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from citator.statutes.metrics import score_order

    scores = []
    for q in suite:
        if q.kind != "ranking":
            continue
        ids = pools[q.query_id]
        scores.append(score_order(q.query_id, q.split, q.family, q.kind, ids, q.nominated, ids))
    return {k: round(sum(s.get(k) for s in scores) / len(scores), 3) for k in KEYS} | {"queries": len(scores)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_suite_arguments(parser, "statutes_retrieval.json")
    args = parser.parse_args()

    from citator.statutes.hybrid import HybridIndex
    from citator.statutes.keyword import KeywordIndex
    from citator.statutes.pool import POOL_SIZE
    from citator.statutes.vectors import SectionVectors
    from citator.data.statutes import read_sections, read_suite
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import load_encoder

    encoder = load_encoder(device="cpu")
    fingerprint = model_fingerprint()
    results: dict[str, object] = {}
    print(f"{'suite':<9} {'retrieval':<58} {'n':>3} " + " ".join(f"{k:>8}" for k in KEYS))
    for name in args.suites:
        corpus, suite_path = paths(args.data, name)
        sections = read_sections(corpus)
        suite = read_suite(suite_path, {s.doc_id for s in sections})
        queries = [q for q in suite if q.kind == "ranking"]
        start = time.perf_counter()
        keyword = KeywordIndex(sections)
        keyword_s = time.perf_counter() - start
        start = time.perf_counter()
        vectors = SectionVectors(sections, encoder, fingerprint, args.index_dir / corpus_key(name))
        vectors_s = time.perf_counter() - start
        rows: dict[str, dict[str, float]] = {}
        seconds: dict[str, float] = {}
        kw = {q.query_id: [sections[h.index].doc_id for h in keyword.search(q.text, POOL_SIZE)] for q in queries}
        rows["keyword"] = _score(kw, queries)
        for label, settings in _variants().items():
            index = HybridIndex(sections, vectors, encoder, settings, keyword=keyword)
            start = time.perf_counter()
            pools = {q.query_id: [sections[h.index].doc_id for h in index.search(q.text, POOL_SIZE)] for q in queries}
            seconds[label] = round(time.perf_counter() - start, 1)
            rows[label] = _score(pools, queries)
        for label, row in rows.items():
            print(f"{name:<9} {label:<58} {row['queries']:>3} " + " ".join(f"{row[k]:>8.3f}" for k in KEYS))
        results[name] = {"suite": display_path(suite_path, args.data), "rows": rows,
                         "keyword_index_seconds": round(keyword_s, 1),
                         f"caption_vectors_{vectors.source}_seconds": round(vectors_s, 1),
                         "search_seconds_incl_new_passage_encoding": seconds}
    results["command"] = "python benchmarks/statutes_retrieval.py " + " ".join(sys.argv[1:])
    write_results(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
