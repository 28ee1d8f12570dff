"""The research page over the trained CaseFacts index that `make artifacts` builds (artifacts-casefacts/index, its
metadata from the corpus's metadata.jsonl, its treatment table extracted from the decisions' own text), in a real
headless Chromium against a real `citator ui`: a researcher briefs a proposition that an overruled case answers and
reads its citation, its red flag with the overruling decision and passage, copies the citation, downloads the brief,
narrows it by decision date and pages on, all by keyboard; axe-core finds nothing serious or critical.

Trained artifacts are never committed and take about an hour to build, so this test runs where they exist
(`make artifacts`, or CITATOR_CASEFACTS_INDEX naming such an index) and is skipped, saying why, where they do not."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from fixtures.servers import ui_server_at
from test_review_browser import chromium
from test_ui_browser import _serious, brief_by_keyboard, downloads_by_keyboard

ROOT = Path(__file__).resolve().parents[2]
INDEX = Path(os.environ.get("CITATOR_CASEFACTS_INDEX") or ROOT / "artifacts-casefacts" / "index")
TEXT = "The Eighth Amendment bars a capital sentencing jury from hearing victim impact statements."
OVERRULED = "Booth v. Maryland"
OVERRULED_CITATION = "Booth v. Maryland, 482 U.S. 496 (1987)"
OVERRULING = "Payne v. Tennessee"
DECIDED = re.compile(r"Decided (\d{4}-\d{2}-\d{2})")


@pytest.fixture(scope="module")
def casefacts_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not (INDEX / "manifest.json").is_file():
        pytest.skip(f"no trained CaseFacts index at {INDEX}: `make artifacts` builds it")
    with ui_server_at(INDEX, tmp_path_factory.mktemp("ui-casefacts") / "server.log") as url:
        yield url


@pytest.mark.browser
def test_a_researcher_works_a_brief_on_the_trained_casefacts_index(casefacts_ui: str, tmp_path: Path) -> None:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True,
                                      accept_downloads=True)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=casefacts_ui)
        page = context.new_page()
        page.set_default_timeout(60_000)
        brief_by_keyboard(page, casefacts_ui, TEXT)
        assert _serious(page) == []

        # Every hit is cited in the usual form, and the overruled case carries its red flag with the reason.
        cites = page.locator("li.hit .citation > span[id]").all_inner_texts()
        usual = re.compile(r".+, (?:\d+ U\.S\. \d+ \(\d{4}\)|No\. \S+ \(U\.S\. \w+\.? \d{1,2}, \d{4}\))")
        assert cites and all(usual.fullmatch(c) for c in cites), cites
        booth = page.locator("li.hit").filter(has=page.get_by_role("heading", name=OVERRULED)).first
        assert booth.locator(".citation > span[id]").inner_text() == OVERRULED_CITATION
        flag = booth.locator(".flag-red")
        assert "Red flag: no longer good law" in flag.inner_text()
        reason = flag.locator("li").first
        assert reason.inner_text().startswith(f"Overruled by {OVERRULING}")
        assert len(reason.locator("q").inner_text()) > 40  # the passage that says so
        assert DECIDED.search(booth.locator("p.meta").inner_text()).group(1) == "1987-06-15"

        # Copy the citation by keyboard.
        booth.locator("button.copy").focus()
        page.keyboard.press("Enter")
        booth.locator(".copied").wait_for(state="visible")
        assert page.evaluate("navigator.clipboard.readText()") == OVERRULED_CITATION

        # Both exports carry the citation and the flag with its reason.
        saved = downloads_by_keyboard(page, tmp_path)
        assert all(OVERRULED_CITATION in text and OVERRULING in text for text in saved.values())
        brief = json.loads(saved["json"])
        hits = [h for key in ("supported", "refuted", "relevant") for h in brief.get(key) or ()]
        flagged = [h for h in hits if h.get("citation") == OVERRULED_CITATION]
        assert flagged and all(h["flag"] == "red" for h in flagged)

        # Narrow by decision date from the keyboard: every hit is decided in range, the overruled case is gone,
        # and the address keeps the filter.
        page.locator("details.filters summary").focus()
        page.keyboard.press("Enter")
        page.get_by_label("Decided from", exact=True).fill("1990-01-01")
        page.get_by_label("Decided from", exact=True).press("Enter")
        page.wait_for_url("**from=1990-01-01*")
        assert parse_qs(urlparse(page.url).query)["from"] == ["1990-01-01"]
        decided = [DECIDED.search(t) for t in page.locator("li.hit p.meta").all_inner_texts()]
        assert decided and all(d and d.group(1) >= "1990-01-01" for d in decided)
        assert page.locator("li.hit").filter(has=page.get_by_role("heading", name=OVERRULED)).count() == 0
        shown = page.locator("section.column").first.locator("li.hit").count()
        assert _serious(page) == []

        # Page on: "more" keeps the filter and shows twice as many hits, all still in range.
        more = page.get_by_role("link", name="More results")
        more.focus()
        page.keyboard.press("Enter")
        page.wait_for_url(f"**k={2 * shown}*")
        assert page.locator("section.column").first.locator("li.hit").count() == 2 * shown
        decided = [DECIDED.search(t) for t in page.locator("li.hit p.meta").all_inner_texts()]
        assert all(d and d.group(1) >= "1990-01-01" for d in decided)
        assert _serious(page) == []
