"""`citator review ...`: load a statute run for blinded review, add reviewers, serve, export/import, metrics."""

from __future__ import annotations

import argparse
import sys

from citator.cli.arguments import PORT, add_server_arguments, whole
from citator.data.atomic import write_json_atomic
from citator.errors import CitatorError, one_line


def register(sub: argparse._SubParsersAction) -> None:
    review = sub.add_parser("review", help="blinded human review of a statute run (label store + web app)")
    rsub = review.add_subparsers(dest="review_command", metavar="SUBCOMMAND", required=True)

    def db_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", required=True, help="the SQLite label store (created if missing)")

    p = rsub.add_parser("serve", help="run the review web app")
    db_arg(p)
    p.add_argument("--port", type=PORT, default=8765, help="TCP port (default: %(default)s)")
    add_server_arguments(p, "default 127.0.0.1; anything else exposes reviewer pages")
    p.set_defaults(func=run_serve)

    p = rsub.add_parser("add-reviewer", help="create a reviewer and print their sign-in token (shown once)")
    p.add_argument("name", help="the reviewer's name, as labels will record it")
    db_arg(p)
    p.add_argument("--new-token", action="store_true", help="replace an existing reviewer's token")
    p.set_defaults(func=run_add_reviewer)

    p = rsub.add_parser("load", help="create review items from RUN_DIR/pool.jsonl (loading twice adds nothing)")
    p.add_argument("run_dir", help="a statute run directory (citator bench statutes --out)")
    db_arg(p)
    p.set_defaults(func=run_load)

    p = rsub.add_parser("export", help="write labels as JSON lines")
    db_arg(p)
    p.add_argument("--out", required=True, help="JSONL file to write the labels to")
    p.add_argument("--include-stale", action="store_true", help="also write labels whose texts have changed")
    p.set_defaults(func=run_export)

    p = rsub.add_parser("import", help="merge a label export into the store (newer labeled_at wins)")
    p.add_argument("labels", help="a label export (JSONL, from review export)")
    db_arg(p)
    p.set_defaults(func=run_import)

    p = rsub.add_parser("stale", help="list labels whose hashes no longer match the current texts")
    db_arg(p)
    p.set_defaults(func=run_stale)

    p = rsub.add_parser("metrics", help="P@5 and pooled nDCG@5 from human labels, only where fully judged")
    p.add_argument("run_dir", help="the statute run whose pool.jsonl the labels are checked against")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--db", help="read labels from this label store")
    src.add_argument("--labels", help="read labels from this JSONL export")
    p.add_argument("--ranking", action="append", default=[], metavar="NAME=FILE",
                   help='extra ranking, JSON lines {"query_id", "doc_ids"} (repeatable); keyword order is always in')
    p.add_argument("--reviewer", help="use one reviewer's labels only")
    p.add_argument("--consensus", choices=("lower-median", "agree"), default="lower-median",
                   help="several reviewers: lower median of their grades (default, as the statute benchmark) "
                   "or no grade unless they agree")
    p.add_argument("--min-grade", type=whole(0, 3), default=2,
                   help="lowest grade (0-3) that counts as relevant for P@5")
    p.add_argument("--json", dest="json_out", help="write the full report (per query too) here")
    p.set_defaults(func=run_metrics)


def run_serve(args: argparse.Namespace) -> int:
    from citator.server.guard import allowed_hosts
    from citator.server.pages import address_of, listen, serve_on, warn_unless_loopback
    from citator.server.review import create_app

    hosts = allowed_hosts(args.host, args.allow_host)
    warn_unless_loopback(args.host, "sees the review pages")
    sock = listen(args.host, args.port)  # a taken port or a store it cannot use is one line, before the banner
    try:
        app = create_app(args.db)
    except BaseException:
        sock.close()
        raise
    print(f"review app on {address_of(args.host, sock)}/ (Ctrl-C to stop)", file=sys.stderr)
    serve_on(sock, app, hosts)
    return 0


def run_add_reviewer(args: argparse.Namespace) -> int:
    from citator.statutes.review import command_store

    with command_store(args.db) as store:
        token = store.add_reviewer(args.name, new_token=args.new_token)
    print(f"reviewer {args.name.strip()!r} added; their token (shown only now, stored as a hash):", file=sys.stderr)
    print(token)
    return 0


def run_load(args: argparse.Namespace) -> int:
    from citator.statutes.review import command_store, read_pool

    entries = read_pool(args.run_dir)
    with command_store(args.db) as store:
        counts = store.load_items(e.item for e in entries)
        stale = len(store.stale_labels())
    print(f"{counts.added} added, {counts.changed} changed, {counts.unchanged} unchanged")
    if stale:
        print(f"{stale} label(s) are now stale (their texts changed): see `citator review stale`", file=sys.stderr)
    return 0


def run_export(args: argparse.Namespace) -> int:
    from citator.statutes.review import command_store, export_labels

    with command_store(args.db) as store:
        counts = export_labels(store, args.out, include_stale=args.include_stale)
    print(f"{counts.written} label(s) written to {args.out}")
    if counts.stale_left_out:
        print(f"{counts.stale_left_out} stale label(s) left out (pass --include-stale to keep them)", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from citator.statutes.review import command_store, import_labels

    with command_store(args.db) as store:
        counts = import_labels(store, args.labels)
        stale = len(store.stale_labels())
    print(", ".join(f"{counts[k]} {k}" for k in ("added", "updated", "unchanged", "kept")))
    if stale:
        print(f"{stale} label(s) in the store are stale: see `citator review stale`", file=sys.stderr)
    return 0


def run_stale(args: argparse.Namespace) -> int:
    from citator.statutes.review import command_store

    with command_store(args.db) as store:
        stale = store.stale_labels()
    for lab, item in stale:
        changed = [name for name, old, new in zip(("query", "section", "passage"), lab.hashes, item.hashes, strict=True)
                   if old != new]
        # Ids and names are data: one_line keeps a tab, a line break or a terminal sequence in one from acting.
        ids = "\t".join(one_line(v) for v in (lab.query_id, lab.doc_id, lab.reviewer))
        print(f"{ids}\tchanged: {', '.join(changed)}")
    print(f"{len(stale)} stale label(s)", file=sys.stderr)
    return 1 if stale else 0


def run_metrics(args: argparse.Namespace) -> int:
    from citator.statutes.review import command_store, keyword_order, read_labels, read_pool
    from citator.statutes.review.report import human_label_report, read_ranking

    entries = read_pool(args.run_dir)
    if args.db:
        with command_store(args.db) as store:
            labels = store.labels()
    else:
        labels = read_labels(args.labels)
    rankings = {"keyword": keyword_order(entries)}
    for spec in args.ranking:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise CitatorError(f"--ranking expects NAME=FILE, got {spec!r}")
        if name in rankings:  # "keyword" is the pool's own order, and each name is one column of the report
            raise CitatorError(f"--ranking {spec!r}: the name {name!r} is already taken; give each ranking its own "
                               "name (keyword is the pool's order, always reported)")
        rankings[name] = read_ranking(path)
    report = human_label_report(entries, labels, rankings, reviewer=args.reviewer, consensus=args.consensus,
                                min_grade=args.min_grade)
    print(f"{'ranking':<12}{'facet':<9}{'metric':<8}{'group':<24}{'mean':>8}{'n':>5}  not computed")
    for ranking, facet, s in report.rows:
        mean = "-" if s.mean is None else f"{s.mean:.4f}"
        missing = "; ".join(f"{n} {why}" for why, n in s.not_computed.items()) or "-"
        print(f"{one_line(ranking):<12}{facet:<9}{s.metric:<8}{one_line(s.group):<24}{mean:>8}{s.computed:>5}  "
              f"{one_line(missing)}")
    if report.labels_outside_run:
        print(f"{report.labels_outside_run} label(s) are for items not in this run and were ignored", file=sys.stderr)
    if args.json_out:
        write_json_atomic(args.json_out, report.to_json())
    return 0
