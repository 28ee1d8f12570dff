"""Probes, not shipped parts: is there a signal, short of reading polarity, that says which case *refutes* an
overruled CaseFacts proposition (the "overruling" case) rather than the case the proposition paraphrases?

Reads train and dev only (never test) of ../shared/data/stance/casefacts and prints four counts:

1. chronology: in how many train/dev overruled pairs the refuting case is the later decision;
2. citations: in how many the refuting case's Oyez text names the supported case (or the reverse), or says "overrul";
3. train edges: how many dev pairs are (supported case, refuting case) pairs already seen in train;
4. claim type: how well a TF-IDF logistic classifier, fitted on train, tells an overruled proposition's refuted
   query from a queries.jsonl refuted query on dev (ROC AUC and the false-positive rate at a given recall): a gate
   that demotes the paraphrased case must fire on the first and not on the second, whose refuting case *is* the
   paraphrased one.

    .venv/bin/python benchmarks/experiments/overruled_probes.py

Writes nothing. Results are in BENCHMARKS.md (learning section, Targets).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from citator.data import read_corpus, read_ground_truth, read_queries
from citator.retrieve.ranker import doc_years

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "stance" / "casefacts"
SPLITS = ("train", "dev")


def overruled_pairs() -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """(split, supported docs, refuting docs) of every train/dev overruled proposition asked with both stances."""
    gt = read_ground_truth(DATA / "ground_truth_overruled.jsonl")
    by_prop: dict[str, dict[str, str]] = defaultdict(dict)
    split_of = {}
    for q in read_queries(DATA / "queries_overruled.jsonl"):
        if q.split in SPLITS and q.stance in ("supported", "refuted"):
            by_prop[q.extra["proposition_id"]][q.stance] = q.query_id
            split_of[q.extra["proposition_id"]] = q.split
    return [(split_of[p], gt.relevant(s["supported"]), gt.relevant(s["refuted"]))
            for p, s in sorted(by_prop.items()) if len(s) == 2]


def first_parties(title: str) -> list[str]:
    """One distinctive capitalised word per party of `A v. B` (generic words such as `United States` skipped)."""
    generic = {"United", "States", "The", "In", "Re", "Inc", "Co", "Company", "City", "County", "State", "Board",
               "Department", "Commission", "New", "York", "Of"}
    words = []
    for party in re.split(r"\s+v\.?\s+", title):
        found = [w for w in re.findall(r"[A-Z][A-Za-z'\-]+", party) if w not in generic]
        if found:
            words.append(found[0])
    return words


def names(text: str, title: str) -> bool:
    parties = first_parties(title)
    return title in text or (len(parties) >= 2 and all(p in text for p in parties))


def main() -> None:
    docs = {d.doc_id: d for d in read_corpus(DATA / "corpus.jsonl")}
    pairs = overruled_pairs()
    print("1-3. overruled pairs (supported case X, refuting case Y)")
    print(f"{'split':<7}{'pairs':>6}{'all Y after all X':>19}{'some Y after some X':>21}"
          f"{'Y names X':>11}{'X names Y':>11}{'Y says overrul':>16}{'pair in train':>15}")
    train_edges = {(x, y) for split, xs, ys in pairs if split == "train" for x in xs for y in ys}
    for split in SPLITS:
        rows = [(xs, ys) for s, xs, ys in pairs if s == split]
        later = sum(doc_years(sorted(ys)).min() > doc_years(sorted(xs)).max() for xs, ys in rows)
        some = sum(doc_years(sorted(ys)).max() > doc_years(sorted(xs)).min() for xs, ys in rows)
        y_names = sum(any(names(docs[y].text, docs[x].title) for x in xs for y in ys) for xs, ys in rows)
        x_names = sum(any(names(docs[x].text, docs[y].title) for x in xs for y in ys) for xs, ys in rows)
        overrul = sum(any("overrul" in docs[y].text.lower() for y in ys) for xs, ys in rows)
        seen = "-" if split == "train" else str(sum(any((x, y) in train_edges for x in xs for y in ys) for xs, ys in rows))
        print(f"{split:<7}{len(rows):>6}{later:>19}{some:>21}{y_names:>11}{x_names:>11}{overrul:>16}{seen:>15}")

    def refuted_texts(split: str) -> tuple[list[str], np.ndarray]:
        over = [q.text for q in read_queries(DATA / "queries_overruled.jsonl") if q.split == split and q.stance == "refuted"]
        main_ = [q.text for q in read_queries(DATA / "queries.jsonl") if q.split == split and q.stance == "refuted"]
        return over + main_, np.array([1] * len(over) + [0] * len(main_))

    x_train, y_train = refuted_texts("train")
    x_dev, y_dev = refuted_texts("dev")
    print(f"\n4. claim type on refuted queries: train {int(y_train.sum())} overruled / {int((1 - y_train).sum())} main, "
          f"dev {int(y_dev.sum())} / {int((1 - y_dev).sum())}")
    print(f"{'features':<22}{'C':>5}{'dev AUC':>9}{'fpr@recall .3':>15}{'.5':>7}{'.7':>7}")
    for label, analyzers in (("word 1-2 grams", [("word", (1, 2))]), ("char 2-5 grams", [("char_wb", (2, 5))]),
                             ("both", [("word", (1, 2)), ("char_wb", (2, 5))])):
        vecs = [TfidfVectorizer(analyzer=a, ngram_range=n, min_df=2, sublinear_tf=True) for a, n in analyzers]
        a = hstack([v.fit_transform(x_train) for v in vecs]).tocsr()
        b = hstack([v.transform(x_dev) for v in vecs]).tocsr()
        for c in (0.3, 1.0, 3.0):
            p = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(a, y_train).predict_proba(b)[:, 1]
            positives = np.sort(p[y_dev == 1])[::-1]
            fprs = [float(np.mean(p[y_dev == 0] >= positives[int(r * len(positives)) - 1])) for r in (0.3, 0.5, 0.7)]
            print(f"{label:<22}{c:>5}{roc_auc_score(y_dev, p):>9.3f}{fprs[0]:>15.3f}{fprs[1]:>7.3f}{fprs[2]:>7.3f}")


if __name__ == "__main__":
    main()
