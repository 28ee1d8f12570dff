"""An index directory's manifest: what run.sh reads first, so it stays light (no numpy, no models).

The manifest names the data folder of the current build and records what the index was built from; its
fingerprint is what a search server must echo (stance/retrieve/service_protocol.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import citator
from citator.data.atomic import mark_read
from citator.data.jsonl import loads
from citator.errors import ConfigError, IndexDirError
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_files import check_recorded, verify_sizes

FORMAT = "citator-stance-index/2"
MANIFEST = "manifest.json"
# Parts of the data folder named in more than one module (named here: run.sh's client path imports this one).
DOCUMENTS, DOCUMENT_OFFSETS = "documents.jsonl", "documents_offsets.npy"  # the corpus copy briefs read
FINETUNED_ENCODER = "finetuned_encoder"  # the artifacts' fine-tuned query encoder (the server runs it in torch)
QUERY_GRAPHS = "query_graphs"  # ONNX query encoders: base.onnx and, with artifacts, finetuned.onnx


@dataclass(frozen=True)
class ShardRef:
    """One shard of a sharded index: an index directory of its own (`name`, under the data folder) over documents
    `start` .. `start + n_docs - 1` of the corpus, scored with the whole corpus's BM25 statistics."""

    name: str
    start: int
    n_docs: int
    n_passages: int


@dataclass(frozen=True)
class Manifest:
    corpus_sha256: str
    n_docs: int
    n_passages: int
    encoder_path: str
    encoder_id: str
    config: RetrievalConfig
    citator_version: str
    built_at: float
    data_dir: str
    encoder_sha256: str  # models.fingerprint.model_fingerprint of the base encoder
    passage_rules: str  # index_dir.passage_rules at build time
    # Where the artifacts were and their manifest's sha256: provenance only, the index holds what it searches with.
    artifacts_path: str | None = None
    artifacts_sha256: str | None = None
    # Every file of the data folder -> {"bytes", "sha256"} (stance/retrieve/index_files.py), recorded at build time.
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A sharded index (citator.stance.shards): its shards, in corpus order; () for one index.
    shards: tuple[ShardRef, ...] = ()

    @property
    def fingerprint(self) -> str:
        """Identifies this exact index: a server must answer with the same one."""
        raw = json.dumps([self.corpus_sha256, self.encoder_id, self.config.to_json(), self.built_at], sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "complete": True, "corpus_sha256": self.corpus_sha256, "n_docs": self.n_docs,
            "n_passages": self.n_passages, "passage_rules": self.passage_rules,
            "encoder": {"path": self.encoder_path, "id": self.encoder_id, "sha256": self.encoder_sha256},
            "config": self.config.to_json(), "citator_version": self.citator_version, "built_at": self.built_at,
            "data_dir": self.data_dir, "files": self.files, "artifacts": None if self.artifacts_path is None else {
                "path": self.artifacts_path, "manifest_sha256": self.artifacts_sha256},
            **({"shards": [ref.__dict__ for ref in self.shards]} if self.shards else {}),
        }

    def path(self, index_dir: Path, name: str) -> Path:
        return index_dir / self.data_dir / name


def _text(value: Any, field_name: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{field_name} is {value!r}, not a string")
    return value


def _shards(value: Any) -> tuple[ShardRef, ...]:
    if not isinstance(value, list) or value == []:
        raise TypeError(f"shards is {value!r}, not a list of shards" if isinstance(value, list)
                        else f"shards is {type(value).__name__}, not a list")
    refs = []
    for entry in value:
        if not isinstance(entry, dict) or set(entry) != {"name", "start", "n_docs", "n_passages"}:
            raise TypeError(f"shard entry {entry!r} is not a shard")
        counts = [entry[key] for key in ("start", "n_docs", "n_passages")]
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
            raise TypeError(f"shard entry {entry!r} has counts that are not counts")
        refs.append(ShardRef(_text(entry["name"], "shards.name"), *counts))
    return tuple(refs)


def _check_shards(manifest: Manifest, path: Path) -> None:
    """Shards are folders of the data folder that cover the corpus's documents in order, each once."""
    start = passages = 0
    if len({ref.name for ref in manifest.shards}) != len(manifest.shards):
        raise IndexDirError(f"{path}: a shard is named twice; rebuild with build.sh")
    for ref in manifest.shards:
        parts = Path(ref.name).parts
        if Path(ref.name).is_absolute() or ".." in parts or not parts:
            raise IndexDirError(f"{path}: shard {ref.name!r} is not a folder inside the index; rebuild with build.sh")
        if ref.start != start or ref.n_docs < 1:
            raise IndexDirError(f"{path}: shard {ref.name!r} is not the next part of the corpus; rebuild with build.sh")
        start, passages = start + ref.n_docs, passages + ref.n_passages
    if (start, passages) != (manifest.n_docs, manifest.n_passages):
        raise IndexDirError(f"{path}: shards hold {start} documents and {passages} passages, the index "
                            f"{manifest.n_docs} and {manifest.n_passages}; rebuild with build.sh")


def read_manifest(index_dir: Path) -> Manifest:
    """Read and check the manifest; a missing, half-written or foreign index is refused."""
    path = index_dir / MANIFEST
    if not index_dir.is_dir():
        raise IndexDirError(f"{index_dir}: is a file, not an index directory" if index_dir.exists()
                            else f"{index_dir}: index directory not found; run build.sh first")
    if not path.is_file():
        raise IndexDirError(f"{index_dir}: no {MANIFEST} (half-written or not an index); rebuild with build.sh")
    try:
        obj = loads(path.read_bytes().decode("utf-8"))
        if not isinstance(obj, dict):
            raise TypeError(f"a JSON {type(obj).__name__}, not an object")
        if obj.get("format") != FORMAT or obj.get("complete") is not True:
            raise IndexDirError(f"{path}: format {obj.get('format')!r} is not {FORMAT!r} or build incomplete; rebuild")
        manifest = Manifest(
            corpus_sha256=obj["corpus_sha256"], n_docs=int(obj["n_docs"]), n_passages=int(obj["n_passages"]),
            encoder_path=obj["encoder"]["path"], encoder_id=obj["encoder"]["id"],
            config=RetrievalConfig.from_json(obj["config"]), citator_version=obj["citator_version"],
            built_at=float(obj["built_at"]), data_dir=str(obj["data_dir"]),
            artifacts_path=(obj.get("artifacts") or {}).get("path"),
            artifacts_sha256=(obj.get("artifacts") or {}).get("manifest_sha256"),
            encoder_sha256=_text(obj["encoder"]["sha256"], "encoder.sha256"),
            passage_rules=_text(obj["passage_rules"], "passage_rules"), files=check_recorded(obj.get("files"), path),
            shards=_shards(obj["shards"]) if "shards" in obj else (),
        )
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError, RecursionError, OSError,
            ConfigError) as exc:  # ArithmeticError: a count such as 1e400, which int() cannot take
        raise IndexDirError(f"{path}: corrupt manifest ({type(exc).__name__}: {exc}); rebuild with build.sh") from None
    if manifest.citator_version != citator.__version__:
        raise IndexDirError(f"{path}: built by citator {manifest.citator_version!r}, this is citator "
                            f"{citator.__version__}; rebuild with build.sh")
    if (min(manifest.n_docs, manifest.n_passages) < 0 or manifest.n_passages < manifest.n_docs
            or not isinstance(obj["n_docs"], int) or not isinstance(obj["n_passages"], int)):
        raise IndexDirError(f"{path}: n_docs {obj['n_docs']!r} / n_passages {obj['n_passages']!r} are not counts of "
                            "documents and their passages; rebuild with build.sh")
    if Path(manifest.data_dir).name != manifest.data_dir or manifest.data_dir in ("", ".", ".."):
        raise IndexDirError(f"{path}: data_dir {manifest.data_dir!r} is not a folder of the index; rebuild with build.sh")
    files = ["doc_ids.json", "passage_starts.npy", "dense.npy", DOCUMENTS, DOCUMENT_OFFSETS]
    folders = ["lexical_doc", "lexical_passage"]
    if manifest.shards:
        _check_shards(manifest, path)
        files, folders = ["doc_ids.json", *(f"{ref.name}/{MANIFEST}" for ref in manifest.shards)], []
    elif manifest.artifacts_path is not None:
        files.append("memory_links.npy")
        folders += ["memory", "lexical_expanded", FINETUNED_ENCODER]
    for name in [*files, *folders]:
        if not manifest.path(index_dir, name).exists():
            raise IndexDirError(f"{index_dir}: {name} is missing; the index is incomplete, rebuild with build.sh")
    # What is read before any digest check (the ids run.sh validates against, each shard's manifest) is trusted
    # only through the file table, so the table must name it.
    for name in files:
        if name not in manifest.files:
            raise IndexDirError(f"{path}: the file table does not list {name}; rebuild with build.sh")
    verify_sizes(index_dir / manifest.data_dir, manifest.files)
    # Within a command, its outputs may not replace what it reads here (`--output IDX/manifest.json`).
    mark_read([path, *(index_dir / manifest.data_dir / name for name in manifest.files)])
    return manifest
