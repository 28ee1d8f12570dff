"""The research page over an index with metadata, in a real headless Chromium against a real `citator ui`: each
hit shows its citation, decision date, court and opinion link; the copy button copies the citation by keyboard;
the filter controls narrow the brief and stay in the page's URL; axe-core finds nothing serious or critical."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import pytest

from fixtures.servers import ui_server_at
from test_review_browser import chromium
from test_ui_browser import _serious

TEXT = "A state may not tax an instrument of the federal government."
CITATION = re.compile(r"^.+, \d+ U\.S\. \d+ \((\d{4})\)$")


@pytest.fixture(scope="module")
def metadata_ui(metadata_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ui_server_at(metadata_index, tmp_path_factory.mktemp("ui-metadata") / "server.log") as url:
        yield url


@pytest.mark.browser
def test_citations_copy_and_filters_by_keyboard(metadata_ui: str) -> None:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=metadata_ui)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(metadata_ui + "/")
        assert _serious(page) == []
        page.get_by_label("Proposition", exact=True).fill(TEXT)
        summary = page.locator("details.filters summary")
        summary.focus()
        page.keyboard.press("Enter")  # the filters open from the keyboard
        page.get_by_label("to", exact=True).fill("1899-12-31")
        page.get_by_label("to", exact=True).press("Enter")
        page.wait_for_url("**/?q=*")
        asked = parse_qs(urlparse(page.url).query)
        assert asked["to"] == ["1899-12-31"] and asked["q"] == [TEXT]
        cites = page.locator("li.hit .citation > span[id]").all_inner_texts()
        assert cites, "no citation shown"
        for cite in cites:
            found = CITATION.match(cite)
            assert found and int(found.group(1)) <= 1899, cite
        decided = [re.search(r"Decided (\S+)", t) for t in page.locator("li.hit p.meta").all_inner_texts()]
        assert decided and all(d and d.group(1) <= "1899-12-31" for d in decided)
        assert page.locator("li.hit p.meta a").first.get_attribute("href").startswith("https://")
        assert _serious(page) == []

        button = page.locator("li.hit button.copy").first
        button.focus()
        page.keyboard.press("Enter")
        status = page.locator("li.hit .copied").first
        status.wait_for(state="visible")
        assert status.inner_text() == "Copied"
        assert page.evaluate("navigator.clipboard.readText()") == cites[0]

        # A document opened from the filtered brief leads back to the same filtered brief.
        filtered = page.url
        page.locator("li.hit h3 a").first.focus()
        page.keyboard.press("Enter")
        page.wait_for_url("**/document?*")
        page.get_by_role("link", name="Back to the brief").click()
        page.wait_for_url(filtered)

        # The shared address keeps the filter: a fresh page shows the same hits and the control filled in.
        other = browser.new_context(viewport={"width": 900, "height": 800}).new_page()
        other.goto(page.url)
        assert other.locator("li.hit .citation > span[id]").all_inner_texts() == cites
        assert other.locator("#f-to").input_value() == "1899-12-31"
        # Any key, and a refused one: one line on the page, no hits.
        other.goto(metadata_ui + "/?q=" + quote(TEXT) + "&f=" + quote("majority_vote >= 9"))
        assert other.locator("li.hit").count() > 0 and other.locator("#f-more-1").input_value() == \
            "majority_vote >= 9"
        other.goto(metadata_ui + "/?q=" + quote(TEXT) + "&f=" + quote("judge=Holmes"))
        alert = other.locator("[role=alert]").inner_text()
        assert "no document of this index has metadata 'judge'" in alert and other.locator("li.hit").count() == 0
