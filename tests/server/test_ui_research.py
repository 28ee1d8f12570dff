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
    cards = column.split('<li class="hit">')[1:]
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
    assert more == "/?" + urlencode({"q": TEXT, "k": 10}) + "#relevant-hit-6"
    page = client.get(more.split("#")[0]).text
    assert page.count('id="relevant-hit-') == 10 and 'id="relevant-hit-6"' in page
    # The last page: k reached the corpus's size or the limit, no more link.
    assert 'class="more"' not in client.get("/?" + urlencode({"q": TEXT, "k": 100})).text


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


def test_the_document_page_shows_the_flag_and_who_cites_it(client: TestClient) -> None:
    html = client.get("/document?" + urlencode({"id": FLAG_CITED, "p": 0, "q": TEXT})).text
    assert 'class="flag flag-red"' in html and "Cited by 1 later decision here" in html
    assert "<script>" not in html and unescape(re.sub(r"<[^>]+>", "", html)).count(FLAG_PASSAGE) == 2
    plain = client.get("/document?" + urlencode({"id": HOSTILE_ID, "p": 0, "q": TEXT})).text
    assert 'class="flag' not in plain and "Cited by" not in plain
