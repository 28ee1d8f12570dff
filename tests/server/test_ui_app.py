"""The research page over a real index: both stances side by side, the passage in place, everything escaped."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings

from citator.stance.brief.index import StanceIndex
from citator.server.ui import create_app
from citator.data.records import Document
from citator.stance.brief.records import Brief
from fixtures.brief import HOSTILE_ID, hostile_briefs

TEXT = "A grant of land is a contract that a later legislature may not void."


# The page's own script (static/copy.js, the copy-citation buttons): no other script tag may reach a page.
OWN_SCRIPT = '<script src="/static/copy.js" defer></script>'


@pytest.fixture(scope="module")
def client(brief_index: Path) -> TestClient:
    return TestClient(create_app(brief_index, k=5))


def _column_ids(html: str, stance: str) -> list[str]:
    section = html.split(f'id="{stance}"', 1)[1].split("</section>", 1)[0]
    return [unescape(m) for m in re.findall(r'href="/document\?id=([^"&]*)', section)]


def test_home_is_a_labelled_search_form_with_landmarks(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    html = page.text
    assert '<label for="q">' in html and 'role="search"' in html and 'method="get"' in html
    assert "<main" in html and "<header" in html and "<footer" in html and 'lang="en"' in html
    assert "No trained memory" in html
    assert "<script" not in html.replace(OWN_SCRIPT, "")  # the page's one script is its own file (copy buttons)
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self';" in page.headers["content-security-policy"]


def test_an_untrained_brief_is_one_list_that_says_the_stance_is_not_ranked(client: TestClient,
                                                                           brief_index: Path) -> None:
    page = client.get("/?" + urlencode({"q": TEXT}))
    assert page.status_code == 200
    html = page.text
    expected = StanceIndex.open(brief_index).brief(TEXT, k=5)
    from urllib.parse import unquote_plus

    # An untrained index ranks every stance alike: never two identical columns titled supporting and refuting.
    assert not expected.stance_ranked and expected.supported is None and expected.refuted is None
    assert "Supporting authority" not in html and "Refuting authority" not in html
    assert "Relevant authority (stance not ranked: train artifacts to rank it)" in html
    assert [unquote_plus(i) for i in _column_ids(html, "relevant")] == [h.doc_id for h in expected.column("relevant")]
    assert html.count('<blockquote class="passage"') == 5 and "<mark>" in html
    assert f'value="{TEXT}"' in html  # the query stays in the box: the URL is the brief's address
    # A card's citation line holds what a reader acts on (the rank is the list's); the fused score is in "Why it ranked".
    top = expected.column("relevant")[0]
    card = html.split('class="hit"', 1)[1].split("</article>", 1)[0]
    cite = card.split('<p class="cite', 1)[1].split("</p>", 1)[0]  # "cite", or "cite citation" with its button
    assert "score" not in cite and f"{top.score:.4f}" not in cite
    why = card.split("<summary>Why it ranked</summary>", 1)[1]
    assert f"<dt>fused</dt>\n            <dd>{top.score:.4f} (rank 1)</dd>" in why


def test_hostile_titles_texts_and_queries_are_shown_as_text(client: TestClient) -> None:
    query = "<script>alert('q')</script> grant of land contract legislature void"
    html = client.get("/?" + urlencode({"q": query, "k": 41})).text.replace(OWN_SCRIPT, "")
    assert "<script" not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#39;q&#39;)&lt;/script&gt;" in html
    doc = client.get("/document?" + urlencode({"id": HOSTILE_ID, "p": 0, "q": query}))
    assert doc.status_code == 200
    assert "<script" not in doc.text.replace(OWN_SCRIPT, "") and "<img" not in doc.text
    assert "&lt;img src=x onerror=" in doc.text
    assert 'id="evidence"' in doc.text and '<strong class="term">contract</strong>' in doc.text


def test_document_view_puts_the_passage_in_place(client: TestClient, brief_index: Path) -> None:
    index = StanceIndex.open(brief_index)
    hit = index.brief(TEXT, k=1).column("relevant")[0]
    doc = index.document(hit.doc_id)
    page = client.get("/document?" + urlencode({"id": hit.doc_id, "p": hit.evidence.passage, "q": TEXT,
                                                "stance": "supported"}))
    assert page.status_code == 200
    body = page.text.split('<div class="text">', 1)[1].split("</div>", 1)[0]
    evidence = body.split('id="evidence"', 1)[1].split(">", 1)[1].split("</mark>", 1)[0]
    assert unescape(re.sub(r"<[^>]+>", "", body)) == doc.text
    assert unescape(re.sub(r"<[^>]+>", "", evidence)) == hit.evidence.text
    assert "Back to the brief" in page.text and urlencode({"q": TEXT}) in unescape(page.text)


def test_only_a_known_stance_is_shown_on_a_document_page(client: TestClient) -> None:
    """`?stance=` labels the evidence only with a stance a brief links with; any other text is not reflected."""
    forged = "<b>forged</b> claim \u202e"
    page = client.get("/document?" + urlencode({"id": HOSTILE_ID, "p": 0, "q": "contract", "stance": forged}))
    assert page.status_code == 200 and "evidence for" not in page.text and "forged" not in page.text
    page = client.get("/document?" + urlencode({"id": HOSTILE_ID, "p": 0, "q": "contract", "stance": "refuted"}))
    assert "evidence for <em>refuted</em>" in page.text


class _Page(HTMLParser):
    """What a browser builds of a page: its tags, their attributes, and the text of each link."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.links: list[tuple[str, str]] = []
        self._link: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)
        if tag == "a":
            self._link = [dict(attrs).get("href") or ""]

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self.links.append((self._link[0], "".join(self._link[1:])))
            self._link = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._link is not None:
            self._link.append(data)


def _tags_of(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


@settings(max_examples=100, deadline=None)
@given(hostile_briefs())
def test_every_field_on_a_page_is_text(brief: Brief) -> None:
    """The brief page and the document page with hostile ids, titles, citations, texts and a hostile query: the
    page has the template's tags and attributes only, and each link's text and target are the data itself."""
    from citator.server.ui.app import _card, _templates

    context = {"trained": brief.trained, "statutes": False, "title": "OK", "max_chars": 512}
    plain = _tags_of(_templates.get_template("brief.html").render(**context, q="", columns=None, error=None, k=5))
    columns = [(key, title, [_card(h, brief.proposition, key) for h in hits]) for key, title, hits in brief.columns()]
    html = _templates.get_template("brief.html").render(**context, q=brief.proposition, columns=columns, error=None,
                                                        k=5, proposition=brief.proposition)
    page = _tags_of(html)
    assert page.tags <= plain.tags | {"h1", "div", "section", "h2", "ol", "li", "article", "h3", "a", "p", "blockquote",
                                      "mark", "details", "summary", "dl", "dt", "dd", "ul", "span", "strong", "q"}
    assert not [a for a in page.attributes if a.startswith("on")]
    assert html.count("<script") == 1 and OWN_SCRIPT in html  # the template's own script, and no other
    hits = tuple(h for _, _, column in brief.columns() for h in column)
    cards = [link for link in page.links if link[0].startswith("/document?id=")]
    assert len(cards) == len(hits)
    for (href, text), hit in zip(cards, hits):
        assert text == (hit.title or hit.doc_id)
        assert parse_qs(urlsplit(href).query, keep_blank_values=True)["id"] == [hit.doc_id]
    # A flag's reasons and the "cited by" list link each citing decision by its own id, its title as text.
    citing = [link for link in page.links if link[0].startswith("/document?q=")]
    expected = [c for h in hits for c in (*h.reasons, *h.cited_by)]
    assert len(citing) == len(expected)
    for (href, text), c in zip(citing, expected):
        assert text == (c.title or c.doc_id)
        assert parse_qs(urlsplit(href).query, keep_blank_values=True)["id"] == [c.doc_id]
    hit = next(iter(hits), None)
    if hit is not None:
        doc = Document(hit.doc_id, hit.title, hit.evidence.text)
        html = _templates.get_template("document.html").render(
            **context, doc=doc, label=hit.label, q=brief.proposition, stance="supported", passage=0, before=hit.title,
            evidence=[(hit.evidence.text, False)], after=hit.label, back="/")
        page = _tags_of(html)
        assert page.tags <= plain.tags | {"h1", "article", "nav", "a", "p", "code", "em", "div", "mark"}
        assert not [a for a in page.attributes if a.startswith("on")]


@pytest.mark.parametrize("url,status,message", [
    ("/?q=" + "x" * 513, 400, "at most 512"),
    ("/?q=law&k=abc", 400, "not understood"),
    ("/document?id=nope&p=0", 404, "no document"),
    ("/document?" + urlencode({"id": HOSTILE_ID, "p": 7}), 404, "no passage 7"),
    ("/nowhere", 404, "Not Found"),
])
def test_bad_requests_get_a_page_with_one_line(client: TestClient, url: str, status: int, message: str) -> None:
    page = client.get(url)
    assert page.status_code == status and message in page.text and "Traceback" not in page.text
    assert page.headers["content-type"].startswith("text/html")


def test_read_only(client: TestClient) -> None:
    refused = client.post("/", data={"q": "law"})
    # The 405 names what the path allows, and its page is titled by what happened.
    assert refused.status_code == 405 and set(refused.headers["allow"].split(", ")) == {"GET", "HEAD"}
    assert "<title>Method Not Allowed" in refused.text
    head = client.head("/?q=law")
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/html")
    assert client.head("/document?id=nowhere").status_code == 404
    assert client.get("/openapi.json").status_code == 404 and client.get("/docs").status_code == 404


def test_several_worker_processes_answer_the_same_brief(brief_index: Path, tmp_path: Path,
                                                        client: TestClient) -> None:
    # `citator ui --workers 2`: a real uvicorn supervisor with two worker processes, each with its own index.
    import os
    import subprocess
    import sys

    import httpx

    from fixtures.servers import free_port, stop_process, wait_ready

    port = free_port()
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "citator.cli.main", "ui", "--index-dir", str(brief_index),
                                 "--port", str(port), "--workers", "2"], stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        url = f"http://127.0.0.1:{port}"
        try:
            wait_ready(url + "/", proc, timeout=180)
            q = {"q": "A grant of land is a contract that a later legislature may not void."}
            pages = [httpx.get(url + "/", params=q, timeout=60) for _ in range(6)]
        finally:
            stop_process(proc)
    assert {p.status_code for p in pages} == {200}
    assert len({p.text for p in pages}) == 1  # every worker answers alike
    assert pages[0].text == client.get("/", params=q).text
    log_text = log_path.read_text()
    assert "2 worker(s)" in log_text and "Traceback" not in log_text


def test_empty_filter_controls_leave_the_briefs_address(client: TestClient) -> None:
    # The form sends its empty controls too; the brief's address is the one without them, kept filters and all.
    asked = urlencode({"q": TEXT, "from": "", "to": "", "f": ["citation != x", " "]}, doseq=True)
    moved = client.get("/?" + asked, follow_redirects=False)
    assert moved.status_code == 303
    assert moved.headers["location"] == "/?" + urlencode({"q": TEXT, "f": "citation != x"})
    page = client.get(moved.headers["location"])
    assert page.status_code == 200 and 'value="citation != x"' in page.text
    refused = client.get("/?" + urlencode({"q": TEXT, "f": "date>=1991"}))
    assert refused.status_code == 400 and "write the value as YYYY-MM-DD" in refused.text


def test_a_hit_cites_by_docket_or_says_its_date_once() -> None:
    """A decision with no reporter citation is cited by its docket number; one with neither shows its date once,
    on the "Decided" line, not again as its label."""
    from citator.data.metadata import short_citation
    from citator.server.ui.app import _card, _templates
    from citator.stance.brief.records import Evidence, Hit

    def page(metadata: dict[str, str]) -> str:
        hit = Hit(1, "d1", "Bosse v. Oklahoma", metadata["date"], 0.5, Evidence(0, 0, 4, "text", (), "bm25", 1.0),
                  (), None, metadata=metadata, citation=short_citation("Bosse v. Oklahoma", metadata))
        columns = [("relevant", "Relevant authority", [_card(hit, "q", "relevant")])]
        return unescape(_templates.get_template("brief.html").render(
            trained=False, statutes=False, title="OK", max_chars=512, q="q", columns=columns, error=None, k=5,
            proposition="q"))

    slip = page({"date": "2016-10-11", "docket": "15-9173", "court": "Supreme Court of the United States"})
    assert "Bosse v. Oklahoma, No. 15-9173 (U.S. Oct. 11, 2016)" in slip and "Copy citation" in slip
    bare = page({"date": "2016-10-11"})
    assert bare.count("2016-10-11") == 1 and "Decided 2016-10-11" in bare and "Copy citation" not in bare
