"""What a page decides before and after a search: whether a text is an exact citation of one kind of authority, when
the best match is weak, and which words of a passage are marked."""

from __future__ import annotations

import pytest

from citator.engines.lexical import term_key
from citator.stance.brief.evidence import highlight_key, matched_terms
from citator.stance.brief.kind import cited_kind, wrong_kind
from citator.stance.brief.notice import THRESHOLD, best_match, weak


@pytest.mark.parametrize(("text", "kind"), [
    ("NRS 200.010", "statute"), ("see NRS 200.010.", "statute"), ("Nev. Rev. Stat. § 200.010", "statute"),
    ("42 U.S.C. § 1983", "statute"), ("28 C.F.R. § 35.130", "statute"), ("D.C. Code § 16-2301", "statute"),
    ("500 U.S. 565", "case"), ("California v. Acevedo, 500 U.S. 565 (1991)", "case"),
    # Not a citation alone: a proposition naming one, a bare number, a case name with no report, plain words.
    ("Under 42 U.S.C. § 1983 a state official may be sued for damages", None),
    ("The rule of Miranda v. Arizona, 384 U.S. 436 (1966) binds the states", None),
    ("200.010", None), ("Miranda v. Arizona", None), ("a grant of land is a contract", None), ("", None),
])
def test_an_exact_citation_and_its_kind(text: str, kind: str | None) -> None:
    assert cited_kind(text) == kind


def test_the_wrong_kind_gets_one_sentence_and_the_right_kind_none() -> None:
    said = wrong_kind("NRS 200.010", statutes=False)
    assert said is not None and "holds court decisions, not statutes" in said
    sentence = said.replace("NRS 200.010", "")
    assert sentence.count(". ") == 0 and sentence.endswith(".")
    assert wrong_kind("NRS 200.010", statutes=True) is None
    assert "holds statute sections, not cases" in (wrong_kind("500 U.S. 565", statutes=True) or "")
    assert wrong_kind("500 U.S. 565", statutes=False) is None
    assert wrong_kind("a grant of land is a contract", statutes=False) is None


def test_marks_skip_stopwords_bm25_keeps_and_keep_what_matched() -> None:
    key = term_key()
    assert key("when") is not None and key("have") is not None  # BM25's short list keeps them
    marked = highlight_key(key)
    assert marked("when") is None and marked("Have") is None and marked("which") is None
    assert marked("contracts") == key("contracts")
    text = "When the states have granted land, the grant is a contract."
    keys = {k for w in ("when", "have", "grant", "contract") if (k := marked(w)) is not None}
    words = [text[s.start:s.end] for s in matched_terms(text, keys, marked)]
    assert words == ["granted", "grant", "contract"]


def test_no_good_match_reads_the_dense_signal_only() -> None:
    from citator.stance.brief.evidence import Span
    from citator.stance.brief.records import Evidence, Hit, SignalScore

    def hit(dense: float | None) -> Hit:
        signals = (SignalScore("bm25", 30.0, 1),) + ((SignalScore("dense", dense, 1),) if dense is not None else ())
        return Hit(1, "d", "t", "l", 1.0, Evidence(0, 0, 1, "x", (Span(0, 1),), "dense", 0.0), signals, None)

    assert best_match([hit(0.2), hit(0.5)]) == 0.5 and not weak([hit(0.2), hit(0.5)])
    assert weak([hit(THRESHOLD - 0.01)]) and not weak([hit(THRESHOLD)])
    assert best_match([hit(None)]) is None and not weak([hit(None)])  # nothing computed, nothing said
