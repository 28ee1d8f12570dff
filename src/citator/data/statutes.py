"""Statute benchmark formats: sections, query suites and human-label exports, each text hashed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from citator.data.hashing import sha256_captioned, sha256_file
from citator.data.jsonl import iter_jsonl, require_str, require_unique_str
from citator.errors import DataError, StatuteError, SuiteError

KINDS = ("ranking", "outside_corpus", "exact_citation")
SPLITS = ("dev", "heldout")
GRADES = (0, 1, 2, 3)
UNKNOWN = "unknown"
# A target is "nominated" (counts as a hit) at grade 2 or 3.
NOMINATED = 2


@dataclass(frozen=True)
class StatuteSection:
    """One statute section; `doc_id` is its citation as printed (e.g. "NRS 432B.220")."""

    doc_id: str
    heading: str
    text: str
    chapter: str = ""
    chapter_name: str = ""
    subchapter: str = ""
    jurisdiction: str = ""
    revision: str = ""
    source: str = ""

    @property
    def sha256(self) -> str:
        """The section's text hashed with its heading, as a label is bound to both (docs/review.md)."""
        return sha256_captioned(self.heading, self.text)


@dataclass(frozen=True)
class SuiteQuery:
    """One suite line: a ranking query or a control, with nominated targets doc_id -> grade."""

    query_id: str
    text: str
    split: str
    family: str
    kind: str
    targets: Mapping[str, int] = field(default_factory=dict)
    rationale: str = ""

    @property
    def nominated(self) -> frozenset[str]:
        return frozenset(d for d, g in self.targets.items() if g >= NOMINATED)


@dataclass(frozen=True)
class HumanLabel:
    """One reviewer's grades of a (query, section, passage); grades are 0-3 or None for unknown."""

    query_id: str
    doc_id: str
    reviewer: str
    section_grade: int | None
    passage_grade: int | None
    query_sha256: str
    section_sha256: str
    passage_sha256: str
    complete: bool


def _opt_str(obj: dict[str, Any], key: str, path: Path, line: int, error: type[DataError]) -> str:
    value = obj.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise error(path, line, f"expected a string, got {type(value).__name__}", field=key)
    return value


def read_sections(path: str | Path) -> list[StatuteSection]:
    """Read a sections JSONL (`doc_id`, `title`, `text`, optional chapter metadata); refuse duplicates."""
    path = Path(path)
    seen: dict[str, int] = {}
    out: list[StatuteSection] = []
    for line, obj in iter_jsonl(path, StatuteError):
        doc_id = require_unique_str(obj, "doc_id", seen, path, line, StatuteError)
        text = require_str(obj, "text", path, line, StatuteError, nonempty=False)
        meta = {k: _opt_str(obj, k, path, line, StatuteError) for k in
                ("title", "chapter", "chapter_name", "subchapter", "jurisdiction", "revision", "source")}
        if not (text.strip() or meta["title"].strip()):
            raise StatuteError(path, line, "section has neither title nor text", field="text")
        out.append(StatuteSection(
            doc_id, meta["title"], text, meta["chapter"], meta["chapter_name"], meta["subchapter"],
            meta["jurisdiction"], meta["revision"], meta["source"],
        ))
    if not out:
        raise StatuteError(path, None, "sections file has no sections")
    return out


def _targets(obj: dict[str, Any], path: Path, line: int) -> Mapping[str, int]:
    raw = obj.get("targets", {})
    if not isinstance(raw, dict):
        raise SuiteError(path, line, f"expected an object doc_id -> grade, got {type(raw).__name__}", field="targets")
    out: dict[str, int] = {}
    for doc_id, grade in raw.items():
        if isinstance(grade, bool) or grade not in GRADES:
            raise SuiteError(path, line, f'grade of "{doc_id}" must be 0, 1, 2 or 3, got {grade!r}', field="targets")
        out[doc_id] = int(grade)
    return MappingProxyType(dict(sorted(out.items())))


def read_suite(path: str | Path, section_ids: set[str] | None = None) -> list[SuiteQuery]:
    """Read a suite JSONL in file order; with `section_ids`, every target must exist in the corpus."""
    path = Path(path)
    seen: dict[str, int] = {}
    out: list[SuiteQuery] = []
    for line, obj in iter_jsonl(path, SuiteError):
        qid = require_unique_str(obj, "query_id", seen, path, line, SuiteError)
        text = require_str(obj, "text", path, line, SuiteError)
        split = require_str(obj, "split", path, line, SuiteError)
        family = require_str(obj, "family", path, line, SuiteError)
        kind = require_str(obj, "kind", path, line, SuiteError)
        if kind not in KINDS:
            raise SuiteError(path, line, f"kind must be one of {', '.join(KINDS)}, got {kind!r}", field="kind")
        targets = _targets(obj, path, line)
        if kind == "outside_corpus" and targets:
            raise SuiteError(path, line, "outside_corpus queries must have no targets", field="targets")
        if kind != "outside_corpus" and not any(g >= NOMINATED for g in targets.values()):
            raise SuiteError(path, line, "needs at least one target with grade 2 or 3", field="targets")
        if section_ids is not None:
            missing = sorted(set(targets) - section_ids)
            if missing:
                raise SuiteError(path, line, f'target "{missing[0]}" is not in the corpus', field="targets")
        out.append(SuiteQuery(qid, text, split, family, kind, targets, _opt_str(obj, "rationale", path, line, SuiteError)))
    if not out:
        raise SuiteError(path, None, "suite has no queries")
    families: dict[str, str] = {}
    for q in out:
        # Held-out and dev must not share a family, or the intervals over families would leak.
        if families.setdefault(q.family, q.split) != q.split:
            raise SuiteError(path, None, f'family "{q.family}" appears in splits {families[q.family]} and {q.split}')
    return out


def _grade(obj: dict[str, Any], key: str, path: Path, line: int, error: type[DataError]) -> int | None:
    value = obj.get(key)
    if value == UNKNOWN:
        return None
    if isinstance(value, bool) or value not in GRADES:
        raise error(path, line, f'must be 0, 1, 2, 3 or "unknown", got {value!r}', field=key)
    return int(value)


def read_labels(path: str | Path, error: type[DataError] = DataError) -> list[HumanLabel]:
    """Read a human-label export (one reviewer's grades of one pool item per line).

    A reviewer's second label of the same item under the same hashes is refused: counted twice, it would move the
    consensus. One under other hashes (a label of an older text) is kept; the benchmark sets it aside as stale.
    """
    path = Path(path)
    out: list[HumanLabel] = []
    seen: dict[tuple[str, ...], int] = {}
    for line, obj in iter_jsonl(path, error):
        strs = {k: require_str(obj, k, path, line, error) for k in
                ("query_id", "doc_id", "reviewer", "query_sha256", "section_sha256", "passage_sha256")}
        complete = obj.get("complete")
        if not isinstance(complete, bool):
            raise error(path, line, f"expected true or false, got {complete!r}", field="complete")
        key = tuple(strs.values())  # the item, the reviewer and the three hashes
        if key in seen:
            raise error(path, line, f"duplicate label (first on line {seen[key]})", field="reviewer")
        seen[key] = line
        out.append(HumanLabel(
            strs["query_id"], strs["doc_id"], strs["reviewer"],
            _grade(obj, "section_grade", path, line, error), _grade(obj, "passage_grade", path, line, error),
            strs["query_sha256"], strs["section_sha256"], strs["passage_sha256"], complete,
        ))
    return out


def snapshot_manifest(path: str | Path, sections: list[StatuteSection]) -> dict[str, Any]:
    """Where a sections file came from: path name, sha256, sources and revision stamps seen."""
    return {
        "file": Path(path).name,
        "sha256": sha256_file(path),
        "sections": len(sections),
        "sources": sorted({s.source.split(":")[0] for s in sections if s.source}),
        "revisions": sorted({s.revision for s in sections if s.revision})[:5],
    }
