"""The treatment table on disk: versioned JSON lines, written atomically, read back strictly.

Line 1 is the header `{"format": "citator-treatments/1"}`; each further line is one row:
`{"citing_doc_id", "cited_doc_id", "treatment", "passage", "start", "end", "found_by", "cited_as"}`. `start` and
`end` are the passage's characters in the citing document's text, and `passage` is exactly those characters;
a user's row (`found_by` "user") has no place in a text, so both are null.

A user's own file (`--treatments FILE`) has the same rows less what a user cannot know: `citing_doc_id`,
`cited_doc_id` and `treatment` are required; `passage` (the reason) and `cited_as` are optional; `start`, `end`
and `found_by` are absent or null (found_by may say "user"); the header is optional. Both readers refuse what
they do not know (an unknown field, a treatment outside the list, a duplicate row, a row that treats itself)
with one line naming file, line and field.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from citator.data.atomic import write_jsonl_atomic
from citator.data.jsonl import iter_jsonl, require_str
from citator.errors import TreatmentError
from citator.stance.treat.record import FOUND_BY, TREATMENTS, Treatment
from citator.stance.treat.table import TreatmentTable

FORMAT = "citator-treatments/1"
FIELDS = ("citing_doc_id", "cited_doc_id", "treatment", "passage", "start", "end", "found_by", "cited_as")
_REQUIRED_BY_USER = ("citing_doc_id", "cited_doc_id", "treatment")


def write_table(path: str | Path, table: TreatmentTable, inputs: Iterable[str | Path] = ()) -> None:
    """Write `table` to `path` atomically (the header, then one row a line)."""
    rows: list[dict[str, Any]] = [{"format": FORMAT}]
    rows.extend({name: getattr(row, name) for name in FIELDS} for row in table.rows)
    write_jsonl_atomic(path, rows, inputs=inputs)


def read_table(path: str | Path, texts: Mapping[str, str] | None = None) -> TreatmentTable:
    """A table `write_table` wrote. Given the corpus's `texts` (doc_id -> text), every row must name documents of
    it and quote its citing text exactly where it says: a table built from another corpus is refused."""
    return TreatmentTable(tuple(_read(Path(path), user=False, texts=texts, doc_ids=texts)))


def read_user_table(path: str | Path, doc_ids: Collection[str] | None = None) -> tuple[Treatment, ...]:
    """A user's own rows (for `merge`). Given the corpus's `doc_ids`, a row naming another document is refused."""
    return tuple(_read(Path(path), user=True, texts=None, doc_ids=doc_ids))


def _read(path: Path, *, user: bool, texts: Mapping[str, str] | None,
          doc_ids: Collection[str] | None) -> list[Treatment]:
    rows: list[Treatment] = []
    seen: dict[tuple[str, str, str], int] = {}
    first = True
    for line, obj in iter_jsonl(path, TreatmentError):
        if first:
            first = False
            if "format" in obj or not user:
                _check_header(path, line, obj)
                continue
        row = _user_row(path, line, obj) if user else _row(path, line, obj)
        _check_row(path, line, row, texts, doc_ids)
        if row.key in seen:
            raise TreatmentError(path, line, f"duplicate row: {row.citing_doc_id} {row.treatment} "
                                 f"{row.cited_doc_id} (first on line {seen[row.key]})", field="treatment")
        seen[row.key] = line
        rows.append(row)
    if first and not user:
        raise TreatmentError(path, None, f'empty file: line 1 must be {{"format": "{FORMAT}"}}')
    return rows


def _check_header(path: Path, line: int, obj: dict[str, Any]) -> None:
    if obj.get("format") != FORMAT or set(obj) != {"format"}:
        raise TreatmentError(path, line, f'expected the header {{"format": "{FORMAT}"}}; rebuild the table '
                             "with this version of citator", field="format")


def _unknown(path: Path, line: int, obj: dict[str, Any]) -> None:
    extra = sorted(set(obj) - set(FIELDS))
    if extra:
        raise TreatmentError(path, line, f"unknown field; a row has {', '.join(FIELDS)}", field=extra[0])


def _treatment(path: Path, line: int, obj: dict[str, Any]) -> str:
    value = require_str(obj, "treatment", path, line, TreatmentError)
    if value not in TREATMENTS:
        raise TreatmentError(path, line, f'unknown treatment "{value[:40]}"; one of {", ".join(TREATMENTS)}',
                             field="treatment")
    return value


def _span(path: Path, line: int, obj: dict[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise TreatmentError(path, line, "expected a character offset (an integer >= 0) or null", field=name)
    return value


def _row(path: Path, line: int, obj: dict[str, Any]) -> Treatment:
    _unknown(path, line, obj)
    for name in FIELDS:
        if name not in obj:
            raise TreatmentError(path, line, "missing field", field=name)
    found_by = require_str(obj, "found_by", path, line, TreatmentError)
    if found_by not in FOUND_BY:
        raise TreatmentError(path, line, f"one of {', '.join(FOUND_BY)}", field="found_by")
    start, end = _span(path, line, obj, "start"), _span(path, line, obj, "end")
    passage = require_str(obj, "passage", path, line, TreatmentError, nonempty=found_by != "user")
    if found_by == "user":
        if start is not None or end is not None:
            raise TreatmentError(path, line, "a user's row has no place in a text: null", field="start")
    elif start is None or end is None or end - start != len(passage):
        raise TreatmentError(path, line, "start and end must be the passage's characters in the citing text "
                             "(end - start = its length)", field="start" if start is None else "end")
    return Treatment(require_str(obj, "citing_doc_id", path, line, TreatmentError),
                     require_str(obj, "cited_doc_id", path, line, TreatmentError), _treatment(path, line, obj),
                     passage, start, end, found_by,
                     require_str(obj, "cited_as", path, line, TreatmentError, nonempty=False))


# A user's reason is a passage, not a document: every brief and page prints it.
_USER_CHARS = {"passage": 2000, "cited_as": 300}


def _user_row(path: Path, line: int, obj: dict[str, Any]) -> Treatment:
    _unknown(path, line, obj)
    for name in _REQUIRED_BY_USER:
        if name not in obj:
            raise TreatmentError(path, line, "missing field", field=name)
    for name in ("start", "end"):
        if obj.get(name) is not None:
            raise TreatmentError(path, line, "a user's row has no place in a text: leave it out", field=name)
    if obj.get("found_by") not in (None, "user"):
        raise TreatmentError(path, line, 'a user\'s row is found by "user": leave it out', field="found_by")
    optional = {name: "" if obj.get(name) is None else require_str(obj, name, path, line, TreatmentError,
                                                                   nonempty=False)
                for name in ("passage", "cited_as")}
    for name, most in _USER_CHARS.items():
        if len(optional[name]) > most:
            raise TreatmentError(path, line, f"longer than {most} characters", field=name)
    return Treatment(require_str(obj, "citing_doc_id", path, line, TreatmentError),
                     require_str(obj, "cited_doc_id", path, line, TreatmentError), _treatment(path, line, obj),
                     optional["passage"], None, None, "user", optional["cited_as"])


def _check_row(path: Path, line: int, row: Treatment, texts: Mapping[str, str] | None,
               doc_ids: Collection[str] | None) -> None:
    if row.citing_doc_id == row.cited_doc_id:
        raise TreatmentError(path, line, "a document cannot treat itself", field="cited_doc_id")
    if doc_ids is not None:
        for name in ("citing_doc_id", "cited_doc_id"):
            if getattr(row, name) not in doc_ids:
                raise TreatmentError(path, line, f'no document "{getattr(row, name)[:80]}" in the corpus',
                                     field=name)
    if texts is not None and row.start is not None and row.end is not None:
        if texts[row.citing_doc_id][row.start:row.end] != row.passage:
            raise TreatmentError(path, line, "passage is not the citing text's characters [start, end): the "
                                 "table was built from another corpus; rebuild it", field="passage")
