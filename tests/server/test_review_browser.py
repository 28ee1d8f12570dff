"""The review app in a real headless Chromium: sign in, grade section and passage, mark complete, check the DB."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from citator.statutes.review import LabelStore
from fixtures.blinding import leaks

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run should have installed Debian's chromium")
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); CI installs it and runs this test")


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium under Playwright, closed after (the test is skipped where it is not installed)."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.mark.browser
def test_reviewer_grades_and_completes_in_a_real_browser(review_server) -> None:  # type: ignore[no-untyped-def]

    ARTIFACTS.mkdir(exist_ok=True)
    responses = []
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(15_000)
        page.on("response", lambda response: responses.append(response))
        sources = []

        page.goto(review_server.url + "/")
        sources.append(page.content())
        page.keyboard.press("Tab")  # keyboard users skip the header's links
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
        page.fill("#token", "wrong-token")
        page.click("button:has-text('Sign in')")
        assert "not recognised" in page.content()
        page.fill("#token", review_server.token)
        page.click("button:has-text('Sign in')")
        page.wait_for_url("**/queue")
        sources.append(page.content())
        assert "0 of 11 complete" in page.inner_text("header")

        page.click("table.queue tbody tr:first-child a")
        page.wait_for_url("**/items/*")
        key = page.url.rsplit("/", 1)[1]
        with LabelStore(review_server.db) as store:
            item = store.item(key)
        assert item is not None
        assert page.inner_text("#query") == item.query
        assert page.locator("h1").count() == 1  # the item page is named in the outline
        assert page.inner_text("#section .text") == item.section_text
        assert page.inner_text("#passage .text") == item.passage
        assert item.caption in page.inner_text("#passage .cite")
        sources.append(page.content())
        page.screenshot(path=str(ARTIFACTS / "review-item.png"), full_page=True)

        page.check("input[name=section_grade][value='3']")
        page.check("input[name=passage_grade][value='1']")
        page.fill("#note", "Passage is the deadline; the section adds the exception.")
        page.click("button:has-text('Save draft')")
        page.wait_for_url(f"**/items/{key}?saved=draft")
        assert page.is_checked("input[name=section_grade][value='3']")
        with LabelStore(review_server.db) as store:
            (draft,) = store.labels("alice")
        assert draft.complete is False

        page.click("button:has-text('Save and mark review complete')")
        page.wait_for_url("**/items/*?saved=complete")
        assert "Previous review marked complete" in page.content()
        sources.append(page.content())
        page.goto(review_server.url + "/queue")
        assert "1 of 11 complete" in page.inner_text("header")
        sources.append(page.content())
        page.screenshot(path=str(ARTIFACTS / "review-queue.png"), full_page=True)

        bodies = []
        for r in responses:
            try:
                bodies.append((r.url, r.text()))
            except Exception:  # redirects have no body to read
                bodies.append((r.url, ""))
            bodies.append((r.url + " headers", " ".join(f"{k}: {v}" for k, v in r.headers.items())))

    with LabelStore(review_server.db) as store:
        (label,) = store.labels("alice")
    assert (label.query_id, label.doc_id) == (item.query_id, item.doc_id)
    assert (label.section_grade, label.passage_grade, label.complete) == (3, 1, True)
    assert label.note.startswith("Passage is the deadline")
    assert label.hashes == item.hashes
    assert label.labeled_at

    assert len(sources) == 5 and len(bodies) >= 10
    for n, source in enumerate(sources):
        assert leaks(source) == [], f"page source {n}"
    for url, text in bodies:
        assert leaks(text) == [], url
    assert not [url for url, _ in bodies if url.endswith(".js") or "json" in url]
    assert (ARTIFACTS / "review-item.png").stat().st_size > 10_000


def test_missing_chromium_fails_in_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="missing in CI"):
        _require_chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        _require_chromium()
