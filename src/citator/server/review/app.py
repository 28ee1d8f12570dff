"""The review app: sign in with a token, work through a keyed-hash queue, grade section and passage apart.

Nothing here reads rank, scores, P(useful) or proposed grades: the store never holds them, and the app
serves only server-rendered HTML and one stylesheet (no scripts, no JSON, no OpenAPI schema).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Form, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from citator.errors import LabelStoreBusy, LabelStoreError, NoReviewItem
from citator.statutes.review.records import GRADE_NAMES, GRADES, LabelRecord, Reviewer, ReviewItem, parse_grade
from citator.statutes.review.store import LabelStore
from citator.server.pages import add_security_headers
from citator.server.review.csrf import CSRF_COOKIE, CSRF_FIELD, csrf_ok, csrf_token_for

SESSION_COOKIE = "citator_session"
MAX_NOTE_CHARS = 5000
# Control characters other than tab and line breaks: invisible in the page, and a terminal reading an export would
# act on them (ESC). A pasted note keeps its text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_HEADERS = {
    # No script may run, nothing may be framed, forms only post back here.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # "no-referrer" would make Chromium send `Origin: null` on our own form posts.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

_templates = Environment(loader=PackageLoader("citator.server.review", "templates"), autoescape=True)


def _status(label: LabelRecord | None, item: ReviewItem) -> str:
    if label is None:
        return "to do"
    if label.is_stale_for(item):
        return "stale"
    return "complete" if label.complete else "draft"


class GradeForm(BaseModel):
    """A grading form as posted: its security token, the two grades, the note, the digests of what was shown, and
    whether the label is a draft or complete."""

    csrf_token: str = ""
    section_grade: str = ""
    passage_grade: str = ""
    note: str = ""
    query_sha256: str = ""
    section_sha256: str = ""
    passage_sha256: str = ""
    action: str = "draft"


class _Site:
    """What every route shares: the label store (one connection per request) and its pages, each with the form
    security token."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path

    def store(self) -> Iterator[LabelStore]:
        s = LabelStore(self.db_path)
        try:
            yield s
        finally:
            s.close()

    def page(self, request: Request, template: str, status: int = 200, headers: Mapping[str, str] | None = None,
             **context: Any) -> HTMLResponse:
        csrf = csrf_token_for(request)
        html = _templates.get_template(template).render(csrf_field=CSRF_FIELD, csrf_token=csrf,
                                                        title=HTTPStatus(status).phrase, **context)
        response = HTMLResponse(html, status_code=status, headers=headers)
        if request.cookies.get(CSRF_COOKIE) != csrf:
            response.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="strict", path="/")
        return response

    def refuse(self, request: Request, status: int, message: str, reviewer: Reviewer | None = None,
               headers: Mapping[str, str] | None = None) -> HTMLResponse:
        return self.page(request, "error.html", status, headers, message=message, reviewer=reviewer, progress=None)

    def signed_in(self, request: Request, s: LabelStore) -> Reviewer | None:
        return s.reviewer_for_session(request.cookies.get(SESSION_COOKIE, ""))


def create_app(db_path: str | Path) -> FastAPI:
    """Build the app over the label store at `db_path` (created and migrated if new)."""
    db_path = Path(db_path)
    LabelStore(db_path).close()  # migrate once, before any request races to do it
    app = FastAPI(title="citator review", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(packages=[("citator.server.review", "static")]), name="static")
    site = _Site(db_path)
    add_security_headers(app, _HEADERS)
    _error_pages(app, site)
    _session_routes(app, site)
    _review_routes(app, site)
    return app


def _error_pages(app: FastAPI, site: _Site) -> None:
    """Every failure answered with a page that says it in one line, and that nothing was saved."""
    refuse = site.refuse

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> HTMLResponse:
        return refuse(request, exc.status_code, str(exc.detail), headers=exc.headers)

    # The store turns SQLite's own errors into these: busy (503, try again) or a store it cannot use (500 below).
    @app.exception_handler(LabelStoreBusy)
    async def store_busy(request: Request, exc: Exception) -> HTMLResponse:
        # Another writer (an import, a load) held the store past the 10 s wait: nothing was saved, try again.
        return refuse(request, 503, "The label store is busy with another writer; nothing was saved. Try again in a "
                      "moment.", headers={"Retry-After": "10"})

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> HTMLResponse:
        return refuse(request, 500, f"This request failed ({type(exc).__name__}); nothing was saved.")

    @app.exception_handler(RequestValidationError)
    async def bad_form(request: Request, exc: RequestValidationError) -> HTMLResponse:
        return refuse(request, 400, "The form was incomplete or malformed.")


def _session_routes(app: FastAPI, site: _Site) -> None:
    """Signing in with a reviewer token, and out."""
    page, refuse, store = site.page, site.refuse, site.store

    # HEAD wherever GET: a link checker or monitor asks HEAD first, and a 405 would read as a broken page.
    @app.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def home(request: Request, s: LabelStore = Depends(store)) -> Response:
        if site.signed_in(request, s) is not None:
            return RedirectResponse("/queue", status_code=303)
        return page(request, "login.html", reviewer=None, progress=None, message=None)

    @app.post("/login", response_class=HTMLResponse)
    def login(
        request: Request, token: str = Form(""), csrf_token: str = Form(""), s: LabelStore = Depends(store)
    ) -> Response:
        if not csrf_ok(request, csrf_token):
            return refuse(request, 403, "This form is missing its security token. Reload the page and try again.")
        reviewer = s.reviewer_for_token(token.strip())
        if reviewer is None:
            message = "Enter your reviewer token." if not token.strip() else "That token is not recognised."
            return page(request, "login.html", 401, reviewer=None, progress=None, message=message)
        response = RedirectResponse("/queue", status_code=303)
        response.set_cookie(SESSION_COOKIE, s.open_session(reviewer), httponly=True, samesite="strict", path="/")
        return response

    @app.post("/logout")
    def logout(request: Request, csrf_token: str = Form(""), s: LabelStore = Depends(store)) -> Response:
        if not csrf_ok(request, csrf_token):
            return refuse(request, 403, "This form is missing its security token. Reload the page and try again.")
        s.close_session(request.cookies.get(SESSION_COOKIE, ""))
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response


def _review_routes(app: FastAPI, site: _Site) -> None:
    """The reviewer's queue, an item to grade, and its grading."""
    page, refuse, store, signed_in = site.page, site.refuse, site.store, site.signed_in

    @app.api_route("/queue", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def queue(request: Request, s: LabelStore = Depends(store)) -> Response:
        reviewer = signed_in(request, s)
        if reviewer is None:
            return RedirectResponse("/", status_code=303)
        labels = {(lab.query_id, lab.doc_id): lab for lab in s.labels(reviewer.name)}
        rows = [
            {"n": n, "item": it, "status": _status(labels.get((it.query_id, it.doc_id)), it)}
            for n, it in enumerate(s.queue(reviewer), 1)
        ]
        return page(request, "queue.html", reviewer=reviewer, progress=s.progress(reviewer), rows=rows,
                    saved=request.query_params.get("saved"))

    @app.api_route("/items/{key}", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def item(request: Request, key: str, s: LabelStore = Depends(store)) -> Response:
        reviewer = signed_in(request, s)
        if reviewer is None:
            return RedirectResponse("/", status_code=303)
        keys = [it.key for it in s.queue(reviewer)]
        current = s.item(key)
        if current is None or key not in keys:
            return refuse(request, 404, "No such review item.", reviewer)
        label = s.label(reviewer, key)
        stale = label is not None and label.is_stale_for(current)
        at = keys.index(key)
        return page(
            request, "item.html",
            reviewer=reviewer, progress=s.progress(reviewer), item=current, position=at + 1, total=len(keys),
            previous=keys[at - 1] if at > 0 else None, next=keys[at + 1] if at + 1 < len(keys) else None,
            label=None if stale else label, stale=stale, grades=GRADES, grade_names=GRADE_NAMES,
            saved=request.query_params.get("saved"),
        )

    @app.post("/items/{key}", response_class=HTMLResponse)
    def grade(request: Request, key: str, form: Annotated[GradeForm, Form()],
              s: LabelStore = Depends(store)) -> Response:
        if not csrf_ok(request, form.csrf_token):
            return refuse(request, 403, "This form is missing its security token. Reload the page and try again.")
        reviewer = signed_in(request, s)
        if reviewer is None:
            return refuse(request, 401, "Sign in with your reviewer token first.")
        section, passage = parse_grade(form.section_grade), parse_grade(form.passage_grade)
        if section is None or passage is None:
            return refuse(request, 400, "Choose a section grade and a passage grade (0-3 or unknown).", reviewer)
        if len(form.note) > MAX_NOTE_CHARS:
            return refuse(request, 400, f"The note is longer than {MAX_NOTE_CHARS} characters.", reviewer)
        if form.action not in ("draft", "complete"):
            return refuse(request, 400, "Unknown action.", reviewer)
        try:
            s.save_label(reviewer, key, section, passage, _CONTROL.sub("", form.note).strip(),
                         (form.query_sha256, form.section_sha256, form.passage_sha256),
                         complete=form.action == "complete")
        except NoReviewItem as exc:
            return refuse(request, 404, str(exc), reviewer)
        except LabelStoreBusy:
            raise
        except LabelStoreError as exc:
            return refuse(request, 409, str(exc), reviewer)
        if form.action == "draft":
            return RedirectResponse(f"/items/{key}?saved=draft", status_code=303)
        keys = [it.key for it in s.queue(reviewer)]
        at = keys.index(key)
        target = f"/items/{keys[at + 1]}?saved=complete" if at + 1 < len(keys) else "/queue?saved=complete"
        return RedirectResponse(target, status_code=303)
