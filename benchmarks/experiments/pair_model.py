"""Probe step 2 (not shipped): a ranker of its own for propositions asked with both stances, fitted on train's
pairs (out-of-fold features), read on dev's, against the first-stage ranker with and without the stance contrast.

For each pair and each stance, the candidates are the union of both queries' top candidates; each gets the
first-stage features as the query itself sees them, as the opposite-stance query sees them (NaN where it is not
among that query's candidates), their difference, and both interpolation ranks. Labels are strict: a document of
the other stance is not relevant. Needs benchmarks/experiments/pair_features.py first.

    .venv/bin/python benchmarks/experiments/pair_model.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contrast_probes import ARTIFACTS, DATA, WORK  # noqa: E402
from pair_features import OUT, SETS  # noqa: E402

from citator.data.records import Query  # noqa: E402
from citator.evaluate.stance_discrimination import stance_discrimination  # noqa: E402
from citator.learn import train as T  # noqa: E402
from citator.learn.ranker_fit import fit_lambdamart, fit_linear_ranker  # noqa: E402
from citator.retrieve import contrast  # noqa: E402
from citator.retrieve.ranker import load_ranker  # noqa: E402


def pairs_of(ids: np.ndarray) -> list[tuple[int, int]]:
    rows: dict[str, dict[str, int]] = {}
    for i, qid in enumerate(ids.tolist()):
        prop, stance = qid.rsplit(":", 1)
        rows.setdefault(prop, {})[stance] = i
    return [(r["supported"], r["refuted"]) for r in rows.values()]


def pair_features(x: np.ndarray, cand: np.ndarray, own: int, other: int, depth: int, logits: np.ndarray | None):
    """(union doc indices, features (n_union, n_features)) for query `own` against query `other`."""
    docs = np.array(sorted(set(cand[own, :depth].tolist()) | set(cand[other, :depth].tolist())))
    nf = x.shape[2]
    cols = []
    for row in (own, other):
        pos = {d: j for j, d in enumerate(cand[row, :depth].tolist())}
        f = np.full((len(docs), nf + 2), np.nan, dtype=np.float32)
        for i, d in enumerate(docs.tolist()):
            j = pos.get(d)
            if j is not None:
                f[i, :nf] = x[row, j]
                f[i, nf] = j
                f[i, nf + 1] = logits[row, j] if logits is not None else np.nan
        cols.append(f)
    feats = np.concatenate([cols[0], cols[1], cols[0] - cols[1]], axis=1)
    if logits is None:
        keep = [c for c in range(feats.shape[1]) if c % (nf + 2) != nf + 1]
        feats = feats[:, keep]
    return docs, feats


def grouped(x, cand, ids, qrels, depth, logits):  # type: ignore[no-untyped-def]
    """Per query of every pair: (query id, union docs, features, strict labels)."""
    out = []
    for s, r in pairs_of(ids):
        for own, other in ((s, r), (r, s)):
            docs, f = pair_features(x, cand, own, other, depth, logits)
            mine = qrels.relevant(ids[own]) - qrels.relevant(ids[other])
            out.append((str(ids[own]), docs, f, np.array([1.0 if DOC_IDS[d] in mine else 0.0 for d in docs.tolist()])))
    return out


def padded(groups, width: int):  # type: ignore[no-untyped-def]
    """LambdaMART fitting wants equal-size groups: pad with rows of NaN labelled 0 (they rank last and teach little)."""
    nf = groups[0][2].shape[1]
    x = np.full((len(groups), width, nf), np.nan, dtype=np.float32)
    y = np.zeros((len(groups), width))
    for i, (_, _, f, lab) in enumerate(groups):
        x[i, : len(f)] = f[:width]
        y[i, : len(f)] = lab[:width]
    return x, y


def report(label: str, queries: list[Query], qrels, run) -> dict:  # type: ignore[no-untyped-def]
    found = stance_discrimination(queries, qrels, run)
    mean = float(np.mean(list(found.strict_ndcg.values())))
    print(f"{label:74s} strict sup {found.strict_ndcg['supported']:.4f} ref {found.strict_ndcg['refuted']:.4f} "
          f"mean {mean:.4f}  outranks {found.outranks_rate:.3f} (sup {found.outranks_by_stance['supported']:.3f}, "
          f"ref {found.outranks_by_stance['refuted']:.3f})")
    return {"strict_ndcg@10": mean, "outranks": found.outranks_rate}


DOC_IDS: list[str] = json.loads(next((WORK / "index").glob("**/doc_ids.json")).read_text())


def main() -> None:
    data = np.load(OUT)
    names = [str(n) for n in data["names"]]
    train_q, train_qrels = T.load_labeled(SETS, "train")
    dev_q, dev_qrels = T.load_labeled(SETS, "dev")
    by_id = {q.query_id: q for q in dev_q}
    dev_ids = data["dev_ids"]
    queries = [by_id[str(i)] for i in dev_ids]
    ranker = load_ranker(ARTIFACTS / "ranker.json")
    dev_logits = ranker.score(names, data["dev_x"])
    train_logits = ranker.score(names, data["train_x"])  # in-sample for the shipped ranker: flattering

    # First stage as shipped: the ranker's order of the interpolation's top 100.
    depth = ranker.candidates
    order = np.argsort(-dev_logits[:, :depth], axis=1, kind="stable")
    idx = np.take_along_axis(data["dev_cand"][:, :depth], order, axis=1)
    scores = 1.0 + 1.0 / (1.0 + np.exp(-np.take_along_axis(dev_logits[:, :depth], order, axis=1)))
    results = {}
    for weight in (0.0, 2.0):
        moved, _ = contrast.contrast_top(idx, scores, queries, weight)
        run = {q.query_id: [DOC_IDS[j] for j in row[:10]] for q, row in zip(queries, moved.tolist())}
        results[f"first stage, contrast {weight:g}"] = report(f"first-stage ranker, contrast weight {weight:g}", queries,
                                                             dev_qrels, run)
    print(f"train pairs {len(pairs_of(data['train_ids']))}, dev pairs {len(pairs_of(dev_ids))}")
    # Every variant tried (all on dev, none on test): union depth, the shipped ranker's logits as features, fits.
    fits = {"LambdaMART 300 trees, 15 leaves, min leaf 20": dict(min_leaf=20),
            "LambdaMART 100 trees, 7 leaves, min leaf 50": dict(trees=100, leaves=7, min_leaf=50),
            "LambdaMART 300 trees, 15 leaves, min leaf 50": dict(min_leaf=50),
            "LambdaMART 600 trees, rate 0.02, min leaf 20": dict(trees=600, learning_rate=0.02, min_leaf=20),
            "logistic": None}
    variants = [(100, False, name) for name in fits] + [(200, False, next(iter(fits))), (100, True, next(iter(fits)))]
    for depth, use_logits, fit in variants:
        tr = grouped(data["train_x"], data["train_cand"], data["train_ids"], train_qrels, depth,
                     train_logits if use_logits else None)
        dv = grouped(data["dev_x"], data["dev_cand"], dev_ids, dev_qrels, depth, dev_logits if use_logits else None)
        x, y = padded(tr, 2 * depth)
        columns = [f"f{i}" for i in range(x.shape[2])]
        model = fit_linear_ranker(columns, x, y) if fits[fit] is None else fit_lambdamart(columns, x, y, **fits[fit])
        run = {}
        for qid, docs, f, _ in dv:
            s = model.score(columns, f[None])[0]
            run[qid] = [DOC_IDS[d] for d in docs[np.argsort(-s, kind="stable")[:10]].tolist()]
        label = f"pair model, top {depth}{' + logits' if use_logits else ''}, {fit}"
        results[label] = report(label, queries, dev_qrels, run)
    (WORK / "pair-model.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
