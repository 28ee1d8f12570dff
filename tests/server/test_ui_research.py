"""The research page's working tools over a real index: treatment flags with their reasons and "cited by", paging
beyond k in the URL, the brief's Markdown and JSON downloads, the "no good match" notice, and an exact citation of
the wrong kind answered with one sentence."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from citator.server.ui import create_app
from citator.stance.brief.index import StanceIndex
from citator.stance.brief.notice import THRESHOLD, best_match
from citator.stance.brief.render import render
from fixtures.brief import FLAG_CITED, FLAG_PASSAGE, FLAG_YELLOW, HOSTILE_ID, HOSTILE_TITLE

TEXT = "A grant of land is a contract that a later legislature may not void."


@pytest.fixture(scope="module")
def client(flag_index: Path) -> TestClient:
    return TestClient(create_app(flag_index, k=5))


def _hit_html(html: str, doc_id: str) -> str:
    """The card of the hit `doc_id` in the brief's one list (the flag index is untrained: its stance is not ranked)."""
    column = html.split('id="relevant"', 1)[1].split("</section>", 1)[0]
    cards = column.split('<li class="hit"')[1:]
    return next(c for c in cards if f'href="/document?id={doc_id}' in unescape(c).replace("%2F", "/"))


def test_a_flagged_hit_shows_its_flag_with_the_reason_as_text(client: TestClient) -> None:
    html = client.get("/?" + urlencode({"q": TEXT})).text
    card = _hit_html(html, FLAG_CITED)
    assert 'class="flag flag-red"' in card and "Red flag: no longer good law" in card
    # The reason: the overruling decision (a hostile title) linked, and its passage, both as text.
    assert "<script>" not in card and "&lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;" in card
    reason = card.split('class="flag flag-red"', 1)[1].split("</div>", 1)[0]
    assert unescape(re.sub(r"<[^>]+>", "", reason)).count(FLAG_PASSAGE) == 1
    assert unescape(re.sub(r"<[^>]+>", "", reason)).count(HOSTILE_TITLE) == 1
    assert "Overruled by" in reason and urlencode({"id": HOSTILE_ID}) in unescape(reason)
    assert "Cited by 1 later decision here" in card


def test_a_yellow_flag_and_no_flag(client: TestClient, flag_index: Path) -> None:
    index = StanceIndex.open(flag_index)
    doc = index.document(FLAG_YELLOW)
    html = client.get("/?" + urlencode({"q": doc.title, "k": 10})).text
    card = _hit_html(html, FLAG_YELLOW)
    assert 'class="flag flag-yellow"' in card and "Yellow flag: limited or questioned" in card
    assert "Limited by" in card
    hits = index.search(doc.title, stance="supported", k=10)
    unflagged = next(h for h in hits if h.flag is None and not h.cited_by)
    assert 'class="flag' not in _hit_html(html, unflagged.doc_id)


def test_more_asks_for_k_more_and_the_url_keeps_it(client: TestClient) -> None:
    html = client.get("/?" + urlencode({"q": TEXT})).text
    more = unescape(re.search(r'<p class="more"><a href="([^"]+)"', html)[1])
    assert more == "/?" + urlencode({"q": TEXT, "k": 10}) + "#hit-6"
    page = client.get(more.split("#")[0]).text
    # The target is the first column's sixth hit whether the larger page has one list or two columns.
    assert page.count('id="relevant-hit-') == 10 and '<li class="hit" id="hit-6">' in page
    # The last page: k reached the corpus's size or the limit, no more link.
    assert 'class="more"' not in client.get("/?" + urlencode({"q": TEXT, "k": 100})).text


def test_more_aims_at_the_first_full_column(flag_index: Path) -> None:
    # Two columns where only the second is full at k (a filter or a short first list): the target is that
    # column's next hit, which a larger page of two columns has; the first column's "hit-N" it may lack.
    from citator.server.ui.app import PageFilters, _columns, _tools

    index = StanceIndex.open(flag_index)
    ((_, _, cards),) = _columns(index, TEXT, 5, PageFilters())
    two = [("supported", "Supporting", cards[:3]), ("refuted", "Refuting", cards)]
    assert _tools(index, TEXT, 5, 5, two, PageFilters())["more"].endswith("#refuted-hit-6")
    assert _tools(index, TEXT, 5, 5, two[::-1], PageFilters())["more"].endswith("#hit-6")
    assert _tools(index, TEXT, 5, 5, [two[0]], PageFilters())["more"] is None


def test_export_downloads_what_citator_brief_prints(client: TestClient, flag_index: Path) -> None:
    html = client.get("/?" + urlencode({"q": TEXT})).text
    links = dict(re.findall(r'<a href="(/export\?[^"]+)" download>(\w+)</a>', html))
    assert sorted(links.values()) == ["JSON", "Markdown"]
    brief = StanceIndex.open(flag_index).brief(TEXT, k=5)
    for href, name in links.items():
        answer = client.get(unescape(href))
        fmt, suffix = ("json", "json") if name == "JSON" else ("markdown", "md")
        assert answer.status_code == 200 and answer.text == render(brief, fmt) + "\n"
        assert answer.headers["content-disposition"] == f'attachment; filename="citator-brief.{suffix}"'
    data = json.loads(client.get("/export?" + urlencode({"q": TEXT, "format": "json"})).text)
    flagged = next(h for h in data["relevant"] if h["doc_id"] == FLAG_CITED)
    assert flagged["flag"] == "red" and flagged["cited_by"][0]["passage"] == FLAG_PASSAGE
    assert client.get("/export?" + urlencode({"q": TEXT, "format": "html"})).status_code == 404
    assert client.get("/export?" + urlencode({"q": " ", "format": "json"})).status_code == 400


def test_no_good_match_is_said_only_when_the_best_match_is_weak(client: TestClient, flag_index: Path) -> None:
    index = StanceIndex.open(flag_index)
    weak_text = "Quantum chromodynamics predicts the mass of the proton from quarks and gluons."
    brief = index.brief(weak_text, k=5)
    best = best_match([h for _, _, column in brief.columns() for h in column])
    assert best is not None and best < THRESHOLD
    assert "No good match." in client.get("/?" + urlencode({"q": weak_text})).text
    strong = index.brief(TEXT, k=5)
    assert best_match([h for _, _, column in strong.columns() for h in column]) >= THRESHOLD  # type: ignore[operator]
    assert "No good match." not in client.get("/?" + urlencode({"q": TEXT})).text


@pytest.mark.parametrize("citation", ["NRS 200.010", "42 U.S.C. § 1983", "D.C. Code § 16-2301"])
def test_a_statute_citation_in_a_case_index_is_answered_with_one_sentence(client: TestClient, citation: str) -> None:
    html = client.get("/?" + urlencode({"q": citation})).text
    notice = re.findall(r'<p class="notice" role="status">(.*?)</p>', html, re.S)
    assert len(notice) == 1 and "holds court decisions, not statutes" in notice[0]
    sentence = unescape(notice[0]).replace(citation, "")
    assert sentence.count(". ") == 0 and sentence.rstrip().endswith(".")
    assert 'class="hit"' not in html
    # A proposition that mentions a statute is searched as usual.
    assert 'class="hit"' in client.get("/?" + urlencode({"q": f"Under {citation} an official may be sued"})).text


def test_a_reporter_citation_in_a_case_index_opens_the_decision(metadata_index: Path,
                                                                metadata_set: dict[str, Path]) -> None:
    rows = [json.loads(line) for line in metadata_set["metadata"].open()]
    row = next(r for r in rows if re.fullmatch(r"\d+ U\.S\. \d+", r.get("citation", "")))
    volume, _, page = row["citation"].split()
    index = StanceIndex.open(metadata_index)
    # Every way a researcher types it: the reporter's spaces, a signal, a full cite with name and year.
    for typed in (row["citation"], f"{volume} US {page}", f"see {volume} U. S. {page}.",
                  f"Smith v. Jones, {volume} U.S. {page} (1990)"):
        assert index.cited(typed) == (row["doc_id"],), typed
    # A citation the index lacks, or one inside a proposition, is no exact citation of its documents.
    assert index.cited("999 U.S. 999") == () and index.cited(f"Under {row['citation']} a grant binds") == ()
    client = TestClient(create_app(metadata_index, k=5))
    answer = client.get("/?" + urlencode({"q": f"{volume} US {page}"}), follow_redirects=False)
    assert answer.status_code == 303 and urlencode({"id": row["doc_id"]}) in answer.headers["location"]


def test_the_document_page_shows_the_flag_and_who_cites_it(client: TestClient) -> None:
    html = client.get("/document?" + urlencode({"id": FLAG_CITED, "p": 0, "q": TEXT})).text
    assert 'class="flag flag-red"' in html and "Cited by 1 later decision here" in html
    assert "<script>" not in html and unescape(re.sub(r"<[^>]+>", "", html)).count(FLAG_PASSAGE) == 2
    plain = client.get("/document?" + urlencode({"id": HOSTILE_ID, "p": 0, "q": TEXT})).text
    assert 'class="flag' not in plain and "Cited by" not in plain


def test_a_documents_ways_back_and_the_exports_keep_the_briefs_filters_and_k(metadata_index: Path) -> None:
    from citator.data.escape import markdown_text

    client = TestClient(create_app(metadata_index, k=5))
    state = {"k": 6, "from": "1800-01-01"}
    html = client.get("/?" + urlencode({"q": TEXT, **state})).text
    card = unescape(re.search(r'<a href="(/document\?id=[^"]+)"', html)[1])
    assert "k=6" in card and "from=1800-01-01" in card
    page = client.get(card.split("#")[0]).text
    back = unescape(re.search(r'<a href="(/\?q=[^"]+)"', page)[1])
    assert back == "/?" + urlencode({"q": TEXT, "from": "1800-01-01", "k": 6})
    # An export of a filtered brief says what it was narrowed by.
    data = json.loads(client.get("/export?" + urlencode({"q": TEXT, "format": "json", **state})).text)
    assert data["filters"] == ["date>=1800-01-01"]
    markdown = client.get("/export?" + urlencode({"q": TEXT, "format": "markdown", **state})).text
    assert markdown_text("Only documents that meet: date>=1800-01-01") in markdown
    unfiltered = json.loads(client.get("/export?" + urlencode({"q": TEXT, "format": "json"})).text)
    assert unfiltered["filters"] == [] and "Only documents" not in client.get(
        "/export?" + urlencode({"q": TEXT, "format": "markdown"})).text


def test_a_citing_decisions_link_keeps_the_briefs_state() -> None:
    from citator.server.ui.app import _citing_links
    from citator.stance.brief.records import Citing

    links = _citing_links([Citing("c1", "A v. B", "overrules", "passage", "red")], "q text",
                          [("k", "10"), ("f", "court=X"), ("f", "date>=1990-01-01")])
    assert links["c1"] == "/document?" + urlencode([("q", "q text"), ("id", "c1"), ("k", "10"), ("f", "court=X"),
                                                    ("f", "date>=1990-01-01")])


def test_filters_that_leave_nothing_are_named_and_nothing_is_offered_to_download(metadata_index: Path) -> None:
    client = TestClient(create_app(metadata_index, k=5))
    html = client.get("/?" + urlencode({"q": TEXT, "court": "supreme court"})).text
    notice = unescape(re.sub(r"<[^>]+>", "", html.split("No document meets the filters", 1)[1].split("</p>", 1)[0]))
    assert "court=supreme court" in notice and 'class="hit"' not in html and "Download this brief" not in html
    assert "No document meets" not in client.get("/?" + urlencode({"q": TEXT})).text
