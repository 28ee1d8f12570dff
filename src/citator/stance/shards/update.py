"""Updating an index, one or sharded (stance/retrieve/update.py says how an update gives a rebuild's answers).

A sharded index is updated as it is built: the resulting corpus is cut by the sharding rule (`shard_starts`: the
same number of contiguous, near-equal parts), so each document goes to the shard a build of that corpus puts it
in, and every shard is written again with the corpus's new BM25 statistics; only new or replaced documents are
encoded, and each shard is handed its documents' passages.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from citator.data.atomic import replacing
from citator.engines.passages import PassageSpec
from citator.stance.retrieve.index_dir import build_into, build_lock
from citator.stance.retrieve.layout import MANIFEST, Manifest, open_folder, shard_manifest
from citator.stance.retrieve.update import (
    Change, Stored, base_encoder, carried_passages, check, next_generation, read_ids, resulting, say,
    update_request,
)
from citator.stance.retrieve.treatments import earlier_table, kept_user_rows
from citator.stance.shards.build import Cut, Sharding, shard_starts, write_sharded
from citator.stance.shards.workers import connect
from citator.stance.treat import Earlier


def update(index_dir: str | Path, change: Change, progress: bool = True, ray: str | None = None) -> Manifest:
    """Apply `change` to the index in `index_dir` (one or sharded; a sharded one's builders on the Ray cluster
    `ray`, else in this process) as its next generation; the new manifest. Refused in one line, with nothing
    changed, where the change does not fit the index or another build or update holds it."""
    with build_lock(Path(index_dir)) as where:
        folder = open_folder(where)
        replacing(where / MANIFEST)  # read to know what is updated, and replaced by the update's
        counts = check(change, read_ids(folder))
        say(progress, f"checked: {counts[0]} to add, {counts[1]} to replace, {counts[2]} to remove")
        shards = [open_folder(folder.path(ref.name), folder.manifest.files[shard_manifest(ref.name)]["sha256"])
                  for ref in folder.manifest.shards] or [folder]
        stored = Stored.joined([Stored.read(shard) for shard in shards])
        docs, sources = resulting(stored, change)
        config, first = folder.manifest.config, shards[0]
        encoder = base_encoder(folder.manifest) if min(sources) < 0 else None
        result = carried_passages(stored, docs, sources, PassageSpec(config.passage_words, config.passage_overlap),
                                  encoder, progress)
        say(progress, f"{sum(s < 0 for s in sources)} documents encoded; writing generation "
                      f"{folder.manifest.generation.number + 1}")
        table = earlier_table(folder)
        request = replace(update_request(first, docs, result.passages, progress),
                          treatments=() if table is None else kept_user_rows(table, [d.doc_id for d in docs]),
                          treatments_before=None if table is None else Earlier(stored.docs, table))
        generation = next_generation(folder.manifest, counts)
        if not folder.manifest.shards:
            return build_into(where, request, encoder, generation)
        if ray is not None:
            connect(ray)
        starts = shard_starts(len(docs), len(folder.manifest.shards))
        parts = [result.part(a, b) for a, b in zip(starts, [*starts[1:], len(docs)])]
        cut = Cut([d.doc_id for d in docs], [d.title for d in docs], starts, passages=parts)
        return write_sharded(where, request, encoder, Sharding(len(starts), ray), cut, generation)
