"""An update's table: the earlier rows of documents a change cannot touch, and the rest read again, must be the
table a whole extraction of the resulting corpus gives. Corpora and changes are drawn from names that collide
(same-named cases, initials, a party that is also a justice or a common word), citations and dates, so that an
added, edited or removed document changes what other documents' texts resolve to."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citator.data.records import Document
from citator.stance.treat import Earlier, Treatment, TreatmentTable, extract, merge
from citator.stance.treat.affected import again
from citator.stance.treat.matcher import CaseNames
from citator.stance.treat.names import WordCounts

TITLES = ("Booth v. Maryland", "Ohio v. Roberts", "In re Gault", "Johnson v. United States",
          "McConnell v. Federal Election Commission", "Stone v. Powell", "United States v. Stone",
          "Payne v. Tennessee", "Gault v. Arizona")
CITATIONS = (None, "482 U.S. 496", "448 U.S. 56", "387 U.S. 1", "520 U.S. 461", "540 U.S. 93")
DATES = (None, "1970-01-01", "1985-06-15", "1997-05-12", "2020-01-01")
PIECES = st.sampled_from([
    "Conclusion: ", "Facts of the case: ", "The Court overruled ", "The Court followed ", "The Court distinguished ",
    " was overruled", " is no longer good law", "Booth v. Maryland", "Booth", "Roberts", "Ohio v. Roberts",
    "In re Gault", "Gault", "Johnson v. US", "Johnson v. United States (1997)", "McConnell v. FEC", "F. E. C.",
    "McConnell", "Stone v. Powell", "Stone", "a stone", "the stone wall", "Justice Roberts wrote.",
    "Justice Stone wrote.", "Booth v. Marylandwhich", "Robertswho", "Gaultthat", "482 U.S. 496", "448 US 56",
    "520 U. S. 461", "Payne", ". ", ", ", " and ", "\n"])


@st.composite
def documents(draw: st.DrawFn, doc_id: str) -> Document:
    extra = {k: v for k, v in (("citation", draw(st.sampled_from(CITATIONS))), ("date", draw(st.sampled_from(DATES))))
             if v is not None}
    text = "".join(draw(st.lists(PIECES, min_size=1, max_size=14)))
    return Document(doc_id, draw(st.sampled_from(TITLES)), text, extra)


@st.composite
def changes(draw: st.DrawFn) -> tuple[list[Document], list[Document]]:
    """An earlier corpus and the one a change leaves: some documents removed, some replaced in place, some added."""
    before = [draw(documents(f"d{i}")) for i in range(draw(st.integers(2, 8)))]
    after = []
    for doc in before:
        fate = draw(st.sampled_from(["keep", "keep", "remove", "replace"]))
        if fate == "keep":
            after.append(doc)
        elif fate == "replace":
            after.append(draw(documents(doc.doc_id)))
    after += [draw(documents(f"n{i}")) for i in range(draw(st.integers(0, 3)))]
    return before, after


def user_rows(docs: list[Document]) -> tuple[Treatment, ...]:
    if len(docs) < 2:
        return ()
    return (Treatment(docs[0].doc_id, docs[1].doc_id, "questions", "A reader's note.", None, None, "user", "it"),)


def redo_of(before: list[Document], after: list[Document], stored: TreatmentTable, cited: bool) -> set[str]:
    """What `again` reads again (documents' `citation` keys read when `cited`)."""
    words = WordCounts(d.text for d in after)
    return again(after, Earlier(before, stored), words,
                 CaseNames({d.doc_id: d.title for d in after}, words.common(), words.justices()),
                 lambda d: d.extra.get("citation") if cited else None, lambda d: None)


@settings(max_examples=150, deadline=None)
@given(changes())
def test_an_update_table_is_the_whole_extraction(change: tuple[list[Document], list[Document]]) -> None:
    before, after = change
    stored = merge(extract(before), user_rows(before))
    ids = {d.doc_id for d in after}
    kept = tuple(r for r in user_rows(before) if r.citing_doc_id in ids and r.cited_doc_id in ids)
    assert merge(extract(after, earlier=Earlier(before, stored)), kept).rows == merge(extract(after), kept).rows


def test_only_the_changed_document_and_those_naming_it_are_read_again() -> None:
    booth = Document("booth", "Booth v. Maryland", "Facts of the case: a sentencing.", {"citation": "482 U.S. 496"})
    cites = Document("payne", "Payne v. Tennessee", "Conclusion: The Court overruled Booth v. Maryland.")
    cites_page = Document("other", "Other v. Case", "Conclusion: see 482 U.S. 496.")
    unrelated = [Document(f"u{i}", f"Smith{i} v. Jones{i}", "Conclusion: The Court applied Terry v. Ohio.")
                 for i in range(5)]
    before = [booth, cites, cites_page, *unrelated]
    edited = Document("booth", "Booth v. Maryland", "Facts of the case: a sentencing hearing.",
                      {"citation": "482 U.S. 496"})
    after = [edited, cites, cites_page, *unrelated]
    redo = redo_of(before, after, extract(before), True)
    assert redo == {"booth", "payne", "other"}


@pytest.mark.parametrize("added", [True, False])
def test_a_word_that_turns_common_or_proper_reads_again_the_texts_that_hold_it(added: bool) -> None:
    stone = Document("stone", "Stone v. Powell", "Facts of the case: a search.")
    names_it = Document("cites", "Payne v. Tennessee", "Conclusion: The Court followed Stone.")
    few = [stone, names_it, Document("x", "Other v. Case", "Conclusion: nothing here.")]
    # A text that writes "stone" in lower case: while the corpus holds it, "Stone" alone is no safe one-word name.
    more = [*few, Document("lower", "Mason v. Wall", "a stone wall, a stone step, a stone floor, a stone arch")]
    before, after = (few, more) if added else (more, few)
    stored = extract(before)
    redo = redo_of(before, after, stored, False)
    assert redo == {"lower", "cites"}
    assert extract(after, earlier=Earlier(before, stored)).rows == extract(after).rows
    assert len(extract(few)) == 1 and len(extract(more)) == 0


def test_a_citation_moved_to_another_document_reads_again_the_texts_that_cite_it() -> None:
    booth = Document("booth", "Booth v. Maryland", "Facts of the case: a sentencing.", {"citation": "482 U.S. 496"})
    cites = Document("cites", "Payne v. Tennessee", "Conclusion: The Court overruled 482 U.S. 496.")
    before = [booth, cites, Document("x", "Other v. Case", "Conclusion: nothing here.")]
    after = [Document("booth", "Booth v. Maryland", booth.text, {"citation": "490 U.S. 805"}), *before[1:]]
    stored = extract(before)
    assert {(r.citing_doc_id, r.cited_doc_id) for r in stored} == {("cites", "booth")}
    redo = redo_of(before, after, stored, True)
    assert redo == {"booth", "cites"}
    assert extract(after, earlier=Earlier(before, stored)).rows == extract(after).rows == ()


def test_a_surname_that_becomes_a_justice_reads_again_the_texts_that_hold_it() -> None:
    roberts = Document("roberts", "Ohio v. Roberts", "Facts of the case: a hearsay question.")
    names_it = Document("cites", "Payne v. Tennessee", "Conclusion: The Court overruled Roberts.")
    before = [roberts, names_it, Document("x", "Other v. Case", "Conclusion: nothing here.")]
    after = [*before, Document("bench", "Mason v. Wall", "Justice John Roberts wrote for the Court.")]
    stored = extract(before)
    assert [r.cited_doc_id for r in stored] == ["roberts"]
    redo = redo_of(before, after, stored, False)
    assert redo == {"bench", "cites"}
    assert extract(after, earlier=Earlier(before, stored)).rows == extract(after).rows == ()


@pytest.mark.parametrize(("title", "named_as"), [
    ("Federal Election Commission v. National Rifle Association", "FEC v. NRA"),  # both parties by initials
    ("Metro Broadcasting, Inc. v. FCC", "Metro"),  # a short party by its first word
    ("In re Gault", "Gault"),  # a title without " v. " by its name
    ("Booth v. Maryland", "Booth v. Maryland"),
])
def test_removing_a_case_reads_again_each_text_that_names_it_however_named(title: str, named_as: str) -> None:
    named = Document("named", title, "Facts of the case: a dispute.")
    cites = Document("cites", "Payne v. Tennessee", f"Conclusion: The Court overruled {named_as}.")
    before = [named, cites, Document("x", "Other v. Case", "Conclusion: nothing here.")]
    stored = extract(before)
    assert [(r.citing_doc_id, r.cited_doc_id) for r in stored] == [("cites", "named")]
    after = before[1:]
    redo = redo_of(before, after, stored, False)
    assert redo == {"named", "cites"}
