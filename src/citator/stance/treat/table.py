"""The treatment table: every treatment row of a corpus, looked up from either side.

`of(doc)` answers the citator's question about a case, "what did later decisions say about it" (its "cited by"
list with treatments, and so its flag); `by(doc)` lists what a decision itself did to earlier ones. `merge` lays
a user's own rows over extracted ones: a user's row for a (citing, cited) pair replaces whatever the extractor
found for that pair, since the user read the case, and a pair the extractor missed is added.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from citator.stance.treat.record import RED, YELLOW, Treatment


def _order(row: Treatment) -> tuple[str, int, str, str]:
    return (row.citing_doc_id, -1 if row.start is None else row.start, row.cited_doc_id, row.treatment)


@dataclass(frozen=True)
class TreatmentTable:
    """Rows, one per (citing, cited, treatment), in a stable order (citing document, then place in its text)."""

    rows: tuple[Treatment, ...]
    _of: dict[str, tuple[Treatment, ...]] = field(init=False, repr=False, compare=False)
    _by: dict[str, tuple[Treatment, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unique: dict[tuple[str, str, str], Treatment] = {}
        for row in self.rows:
            unique.setdefault(row.key, row)  # the first passage that says so stands for the rest
        rows = tuple(sorted(unique.values(), key=_order))
        of: dict[str, list[Treatment]] = {}
        by: dict[str, list[Treatment]] = {}
        for row in rows:
            of.setdefault(row.cited_doc_id, []).append(row)
            by.setdefault(row.citing_doc_id, []).append(row)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "_of", {k: tuple(v) for k, v in of.items()})
        object.__setattr__(self, "_by", {k: tuple(v) for k, v in by.items()})

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Treatment]:
        return iter(self.rows)

    def of(self, cited_doc_id: str) -> tuple[Treatment, ...]:
        """What later documents say about `cited_doc_id` (its "cited by" list with treatments)."""
        return self._of.get(cited_doc_id, ())

    def by(self, citing_doc_id: str) -> tuple[Treatment, ...]:
        """What `citing_doc_id` says about the documents it treats."""
        return self._by.get(citing_doc_id, ())

    def flag(self, doc_id: str) -> str | None:
        """"red" when some document overrules or abrogates `doc_id`, else "yellow" when one limits or questions
        it, else None. The reason is in `of(doc_id)`: the rows with that treatment and their passages."""
        said = {row.treatment for row in self.of(doc_id)}
        return "red" if said & RED else "yellow" if said & YELLOW else None


def merge(table: TreatmentTable, user_rows: Iterable[Treatment]) -> TreatmentTable:
    """`table` with a user's rows laid over it: the user's rows for a (citing, cited) pair replace the table's rows
    for that pair; rows for other pairs are added."""
    user = tuple(user_rows)
    pairs = {(row.citing_doc_id, row.cited_doc_id) for row in user}
    kept = tuple(row for row in table.rows if (row.citing_doc_id, row.cited_doc_id) not in pairs)
    return TreatmentTable(kept + user)
