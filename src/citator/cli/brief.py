"""`citator brief` and `citator ui`: a proposition's supporting and refuting authority, in a terminal or a browser."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from citator.cli.arguments import BRIEF_K, COUNT, PORT, add_server_arguments


def register(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("brief", help="supporting and refuting authority for a proposition, with evidence and reasons")
    b.add_argument("proposition", nargs="?", help="the statement of law to check (or give --queries)")
    b.add_argument("--index-dir", required=True, type=Path, help="an index built by `citator build`")
    b.add_argument("--queries", type=Path,
                   help="a queries JSONL file (query_id, text; stance optional): one brief per distinct text")
    b.add_argument("--k", type=BRIEF_K, default=5, help="authorities per stance (1-100, default 5)")
    b.add_argument("--format", choices=("table", "markdown", "json"), default="table",
                   help="table (terminal), markdown, or json (one object per line); default table")
    b.add_argument("--output", type=Path, help="write here (atomically) instead of printing")
    b.add_argument("--filter", action="append", default=[], metavar='"KEY OP VALUE"',
                   help='only authorities whose metadata meets it, e.g. "date>=1980-01-01" (OP: = != < <= > >=); '
                   "repeat to AND several (docs/metadata.md)")
    b.add_argument("--ray", metavar="ADDRESS", help="a sharded index's shards as actors on this Ray cluster ('local', "
                   "'auto' or an address; default $CITATOR_RAY, else in this process); needs citator[ray]")
    b.set_defaults(func=run_brief)

    u = sub.add_parser("ui", help="a read-only web page: type a proposition, see both stances side by side")
    u.add_argument("--index-dir", required=True, type=Path, help="an index built by `citator build`")
    add_server_arguments(u, "address to bind (default 127.0.0.1: this machine only)")
    u.add_argument("--port", type=PORT, default=8766, help="port to listen on (default 8766)")
    u.add_argument("--k", type=BRIEF_K, default=5, help="authorities per stance (1-100, default 5)")
    u.add_argument("--threads", type=COUNT, default=1,
                   help="CPU threads per search (torch and BLAS; default 1: a brief encodes one short text per stance)")
    u.add_argument("--workers", type=COUNT, default=1,
                   help="server processes, each with its own copy of the index (default 1; one a core serves "
                        "concurrent users in parallel)")
    u.set_defaults(func=run_ui)


def _propositions(args: argparse.Namespace) -> list[str]:
    from citator.stance.brief.index import MAX_PROPOSITION_CHARS
    from citator.data import read_queries
    from citator.errors import PropositionError, QueryError
    from citator.stance.retrieve.contrast import text_key

    if (args.proposition is None) == (args.queries is None):
        raise PropositionError("give one proposition or --queries FILE (not both)")
    if args.queries is None:
        return [args.proposition]
    texts: dict[str, str] = {}
    for q in read_queries(args.queries, default_stance="all"):
        length = len(" ".join(q.text.split()))  # counted as the index counts it, white space collapsed
        if length > MAX_PROPOSITION_CHARS:
            raise QueryError(args.queries, None, f"query {q.query_id!r} is {length} characters; at most "
                             f"{MAX_PROPOSITION_CHARS} are read", field="text")
        texts.setdefault(text_key(q.text), q.text)
    return list(texts.values())


def run_brief(args: argparse.Namespace) -> int:
    from citator.stance.brief.index import StanceIndex
    from citator.stance.brief.render import render
    from citator.data.atomic import write_text_atomic

    propositions = _propositions(args)
    index = StanceIndex.open(args.index_dir, cold=True, ray=args.ray)
    separator = "\n" if args.format == "json" else "\n\n"
    text = separator.join(render(index.brief(p, args.k, args.filter), args.format) for p in propositions) + "\n"
    index.close()
    if args.output is not None:
        write_text_atomic(args.output, text)
        print(f"wrote {args.output} ({len(propositions)} brief{'s' * (len(propositions) != 1)})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run_ui(args: argparse.Namespace) -> int:
    import uvicorn

    from citator.server.guard import allowed_hosts
    from citator.server.pages import address_of, listen, serve_on, warn_unless_loopback
    from citator.server.ui import create_app

    hosts = allowed_hosts(args.host, args.allow_host)
    warn_unless_loopback(args.host, "can search this index")
    # Opened here first, whatever the number of workers: a damaged index is one line before any worker starts.
    app = create_app(args.index_dir, k=args.k, threads=args.threads)
    sock = listen(args.host, args.port)  # a taken port is one line, before the banner
    banner = f"({args.workers} worker(s); Ctrl-C to stop)"
    if args.workers == 1:
        print(f"citator ui on {address_of(args.host, sock)}/ {banner}", file=sys.stderr)
        serve_on(sock, app, hosts)
        return 0
    # uvicorn's workers bind the port themselves: it was free a moment ago.
    sock.close()
    print(f"citator ui on http://{args.host}:{args.port}/ {banner}", file=sys.stderr)
    del app
    from citator.server.ui.app import worker_environment

    os.environ.update(worker_environment(args.index_dir, args.k, args.threads, hosts))
    uvicorn.run("citator.server.ui.app:app_from_environment", factory=True, workers=args.workers, host=args.host,
                port=args.port, log_level="warning", http="citator.server.guard:GuardedH11Protocol")
    return 0
