"""The index's table of document metadata: every document's, in corpus order, held in memory for filters.

Written by a build from the documents it indexes (their metadata keys, a side file's already merged in); read back
through the index's file table, whose digest the searcher checks as it opens, and every value checked again as the
schema checks a file's (data/metadata.py). An index built before the table existed has none: its documents have no
metadata and any filter names an unknown key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from citator.data.filters import DATE, NUMBER, OPS, TEXT, Filter, check_keys, typed
from citator.data.jsonl import loads
from citator.data.metadata import Metadata, Scalar, check_key, check_value, document_metadata
from citator.data.records import Document
from citator.errors import IndexDirError, MetadataError
from citator.stance.retrieve.layout import METADATA

_EMPTY: Metadata = MappingProxyType({})


def write_metadata(directory: Path, docs: Sequence[Document]) -> None:
    rows = [document_metadata(d) for d in docs]
    (directory / METADATA).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def _row(raw: dict[str, Any], where: tuple[Path, int]) -> Metadata:
    row: dict[str, Scalar] = {}
    for key, value in raw.items():
        if (checked := check_value(check_key(key, where), value, where)) is not None:
            row[key] = checked
    return MappingProxyType(row)


class Column:
    """One key's values for every document, typed once (`filters.typed`), so that a filter is decided for all
    documents at once and exactly as `Filter.matches` decides each: the comparisons run on object arrays (Python's
    own `<`, `==` on dates, text and numbers, element by element in numpy's loop), never on converted values."""

    def __init__(self, values: Sequence[Scalar | None]) -> None:
        kinds = np.zeros(len(values), dtype=np.int8)  # 0: absent, which meets no filter
        self.values = np.empty(len(values), dtype=object)
        self.texts = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            if value is not None:
                kinds[i], self.values[i], self.texts[i] = typed(value)
        self.rows = {kind: rows for kind in (DATE, TEXT, NUMBER) if (rows := kinds == kind).any()}

    def matches(self, f: Filter) -> np.ndarray:
        """A bool per document: whether its value meets `f` (False where it has none)."""
        compare, out = OPS[f.op], np.zeros(len(self.values), dtype=bool)
        for kind, rows in self.rows.items():
            mine = f.operand(kind)
            out[rows] = compare(self.values[rows], mine) if mine is not None else compare(self.texts[rows], f.value)
        return out


@dataclass(frozen=True)
class MetadataTable:
    """Each document's metadata by corpus position, and every key any document has."""

    rows: tuple[Metadata, ...]
    keys: frozenset[str]
    _columns: dict[str, Column] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def empty(cls, n_docs: int) -> MetadataTable:
        return cls((_EMPTY,) * n_docs, frozenset())

    @classmethod
    def load(cls, path: Path, n_docs: int) -> MetadataTable:
        """The table of `path`, one object per document, each value checked; IndexDirError naming the file."""
        try:
            raw = loads(path.read_bytes())
            if not isinstance(raw, list) or len(raw) != n_docs or not all(isinstance(r, dict) for r in raw):
                raise ValueError(f"not a list of {n_docs} objects")
            rows = tuple(_row(r, (path, i + 1)) for i, r in enumerate(raw))
        except (OSError, ValueError, MetadataError) as exc:
            raise IndexDirError(f"{path}: unreadable metadata ({str(exc)[:160]}); rebuild the index") from None
        return cls(rows, frozenset(k for r in rows for k in r))

    def get(self, position: int) -> Metadata:
        return self.rows[position]

    def allowed(self, filters: Sequence[Filter], check: bool = True) -> np.ndarray:
        """Which documents meet every filter (a bool per document); `check`: refuse a key no document has (a
        shard of a sharded index leaves that to its coordinator, which knows every shard's keys)."""
        if check:
            check_keys(filters, self.keys)
        out = np.ones(len(self.rows), dtype=bool)
        for f in filters:
            out &= self.column(f.key).matches(f)
        return out

    def column(self, key: str) -> Column:
        """Every document's value of `key`, read once per table (a request's filters are decided on it)."""
        made = self._columns.get(key)
        if made is None:
            made = self._columns[key] = Column([r.get(key) for r in self.rows])
        return made
