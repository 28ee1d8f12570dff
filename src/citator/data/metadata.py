"""Document metadata: the schema (docs/metadata.md), its validation, and the short citation it renders.

Metadata comes from extra keys of a corpus record or from a side file (`--metadata FILE.jsonl`, one object per
line keyed by `doc_id`), whose values replace the record's own. Every value is a string or a finite number; null
means absent. The documented keys are checked for what they mean: `date` is an ISO date (the decision date),
`url` an http(s) address (a page links it), `citation`, `court` and `jurisdiction` text.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from citator.data.jsonl import encodable, iter_jsonl, require_unique_str
from citator.data.numbers import finite_number
from citator.data.records import Document
from citator.errors import MetadataError

Scalar = Union[str, int, float]
Metadata = Mapping[str, Scalar]
# The keys the schema names; any other string or number key is kept as it is.
NAMED = ("citation", "date", "court", "jurisdiction", "url")
TEXT_KEYS = ("citation", "court", "jurisdiction", "url")
MAX_VALUE_CHARS = 2000


def iso_date(text: str) -> datetime.date | None:
    """`text` as a date when it is one written YYYY-MM-DD, else None."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return None


def check_value(key: str, value: Any, where: tuple[str | Path, int]) -> Scalar | None:
    """A metadata value as stored (None: absent), or MetadataError naming file, line and field."""
    path, line = where
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise MetadataError(path, line, f"expected a string or a number, got {_kind(value)}", field=key)
    if isinstance(value, (int, float)) and (key in TEXT_KEYS or key == "date"):
        raise MetadataError(path, line, f"expected a string, got {type(value).__name__}", field=key)
    if isinstance(value, (int, float)) and not finite_number(value):
        raise MetadataError(path, line, "expected a finite number", field=key)
    if key == "docket" and isinstance(value, (int, float)) and not (float(value).is_integer() and value >= 0):
        raise MetadataError(path, line, "a docket is text or a whole number", field=key)
    if isinstance(value, str):
        if not encodable(value) or len(value) > MAX_VALUE_CHARS:
            raise MetadataError(path, line, "holds a lone UTF-16 surrogate escape" if not encodable(value)
                                else f"longer than {MAX_VALUE_CHARS} characters", field=key)
        if key == "date" and iso_date(value) is None:
            raise MetadataError(path, line, f"{value[:40]!r} is not an ISO date (YYYY-MM-DD)", field="date")
        if key == "url" and not value.startswith(("https://", "http://")):
            raise MetadataError(path, line, "a url starts with https:// or http://", field="url")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return f"a {'list' if isinstance(value, list) else 'JSON object'} (metadata values are scalars)"
    return type(value).__name__


# A key is what `--filter "KEY OP VALUE"` names: no space, no operator character, no control character.
_KEY = re.compile(r"[^\W\d][\w.:/-]{0,99}")
# A document's own fields: metadata never replaces them.
_OWN_FIELDS = ("doc_id", "title", "text")


def is_key(key: str) -> bool:
    """Whether `key` can be a metadata key (a name a filter can give)."""
    return bool(_KEY.fullmatch(key)) and encodable(key) and key not in _OWN_FIELDS


def check_key(key: str, where: tuple[str | Path, int]) -> str:
    """`key` as a metadata key, or MetadataError naming file, line and field."""
    if key in _OWN_FIELDS:
        raise MetadataError(where[0], where[1], f"{key!r} is the document's own field, not metadata", field=key)
    if not is_key(key):
        raise MetadataError(where[0], where[1], "a metadata key is a name of 1-100 letters, digits or _ . : / -, "
                            "starting with a letter or _ (it is what --filter names)", field=key[:40])
    return key


def from_record(extra: Mapping[str, Any], where: tuple[str | Path, int]) -> dict[str, Scalar]:
    """The metadata of a corpus record's extra keys: the named keys checked, other strings and numbers kept; other
    extra values (lists, objects, text longer than a value is, such as a syllabus) and keys no filter could name
    ("case name") are no metadata and stay only in the document's copy."""
    out: dict[str, Scalar] = {}
    for key, value in extra.items():
        if key in NAMED or _is_metadata(key, value):
            checked = check_value(check_key(key, where), value, where)
            if checked is not None:
                out[key] = checked
    return out


@dataclass(frozen=True)
class SideMetadata:
    """A `--metadata` file read and checked: each listed document's metadata, and the line it is on."""

    path: str
    rows: Mapping[str, Metadata]
    lines: Mapping[str, int]

    def check_known(self, doc_ids: Sequence[str]) -> None:
        """Every doc_id of the file is one of the corpus's."""
        known = set(doc_ids)
        for doc_id, line in self.lines.items():
            if doc_id not in known:
                raise MetadataError(self.path, line, f'unknown doc_id "{doc_id[:80]}": no corpus document has it',
                                    field="doc_id")

    def apply(self, docs: Sequence[Document]) -> list[Document]:
        """The documents with the file's metadata over their own extra keys."""
        return [Document(d.doc_id, d.title, d.text, {**d.extra, **self.rows[d.doc_id]}) if d.doc_id in self.rows
                else d for d in docs]


def read_side_metadata(path: str | Path) -> SideMetadata:
    """Read a metadata file: one JSON object per line, `doc_id` and any metadata keys (every value a string, a
    number or null)."""
    seen: dict[str, int] = {}
    rows: dict[str, Metadata] = {}
    for line, obj in iter_jsonl(path, MetadataError):
        doc_id = require_unique_str(obj, "doc_id", seen, path, line, MetadataError)
        row: dict[str, Scalar] = {}
        for key, value in obj.items():
            if key != "doc_id" and (checked := check_value(check_key(key, (path, line)), value,
                                                           (path, line))) is not None:
                row[key] = checked
        rows[doc_id] = row
    return SideMetadata(str(path), rows, seen)


def document_metadata(doc: Document) -> dict[str, Scalar]:
    """The metadata a document carries in its extra keys (as `from_record` kept them)."""
    return {k: v for k, v in doc.extra.items() if _is_metadata(k, v)}


def _is_metadata(key: str, value: Any) -> bool:
    """Whether a corpus record's extra key and value are metadata (else they stay only in the document's copy)."""
    return (isinstance(value, (str, int, float)) and not isinstance(value, bool) and is_key(key)
            and not (isinstance(value, str) and len(value) > MAX_VALUE_CHARS))


def with_metadata(doc: Document, metadata: Metadata) -> Document:
    """`doc` carrying `metadata` (an index's checked table row) in place of the metadata its stored copy has: what
    is shown is what was validated."""
    return Document(doc.doc_id, doc.title, doc.text,
                    {**{k: v for k, v in doc.extra.items() if not _is_metadata(k, v)}, **metadata})


# Month abbreviations of a legal citation's date ("June 6, 2005", "Sept. 30, 2010").
_MONTHS = ("Jan.", "Feb.", "Mar.", "Apr.", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.")
# The Supreme Court's names, lower case without dots: its slip opinions are cited "(U.S. Oct. 11, 2016)".
_SUPREME_COURT = {"supreme court of the united states", "united states supreme court", "us supreme court",
                  "supreme court of the us", "scotus"}
# A docket written with its own "No." or "Nos." (cases decided together).
_DOCKET_NUMBER = re.compile(r"^(Nos?)(?:\.\s*|\s+)(?=\S)")


def _docket(metadata: Metadata) -> str | None:
    """The metadata's docket as cited, "No. 15-9173" or "Nos. 14-1, 14-2"; None without one."""
    value = metadata.get("docket")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, int) and value < 0):
        return None
    text = " ".join(str(value).split())
    if re.fullmatch(r"Nos?\.?", text):
        return None
    found = _DOCKET_NUMBER.match(text)
    number = text[found.end():] if found else text
    return f"{found.group(1) if found else 'No'}. {number}" if number else None


def _court(metadata: Metadata) -> str:
    """The court as a slip opinion's citation names it: "U.S." for the Supreme Court, else as the metadata has it."""
    court = metadata.get("court")
    if not isinstance(court, str) or not court.strip():
        return ""
    return "U.S." if " ".join(court.lower().replace(".", "").split()) in _SUPREME_COURT else " ".join(court.split())


def short_citation(title: str, metadata: Metadata) -> str | None:
    """The usual short form, "California v. Acevedo, 500 U.S. 565 (1991)": title, reporter citation and the year
    of the decision date. A decision not yet in a reporter is cited by its docket number, court and full date, as
    "Bosse v. Oklahoma, No. 15-9173 (U.S. Oct. 11, 2016)" ("U.S." for the Supreme Court, another court as its
    metadata names it: no abbreviation table is kept). None with neither a citation nor a docket."""
    title = " ".join(title.split())
    date = metadata.get("date")
    day = iso_date(date) if isinstance(date, str) else None
    citation = metadata.get("citation")
    if isinstance(citation, str) and citation.strip():
        cited = f"{citation.strip()} ({day.year})" if day is not None else citation.strip()
    else:
        docket = _docket(metadata)
        if docket is None:
            return None
        on = f"{_MONTHS[day.month - 1]} {day.day}, {day.year}" if day is not None else ""
        when = " ".join(part for part in (_court(metadata), on) if part)
        cited = f"{docket} ({when})" if when else docket
    return f"{title}, {cited}" if title else cited
