"""Corpus files: JSONL `{"doc_id", "title", "text"}` with extra keys kept."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from citator.data.atomic import write_jsonl_atomic
from citator.data.jsonl import LineSpan, encodable, iter_jsonl, require_str, require_unique_str
from citator.data.metadata import from_record
from citator.data.records import Document
from citator.errors import CorpusError, MetadataError


def iter_corpus(path: str | Path, *, lenient: bool = False, span: LineSpan | None = None) -> Iterator[Document]:
    """Stream documents, validating each line and refusing duplicate doc_ids.

    `lenient` (build.sh) keeps a document with neither title nor text, with a warning: the schema allows it,
    and refusing it would fail the whole build. `span`: only the lines of that block of the file (doc ids are
    then unique within the block; the caller checks the whole corpus's).
    """
    return (doc for _, doc in iter_numbered_corpus(path, lenient=lenient, span=span))


def iter_numbered_corpus(path: str | Path, *, lenient: bool = False, span: LineSpan | None = None
                         ) -> Iterator[tuple[int, Document]]:
    """`iter_corpus`, each document with its line number."""
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path, CorpusError, span):
        yield line, parse_document(obj, seen, path, line, lenient)


def parse_document(obj: dict[str, Any], seen: dict[str, int], path: str | Path, line: int,
                   lenient: bool = False) -> Document:
    """One corpus record as a Document under the corpus rules (`seen`: the doc ids so far, with their lines); a
    CorpusError naming `path`, `line` and the field otherwise."""
    doc_id = require_unique_str(obj, "doc_id", seen, path, line, CorpusError)
    # Optional: missing or null is an empty title, anything else is checked as a string.
    title = "" if obj.get("title") is None else require_str(obj, "title", path, line, CorpusError, nonempty=False)
    text = require_str(obj, "text", path, line, CorpusError, nonempty=False)
    if not (text.strip() or title.strip()):
        if not lenient:
            raise CorpusError(path, line, "document has neither title nor text", field="text")
        print(f'warning: {Path(path).name} line {line} field "text": document has neither title nor text',
              file=sys.stderr)
    extra = {k: v for k, v in obj.items() if k not in ("doc_id", "title", "text")}
    # Extra keys travel with the document into the index's copy: each must be text UTF-8 can write.
    if extra and not encodable(json.dumps(extra, ensure_ascii=False)):
        bad = next(k for k, v in extra.items() if not encodable(json.dumps({k: v}, ensure_ascii=False)))
        raise CorpusError(path, line, "holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is no character and "
                          "cannot be written with the document", field=bad.encode("utf-8", "backslashreplace").decode())
    try:  # metadata keys (docs/metadata.md) are checked as a side file's are
        from_record(extra, (path, line))
    except MetadataError as exc:
        raise CorpusError(path, line, exc.reason, field=exc.field) from None
    return Document(doc_id, title, text, extra)


def read_corpus(path: str | Path, *, lenient: bool = False) -> list[Document]:
    """Read a whole corpus; raise CorpusError if it is empty."""
    docs = list(iter_corpus(path, lenient=lenient))
    if not docs:
        raise CorpusError(path, None, "corpus has no documents")
    return docs


def write_corpus(path: str | Path, docs: Iterable[Document]) -> None:
    write_jsonl_atomic(path, (d.to_json() for d in docs))
