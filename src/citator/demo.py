"""`make demo`: build a stance index over the bundled CaseFacts sample and show what it finds, with NDCG@10."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

from citator.data import read_corpus, read_ground_truth, read_queries
from citator.evaluate import per_query, reward

SAMPLE = Path(__file__).parent / "samples" / "casefacts"
# How long the index build takes, said before it starts: measured by `make demo` on the machine BENCHMARKS.md names
# (2 CPU cores shared with other work, load average 5-9), where it took 150-205 s.
BUILD_TAKES = "about 2-4 minutes on 2 busy CPU cores"


def main(workdir: str = ".demo") -> int:
    from citator.data.metadata import read_side_metadata, short_citation
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.workload import build
    from citator.stance.retrieve.searcher import StanceSearcher

    index_dir = Path(workdir) / "index"
    print(f"citator demo: building a stance index over the bundled CaseFacts sample in {index_dir} ({BUILD_TAKES})",
          flush=True)
    start = time.monotonic()
    # The sample's metadata (citation, decision date, court, url) travels into the index: briefs and the page cite.
    manifest = build(SAMPLE / "corpus.jsonl", index_dir, BuildOptions(metadata=SAMPLE / "metadata.jsonl"), serve=False)
    built = time.monotonic() - start
    queries = read_queries(SAMPLE / "queries.jsonl")
    qrels = read_ground_truth(SAMPLE / "ground_truth.jsonl")
    metadata = read_side_metadata(SAMPLE / "metadata.jsonl").rows
    titles = {d.doc_id: short_citation(d.title, metadata.get(d.doc_id, {})) or d.title
              for d in read_corpus(SAMPLE / "corpus.jsonl")}
    start = time.monotonic()
    results = StanceSearcher(index_dir).search(queries, k=10)
    searched = time.monotonic() - start
    run = {r.query_id: r.doc_ids for r in results}
    ndcg = per_query(qrels, run, ["ndcg@10"])["ndcg@10"]

    print(f"citator demo: {manifest.n_docs} CaseFacts documents ({manifest.n_passages} passages), "
          f"encoder {manifest.source.encoder_id}; index built in {built:.1f} s, {len(queries)} queries searched in {searched:.1f} s\n")
    for stance in ("supported", "refuted", "all"):
        shown = [q for q in queries if q.stance == stance][:3]
        for q in shown:
            print(f"[{stance}] {textwrap.shorten(q.text, 110)}")
            print(f"  NDCG@10 = {ndcg[q.query_id]:.3f}   relevant: {', '.join(sorted(qrels.relevant(q.query_id)))}")
            for rank, doc_id in enumerate(run[q.query_id][:3], 1):
                mark = "*" if doc_id in qrels.relevant(q.query_id) else " "
                print(f"  {rank}.{mark} {doc_id:<18} {textwrap.shorten(titles[doc_id], 80)}")
            print()
    print(f"{'stance':<10} {'queries':>7} {'NDCG@10':>8}")
    for stance in ("supported", "refuted", "all"):
        ids = [q.query_id for q in queries if q.stance == stance]
        print(f"{stance:<10} {len(ids):>7} {sum(ndcg[i] for i in ids) / len(ids):>8.4f}")
    mean = sum(ndcg.values()) / len(ndcg)
    print(f"{'overall':<10} {len(ndcg):>7} {mean:>8.4f}   reward vs B=0.561: {reward(mean):.4f}")
    print("\n(* = relevant. Sample: 300 documents, 70 dev propositions; see src/citator/samples/casefacts/PROVENANCE.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
