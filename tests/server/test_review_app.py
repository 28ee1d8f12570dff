"""The review app over HTTP against a real server: tokens, CSRF, blinding, escaping, no JSON."""

from __future__ import annotations

import re

import httpx
import pytest

from citator.statutes.review import LabelStore
from fixtures.blinding import CSRF_INPUT, leaks


def _csrf(client: httpx.Client, path: str = "/") -> str:
    page = client.get(path)
    match = CSRF_INPUT.search(page.text)
    assert match, page.text
    return match.group(1)


def _client(server) -> httpx.Client:  # type: ignore[no-untyped-def]
    return httpx.Client(base_url=server.url, follow_redirects=False, timeout=10)


def _signed_in(server) -> httpx.Client:  # type: ignore[no-untyped-def]
    client = _client(server)
    response = client.post("/login", data={"token": server.token, "csrf_token": _csrf(client)})
    assert response.status_code == 303 and response.headers["location"] == "/queue"
    return client


def _item_keys(client: httpx.Client) -> list[str]:
    return re.findall(r'href="/items/([0-9a-f]+)"', client.get("/queue").text)


def _grade_form(client: httpx.Client, key: str) -> dict[str, str]:
    page = client.get(f"/items/{key}").text
    hashes = dict(re.findall(r'name="(\w+_sha256)" value="([0-9a-f]{64})"', page))
    return {"section_grade": "2", "passage_grade": "unknown", "note": "n", "action": "complete", **hashes}


@pytest.mark.parametrize("token", ["", "not-a-real-token", "x" * 32])
def test_wrong_or_missing_token_is_refused(review_server, token: str) -> None:  # type: ignore[no-untyped-def]
    client = _client(review_server)
    response = client.post("/login", data={"token": token, "csrf_token": _csrf(client)})
    assert response.status_code == 401
    assert "citator_session" not in response.cookies
    assert client.get("/queue").status_code == 303  # still signed out


def test_login_without_csrf_token_is_refused(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _client(review_server)
    client.get("/")
    response = client.post("/login", data={"token": review_server.token})
    assert response.status_code == 403
    assert "citator_session" not in response.cookies


def test_forged_grade_forms_are_refused_and_store_nothing(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _signed_in(review_server)
    key = _item_keys(client)[-1]
    form = _grade_form(client, key)
    token = _csrf(client, "/queue")
    assert client.post(f"/items/{key}", data=form).status_code == 403  # no CSRF token
    assert client.post(f"/items/{key}", data={**form, "csrf_token": "forged"}).status_code == 403
    cross_site = client.post(f"/items/{key}", data={**form, "csrf_token": token},
                             headers={"Origin": "http://evil.example"})
    assert cross_site.status_code == 403
    bare = httpx.post(f"{review_server.url}/items/{key}", data={**form, "csrf_token": token},
                      cookies={"citator_csrf": token})  # a valid CSRF pair but no session
    assert bare.status_code == 401
    with LabelStore(review_server.db) as store:
        assert [lab for lab in store.labels() if store.item(key).doc_id == lab.doc_id] == []
    # The same form with its token goes through: the refusals above were for the token, not the form.
    ok = client.post(f"/items/{key}", data={**form, "csrf_token": token})
    assert ok.status_code == 303
    with LabelStore(review_server.db) as store:
        (label,) = [lab for lab in store.labels() if lab.doc_id == store.item(key).doc_id]
    assert (label.section_grade, label.passage_grade, label.complete) == (2, "unknown", True)


def test_a_grade_for_texts_that_changed_is_refused(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _signed_in(review_server)
    key = _item_keys(client)[0]
    form = {**_grade_form(client, key), "passage_sha256": "0" * 64, "csrf_token": _csrf(client, "/queue")}
    assert client.post(f"/items/{key}", data=form).status_code == 409


def test_invalid_grade_is_refused(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _signed_in(review_server)
    key = _item_keys(client)[0]
    form = {**_grade_form(client, key), "section_grade": "4", "csrf_token": _csrf(client, "/queue")}
    assert client.post(f"/items/{key}", data=form).status_code == 400


def test_pages_need_a_session(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _client(review_server)
    keys = _item_keys(_signed_in(review_server))
    for path in ("/queue", f"/items/{keys[0]}"):
        response = client.get(path)
        assert response.status_code == 303 and response.headers["location"] == "/"


def test_serves_no_json_and_no_api_schema(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _signed_in(review_server)
    for path in ("/openapi.json", "/docs", "/redoc", "/items/nope", "/static/../app.py"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "json" not in response.headers.get("content-type", ""), path


def test_every_page_is_blinded_and_escaped(review_server) -> None:  # type: ignore[no-untyped-def]
    client = _signed_in(review_server)
    keys = _item_keys(client)
    assert len(keys) == 11
    pages = {"/": client.get("/"), "/queue": client.get("/queue"), "/static/review.css": client.get("/static/review.css")}
    pages |= {f"/items/{k}": client.get(f"/items/{k}") for k in keys}
    for path, response in pages.items():
        assert response.status_code in (200, 303), path
        assert leaks(response.text) == [], path
        assert leaks(" ".join(f"{k}: {v}" for k, v in response.headers.items())) == [], path
    item_page = next(r.text for p, r in pages.items() if p.startswith("/items/") and "q-dev" not in r.text
                     and "child abuse" in r.text)
    assert "&lt;script&gt;alert(" in item_page and "<script" not in item_page
    assert "Whole section" in item_page and "Passage as the system showed it" in item_page


def test_security_headers(review_server) -> None:  # type: ignore[no-untyped-def]
    response = _client(review_server).get("/")
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    csrf_cookie = response.headers["set-cookie"]
    assert "HttpOnly" in csrf_cookie and "SameSite=strict" in csrf_cookie


def test_the_leak_check_catches_the_planted_model_outputs(review_server) -> None:  # type: ignore[no-untyped-def]
    # Positive control: the run's own files do contain what the pages must not.
    assert {"rank", "score", "p_useful", "proposed"} <= set(leaks((review_server.run_dir / "rerank.jsonl").read_text()))
    assert "rank" in leaks((review_server.run_dir / "pool.jsonl").read_text())


def test_serve_binds_to_loopback_by_default() -> None:
    from citator.cli.main import build_parser

    args = build_parser().parse_args(["review", "serve", "--db", "labels.sqlite", "--port", "9999"])
    assert (args.host, args.port) == ("127.0.0.1", 9999)


def test_a_busy_store_unknown_items_and_control_characters(review_server, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
                                                           ) -> None:
    """Another writer holding the store past the wait is a 503 page that saved nothing (not a bare 500); an item the
    store does not hold is a 404; control characters a note carries are dropped, its text kept."""
    import sqlite3

    from starlette.testclient import TestClient

    from citator.server.review.app import create_app
    from citator.statutes.review import store as store_module

    monkeypatch.setattr(store_module, "BUSY_SECONDS", 0.2)
    client = TestClient(create_app(review_server.db), follow_redirects=False)
    assert client.post("/login", data={"token": review_server.token, "csrf_token": _csrf(client)}).status_code == 303
    key = _item_keys(client)[1]
    form = {**_grade_form(client, key), "action": "draft", "csrf_token": _csrf(client, "/queue")}
    other = sqlite3.connect(review_server.db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        busy = client.post(f"/items/{key}", data={**form, "note": "busy"})
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert busy.status_code == 503 and busy.headers["retry-after"] == "10" and "busy" in busy.text
    assert "<title>Service Unavailable" in busy.text
    with LabelStore(review_server.db) as store:
        assert all(lab.note != "busy" for lab in store.labels())
    assert client.post("/items/ffff", data=form).status_code == 404
    assert client.post(f"/items/{key}", data={**form, "note": "a\x00b\x1b[31mc\td\ne"}).status_code == 303
    with LabelStore(review_server.db) as store:
        assert "ab[31mc\td\ne" in [lab.note for lab in store.labels()]


def test_head_is_answered_wherever_get_is(review_server) -> None:  # type: ignore[no-untyped-def]
    """A monitor or link checker asks HEAD: it gets GET's status and headers with no body, never a 405."""
    signed_out, signed_in = _client(review_server), _signed_in(review_server)
    key = _item_keys(signed_in)[0]
    for client, path in ((signed_out, "/"), (signed_out, "/queue"), (signed_in, "/queue"),
                         (signed_in, f"/items/{key}"), (signed_in, "/items/nope"), (signed_in, "/static/review.css")):
        get, head = client.get(path), client.head(path)
        assert head.status_code == get.status_code, path
        for name in ("content-type", "location", "content-security-policy"):
            assert head.headers.get(name) == get.headers.get(name), (path, name)
        assert head.content == b"", path
    assert set(signed_out.post("/").headers["allow"].split(", ")) == {"GET", "HEAD"}
