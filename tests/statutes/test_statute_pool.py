"""Keyword pools and passages: exactly 30, deterministic ties, the best-matching window within the byte bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from citator.statutes.keyword import Analyzer, KeywordIndex
from citator.statutes.passages import MAX_PASSAGE_BYTES, best_window, extract_passage
from citator.statutes.pool import POOL_SIZE, build_pool
from citator.data.statutes import StatuteSection, SuiteQuery, read_sections
from citator.errors import StatuteError


def _idf(term: str) -> float:
    return {"report": 2.0, "abus": 1.5, "child": 1.0}.get(term, 0.1)


def test_window_picks_the_lines_that_match() -> None:
    analyzer = Analyzer()
    text = "\n".join([f"{i}. Filler about fees and forms number {i}." for i in range(40)]
                     + ["41. A teacher must report suspected child abuse."] + ["42. More filler."] * 40)
    window = best_window(text, frozenset(analyzer.terms("report child abuse")), analyzer.terms, _idf, limit=200)
    assert "41. A teacher must report suspected child abuse." in window
    assert len(window.encode()) <= 200
    # Equal scores: the earliest window wins.
    twice = "\n".join(["1. Must report."] + ["Filler line of text."] * 30 + ["32. Must report."])
    window = best_window(twice, frozenset(analyzer.terms("report")), analyzer.terms, _idf, limit=60)
    assert window.startswith("1. Must report.") and "32." not in window


def test_long_lines_are_cut_at_words_within_the_bound() -> None:
    analyzer = Analyzer()
    text = " ".join(["word"] * 1000) + " report"
    window = best_window(text, frozenset(analyzer.terms("report")), analyzer.terms, _idf)
    assert window.endswith("report") and len(window.encode()) <= MAX_PASSAGE_BYTES


def test_empty_body_falls_back_to_the_heading() -> None:
    analyzer = Analyzer()
    section = StatuteSection("NRS 1.1", "Short title.", "")
    passage = extract_passage(section, frozenset(), analyzer.terms, _idf)
    assert passage.caption == "NRS 1.1 — Short title." and passage.text == "Short title."


def test_pool_is_exactly_30_and_deterministic(nrs_sections: Path) -> None:
    index = KeywordIndex(read_sections(nrs_sections))
    query = SuiteQuery("q", "zebra xylophone", "dev", "f", "ranking", {"NRS 0.020": 3})
    pool = build_pool(index, query)
    # No term matches: the pool is corpus order, kept but flagged as a fallback.
    assert pool.fallback and len(pool.items) == POOL_SIZE
    assert pool.doc_ids == [s.doc_id for s in index.sections[:POOL_SIZE]]
    real = SuiteQuery("q2", "severability of a provision held invalid", "dev", "f", "ranking", {"NRS 0.020": 3})
    first, again = build_pool(index, real), build_pool(index, real)
    assert first == again and not first.fallback and first.doc_ids[0] == "NRS 0.020"
    assert [i.keyword_rank for i in first.items] == list(range(1, POOL_SIZE + 1))
    scores = [i.keyword_score for i in first.items]
    assert scores == sorted(scores, reverse=True)


def test_keyword_scores_match_a_plain_bm25s_pipeline(nrs_sections: Path) -> None:
    import bm25s
    import Stemmer

    sections = read_sections(nrs_sections)
    index = KeywordIndex(sections)
    stemmer = Stemmer.Stemmer("english")
    peer = bm25s.BM25()
    peer.index(bm25s.tokenize([f"{s.heading}\n{s.text}" for s in sections], stopwords="en", stemmer=stemmer,
                              show_progress=False), show_progress=False)
    query = "who must report child abuse and when"
    docs, scores = peer.retrieve(bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False),
                                 k=10, show_progress=False)
    theirs = {sections[int(d)].doc_id: float(x) for d, x in zip(docs[0], scores[0])}
    ours = {index.sections[h.index].doc_id: h.score for h in index.search(query, 10)}
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_a_word_form_the_corpus_lacks_scores_by_its_stem(nrs_sections: Path) -> None:
    index = KeywordIndex(read_sections(nrs_sections))
    # "abuses" never occurs in the fixture; "abused" does (stem "abus"), so both queries score alike.
    assert index.scores("abuses").tolist() == index.scores("abused").tolist()
    assert index.scores("abuses").any()


def test_a_corpus_smaller_than_the_pool_is_refused() -> None:
    sections = [StatuteSection(f"NRS 1.{i}", "Heading", "text") for i in range(5)]
    with pytest.raises(StatuteError, match="a pool needs 30"):
        build_pool(KeywordIndex(sections), SuiteQuery("q", "text", "dev", "f", "ranking", {"NRS 1.1": 3}))
