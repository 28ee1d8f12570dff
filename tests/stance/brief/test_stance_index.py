"""StanceIndex ranks exactly as the searcher does; the brief's columns are search's answers; hits explain themselves."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import citator
from citator.stance.brief.index import MAX_PROPOSITION_CHARS, StanceIndex
from citator.data.queries import cut_for_search
from citator.data.records import Query
from citator.errors import CitatorError, IndexDirError, PropositionError
from citator.stance.retrieve.layout import DOCUMENT_OFFSETS as OFFSETS, DOCUMENTS
from citator.stance.retrieve.layout import read_manifest
from citator.engines.passages import PassageSpec, split_passages
from citator.stance.retrieve.searcher import StanceSearcher
from fixtures.brief import HOSTILE_ID


def _texts(small_stance_set: dict[str, Path], n: int = 8) -> list[str]:
    rows = [json.loads(line) for line in small_stance_set["queries"].open()]
    return list(dict.fromkeys(r["text"] for r in rows))[:n]


def _ranking(hits) -> list[tuple[str, float]]:  # type: ignore[no-untyped-def]
    return [(h.doc_id, h.score) for h in hits]


@pytest.mark.parametrize("which", ["brief_index", "brief_contrast_index"])
def test_brief_columns_are_search_answers_and_the_searchers_own(which: str, request: pytest.FixtureRequest,
                                                                 small_stance_set: dict[str, Path]) -> None:
    index_dir = request.getfixturevalue(which)
    index = StanceIndex.open(index_dir)
    searcher = StanceSearcher(index_dir)
    assert index.ranks_stance == (which == "brief_contrast_index")
    two = 0
    for text in _texts(small_stance_set):
        brief = index.brief(text, k=5)
        # The searcher's own documents and scores for the proposition asked with both stances in one batch.
        asked = searcher.search([Query("s", text, "supported"), Query("r", text, "refuted")], k=5)
        supported = [(d.doc_id, d.score) for d in asked[0].results]
        refuted = [(d.doc_id, d.score) for d in asked[1].results]
        for stance, line in (("supported", supported), ("refuted", refuted)):
            assert _ranking(index.search(text, stance=stance, k=5)) == line
        if brief.stance_ranked:  # two columns only where the index reads the stance and they differ
            assert index.ranks_stance and [d for d, _ in supported] != [d for d, _ in refuted]
            assert _ranking(brief.column("supported")) == supported and _ranking(brief.column("refuted")) == refuted
            two += 1
        else:  # else one list, the supported answer, never two identical columns
            assert brief.supported is None and brief.refuted is None
            assert _ranking(brief.column("relevant")) == supported and len(supported) == 5
            assert [d for d, _ in supported] == [d for d, _ in refuted] or not index.ranks_stance
        assert _ranking(index.search(text, stance="all", k=3)) == [
            (d.doc_id, d.score) for d in searcher.search([Query("a", text, "all")], k=3)[0].results]
        if which == "brief_index":  # no contrast: a stance asked alone gets the same answer, to the bit
            for stance, line in zip(("supported", "refuted"), asked):
                alone = searcher.search([Query(stance, text, stance)], k=5)[0].results
                assert alone == line.results
    assert two == 0 or index.ranks_stance  # (untrained, a contrast has nothing to tell the stances apart by)


def test_hits_carry_the_passage_that_scored_with_matched_terms_and_each_signal(
        brief_index: Path, small_stance_set: dict[str, Path]) -> None:
    index = StanceIndex.open(brief_index)
    searcher = index.searcher
    text = _texts(small_stance_set)[0]
    hits = index.search(text, stance="supported", k=10)
    assert [h.rank for h in hits] == list(range(1, 11))
    with pytest.raises(dataclasses.FrozenInstanceError):
        hits[0].score = 1.0  # type: ignore[misc]
    signals = searcher.signal_matrices([Query("s", text, "supported")], searcher.needed_signals())
    spec = PassageSpec(searcher.config.passage_words, searcher.config.passage_overlap)
    stem = index._key
    query_stems = {stem(w) for w in text.replace(",", " ").replace(".", " ").split()} - {None}
    marked = 0
    for hit in hits:
        doc = index.document(hit.doc_id)
        ev = hit.evidence
        assert ev.text == doc.text[ev.start:ev.end]
        # The passage is the index's passage number `ev.passage` of that document.
        assert " ".join(ev.text.split()) == split_passages("", doc.text, spec)[ev.passage]
        by_name = {s.name: s for s in hit.signals}
        assert set(by_name) == set(signals)
        position = searcher.doc_ids.index(hit.doc_id)
        for name, matrix in signals.items():
            assert by_name[name].score == pytest.approx(float(matrix[0, position]), abs=1e-5)
            assert by_name[name].rank == 1 + int((matrix[0] > matrix[0, position]).sum())
        # Dense MaxP scores a document by its best passage: the evidence is that passage, scored as the search did.
        assert ev.signal == "dense" and ev.score == by_name["dense"].score
        for m in ev.marks:
            assert stem(ev.text[m.start:m.end]) in query_stems
        marked += len(ev.marks)
        assert hit.memory is None  # untrained index
    assert marked > 0


def test_passage_in_place_is_the_evidence_span_of_the_document(brief_index: Path,
                                                               small_stance_set: dict[str, Path]) -> None:
    index = StanceIndex.open(brief_index)
    text = _texts(small_stance_set)[1]
    for hit in index.search(text, stance="refuted", k=5):
        doc, span, marks = index.passage_in_place(hit.doc_id, hit.evidence.passage, text)
        assert (span.start, span.end) == (hit.evidence.start, hit.evidence.end)
        assert [doc.text[m.start:m.end] for m in marks] == [hit.evidence.text[m.start:m.end]
                                                            for m in hit.evidence.marks]
    with pytest.raises(PropositionError, match="no passage 99"):
        index.passage_in_place(hit.doc_id, 99, text)
    with pytest.raises(PropositionError, match="no document"):
        index.document("no-such-doc")


def test_titles_and_citations_come_from_the_corpus(brief_index: Path) -> None:
    index = StanceIndex.open(brief_index)
    hits = {h.doc_id: h for h in index.search("a grant of land is a contract the legislature may not void", k=41)}
    assert hits[HOSTILE_ID].label == "1 Test 1 (2026)" and hits[HOSTILE_ID].title.startswith("<script>")
    oyez = [h for h in hits.values() if h.doc_id[:4].isdigit() and "." in h.doc_id]
    assert oyez and all(h.label.startswith(h.doc_id[:4]) or "U.S." in h.label for h in oyez)


@pytest.mark.parametrize("text,k,stance,message", [
    ("", 5, "supported", "empty"), ("   \n", 5, "supported", "empty"), ("x" * 513, 5, "supported", "513"),
    ("law \udcff", 5, "supported", "not UTF-8"), (b"grant", 5, "supported", "must be text"),
    ("law", 0, "supported", "k must"), ("law", 101, "supported", "k must"), ("law", 5, "overruled", "stance"),
])
def test_bad_requests_are_refused_with_one_line(brief_index: Path, text: str, k: int, stance: str,
                                                 message: str) -> None:
    index = StanceIndex.open(brief_index)
    with pytest.raises(PropositionError, match=message):
        index.search(text, stance=stance, k=k)


# Any Python value a caller might pass where the API takes a path, a text, a number or a flag.
_ANY = st.one_of(st.none(), st.booleans(), st.integers(-2, 10**30), st.floats(), st.binary(max_size=8),
                 st.text(max_size=12), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                                           st.integers(), max_size=2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_ANY, where=st.sampled_from(["open", "open cold", "open ray", "document", "passage", "passage text",
                                         "cited", "search k", "search stance", "brief"]))
def test_any_argument_is_answered_or_refused_with_a_typed_error(brief_index: Path, value: object, where: str) -> None:
    """Every argument of StanceIndex, whatever its type, ends in an answer or a CitatorError (one line), never
    Python's TypeError or AttributeError from inside: StanceIndex.open(123), passage_in_place(id, 1.5, ...)."""
    index = _opened(brief_index)
    doc_id = index.searcher.doc_ids[-1]
    calls = {
        "open": lambda: StanceIndex.open(value),  # type: ignore[arg-type]
        "open cold": lambda: StanceIndex.open(brief_index, cold=value),  # type: ignore[arg-type]
        "open ray": lambda: StanceIndex.open(brief_index, ray=value),  # type: ignore[arg-type]
        "document": lambda: index.document(value),  # type: ignore[arg-type]
        "passage": lambda: index.passage_in_place(doc_id, value, "law"),  # type: ignore[arg-type]
        "passage text": lambda: index.passage_in_place(doc_id, 0, value),  # type: ignore[arg-type]
        "cited": lambda: index.cited(value),  # type: ignore[arg-type]
        "search k": lambda: index.search("a grant of land", k=value),  # type: ignore[arg-type]
        "search stance": lambda: index.search("a grant of land", stance=value),  # type: ignore[arg-type]
        "brief": lambda: index.brief(value),  # type: ignore[arg-type]
    }
    try:
        calls[where]()
    except CitatorError as exc:
        assert "\n" not in str(exc)
    if where == "passage" and (isinstance(value, bool) or not isinstance(value, int)):
        with pytest.raises(PropositionError, match="passage must be a whole number"):
            calls[where]()
    if where == "open" and not isinstance(value, str):
        with pytest.raises(IndexDirError, match="index_dir must be a path"):
            calls[where]()


_OPENED: dict[Path, StanceIndex] = {}


def _opened(index_dir: Path) -> StanceIndex:
    if index_dir not in _OPENED:
        _OPENED[index_dir] = StanceIndex.open(index_dir)
    return _OPENED[index_dir]


def test_an_index_rebuilt_under_an_open_one_is_served_as_rebuilt(brief_index: Path, brief_corpus: Path,
                                                                tmp_path: Path) -> None:
    # An opened StanceIndex follows its manifest (stance/retrieve/current.py): after a build (or an update) switches
    # it, the next call answers from the new generation, never from the removed folder.
    index_dir = tmp_path / "index"
    shutil.copytree(brief_index, index_dir, ignore=shutil.ignore_patterns("service"))
    opened = StanceIndex.open(index_dir)
    doc_id = opened.search("a grant of land", k=1)[0].doc_id
    built = StanceIndex.build(brief_corpus, index_dir)
    assert opened.document(doc_id) == built.document(doc_id)
    assert opened.searcher.manifest.fingerprint == built.searcher.manifest.fingerprint
    with pytest.raises(IndexDirError, match="is a file, not an index directory"):
        StanceIndex.open(brief_corpus)


def test_a_brief_has_its_columns_and_no_other(brief_index: Path) -> None:
    brief = StanceIndex.open(brief_index).brief("a grant of land", k=1)
    assert brief.column("relevant") == brief.relevant and [c[0] for c in brief.columns()] == ["relevant"]
    for name in ("supported", "refuted"):
        with pytest.raises(PropositionError, match="no .* column: Relevant authority"):
            brief.column(name)
    for name in ("all", "bogus"):
        with pytest.raises(PropositionError, match="the columns"):
            brief.column(name)


def test_a_proposition_is_read_whole_or_refused(brief_index: Path) -> None:
    # The longest proposition accepted is searched to its last word, alone or as a brief's pair of queries; white
    # space does not count against it.
    words = ("contract " * 200)[: MAX_PROPOSITION_CHARS - len(" void")] + " void"
    for batch in (1, 2):
        (read,) = {q.text for q in cut_for_search([Query(f"q{i}", words, "supported") for i in range(batch)])}
        assert read == words
    index = StanceIndex.open(brief_index)
    padded = words.replace(" ", "   \n ")
    assert len(padded) > MAX_PROPOSITION_CHARS and index.brief(padded, k=1).proposition == words
    with pytest.raises(PropositionError, match=f"at most {MAX_PROPOSITION_CHARS}"):
        index.brief(words + " x", k=1)


def test_an_index_missing_its_document_copy_is_refused_as_damaged(brief_index: Path, tmp_path: Path) -> None:
    # Every file of an index is recorded in its manifest: a document copy that went missing is damage, not an
    # older format to fall back from.
    copy = tmp_path / "index"
    shutil.copytree(brief_index, copy)
    data = copy / read_manifest(copy).data_dir
    (data / DOCUMENTS).unlink()
    with pytest.raises(IndexDirError, match=f"{DOCUMENTS}( is)? missing"):
        StanceIndex.open(copy)


@pytest.mark.parametrize("damage", ["truncated", "swapped", "offsets"])
def test_a_damaged_document_copy_is_refused(brief_index: Path, tmp_path: Path, damage: str) -> None:
    copy = tmp_path / "index"
    shutil.copytree(brief_index, copy)
    data = copy / read_manifest(copy).data_dir
    lines = (data / DOCUMENTS).read_bytes().splitlines(keepends=True)
    if damage == "truncated":
        (data / DOCUMENTS).write_bytes(b"".join(lines)[:-10])
    elif damage == "swapped":  # another document's id in the first line, offsets unchanged
        first = re.sub(rb'"doc_id": "(.)', lambda m: b'"doc_id": "' + (b"Y" if m.group(1) == b"Z" else b"Z"),
                       lines[0], count=1)
        (data / DOCUMENTS).write_bytes(b"".join([first, *lines[1:]]))
    else:
        np.save(data / OFFSETS, np.zeros(3, dtype=np.int64))
    with pytest.raises(IndexDirError, match="rebuild"):
        index = StanceIndex.open(copy)
        for doc_id in index.searcher.doc_ids:
            index.document(doc_id)


def test_public_names_load_on_first_use_and_import_citator_stays_light() -> None:
    assert citator.StanceIndex is StanceIndex
    assert {"StanceIndex", "Brief", "Hit"} <= set(citator.__all__)
    with pytest.raises(AttributeError):
        citator.NoSuchName  # noqa: B018
    code = "import sys, citator; print(','.join(m for m in ('numpy', 'torch', 'citator.stance.brief') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip() == ""
