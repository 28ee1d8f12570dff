"""`citator ui`: a read-only page over one index — a proposition's supporting and refuting authority side by side.

GET only, server-rendered HTML, one stylesheet and one script of the page's own (static/copy.js: the copy-citation
buttons; nothing else depends on it): every text is escaped by Jinja2's autoescape, and the query and its
metadata filters live in the URL (`/?q=...&from=1980-01-01&court=...&f=KEY OP VALUE`), so a brief can be shared by
its address. Searches run one at a time on
one long-lived worker thread, as in the search server (server/search_service.py): torch's thread pool belongs to
the thread that calls it, and 2 cores gain nothing from two searches at once.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader
from starlette.exceptions import HTTPException as StarletteHTTPException

from citator.data.metadata import document_metadata, short_citation
from citator.data.records import STANCES
from citator.stance.brief.evidence import Span, split_marked
from citator.stance.brief.index import MAX_K, MAX_PROPOSITION_CHARS, StanceIndex
from citator.stance.brief.label import document_label
from citator.stance.brief.notice import THRESHOLD, best_match, weak
from citator.stance.brief.records import Citing
from citator.stance.brief.render import excerpt, render
from citator.errors import FilterError, IndexDirError, PropositionError, one_line
from citator.server.guard import host_guard
from citator.server.pages import add_security_headers

_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}

_templates = Environment(loader=PackageLoader("citator.server.ui", "templates"), autoescape=True)


# The page's filter controls, as its URL names them.
FILTER_PARAMS = ("from", "to", "court", "jurisdiction", "f")
# What a document's links carry of the brief it was opened from, so that every way back is that brief: its filters
# and how many results it showed.
BRIEF_PARAMS = ("k", *FILTER_PARAMS)


@dataclass(frozen=True)
class PageFilters:
    """The page's filter controls as its URL holds them: a date range, a court, a jurisdiction, and any number of
    "KEY OP VALUE" filters (`f`); blank ones are not filters."""

    date_from: str = ""
    to: str = ""
    court: str = ""
    jurisdiction: str = ""
    more: tuple[str, ...] = ()

    def texts(self) -> list[str]:
        """The filters they make (docs/metadata.md), ANDed."""
        named = [("date>=", self.date_from), ("date<=", self.to), ("court=", self.court),
                 ("jurisdiction=", self.jurisdiction)]
        return [f"{key}{value.strip()}" for key, value in named if value.strip()] + [m for m in self.more if m.strip()]

    def query(self) -> dict[str, Any]:
        """The URL parameters that give these filters again (for links that keep them)."""
        named = {"from": self.date_from, "to": self.to, "court": self.court, "jurisdiction": self.jurisdiction}
        more = [m for m in self.more if m.strip()]
        return {**{k: v for k, v in named.items() if v.strip()}, **({"f": more} if more else {})}


def _pieces(text: str, marks: tuple[Span, ...]) -> list[tuple[str, bool]]:
    return split_marked(text, marks)


def create_app(index_dir: str | Path, k: int = 5, threads: int = 1) -> FastAPI:
    """Open the index (and answer one warm-up brief) before the first request.

    `threads`: torch's and BLAS's threads per search. A brief encodes one short text per stance; on 2 shared
    cores one thread answered in 0.17 s where two took 0.7-1.9 s (the bundled sample, warm, under load).
    """
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="brief")
    index: StanceIndex = worker.submit(StanceIndex.open, index_dir).result()
    worker.submit(_limit_threads, threads).result()
    worker.submit(index.brief, "warm up", 1).result()
    worker.submit(index.mismatch, "1 U.S. 1").result()  # loads eyecite (1.4 s) now, not in the first request
    gc.collect()
    gc.freeze()  # the index lives as long as the server: later collections need not walk it
    app = FastAPI(title="citator", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(packages=[("citator.server.ui", "static")]), name="static")
    app.state.index = index

    def page(template: str, status: int = 200, headers: Mapping[str, str] | None = None, **context: Any
             ) -> HTMLResponse:
        context.setdefault("filters", PageFilters())
        html = _templates.get_template(template).render(trained=index.trained, statutes=index.statutes,
                                                        title=HTTPStatus(status).phrase, keys=index.metadata_keys,
                                                        max_chars=MAX_PROPOSITION_CHARS, **context)
        return HTMLResponse(html, status_code=status, headers=headers)

    async def run(function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(worker, function, *args)

    add_security_headers(app, _HEADERS)
    _error_pages(app, page)

    step = k  # "more" asks for this many more per column

    @app.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
    async def home(request: Request, q: str = "", k: int = k, date_from: str = Query("", alias="from"), to: str = "",
                   court: str = "", jurisdiction: str = "", f: list[str] = Query([])) -> Response:
        filters = PageFilters(date_from, to, court, jurisdiction, tuple(f))
        if any(name in FILTER_PARAMS and not value.strip() for name, value in request.query_params.multi_items()):
            # The form sends its empty controls too: the brief's address is the one without them.
            kept = {"q": q, **({"k": k} if "k" in request.query_params else {}), **filters.query()}
            return RedirectResponse("/?" + urlencode(kept, doseq=True), status_code=303)
        if not q.strip():
            return page("brief.html", q="", columns=None, error=None, k=k, filters=filters)
        cited = await run(index.cited, q)  # a reporter citation is looked up by a filtered search
        if cited:  # an exact citation: straight to the section, no search
            return RedirectResponse("/document?" + urlencode({"id": cited[0], "p": 0, "q": q}), status_code=303)
        mismatch = await run(index.mismatch, q)
        if mismatch:  # an exact citation of what this index does not hold: one sentence, no unrelated list
            return page("brief.html", q=q, columns=None, error=None, k=k, mismatch=mismatch, filters=filters)
        k = min(max(k, 1), MAX_K)
        try:
            columns = await run(_columns, index, q, k, filters, "k" in request.query_params)
        except (PropositionError, FilterError) as exc:
            return page("brief.html", 400, q=q, columns=None, error=str(exc), k=k, filters=filters)
        return page("brief.html", q=q, proposition=" ".join(q.split()), columns=columns, error=None, k=k,
                    filters=filters, **_tools(index, q, k, step, columns, filters))

    _export_route(app, index, page, run, k)

    @app.api_route("/document", methods=["GET", "HEAD"], response_class=HTMLResponse)
    async def document(request: Request, id: str, p: int = 0, q: str = "",  # noqa: A002
                       stance: str = "") -> Response:
        try:
            doc, span, marks = await run(index.passage_in_place, id, p, q)
        except PropositionError as exc:
            return page("error.html", 404, message=str(exc), q=q)
        text = doc.text
        # Only the stances a brief's links carry are shown: anything else in the address is no evidence label.
        stance = stance if stance in STANCES else ""
        inside = tuple(Span(m.start - span.start, m.end - span.start) for m in marks)
        flag, cited_by = await run(index.treatment, id)
        label = short_citation(doc.title, document_metadata(doc)) or document_label(doc)
        return page("document.html", doc=doc, label=label, q=q, stance=stance, passage=p, flag=flag,
                    cited_by=cited_by, reasons=tuple(c for c in cited_by if c.flag == flag) if flag else (),
                    citing=_citing_links(cited_by, q, _brief_state(request)),
                    before=text[:span.start], evidence=_pieces(text[span.start:span.end], inside),
                    after=text[span.end:], back=_back(q, request))

    return app


def _export_route(app: FastAPI, index: StanceIndex, page: Callable[..., HTMLResponse],
                  run: Callable[..., Awaitable[Any]], k: int) -> None:
    """/export: the brief of the page's address (its filters too) as a Markdown or JSON download, made by the
    renderers `citator brief --format` uses."""

    @app.api_route("/export", methods=["GET", "HEAD"])
    async def export(q: str = "", k: int = k, format: str = "markdown",  # noqa: A002
                     date_from: str = Query("", alias="from"), to: str = "", court: str = "", jurisdiction: str = "",
                     f: list[str] = Query([])) -> Response:
        if format not in EXPORTS or index.statutes:
            return page("error.html", 404, message="Export gives a case index's brief as markdown or json.", q=q)
        filters = PageFilters(date_from, to, court, jurisdiction, tuple(f))
        try:
            brief = await run(index.brief, q, min(max(k, 1), MAX_K), filters.texts())
        except (PropositionError, FilterError) as exc:
            return page("error.html", 400, message=str(exc), q=q)
        media, suffix = EXPORTS[format]
        return Response(render(brief, format) + "\n", media_type=media, headers={
            "Content-Disposition": f'attachment; filename="citator-brief.{suffix}"'})


def _error_pages(app: FastAPI, page: Callable[..., HTMLResponse]) -> None:
    """Every failure answered with a page that says it in one line."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> HTMLResponse:
        # Its headers too: a 405 says which methods the path allows.
        return page("error.html", exc.status_code, exc.headers, message=str(exc.detail), q="")

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> HTMLResponse:
        return page("error.html", 400, message="The request was not understood (a parameter is malformed).", q="")

    @app.exception_handler(IndexDirError)
    async def index_changed(request: Request, exc: IndexDirError) -> HTMLResponse:
        # What the index serves is what it verified as it opened: a file changed since is refused, never shown. The
        # line naming the file goes to the server's log, not to the page.
        print(f"IndexDirError: {one_line(str(exc))}", file=sys.stderr, flush=True)
        return page("error.html", 503, message="The index changed on disk since this page opened it (a file was "
                    "written, replaced or removed): nothing from it is shown. Restart citator ui.", q="")

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> HTMLResponse:
        return page("error.html", 500, message=f"This request failed ({type(exc).__name__}).", q="")


# What `citator ui --workers N` hands each worker process (uvicorn starts them from an import string).
ENV_PREFIX = "CITATOR_UI_"


def worker_environment(index_dir: str | Path, k: int, threads: int, hosts: Iterable[str]) -> dict[str, str]:
    return {f"{ENV_PREFIX}INDEX_DIR": str(Path(index_dir).absolute()), f"{ENV_PREFIX}K": str(k),
            f"{ENV_PREFIX}THREADS": str(threads), f"{ENV_PREFIX}HOSTS": " ".join(hosts)}


def app_from_environment() -> Any:
    """One worker's app, from worker_environment's variables (the parent checked the index before it started),
    behind the same host guard as one process's."""
    env = os.environ
    app = create_app(env[f"{ENV_PREFIX}INDEX_DIR"], k=int(env[f"{ENV_PREFIX}K"]),
                     threads=int(env[f"{ENV_PREFIX}THREADS"]))
    return host_guard(app, env[f"{ENV_PREFIX}HOSTS"].split())


def _limit_threads(threads: int) -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)
    torch = sys.modules.get("torch")  # loaded by the index's encoder, if it uses torch
    if torch is not None:
        torch.set_num_threads(threads)


# The brief's downloads: the format `citator brief --format` names, its media type and file suffix.
EXPORTS = {"markdown": ("text/markdown; charset=utf-8", "md"), "json": ("application/json", "json")}


def _columns(index: StanceIndex, q: str, k: int, filters: PageFilters, asked_k: bool = False
             ) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """The page's columns: a statute index's sections, or a brief's columns (supporting and refuting authority
    where the index ranked them apart, else the one list that says why), of the documents that meet `filters`."""
    kept = {**filters.query(), **({"k": k} if asked_k else {})}  # the brief's own address, k where it has one
    if index.statutes:
        hits = index.search(q, "all", k, filters.texts())
        return [("all", "Sections", [_card(hit, q, "all", kept) for hit in hits])]
    brief = index.brief(q, k, filters.texts())
    return [(key, heading, [_card(hit, q, key, kept) for hit in hits]) for key, heading, hits in brief.columns()]


def _tools(index: StanceIndex, q: str, k: int, step: int, columns: list[tuple[str, str, list[dict[str, Any]]]],
           filters: PageFilters) -> dict[str, Any]:
    """What the page offers around a brief: "more" (k + step per column, the first new hit the address's target)
    while a column is full, the downloads of a case index's brief, and the "no good match" notice; every link
    keeps the brief's filters."""
    hits = [c["hit"] for _, _, cards in columns for c in cards]
    full = [i for i, (_, _, cards) in enumerate(columns) if len(cards) == k]
    kept = filters.query()
    # The target: the first column's next hit ("hit-N", one list or two at the larger k), or, where only a later
    # column is full, that column's (two columns that differ at k still differ at a larger k).
    target = "hit" if full and full[0] == 0 else f"{columns[full[0]][0]}-hit" if full else ""
    more = ("/?" + urlencode({"q": q, "k": min(k + step, MAX_K), **kept}, doseq=True)
            + f"#{target}-{k + 1}" if full and k < MAX_K else None)
    exports = None if index.statutes else {
        fmt: "/export?" + urlencode({"q": q, "k": k, "format": fmt, **kept}, doseq=True) for fmt in EXPORTS}
    return {"more": more, "exports": exports, "best": best_match(hits), "weak": weak(hits), "threshold": THRESHOLD}


def _citing_links(cited_by: Iterable[Citing], q: str,
                  state: Mapping[str, Any] | Sequence[tuple[str, Any]] = ()) -> dict[str, str]:
    """Each citing decision's page, carrying the brief's `state` (BRIEF_PARAMS, as the brief's parameters or a
    document's address pairs). q first: a citing decision's link is told from a hit's own by its address."""
    kept = urlencode(state, doseq=True)
    return {c.doc_id: "/document?" + urlencode([("q", q), ("id", c.doc_id)]) + (f"&{kept}" if kept else "")
            for c in cited_by}


def _brief_state(request: Request) -> list[tuple[str, str]]:
    """The brief's k and filters as a document's address carries them."""
    return [(name, value) for name, value in request.query_params.multi_items() if name in BRIEF_PARAMS and value]


def _back(q: str, request: Request) -> str:
    """The brief a document was opened from: its proposition, k and the filters the link carried."""
    return "/?" + urlencode([("q", q), *_brief_state(request)]) if q else "/"


def _card(hit: Any, q: str, stance: str, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the page shows of one hit: the evidence excerpt as marked pieces, the link to the passage in place
    (carrying the brief's `filters`, so its way back is the same brief)."""
    text, marks, cut_before, cut_after = excerpt(hit.evidence.text, hit.evidence.marks)
    link = "/document?" + urlencode({"id": hit.doc_id, "p": hit.evidence.passage, "q": q, "stance": stance,
                                     **(filters or {})}, doseq=True)
    families: dict[str, list[Any]] = {}
    for s in hit.signals:
        families.setdefault(s.family, []).append(s)
    citing = _citing_links(hit.cited_by, q, filters or {})
    return {"hit": hit, "pieces": _pieces(text, marks), "cut_before": cut_before, "cut_after": cut_after,
            "link": link + "#evidence", "families": families, "citing": citing}
