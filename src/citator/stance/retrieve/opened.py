"""What the surfaces (the brief and its page, the search server, run.sh's in-process search) need of an opened
index, whether one index (`StanceSearcher`) or a sharded one (`citator.stance.shards.ShardedSearcher`): the one
protocol both keep, so no caller asks which it holds.

The statute benchmark's arms keep a protocol of their own (`citator.statutes.pool.Retriever`: text in, sections
out); the products are independent, and stance search answers batches of stanced queries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from citator.data.filters import Filter
from citator.data.records import Document, Query, ResultLine
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.explain import Explained
from citator.stance.retrieve.layout import Manifest
from citator.stance.treat import TreatmentTable


class Searcher(Protocol):
    """An opened index: it answers batches of queries, explains its hits, serves its documents, and refuses in one
    line once a file it serves from has changed since it was verified."""

    index_dir: Path
    manifest: Manifest
    config: RetrievalConfig
    doc_ids: list[str]
    treatments: TreatmentTable  # the corpus's treatment table, checked as the index opened; never ranked by
    metadata_keys: frozenset[str]  # every metadata key a document of the index has

    @property
    def positions(self) -> dict[str, int]:
        """Each document's position in the corpus, by doc id."""
        ...

    def search(self, queries: Sequence[Query], k: int = 10, batch_size: int = 256, *,
               filters: Sequence[Filter] = ()) -> list[ResultLine]:
        """Top-k distinct documents per query, best first, of those that meet every filter."""
        ...

    def explained(self, queries: Sequence[Query], k: int = 10, filters: Sequence[Filter] = ()
                  ) -> list[list[Explained]]:
        """A search of `queries`, each hit with its document, its explanation and its rank under each signal."""
        ...

    def document(self, position: int) -> Document:
        """The document at `position` of the corpus."""
        ...

    def needed_signals(self) -> list[str]:
        """The signals a search computes."""
        ...

    def term_key(self) -> Callable[[str], str | None]:
        """A word's key as the index's passages match it."""
        ...

    def use_numba(self) -> None:
        """Score BM25 with numba's kernel: for long-lived processes."""
        ...

    def check_unchanged(self) -> None:
        """Refuse an index whose files changed since they were verified."""
        ...

    def close(self) -> None:
        """Release the index's workers, if it has any."""
        ...
