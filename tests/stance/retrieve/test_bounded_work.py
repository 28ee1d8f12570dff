"""Bounded work: a query is cut to what the models can read before any tokenising or stemming, and a corpus too
small for run.sh's top-k is refused at build time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hypothesis import given
from hypothesis import strategies as st

from citator.data.queries import MAX_QUERY_CHARS, MEAN_QUERY_CHARS, batch_budget, cut_for_search, water_level
from citator.data import read_queries
from citator.data.records import Query
from citator.errors import CorpusError
from citator.stance.retrieve.index_dir import MIN_DOCS, BuildOptions, build_index
from citator.stance.retrieve.searcher import StanceSearcher

SAMPLE_QUERIES = Path(__file__).resolve().parents[3] / "src" / "citator" / "samples" / "casefacts" / "queries.jsonl"


def test_long_texts_are_cut_at_a_word_and_short_ones_kept() -> None:
    long = Query("q", "word " * 1_000_000, "supported", {"split": "test"})
    short = Query("s", "a short proposition", "refuted")
    cut, kept = cut_for_search([long, short])
    assert len(cut.text) <= MAX_QUERY_CHARS and cut.text.endswith("word") and cut.extra == {"split": "test"}
    assert kept is short
    # No space near the limit: cut at the limit itself.
    assert cut_for_search([Query("n", "x" * (MAX_QUERY_CHARS + 5))])[0].text == "x" * MAX_QUERY_CHARS


@given(st.lists(st.integers(0, 2000), max_size=60), st.integers(0, 50_000))
def test_the_water_level_is_the_largest_cap_within_the_budget(lengths: list[int], budget: int) -> None:
    cap = water_level(lengths, budget)
    spent = sum(min(n, cap) for n in lengths)
    if sum(lengths) <= budget:
        assert cap == max(lengths, default=0)
    else:
        assert spent <= budget < sum(min(n, cap + 1) for n in lengths)


def test_a_batch_of_long_texts_is_held_to_the_batch_budget_and_a_real_batch_is_not_cut() -> None:
    words = "the duty of care owed by a landlord to a tenant under the implied warranty of habitability " * 200
    long = [Query(f"q{i}", f"{i} {words}", "supported") for i in range(311)]
    cut = cut_for_search(long)
    assert sum(len(q.text) for q in cut) <= batch_budget(311) == 311 * MEAN_QUERY_CHARS
    assert min(len(q.text) for q in cut) > MEAN_QUERY_CHARS - 100  # cut at a word near the common length
    # Real propositions stay whole: the bundled sample's, and a batch as long as CaseFacts' 311 longest train/dev
    # propositions (mean 296 characters, the longest 415).
    sample = read_queries(SAMPLE_QUERIES)
    assert cut_for_search(sample) == sample
    real = [Query(f"r{i}", words[:415], "refuted") for i in range(150)] + [
        Query(f"s{i}", words[:190], "supported") for i in range(161)]
    assert sum(len(q.text) for q in real) / len(real) < 300 and cut_for_search(real) == real
    # A lone long proposition is cut only at MAX_QUERY_CHARS, whatever its batch's budget would allow on average.
    [alone] = cut_for_search([Query("a", words, "supported")])
    assert MAX_QUERY_CHARS - 100 < len(alone.text) <= MAX_QUERY_CHARS


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
        build_index(corpus, tmp_path / "index", BuildOptions(tmp_path / "no-encoder-needed", progress=False))
    assert not (tmp_path / "index").exists()
