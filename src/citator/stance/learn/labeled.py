"""Training's labeled data: the corpus and the queries with their ground truth, split into train and dev.

`test` is never read, a query's split is checked file by file, and a proposition never sits in both train and dev.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from citator.data import Document, Qrels, Query, read_corpus, read_ground_truth, read_queries
from citator.errors import CitatorError
from citator.stance.retrieve.memory import MemoryEntry

LabeledSet = tuple[list[Query], Qrels]


def check_splits(path: Path) -> None:
    """A training queries file gives every query a string `split` or none at all: a query without one is used as
    both train and dev, so one that lost its field (a typo, a mangled key) beside others that have it would leak
    dev into training unseen. The error names the file, line and field."""
    from citator.data.jsonl import iter_jsonl
    from citator.errors import QueryError

    missing, present = None, 0
    for line, obj in iter_jsonl(path, QueryError):
        if "split" not in obj:
            missing = missing or line
            continue
        if not isinstance(obj["split"], str):
            raise QueryError(path, line, f"expected a string, got {type(obj['split']).__name__}", field="split")
        present += 1
    if missing is not None and present:
        raise QueryError(path, missing, f"missing field, while {present} other queries of this file have one (a "
                         "query without a split would be both train and dev)", field="split")


def load_labeled(pairs: Sequence[tuple[Path, Path]], split: str | None,
                 corpus_ids: set[str] | None = None) -> LabeledSet:
    """Queries (of one split, if the files carry splits) with their ground truth; `test` is never accepted.

    A queries file none of whose queries (of the split) has ground truth is refused (a mispaired
    --ground-truth); queries without any, and with `corpus_ids`, relevant documents the corpus lacks, are
    reported on stderr: training can learn nothing from them.
    """
    queries: list[Query] = []
    grades: dict[str, dict[str, int]] = {}
    for q_path, g_path in pairs:
        check_splits(q_path)
        qrels = read_ground_truth(g_path)
        unlabeled: list[str] = []
        labeled_here = 0
        missing: dict[str, list[str]] = {}
        for q in read_queries(q_path):
            if q.split == "test":
                continue  # never learn from, or select on, a test split
            if split is not None and q.split is not None and q.split != split:
                continue
            if q.query_id in grades:
                raise CitatorError(f'{q_path}: query_id "{q.query_id}" appears in two training files')
            if q.query_id not in qrels:
                unlabeled.append(q.query_id)
                continue
            queries.append(q)
            labeled_here += 1
            grades[q.query_id] = dict(qrels.of(q.query_id))
            if corpus_ids is not None:
                gone = sorted(qrels.relevant(q.query_id) - corpus_ids)
                if gone:
                    missing[q.query_id] = gone
        if unlabeled and not labeled_here:
            raise CitatorError(f'{q_path}: none of its {len(unlabeled)} {split or ""} queries has ground truth in '
                               f'{g_path} (e.g. query_id "{unlabeled[0]}"): is --ground-truth paired with the '
                               "right --queries?")
        if unlabeled:
            print(f'warning: {q_path}: {len(unlabeled)} {split or ""} queries have no ground truth in {g_path} '
                  f'(e.g. query_id "{unlabeled[0]}"); training skips them', file=sys.stderr)
        if missing:
            first = next(iter(missing))
            print(f'warning: {g_path}: {sum(map(len, missing.values()))} relevant_doc_ids of {len(missing)} queries '
                  f'are not in the corpus (e.g. query_id "{first}": "{missing[first][0]}"); training cannot learn '
                  "them", file=sys.stderr)
    if not queries:
        raise CitatorError(f"no labeled queries for split {split!r} in {[str(p) for p, _ in pairs]}")
    return queries, Qrels.from_dict(grades)


def proposition_of(q: Query) -> str:
    prop = q.extra.get("proposition_id")
    return prop if isinstance(prop, str) and prop.strip() else q.query_id


def memory_entries(queries: Sequence[Query], qrels: Qrels, titles: dict[str, str]) -> list[MemoryEntry]:
    """One entry per (proposition, stance); `all` only where a proposition has no stance-specific query."""
    stanced = {proposition_of(q) for q in queries if q.stance != "all"}
    out = []
    for q in queries:
        if q.stance == "all" and proposition_of(q) in stanced:
            continue
        docs = sorted(qrels.relevant(q.query_id))
        out.append(MemoryEntry(proposition_of(q), q.stance, q.text, tuple(docs), tuple(titles.get(d, "") for d in docs)))
    return out


@dataclass(frozen=True)
class TrainingData:
    """The corpus and the labeled queries training learns from (train) and selects on (dev)."""

    corpus: Path
    docs: list[Document]
    train: LabeledSet
    dev: LabeledSet

    @cached_property
    def doc_ids(self) -> list[str]:
        return [d.doc_id for d in self.docs]

    @cached_property
    def titles(self) -> dict[str, str]:
        return {d.doc_id: d.title for d in self.docs}


def read_training_data(corpus: Path, train_sets: Sequence[tuple[Path, Path]],
                       dev_sets: Sequence[tuple[Path, Path]]) -> TrainingData:
    """The corpus, train's queries and dev's (of `dev_sets`, or the split dev of `train_sets`), checked."""
    docs = read_corpus(corpus)
    ids = {d.doc_id for d in docs}
    data = TrainingData(corpus, docs, load_labeled(train_sets, "train", ids), load_labeled(dev_sets or train_sets,
                                                                                          "dev", ids))
    shared = {proposition_of(q) for q in data.train[0]} & {proposition_of(q) for q in data.dev[0]}
    if shared:
        # The memory would hold dev's own answers and selection would reward it: refuse rather than mislead.
        raise CitatorError(f"{len(shared)} propositions are in both train and dev (e.g. {sorted(shared)[0]!r}); "
                           "give the files a `split` field or separate --dev-queries")
    return data


