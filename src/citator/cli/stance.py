"""`citator build`, `citator search` and `citator serve`: the workload-1 contract behind build.sh and run.sh."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from citator.cli.arguments import COUNT


def register(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("build", help="build a stance-retrieval index (and start its search server)")
    b.add_argument("--corpus", required=True, type=Path, help="corpus JSONL (doc_id, text, ...) to index")
    b.add_argument("--index-dir", required=True, type=Path, help="directory to build the index in (the only place written)")
    b.add_argument("--model", type=Path, help="local encoder directory (default: the bundled MiniLM)")
    b.add_argument("--config", type=Path, help="retrieval config JSON (default: the tuned defaults)")
    b.add_argument("--artifacts", type=Path, help="trained artifacts directory (default: $CITATOR_ARTIFACTS if set; "
                   "./build.sh sets it to artifacts/ beside itself when that holds a manifest; else none)")
    b.add_argument("--no-artifacts", action="store_true", help="build without artifacts, whatever $CITATOR_ARTIFACTS says")
    b.add_argument("--treatments", type=Path, metavar="FILE", help="your own treatment rows (JSONL: citing_doc_id, "
                   "cited_doc_id, treatment, passage; docs/treatments.md), laid over the table the build extracts")
    b.add_argument("--no-serve", action="store_true", help="do not start the search server")
    b.add_argument("--metadata", type=Path, help="document metadata JSONL keyed by doc_id (citation, date, court, "
                   "jurisdiction, url, any string or number key: docs/metadata.md), over the corpus's own")
    b.add_argument("--shards", type=COUNT, help="cut the index into this many shards, searched as one (docs/scale.md)")
    b.add_argument("--ray", metavar="ADDRESS", help="build the shards on a Ray cluster: 'local' (a new one on this "
                   "machine), 'auto' (the one this machine belongs to) or its address; needs citator[ray]")
    b.add_argument("--workers", type=COUNT, help="with --ray: how many shard builders (default: one per shard, at most "
                   "the cluster's CPUs)")
    b.set_defaults(func=run_build)

    s = sub.add_parser("search", help="answer a queries file from an index; writes validated results atomically")
    s.add_argument("--index-dir", required=True, type=Path, help="an index directory made by build")
    s.add_argument("--queries", required=True, type=Path, help="queries JSONL (query_id, text, stance)")
    s.add_argument("--output", required=True, type=Path, help="results JSONL to write (atomically)")
    s.add_argument("--top-k", type=COUNT, default=10, help="doc ids per query (default: %(default)s)")
    s.add_argument("--no-server", action="store_true", help="search in-process even if a server is running")
    s.add_argument("--filter", action="append", default=[], metavar='"KEY OP VALUE"',
                   help='only documents whose metadata meets it, e.g. "date>=1980-01-01" (OP: = != < <= > >=); '
                   "repeat to AND several; applied before the top k (docs/metadata.md)")
    s.set_defaults(func=run_search)

    v = sub.add_parser("serve", help="hold an index in memory and answer searches over its Unix socket")
    v.add_argument("--index-dir", required=True, type=Path, help="the index directory to serve")
    v.add_argument("--ray", metavar="ADDRESS", help="a sharded index's shards as actors on this Ray cluster ('local', "
                   "'auto' or an address; default: $CITATOR_RAY, else in this process)")
    v.set_defaults(func=run_serve)

    t = sub.add_parser("stop", help="stop the search server of an index directory")
    t.add_argument("--index-dir", required=True, type=Path, help="the index directory whose server to stop")
    t.set_defaults(func=run_stop)


def run_build(args: argparse.Namespace) -> int:
    from citator.data.jsonl import read_json
    from citator.errors import ConfigFileError
    from citator.stance.retrieve.config import RetrievalConfig
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.retrieve.model import StanceModel, default_artifacts
    from citator.stance.shards.build import Sharding
    from citator.stance.workload import build

    config = RetrievalConfig.from_json(read_json(args.config, ConfigFileError), args.config.name) if args.config else None
    where = None if args.no_artifacts else (args.artifacts or default_artifacts())
    artifacts = StanceModel.load(where) if where else None
    start = time.monotonic()
    if (args.ray or args.workers) and not args.shards:
        from citator.errors import ConfigError

        raise ConfigError("--ray and --workers build a sharded index: give --shards N")
    options = BuildOptions(encoder_path=args.model, config=config, artifacts=artifacts,
                           artifacts_optional=args.artifacts is None, treatments=args.treatments,
                           metadata=args.metadata)
    sharding = Sharding(args.shards, args.ray, args.workers) if args.shards is not None else None
    manifest = build(args.corpus, args.index_dir, options, serve=not args.no_serve, sharding=sharding)
    print(
        f"built {args.index_dir}: {manifest.n_docs} documents, {manifest.n_passages} passages, "
        + (f"{len(manifest.shards)} shards, " if manifest.shards else "") +
        f"encoder {manifest.source.encoder_id}, artifacts {manifest.source.artifacts_path or 'none'}, "
        f"{time.monotonic() - start:.1f} s"
        + ("" if args.no_serve else "; search server ready"),
        file=sys.stderr,
    )
    return 0


def run_search(args: argparse.Namespace) -> int:
    from citator.stance.workload import search_to_file

    start = time.monotonic()
    how = search_to_file(args.index_dir, args.queries, args.output, args.top_k, use_server=not args.no_server,
                         filters=args.filter)
    print(f"wrote {args.output} ({how}, {time.monotonic() - start:.2f} s)", file=sys.stderr)
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from citator.data.atomic import owning
    from citator.server.search_service import serve
    from citator.stance.retrieve.service_protocol import service_dir

    with owning(service_dir(args.index_dir)):  # the server's own folder of the index: its pid, ready file, socket
        serve(args.index_dir, args.ray)
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from citator.errors import IndexDirError
    from citator.stance.workload import stop_server

    if not Path(args.index_dir).is_dir():  # a mistyped path is not "no server running"
        raise IndexDirError(f"{args.index_dir}: index directory not found")
    print("stopped" if stop_server(args.index_dir) else "no server running", file=sys.stderr)
    return 0
