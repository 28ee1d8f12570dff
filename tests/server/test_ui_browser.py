"""The research page in a real headless Chromium against a real `citator ui` server: type a proposition, read
its brief, open a document, follow a shared URL, and pass axe-core with no serious or critical violation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.servers import ui_server_at
from test_review_browser import chromium

TEXT = "A grant of land is a contract that a later legislature may not void."


@pytest.fixture(scope="module")
def ui_server(brief_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ui_server_at(brief_index, tmp_path_factory.mktemp("ui") / "server.log") as url:
        yield url


def _serious(page) -> list[str]:  # type: ignore[no-untyped-def]
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}" for v in violations
            if v["impact"] in ("serious", "critical")]


def brief_by_keyboard(page, url: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """Open the page at `url`, type `text` as the proposition and ask with Enter, as a keyboard user does."""
    page.goto(url + "/")
    page.get_by_label("Proposition", exact=True).focus()
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    page.wait_for_url("**/?q=*")


def downloads_by_keyboard(page, folder: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The brief's Markdown and JSON downloads, each reached by focus and Enter, by suffix: their texts."""
    texts = {}
    for name, suffix in (("Markdown", "md"), ("JSON", "json")):
        page.get_by_role("link", name=name, exact=True).focus()
        with page.expect_download() as download:
            page.keyboard.press("Enter")
        assert download.value.suggested_filename == f"citator-brief.{suffix}"
        saved = folder / f"brief.{suffix}"
        download.value.save_as(saved)
        texts[suffix] = saved.read_text(encoding="utf-8")
    return texts


@pytest.mark.browser
def test_a_person_briefs_a_proposition_opens_a_document_and_shares_the_url(ui_server: str) -> None:
    with chromium() as browser:
        # axe-core is injected as a script: the page's own policy allows none, so this test context bypasses it.
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(ui_server + "/")
        assert _serious(page) == []
        # Keyboard only: the first Tab reaches the skip link, which leads to the content; the box is labelled.
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
        assert page.get_by_label("Proposition", exact=True).count() == 1
        page.get_by_label("Proposition", exact=True).focus()
        page.keyboard.type(TEXT)
        page.keyboard.press("Enter")
        page.wait_for_url("**/?q=*")
        shared = page.url
        # An untrained index: one list that says the stance is not ranked, never two identical columns.
        assert page.locator("section.column").count() == 1
        assert "stance not ranked" in page.locator("section#relevant h2").inner_text()
        for stance in ("relevant",):
            column = page.locator(f"section#{stance}")
            assert column.locator("li.hit").count() == 5
            assert column.locator("blockquote.passage").first.inner_text().strip()
        assert page.locator("mark").count() > 0
        assert page.locator("h1.proposition").inner_text() == TEXT
        assert _serious(page) == []

        first = page.locator("section#relevant li.hit h3 a").first
        title = first.inner_text()
        first.focus()
        page.keyboard.press("Enter")
        page.wait_for_url("**/document?*")
        assert page.locator("h1").inner_text() == title
        evidence = page.locator("#evidence")
        assert evidence.is_visible() and len(evidence.inner_text().split()) > 5
        assert _serious(page) == []
        page.get_by_role("link", name="Back to the brief").click()
        page.wait_for_url(shared)

        # The shared address, opened fresh elsewhere, shows the same brief.
        other = browser.new_context(viewport={"width": 900, "height": 800}).new_page()
        other.goto(shared)
        for stance in ("relevant",):
            assert (other.locator(f"section#{stance} li.hit h3").all_inner_texts()
                    == page.locator(f"section#{stance} li.hit h3").all_inner_texts())
        assert other.get_by_label("Proposition", exact=True).input_value() == TEXT
        # The check can fail: an unlabelled box and faint text are caught.
        page.set_content('<html><body><input type="text"><p style="color:#ddd">faint</p></body></html>')
        assert len(_serious(page)) >= 2


@pytest.mark.browser
def test_the_page_reflows_at_320_pixels_and_long_words_wrap(ui_server: str) -> None:
    # WCAG 1.4.10: nothing scrolls sideways at 320 CSS pixels; an unbroken 300-character word (a pasted URL) wraps;
    # a refused proposition's page still has its heading.
    from urllib.parse import quote

    width = "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
    with chromium() as browser:
        narrow = browser.new_context(viewport={"width": 320, "height": 640}, bypass_csp=True).new_page()
        for path in ("/", "/?q=" + quote(TEXT)):
            narrow.goto(ui_server + path)
            assert narrow.evaluate(width) <= 320, path
            box = narrow.get_by_role("button", name="Brief").bounding_box()
            assert box is not None and box["x"] + box["width"] <= 320
        wide = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True).new_page()
        wide.goto(ui_server + "/?q=" + quote("contract " + "x" * 300))
        assert wide.evaluate(width) <= 1280
        wide.goto(ui_server + "/?q=" + "x" * 600)
        assert wide.locator("h1").count() == 1 and wide.locator("[role=alert]").count() == 1
        from axe_playwright_python.sync_playwright import Axe

        assert "page-has-heading-one" not in {v["id"] for v in Axe().run(wide).response["violations"]}


@pytest.fixture(scope="module")
def flag_server(flag_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ui_server_at(flag_index, tmp_path_factory.mktemp("ui-flags") / "server.log") as url:
        yield url


@pytest.mark.browser
def test_a_person_reads_a_flag_pages_on_and_downloads_the_brief_by_keyboard(flag_server: str,
                                                                            tmp_path: Path) -> None:
    # The flag with its reason and "cited by" are on the page; "more" and both downloads are reached with Tab and
    # Enter alone; the address keeps k; axe-core finds nothing serious on any of it.
    from fixtures.brief import FLAG_PASSAGE, HOSTILE_TITLE

    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True,
                                      accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(30_000)
        brief_by_keyboard(page, flag_server, TEXT)
        flag = page.locator("section#relevant .flag-red").first
        assert "Red flag: no longer good law" in flag.inner_text()
        assert FLAG_PASSAGE in flag.inner_text() and HOSTILE_TITLE in flag.inner_text()
        cited = page.locator("section#relevant details.cited-by").first
        cited.locator("summary").focus()
        page.keyboard.press("Enter")
        assert "Overruled by" in cited.inner_text()
        assert _serious(page) == []

        saved = downloads_by_keyboard(page, tmp_path)
        assert json.loads(saved["json"])["proposition"] == TEXT
        assert saved["md"].startswith(f"### Proposition: {TEXT[:20]}")

        more = page.get_by_role("link", name="More results")
        more.focus()
        page.keyboard.press("Enter")
        page.wait_for_url("**k=10*")
        assert page.locator("section#relevant li.hit").count() == 10
        page.keyboard.press("Tab")  # the address's target, the sixth hit, is where Tab goes on from
        assert page.evaluate("document.activeElement.closest('li.hit') !== null")
        assert _serious(page) == []
