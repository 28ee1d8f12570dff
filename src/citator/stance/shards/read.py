"""Reading a corpus on a Ray cluster with Ray Data: the file is cut into blocks at line starts, and Ray tasks
read, parse and check their own blocks, so the coordinator never holds the corpus's texts.

Two passes of tasks: the first counts each block's lines (so that every error names its true line), the second
parses each block with the same reader as one machine (`iter_corpus`, which names file, line and field; a bad
line comes back as an error row, and the coordinator raises the corpus's first). The
documents stay in Ray's object store, in corpus order; each shard's builder reads its part from there. The
coordinator keeps only the doc ids and titles (the corpus's doc id list, links by title) and checks that no id
repeats across blocks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citator.data.corpus import iter_numbered_corpus
from citator.data.jsonl import LineSpan, count_lines, line_spans, require_unique_str
from citator.data.records import Document
from citator.errors import CorpusError, DataError

# Bytes of corpus per read task: large enough that a task's start-up is noise, small enough to spread a corpus.
BLOCK_BYTES = 64 << 20


@dataclass(frozen=True)
class ReadCorpus:
    """A corpus read by Ray Data: its documents' ids and titles, in order, and the dataset that holds them."""

    ids: list[str]
    titles: list[str]
    dataset: Any  # ray.data.MaterializedDataset of rows {"doc_id", "title", "text", "extra"}

    def parts(self, starts: Sequence[int]) -> list[Any]:
        """The documents of each contiguous part beginning at `starts` (the first at 0), as datasets."""
        if len(starts) == 1:  # Ray Data splits at one index or more
            return [self.dataset]
        return list(self.dataset.split_at_indices(list(starts[1:])))


def read_corpus_blocks(path: Path, lenient: bool = True) -> ReadCorpus:
    """Read the corpus at `path` with Ray Data tasks (Ray must be initialised); errors as one machine's reader
    raises them."""
    import ray.data

    # Ray Data reports each dataset's execution on the console: a build prints its own progress instead.
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # the corpus's order is the index's
    context.enable_progress_bars = False
    path = Path(path).absolute()
    spans = line_spans(path, BLOCK_BYTES, CorpusError)
    # Every block's first line number: the lines of the blocks before it, counted by tasks (the last is not needed).
    firsts = [1]
    if len(spans) > 1:
        counted = (ray.data.from_items([{"start": a, "end": b} for a, b in spans[:-1]],
                                       override_num_blocks=len(spans) - 1)
                   .map(lambda row: {"lines": count_lines(path, row["start"], row["end"])}).take_all())
        for row in counted:
            firsts.append(firsts[-1] + int(row["lines"]))
    blocks = [{"start": a, "end": b, "first_line": f} for (a, b), f in zip(spans, firsts)]
    dataset = (ray.data.from_items(blocks, override_num_blocks=len(blocks))
               .flat_map(lambda row: _rows(path, LineSpan(row["start"], row["end"], row["first_line"]), lenient))
               .materialize())
    heads = dataset.select_columns(["doc_id", "title", "line", "error"]).take_all()
    if not heads:
        raise CorpusError(path, None, "corpus has no documents")
    seen: dict[str, int] = {}
    for row in heads:
        if row["error"]:
            reason, field = json.loads(row["error"])
            raise CorpusError(path, row["line"] or None, reason, field=field)
        require_unique_str(row, "doc_id", seen, path, row["line"], CorpusError)  # each block checked its own
    return ReadCorpus([r["doc_id"] for r in heads], [r["title"] for r in heads], dataset)


def documents(part: Any) -> list[Document]:
    """A part's documents (a list already, or a dataset of `read_corpus_blocks` rows), in order."""
    if isinstance(part, list):
        return part
    return [Document(r["doc_id"], r["title"], r["text"], json.loads(r["extra"])) for r in part.iter_rows()]


def _rows(path: Path, span: LineSpan, lenient: bool) -> list[dict[str, Any]]:
    """The block's documents as rows; a block with a bad line ends in one row that carries the error (an error
    row, not an exception: the coordinator raises the corpus's first, as one reader would, in one line)."""
    rows = []
    try:
        for line, d in iter_numbered_corpus(path, lenient=lenient, span=span):
            # Extra fields travel as JSON text: Arrow cannot hold a column whose type varies between documents.
            rows.append({"doc_id": d.doc_id, "title": d.title, "text": d.text, "extra": json.dumps(d.extra),
                         "line": line, "error": ""})
    except DataError as exc:
        rows.append({"doc_id": "", "title": "", "text": "", "extra": "{}", "line": exc.line or 0,
                     "error": json.dumps([exc.reason, exc.field])})
    return rows

