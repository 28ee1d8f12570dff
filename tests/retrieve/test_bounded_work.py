"""Bounded work: a query is cut to what the models can read before any tokenising or stemming, and a corpus too
small for run.sh's top-k is refused at build time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citator.data.queries import MAX_QUERY_CHARS, cut_for_search
from citator.data.records import Query
from citator.errors import CorpusError
from citator.retrieve.index_dir import MIN_DOCS, build_index
from citator.retrieve.searcher import StanceSearcher


def test_long_texts_are_cut_at_a_word_and_short_ones_kept() -> None:
    long = Query("q", "word " * 1_000_000, "supported", {"split": "test"})
    short = Query("s", "a short proposition", "refuted")
    cut, kept = cut_for_search([long, short])
    assert len(cut.text) <= MAX_QUERY_CHARS and cut.text.endswith("word") and cut.extra == {"split": "test"}
    assert kept is short
    # No space near the limit: cut at the limit itself.
    assert cut_for_search([Query("n", "x" * (MAX_QUERY_CHARS + 5))])[0].text == "x" * MAX_QUERY_CHARS


def test_the_searcher_reads_only_the_cut_text(small_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    searcher = StanceSearcher(small_index, cold=True)
    seen: list[int] = []
    stem_ids = searcher.lexical_doc.stem_ids
    monkeypatch.setattr(searcher.lexical_doc, "stem_ids", lambda texts: seen.extend(map(len, texts)) or stem_ids(texts))
    huge = Query("q", "negligence duty of care " * 400_000, "supported")
    [got] = searcher.search([huge], 10)
    [expected] = searcher.search(cut_for_search([huge]), 10)
    assert max(seen) <= MAX_QUERY_CHARS
    assert got.doc_ids == expected.doc_ids and len(got.doc_ids) == 10


def test_a_corpus_smaller_than_top_k_is_refused_before_any_encoding(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n" for i in range(4)))
    with pytest.raises(CorpusError, match=f"corpus.jsonl: 4 documents: .* at least {MIN_DOCS}"):
        build_index(corpus, tmp_path / "index", encoder_path=tmp_path / "no-encoder-needed", progress=False)
    assert not (tmp_path / "index").exists()
