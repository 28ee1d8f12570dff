"""The research page over a statute index: a question lists sections with passages; a citation jumps, no search."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from fastapi.testclient import TestClient

from citator.server.ui import create_app

FIXTURES = Path(__file__).resolve().parents[1] / "statutes" / "fixtures"


@pytest.fixture(scope="module")
def statute_client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    from citator.stance.retrieve.index_dir import BuildOptions, build_index

    work = tmp_path_factory.mktemp("statute-ui")
    corpus = work / "sections.jsonl"
    # Statute sections are corpus lines already (doc_id, title, text, and fields of their own).
    corpus.write_text((FIXTURES / "nrs_sections.jsonl").read_text() + (FIXTURES / "dc_sections.jsonl").read_text())
    build_index(corpus, work / "index", BuildOptions(progress=False))
    return TestClient(create_app(work / "index"), follow_redirects=False)


@pytest.mark.parametrize("citation,doc_id", [("NRS 0.020", "NRS 0.020"), ("n.r.s. 0.020", "NRS 0.020"),
                                             ("D.C. Code § 22-3211", "D.C. Code § 22-3211"),
                                             ("§ 16-1501", "D.C. Code § 16-1501")])
def test_an_exact_citation_jumps_to_its_section_without_searching(statute_client: TestClient, citation: str,
                                                                    doc_id: str, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    index = statute_client.app.state.index

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("a citation must not be searched")

    monkeypatch.setattr(index.searcher, "search", no_search)
    jump = statute_client.get("/?" + urlencode({"q": citation}))
    assert jump.status_code == 303
    target = urlsplit(jump.headers["location"])
    assert target.path == "/document" and parse_qs(target.query)["id"] == [doc_id]
    section = statute_client.get(jump.headers["location"])
    assert section.status_code == 200 and doc_id in section.text
    assert 'id="evidence"' in section.text


def test_a_question_lists_sections_with_their_passages(statute_client: TestClient) -> None:
    assert statute_client.app.state.index.statutes
    intro = statute_client.get("/").text
    assert "Find a statute section" in intro
    page = statute_client.get("/?" + urlencode({"q": "what happens if a provision of the statutes is held invalid"}))
    assert page.status_code == 200
    html = page.text
    assert 'id="all"' in html and ">Sections</h2>" in html and 'id="refuted"' not in html
    assert html.count('<blockquote class="passage"') == 5 and "<mark>" in html
    assert "NRS 0.020" in html  # Severability
    # A citation of a section the index lacks is searched like any question.
    missing = statute_client.get("/?" + urlencode({"q": "NRS 999.999"}))
    assert missing.status_code == 200 and 'id="all"' in missing.text
