"""Evidence passages lie where the index's passages are, and marks and excerpts keep the text intact."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citator.stance.brief.evidence import Span, matched_terms, passage_spans, split_marked, term_keys
from citator.stance.brief.render import excerpt
from citator.engines.passages import PassageSpec, split_passages

WORDS = st.lists(st.sampled_from(["law", "contract", "a", "Grant,", "état", "x\ty", "1795", "—", "void."]),
                 max_size=60)
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", " \n "])


@settings(max_examples=200, deadline=None)
@given(words=WORDS, sep=SEPARATORS, size=st.integers(2, 12), overlap=st.integers(0, 11))
def test_passage_spans_hold_exactly_the_words_of_each_index_passage(words: list[str], sep: str, size: int,
                                                                     overlap: int) -> None:
    spec = PassageSpec(size, min(overlap, size - 1))
    text = sep + sep.join(words) + sep
    passages = split_passages("Title", text, spec)
    spans = passage_spans(text, spec)
    assert len(spans) == len(passages)
    for span, passage in zip(spans, passages):
        assert "Title. " + " ".join(text[span.start:span.end].split()) == passage


def _key(word: str) -> str | None:
    word = word.lower()
    return None if word in {"the", "a"} else word.rstrip("s")


def test_matched_terms_mark_whole_words_whose_key_the_query_has() -> None:
    text = "The contracts of the state; a contractor's grant. Contract!"
    keys = term_keys("A contract, the GRANTS", _key)
    assert keys == {"contract", "grant"}
    assert [text[m.start:m.end] for m in matched_terms(text, keys, _key)] == ["contracts", "grant", "Contract"]


@given(text=st.text(max_size=80), cuts=st.lists(st.integers(0, 80), max_size=8))
def test_split_marked_keeps_the_text_and_marks_exactly_the_spans(text: str, cuts: list[int]) -> None:
    points = sorted({min(c, len(text)) for c in cuts})
    marks = [Span(a, b) for a, b in zip(points[::2], points[1::2]) if a < b]
    pieces = split_marked(text, marks)
    assert "".join(p for p, _ in pieces) == text
    assert [p for p, on in pieces if on] == [text[m.start:m.end] for m in marks]


def test_excerpt_is_the_window_with_most_marks() -> None:
    words = [f"w{i}" for i in range(100)]
    text = " ".join(words)
    at = text.index("w70")
    marks = (Span(text.index("w3 "), text.index("w3 ") + 2), Span(at, at + 3), Span(at + 4, at + 7))
    shown, inside, before, after = excerpt(text, marks, words=10)
    assert before and after and shown.split()[0] == "w62" and len(shown.split()) == 10
    assert [shown[m.start:m.end] for m in inside] == ["w70", "w71"]
    short = "only a few words"
    assert excerpt(short, (Span(0, 4),), words=10) == (short, (Span(0, 4),), False, False)
