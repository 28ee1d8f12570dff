"""The extractor on any text: it never raises, and every row it gives quotes its citing text where it says and
points at another document of the corpus."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from citator.data.records import Document
from citator.stance.treat import extract

TITLES = ("Booth v. Maryland", "Ohio v. Roberts", "In re Gault", "Johnson v. United States", "Johnson v. United States",
          "NLRB v. Jones & Laughlin Steel Corp.", "United States v. Arnold, Schwinn & Co.")
PIECES = st.sampled_from([
    "Booth v. Maryland", "Roberts", "Gault", "In re Gault", "Johnson v. US", "NLRB v. Jones", "Schwinn", " v. ", "v.",
    "482 U.S. 496", "448 US 56", "(1980)", "overruled", "is overruled", "declined to overrule", "distinguished",
    "no longer good law", "Justice Scalia dissented.", "JUSTICE THOMAS, dissenting.\n", "Conclusion: ", "Question: ",
    "Facts of the case: ", ". ", ", ", " and ", "\n", "\u2028", "“", "’s", "U. S.", "the Court", "Court", "  "])


def corpus(text: str) -> list[Document]:
    docs = [Document(f"d{i}", t, "Facts of the case: none.", {"citation": c})
            for i, (t, c) in enumerate(zip(TITLES, ("482 U.S. 496", "448 U.S. 56", "387 U.S. 1", "520 U.S. 461",
                                                    "576 U.S. 591", "301 U.S. 1", "388 U.S. 365")))]
    return docs + [Document("new", "New v. Case", text)]


def check(text: str) -> None:
    table = extract(corpus(text))
    ids = {f"d{i}" for i in range(len(TITLES))} | {"new"}
    for row in table:
        assert row.citing_doc_id != row.cited_doc_id and row.cited_doc_id in ids
        source = text if row.citing_doc_id == "new" else "Facts of the case: none."
        assert row.start is not None and source[row.start:row.end] == row.passage


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text_never_breaks_the_extractor(text: str) -> None:
    check(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_text_made_of_names_citations_and_cues_never_breaks_it(text: str) -> None:
    check(text)
