"""Probe, not a shipped part: does "the refuting case resembles the supported case" find refuting cases?

An overruled proposition's refuting case decides the same legal question as its supported case, so it may sit
near the supported case in the corpus even when it sits far from the proposition's text. On train's overruled
pairs (TF-IDF over each case's title and text, cosine), the refuting case is among the 10 nearest documents of the
true supported case for about a third of them, against about an eighth for the proposition's own text (printed first).

For a text asked with both stances, the supported query's top documents stand in for the supported case: each
document's *neighbour score* is its similarity to them, weighted by a softmax of the supported query's fused
scores (temperature `TEMP`, the top `TOP` documents; a document's similarity to itself is not counted). The
refuted query's fused scores move by `lam` times the neighbour score (z-scored over the corpus), then the shipped
contrast and slots act as before. Measured on CaseFacts dev's 55 both-stance propositions with train's memory (as
in contrast_probes.py, whose index this reuses), with dev's rule: mean strict NDCG@10.

    .venv/bin/python benchmarks/experiments/neighbour_probes.py

Needs `make artifacts`; reads train and dev only. Output in benchmarks/results/neighbour_probes.log.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contrast_probes import DATA, dev_probe_setup  # noqa: E402

from citator.evaluate.stance_discrimination import paired_queries, stance_discrimination  # noqa: E402
from citator.learn import train as T  # noqa: E402
from citator.retrieve import contrast  # noqa: E402
from citator.retrieve.fusion import top_k  # noqa: E402

LAMS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
TOPS = (1, 3, 10)
TEMPS = (0.05, 0.2)


def tfidf(doc_ids: list[str]) -> tuple[TfidfVectorizer, Any]:
    """TF-IDF over each document's title and text (in index order): the vectorizer and the document rows."""
    corpus = {}
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["doc_id"]] = d.get("title", "") + " " + d["text"]
    vec = TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2)
    return vec, vec.fit_transform([corpus[i] for i in doc_ids])


def doc_similarity(x: Any) -> np.ndarray:
    """Cosine between documents (TF-IDF rows are unit length); a document's similarity to itself is 0."""
    sim = (x @ x.T).toarray().astype(np.float32)
    np.fill_diagonal(sim, 0.0)
    return sim


def neighbour_scores(fused_sup: np.ndarray, sim: np.ndarray, top: int, temp: float) -> np.ndarray:
    order = np.argsort(-fused_sup, kind="stable")[:top]
    w = np.exp((fused_sup[order] - fused_sup[order[0]]) / temp)
    nb = (w[:, None] * sim[order]).sum(axis=0) / w.sum()
    return (nb - nb.mean()) / (nb.std() + 1e-9)


def train_pairs_nearness(doc_ids: list[str], vec: TfidfVectorizer, x: Any, sim: np.ndarray) -> None:
    """On train's overruled pairs: the refuting case's place among the documents nearest the true supported case,
    and among those nearest the claim's own text (the same TF-IDF)."""
    train_q, train_qrels = T.load_labeled([(DATA / "queries_overruled.jsonl", DATA / "ground_truth_overruled.jsonl")],
                                          "train")
    pos = {d: i for i, d in enumerate(doc_ids)}
    by_doc, by_claim = [], []
    for sup_q, ref_q in paired_queries(train_q):
        sup = [pos[d] for d in train_qrels.relevant(sup_q.query_id) - train_qrels.relevant(ref_q.query_id) if d in pos]
        ref = [pos[d] for d in train_qrels.relevant(ref_q.query_id) - train_qrels.relevant(sup_q.query_id) if d in pos]
        if not sup or not ref:
            continue
        claim = (x @ vec.transform([ref_q.text]).T).toarray().ravel()
        for scores, out, skip in ((sim[sup[0]], by_doc, set(sup)), (claim, by_claim, set(sup))):
            order = [int(d) for d in np.argsort(-scores, kind="stable") if int(d) not in skip]
            place = {d: k for k, d in enumerate(order)}
            out.append(min(place[r] for r in ref))
    for name, at in (("the true supported case", by_doc), ("the claim's text", by_claim)):
        at_ = np.array(at)
        print(f"train ({len(at_)} pairs): refuting case among the nearest documents of {name}: top 10 "
              f"{np.mean(at_ < 10):.3f}, top 100 {np.mean(at_ < 100):.3f} (median place {np.median(at_) + 1:g})")


def main() -> None:
    searcher, shipped, slots, dev_q, dev_qrels = dev_probe_setup()
    pairs = paired_queries(dev_q)
    both = [q for pair in pairs for q in pair]
    encoded = searcher.encode(both)
    fused = searcher.fuse(searcher.signal_matrices(both, searcher.needed_signals(), encoded), both, encoded=encoded)
    fused = np.asarray(fused, dtype=np.float64)
    vec, x = tfidf(searcher.doc_ids)
    sim = doc_similarity(x)
    refuters = contrast.known_refuters(searcher.citations)
    doc_pos = {d: i for i, d in enumerate(searcher.doc_ids)}
    train_pairs_nearness(searcher.doc_ids, vec, x, sim)

    # How near the refuting case is to the supported query's top document, and to the true supported case.
    near_true, near_top1 = [], []
    for i, pair in enumerate(pairs):
        sup = dev_qrels.relevant(pair[0].query_id) - dev_qrels.relevant(pair[1].query_id)
        ref = dev_qrels.relevant(pair[1].query_id) - dev_qrels.relevant(pair[0].query_id)
        s_idx = [doc_pos[d] for d in sup if d in doc_pos]
        r_idx = [doc_pos[d] for d in ref if d in doc_pos]
        top1 = int(np.argmax(fused[2 * i]))
        for src, out in ((s_idx[0], near_true), (top1, near_top1)):
            order = np.argsort(-sim[src], kind="stable")
            place = {int(d): k for k, d in enumerate(order)}
            out.append(min(place[r] for r in r_idx))
    for name, at in (("true supported case", near_true), ("supported query's first document", near_top1)):
        at_ = np.array(at)
        print(f"refuting case among the nearest documents of the {name}: top 10 {np.mean(at_ < 10):.3f}, "
              f"top 100 {np.mean(at_ < 100):.3f} (median place {np.median(at_) + 1:g})")
    print(f"supported query's first document is its own case for "
          f"{np.mean([searcher.doc_ids[int(np.argmax(fused[2 * i]))] in dev_qrels.relevant(p[0].query_id) for i, p in enumerate(pairs)]):.3f}")

    def measure(moved_fused: np.ndarray, weight: float, m: int) -> tuple[float, float, dict]:
        idx, scores = top_k(moved_fused, contrast.DEPTH)
        idx, scores = contrast.contrast_top(idx, scores, both, weight)
        if m:
            rows = contrast.refuted_rows(both)
            best = dict(zip(rows, contrast.best_refuters(moved_fused[rows], refuters, m)))
            idx, _ = contrast.refuter_slots(idx, scores, both, m, refuters, best)
        run = {q.query_id: [searcher.doc_ids[j] for j in row[:10]] for q, row in zip(both, idx.tolist())}
        found = stance_discrimination(both, dev_qrels, run)
        return float(np.mean(list(found.strict_ndcg.values()))), found.outranks_rate, found.strict_ndcg

    print(f"\nstrict NDCG@10 mean / outranks on dev's {len(pairs)} pairs (shipped contrast {shipped:g}, slots {slots})")
    results = []
    for top in TOPS:
        for temp in TEMPS:
            nbs = {i: neighbour_scores(fused[2 * i], sim, top, temp) for i in range(len(pairs))}
            for lam in LAMS:
                moved = fused.copy()
                # Candidates' fused scores lie in (1, 2) (sigmoid + 1); the rest at most -1: the move keeps the scale
                # of the candidates and lifts non-candidates only by their neighbour score.
                for i in range(len(pairs)):
                    moved[2 * i + 1] = fused[2 * i + 1] + lam * nbs[i]
                for weight, m in ((0.0, 0), (shipped, 0), (shipped, slots)):
                    mean, rate, by = measure(moved, weight, m)
                    results.append((top, temp, lam, weight, m, mean, rate))
                    print(f"top {top:2d} temp {temp:<4g} lam {lam:<4g} weight {weight:<3g} slots {m:2d}: "
                          f"strict sup {by['supported']:.4f} ref {by['refuted']:.4f} mean {mean:.4f}  outranks {rate:.3f}")
    best = max(results, key=lambda r: r[5])
    print(f"\nbest mean strict NDCG: {best}")


if __name__ == "__main__":
    main()
