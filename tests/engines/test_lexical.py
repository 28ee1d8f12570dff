"""Our BM25 equals the Lucene BM25 formula computed by hand over the same stemmed tokens."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from citator.engines.lexical import LexicalIndex

DOCS = [
    "The state banned the sale of contraceptives to married couples.",
    "Police searched the car without a warrant; the court suppressed the evidence.",
    "A warrant is required to search a home, the Court held.",
    "Married couples have a right to privacy in the home.",
]


def test_scores_match_lucene_formula_by_hand(tmp_path) -> None:  # type: ignore[no-untyped-def]
    k1, b = 0.9, 0.4
    index = LexicalIndex.build(DOCS, k1=k1, b=b)
    index.save(tmp_path / "lex")
    loaded = LexicalIndex.load(tmp_path / "lex")
    query = "warrant search of a married couple's home"
    ours = loaded.score_all([query])[0]

    tok = loaded.tokenizer
    doc_tokens = [tok.decode([ids])[0] for ids in tok.tokenize(DOCS, update_vocab="never", show_progress=False, return_as="ids")]
    q_tokens = tok.decode(loaded.stem_ids([query]))[0]
    assert "search" in q_tokens  # "search" matches the indexed stem of "searched"
    assert "warrant" in q_tokens and "a" not in q_tokens  # stemmed, stopwords gone
    n = len(DOCS)
    avgdl = sum(len(d) for d in doc_tokens) / n
    expected = np.zeros(n)
    for i, toks in enumerate(doc_tokens):
        tf = Counter(toks)
        for t in q_tokens:
            df = sum(1 for d in doc_tokens if t in d)
            if not tf[t]:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            # Lucene (>= 8) drops the constant (k1 + 1) numerator factor; ranking is unchanged.
            expected[i] += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(toks) / avgdl))
    assert ours == pytest.approx(expected, rel=1e-5)


def test_unknown_words_score_zero() -> None:
    index = LexicalIndex.build(DOCS)
    assert index.score_all(["zzzz qqqq"]).tolist() == [[0.0] * len(DOCS)]


def test_stem_ids_match_unseen_word_forms_without_growing_the_vocabulary() -> None:
    index = LexicalIndex.build(DOCS)
    vocab = dict(index.tokenizer.word_to_id)
    # Only "couples" was indexed: by surface form "couple" matches nothing, by stem it scores like "couples".
    assert index.score_all(["couple"]).tolist() == index.score_all(["couples"]).tolist()
    by_stem = index.score_ids(index.stem_ids(["couple", "the couple couple"]))
    assert by_stem[0].tolist() == index.score_all(["couples"])[0].tolist()
    assert by_stem[1] == pytest.approx(2 * by_stem[0])  # stopwords dropped, a repeated term counts again
    assert index.stem_ids(["zzzz the"]) == [[]] and index.tokenizer.word_to_id == vocab


def test_numba_scorer_gives_the_same_scores() -> None:
    pytest.importorskip("numba")
    plain = LexicalIndex.build(DOCS)
    fast = LexicalIndex.build(DOCS)
    assert fast.use_numba()
    queries = ["warrant search of a married couple's home", "contraceptives", "zzz"]
    assert np.allclose(fast.score_all(queries), plain.score_all(queries))
