"""`citator add`, `citator remove` and `citator info`: a living index, updated without a rebuild (docs/scale.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citator.stance.retrieve.update import Change


def register(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser("add", help="add documents to an index (a doc_id it holds is replaced), as a rebuild would")
    a.add_argument("--index-dir", required=True, type=Path, help="an index directory made by build")
    a.add_argument("--corpus", required=True, type=Path, help="corpus JSONL of the documents to add or replace")
    a.add_argument("--metadata", type=Path, help="metadata JSONL of these documents keyed by doc_id (citation, date, "
                   "court, jurisdiction, url, any string or number key: docs/metadata.md), over their own keys")
    a.add_argument("--ray", metavar="ADDRESS", help="a sharded index's shard builders on this Ray cluster")
    a.set_defaults(func=run_add)

    r = sub.add_parser("remove", help="remove documents from an index, as a rebuild without them would")
    r.add_argument("--index-dir", required=True, type=Path, help="an index directory made by build")
    r.add_argument("--ids", required=True, type=Path, help="the doc ids to remove: one a line, or JSONL of doc_id")
    r.add_argument("--ray", metavar="ADDRESS", help="a sharded index's shard builders on this Ray cluster")
    r.set_defaults(func=run_remove)

    i = sub.add_parser("info", help="say an index's generation, document count and last update")
    i.add_argument("--index-dir", required=True, type=Path, help="an index directory made by build")
    i.set_defaults(func=run_info)


def run_add(args: argparse.Namespace) -> int:
    from citator.stance.retrieve.update import read_additions

    return _update(args, read_additions(args.corpus, args.metadata))


def run_remove(args: argparse.Namespace) -> int:
    from citator.stance.retrieve.update import read_removals

    return _update(args, read_removals(args.ids))


def _update(args: argparse.Namespace, change: Change) -> int:
    from citator.stance.shards.update import update

    start = time.monotonic()
    manifest = update(args.index_dir, change, ray=args.ray)
    g = manifest.generation
    print(f"updated {args.index_dir}: generation {g.number}, {manifest.n_docs} documents ({g.added} added, "
          f"{g.replaced} replaced, {g.removed} removed), {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0


def run_info(args: argparse.Namespace) -> int:
    from citator.stance.retrieve.layout import open_folder

    manifest = open_folder(args.index_dir).manifest
    g = manifest.generation
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(manifest.built_at))
    last = (f"last update {when}: {g.added} added, {g.replaced} replaced, {g.removed} removed" if g.number
            else f"built {when}, not updated since")
    shards = f", {len(manifest.shards)} shards" if manifest.shards else ""
    print(f"{args.index_dir}: generation {g.number}, {manifest.n_docs} documents, {manifest.n_passages} passages"
          f"{shards}, {'trained' if manifest.trained else 'untrained'}; {last}")
    return 0
