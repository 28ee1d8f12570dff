"""The index's treatment table: built from the corpus with the documents' own text (citator.stance.treat), a
user's own rows (`--treatments FILE`) laid over it, stored in the index's data folder, and read back checked.

An index holds the table of its whole corpus, not of a shard: a decision treats cases wherever they fall, so a
sharded index keeps one table beside its shards. A search never reads it: flags are shown with hits
(stance/brief), never used to rank.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path

from citator.data.records import Document
from citator.errors import IndexDirError
from citator.stance.retrieve.index_files import REBUILD, verify_digests
from citator.stance.retrieve.layout import TREATMENTS, IndexFolder
from citator.stance.treat import (Earlier, Treatment, TreatmentTable, extract, merge, read_table, read_user_table,
                                  write_table)


def user_rows(path: Path | None, doc_ids: Collection[str]) -> tuple[Treatment, ...]:
    """A user's own rows, every one naming documents of the corpus (TreatmentError, one line, else)."""
    return () if path is None else read_user_table(path, doc_ids=set(doc_ids))


def write_treatments(data_dir: Path, docs: Sequence[Document], user: Sequence[Treatment] = (),
                     progress: bool = False, earlier: Earlier | None = None) -> TreatmentTable:
    """The corpus's treatment table with the user's rows merged, written into `data_dir`. `earlier`: the corpus an
    update changed and its table, whose rows of documents the change leaves alone are kept (treat.affected)."""
    began = time.monotonic()
    table = merge(extract(docs, earlier=earlier), user)
    write_table(data_dir / TREATMENTS, table)
    if progress:
        flagged = len({row.cited_doc_id for row in table if table.flag(row.cited_doc_id)})
        print(f"treatment table: {len(table)} rows ({len(user)} from --treatments), {flagged} flagged, "
              f"{time.monotonic() - began:.1f} s", file=sys.stderr, flush=True)
    return table


def earlier_table(folder: IndexFolder) -> TreatmentTable | None:
    """An earlier generation's table as it stored it (None: it keeps none), its bytes checked against its digest
    first; an update reads it, and the documents it is of are the generation's own."""
    path = _checked(folder)
    return None if path is None else read_table(path)


def kept_user_rows(table: TreatmentTable, doc_ids: Collection[str]) -> tuple[Treatment, ...]:
    """An earlier generation's rows from a user's --treatments (found_by "user") whose two documents the updated
    corpus still holds: an update keeps them, and extracts the rows the documents' own text gives again, as a
    rebuild of the resulting corpus would."""
    ids = set(doc_ids)
    return tuple(row for row in table if row.found_by == "user"
                 and row.citing_doc_id in ids and row.cited_doc_id in ids)


class _Texts(Mapping[str, str]):
    """The index's documents' texts by doc id, each read from the index's own copy when asked: checking a table
    reads only the documents that cite (the passage must be the citing text's characters)."""

    def __init__(self, positions: Mapping[str, int], document: Callable[[int], Document]) -> None:
        self._positions, self._document = positions, document

    def __getitem__(self, doc_id: str) -> str:
        return self._document(self._positions[doc_id]).text

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._positions

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)


def load_treatments(folder: IndexFolder, positions: Mapping[str, int],
                    document: Callable[[int], Document]) -> TreatmentTable:
    """The index's table, its bytes checked against the file table and every row against the index's documents
    (a table of another corpus, or edited, is refused in one line)."""
    path = _checked(folder)
    if path is None:
        raise IndexDirError(f"{folder.root}: the file table lists no {TREATMENTS} (a shard, or an index built "
                            f"before treatment flags); {REBUILD}")
    return read_table(path, _Texts(positions, document))


def _checked(folder: IndexFolder) -> Path | None:
    """The index's table file, its bytes checked against the file table's digest; None where it lists none."""
    if TREATMENTS not in folder.manifest.files:
        return None
    verify_digests(folder.data, {TREATMENTS: folder.manifest.files[TREATMENTS]})
    return folder.path(TREATMENTS)
