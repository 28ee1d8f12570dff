"""Probes, not shipped parts: do three more signals add anything to CaseFacts' dev fusion?

1. `memory_bm25`: BM25 of the query against each training proposition on its own, the best one citing each
   document (bm25_expanded instead scores each document followed by all the propositions citing it).
2. `memory_maxsim`: late interaction (mean over the query's content tokens of the best cosine) against the content
   tokens of every training proposition citing the document, for the interpolation's top 100; the same against
   the document's own tokens (what the shipped ranker reads) is printed beside it for scale.
3. `closing_maxsim`: late interaction against the tokens of each document's last passage only (the CaseFacts
   summaries end with the question and the conclusion, where the holding is stated), alone and beside the
   document's own. The build already encodes every passage, so this store would cost no extra encoding.

Each is added to the interpolation with the weights `citator train` chose on dev for the shipped artifacts,
with the memory rebuilt from train only (as during selection, before dev joined it). Needs `make artifacts` and the
benchmark index (`benchmarks/learning.py --datasets casefacts --artifacts casefacts=artifacts`), whose document
tokens and lexical index do not depend on the memory; reads train and dev only.

    .venv/bin/python benchmarks/experiments/fusion_probes.py

Writes nothing. Results are in BENCHMARKS.md (learning section, "Tried this round and not kept").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from citator.data import read_corpus
from citator.learn import train as T
from citator.models.encoder import default_encoder_path, load_encoder
from citator.retrieve.expansion import build_expanded_index
from citator.retrieve.fusion import interpolate, top_k
from citator.retrieve.late_interaction import TokenStore, maxsim, quantise
from citator.retrieve.lexical import LexicalIndex
from citator.retrieve.memory import PropositionMemory, memory_signals
from citator.retrieve.passages import PassageSpec, passage_layout
from citator.retrieve.searcher import StanceSearcher

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "stance" / "casefacts"
ARTIFACTS = ROOT / "artifacts"
INDEX = ROOT / "benchmarks" / "work" / "learning" / "casefacts" / "index"


def main() -> None:
    sets = [(DATA / "queries.jsonl", DATA / "ground_truth.jsonl"),
            (DATA / "queries_overruled.jsonl", DATA / "ground_truth_overruled.jsonl")]
    docs = read_corpus(DATA / "corpus.jsonl")
    doc_ids = [d.doc_id for d in docs]
    train_q, train_qrels = T.load_labeled(sets, "train")
    dev_q, dev_qrels = T.load_labeled(sets, "dev")
    entries = T.memory_entries(train_q, train_qrels, {d.doc_id: d.title for d in docs})
    encoder = load_encoder(ARTIFACTS / "encoder")
    entry_vectors, entry_tokens = encoder.encode_queries_with_tokens([e.text for e in entries], ["all"] * len(entries))
    query_vectors, query_tokens = encoder.encode_queries_with_tokens([q.text for q in dev_q], [q.stance for q in dev_q])
    memory = PropositionMemory(entries, entry_vectors)
    links = memory.link(doc_ids, [d.title for d in docs])
    rows, cols = links

    searcher = StanceSearcher(INDEX)
    signals = searcher.signal_matrices(dev_q, ["bm25", "bm25_maxp", "ft_dense", "doc_embedding"])
    signals["bm25_expanded"] = build_expanded_index([d.title for d in docs], [d.text for d in docs], memory,
                                                    links).score_all([q.text for q in dev_q])
    signals.update(memory_signals(query_vectors, [q.stance for q in dev_q], memory, links, len(docs)))
    weights = {k: v for k, v in json.loads((ARTIFACTS / "manifest.json").read_text())["weights"].items() if v}

    def ndcg(scores: np.ndarray) -> float:
        return T._ndcg(dev_qrels, dev_q, doc_ids, scores)

    base = interpolate(signals, weights)
    print(f"dev queries {len(dev_q)}, train propositions in the memory {len(entries)}; weights {weights}")
    print(f"interpolation as chosen on dev: {ndcg(base):.4f}")

    per_entry = LexicalIndex.build([e.text for e in entries], 1.2, 0.75).score_all([q.text for q in dev_q])
    lexical = np.zeros((len(dev_q), len(docs)), dtype=np.float32)
    for i in range(len(dev_q)):
        np.maximum.at(lexical[i], cols, per_entry[i, rows])
    print(f"\n1. memory_bm25 alone {ndcg(lexical):.4f} (bm25_expanded alone {ndcg(signals['bm25_expanded']):.4f})")
    print("   added with weight " + ", ".join(f"{w}: {ndcg(interpolate({**signals, 'x': lexical}, {**weights, 'x': w})):.4f}"
                                             for w in (0.1, 0.2, 0.3, 0.5)))

    # Each document's store holds the content tokens of every training proposition citing it.
    cited: list[list[np.ndarray]] = [[] for _ in docs]
    for r, c in zip(rows.tolist(), cols.tolist()):
        cited[c].append(entry_tokens.states[r][entry_tokens.mask[r]])
    lengths = np.array([sum(len(t) for t in ts) for ts in cited])
    states = np.concatenate([t for ts in cited for t in ts])
    tokens, scales = quantise(states, np.arange(len(states)))
    store = TokenStore(tokens, scales, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    cand, _ = top_k(base, 100)
    at = np.arange(len(dev_q))[:, None]

    def on_candidates(values: np.ndarray) -> np.ndarray:
        out = np.zeros((len(dev_q), len(docs)), dtype=np.float32)
        out[at, cand] = values
        return out

    memory_late = on_candidates(maxsim(query_tokens, cand, store))
    document_late = on_candidates(maxsim(query_tokens, cand, searcher.late_store))
    print("\n2. late interaction on the top 100: weight  memory_maxsim  document maxsim (for scale)")
    for w in (0.25, 0.5, 1.0):
        print(f"   {w:>32}  {ndcg(interpolate({**signals, 'x': memory_late}, {**weights, 'x': w})):>13.4f}"
              f"  {ndcg(interpolate({**signals, 'x': document_late}, {**weights, 'x': w})):>15.4f}")

    passages, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    base_encoder = load_encoder(default_encoder_path())
    closing_texts = [passages[end - 1] for end in np.append(starts[1:], len(passages))]
    _, closing_states, closing_ids = base_encoder.encode_documents_with_tokens(closing_texts)
    closing = TokenStore.from_passages(closing_states, closing_ids, np.arange(len(docs)), base_encoder.dim)
    closing_late = on_candidates(maxsim(query_tokens, cand, closing))
    print(f"\n3. closing passage ({len(closing.tokens)} tokens; the documents' store {len(searcher.late_store.tokens)}):")
    print("   weight  closing alone  document alone  both, closing at half / full weight")
    for w in (0.5, 1.0):
        both = [ndcg(interpolate({**signals, "x": closing_late, "d": document_late}, {**weights, "x": wx, "d": w}))
                for wx in (w / 2, w)]
        print(f"   {w:>6}  {ndcg(interpolate({**signals, 'x': closing_late}, {**weights, 'x': w})):>13.4f}"
              f"  {ndcg(interpolate({**signals, 'x': document_late}, {**weights, 'x': w})):>14.4f}"
              f"  {both[0]:.4f} / {both[1]:.4f}")


if __name__ == "__main__":
    main()
