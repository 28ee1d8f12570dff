"""An index directory's layout: the name of every file and folder in it, and its manifest.

Every other module reaches an index's files through the names defined here, and every manifest, built or read back,
is made by `manifest` below. The manifest names the data folder of the current build and records what the index was
built from; its fingerprint is what a search server must echo (stance/retrieve/service_protocol.py). run.sh reads
the manifest first, so this module stays light (no numpy, no models).

    INDEX_DIR/
      manifest.json                  the current generation: its data folder, what it is built from, each file's digest
      .build.lock                    held by the build or update that is running
      service/                       the search server's socket, pid, ready file and log
      build-XXXX/                    the data folder of a build or update (the manifest names the current one and,
                                     after an update, the one before it, kept for readers still holding it)
        doc_ids.json  passage_starts.npy  dense.npy  documents.jsonl  documents_offsets.npy  treatments.jsonl
        document_metadata.json
        lexical_doc/  lexical_passage/  query_graphs/{base,finetuned}.onnx
        with a trained model: finetuned_encoder/  memory/  memory_links.npy  lexical_expanded/
                              doc_embedding.npy  ranker.json  late_tokens.npy  late_scales.npy  late_offsets.npy
        of a sharded index, only: doc_ids.json, treatments.jsonl and stance/shards/NNN/, each an index directory
        of its own
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import citator
from citator.data.atomic import mark_read
from citator.data.jsonl import loads
from citator.errors import ConfigError, IndexDirError
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_files import REBUILD, check_recorded, verify_sizes

FORMAT = "citator-stance-index/2"

# The index directory. The output rule (data/atomic.py, a floor below) spells these two again as INDEX_MANIFEST and
# INDEX_LOCK, to refuse writes into an index; tests/test_code_shape.py holds them equal.
MANIFEST = "manifest.json"
BUILD_LOCK = ".build.lock"
BUILD_PREFIX = "build-"  # a build's data folder: a fresh temporary folder of this prefix
# Made in every build folder as it is created and removed when the build switches to it: a later build removes
# folders that still carry it (left by a build that did not finish) and the one the manifest named. It is no part
# of the index, and no file table lists it.
BUILD_MARK = ".citator-build"
SERVICE_DIR = "service"  # the search server's: its socket, pid file, ready file and log
SOCKET_NAME, READY_NAME, PID_NAME, SERVER_LOG = "search.sock", "ready.json", "server.pid", "server.log"

# The data folder of one index.
DOC_IDS = "doc_ids.json"
PASSAGE_STARTS = "passage_starts.npy"
DENSE = "dense.npy"
LEXICAL_DOC, LEXICAL_PASSAGE, LEXICAL_EXPANDED = "lexical_doc", "lexical_passage", "lexical_expanded"
DOCUMENTS, DOCUMENT_OFFSETS = "documents.jsonl", "documents_offsets.npy"  # the corpus copy briefs read
# The corpus's treatment table (stance/retrieve/treatments.py): in one index's data folder, and in a sharded index's
# beside its shards (a shard has none: a decision treats cases in other shards).
TREATMENTS = "treatments.jsonl"
METADATA = "document_metadata.json"  # each document's metadata in corpus order (docs/metadata.md), which filters read
QUERY_GRAPHS = "query_graphs"  # ONNX query encoders: base.onnx and, with a trained model, finetuned.onnx
# What a trained model adds: its parts copied in, and what they give over this corpus.
FINETUNED_ENCODER = "finetuned_encoder"  # the model's fine-tuned query encoder (the server runs it in torch)
MEMORY = "memory"  # the model's proposition memory and learned document offsets
RANKER = "ranker.json"
MEMORY_LINKS = "memory_links.npy"  # (memory entry, document) pairs
DOC_EMBEDDING = "doc_embedding.npy"  # the learned document vectors
LATE_TOKENS, LATE_SCALES, LATE_OFFSETS = "late_tokens.npy", "late_scales.npy", "late_offsets.npy"  # a TokenStore
# A sharded index's data folder holds its shards, each an index directory.
SHARDS = "stance/shards"


def query_graph(name: str) -> str:
    """The ONNX graph of query encoder `name` ("base" or "finetuned") in the data folder."""
    return f"{QUERY_GRAPHS}/{name}.onnx"


def shard_name(shard: int) -> str:
    """The folder of shard number `shard` in a sharded index's data folder."""
    return f"{SHARDS}/{shard:03d}"


def shard_manifest(name: str) -> str:
    """The manifest of the shard in folder `name`, as the sharded index's file table names it."""
    return f"{name}/{MANIFEST}"


@dataclass(frozen=True)
class ShardRef:
    """One shard of a sharded index: an index directory of its own (`name`, under the data folder) over documents
    `start` .. `start + n_docs - 1` of the corpus, scored with the whole corpus's BM25 statistics."""

    name: str
    start: int
    n_docs: int
    n_passages: int


@dataclass(frozen=True)
class Provenance:
    """What an index is built from: the corpus, the base encoder (its folder, id and fingerprint), the retrieval
    settings, the rules that cut and encode passages, and the trained model (where it was and its manifest's
    sha256: provenance only, the index holds what it searches with). Each shard of an index records the same."""

    corpus_sha256: str
    encoder_path: str
    encoder_id: str
    encoder_sha256: str  # models.fingerprint.model_fingerprint of the base encoder
    config: RetrievalConfig
    passage_rules: str  # passage_store.passage_rules() at build time
    artifacts_path: str | None = None
    artifacts_sha256: str | None = None


@dataclass(frozen=True)
class Generation:
    """Which generation of its index a manifest is: 0 for a build, one more for each update since
    (stance/retrieve/update.py). `previous`: the data folder of the generation before, kept on disk while this one
    is current so a reader that opened it can finish (the next update removes it); what the last update did."""

    number: int = 0
    previous: str | None = None
    added: int = 0
    replaced: int = 0
    removed: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Manifest:
    """An index's manifest: what it was built from, its counts, its data folder and that folder's file table
    (every file -> {"bytes", "sha256"}, stance/retrieve/index_files.py), and, of a sharded index, its shards in
    corpus order (() for one index). Made only by `manifest`."""

    source: Provenance
    n_docs: int
    n_passages: int
    data_dir: str
    files: dict[str, dict[str, Any]]
    shards: tuple[ShardRef, ...]
    built_at: float
    citator_version: str
    generation: Generation = Generation()

    @property
    def config(self) -> RetrievalConfig:
        return self.source.config

    @property
    def trained(self) -> bool:
        """Whether the index was built with a trained model (it then holds the model's parts)."""
        return self.source.artifacts_path is not None

    @property
    def fingerprint(self) -> str:
        """Identifies this exact index: a server must answer with the same one."""
        raw = json.dumps([self.source.corpus_sha256, self.source.encoder_id, self.config.to_json(), self.built_at],
                         sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        source = self.source
        return {
            "format": FORMAT, "complete": True, "corpus_sha256": source.corpus_sha256, "n_docs": self.n_docs,
            "n_passages": self.n_passages, "passage_rules": source.passage_rules,
            "encoder": {"path": source.encoder_path, "id": source.encoder_id, "sha256": source.encoder_sha256},
            "config": self.config.to_json(), "citator_version": self.citator_version, "built_at": self.built_at,
            "data_dir": self.data_dir, "files": self.files, "artifacts": None if source.artifacts_path is None else {
                "path": source.artifacts_path, "manifest_sha256": source.artifacts_sha256},
            **({"shards": [ref.__dict__ for ref in self.shards]} if self.shards else {}),
            **({"generation": self.generation.to_json()} if self.generation.number else {}),
        }

    def path(self, index_dir: Path, name: str) -> Path:
        return index_dir / self.data_dir / name


def manifest(source: Provenance, data_dir: str, counts: tuple[int, int], files: dict[str, dict[str, Any]],
             shards: tuple[ShardRef, ...] = (), built: tuple[float, str] | None = None,
             generation: Generation = Generation()) -> Manifest:
    """The one way a Manifest is made: by a build or update that has just written `data_dir` (`built` None: now, by
    this citator), or by `read_manifest` from what it parsed. `counts`: (documents, passages)."""
    built_at, version = built if built is not None else (time.time(), citator.__version__)
    return Manifest(source, counts[0], counts[1], data_dir, files, shards, built_at, version, generation)


@dataclass(frozen=True)
class IndexFolder:
    """An index directory opened for reading: its manifest read and checked once, by `open_folder`. Searchers are
    opened from one, so nothing that serves the index parses its manifest again."""

    root: Path
    manifest: Manifest

    @property
    def data(self) -> Path:
        """The data folder of the build the manifest names."""
        return self.root / self.manifest.data_dir

    def path(self, name: str) -> Path:
        return self.data / name


def open_folder(index_dir: str | Path, sha256: str | None = None) -> IndexFolder:
    """The index directory (absolute) with its manifest, read and checked (`sha256`: what its bytes must hash to, as
    a sharded index's file table records each shard's)."""
    root = Path(index_dir).absolute()
    return IndexFolder(root, read_manifest(root, sha256))


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


def _generation(value: Any) -> Generation:
    if not isinstance(value, dict) or set(value) != set(Generation().__dict__):
        raise TypeError(f"generation {value!r} is not a generation")
    counts = [value[key] for key in ("number", "added", "replaced", "removed")]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        raise TypeError(f"generation {value!r} has counts that are not counts")
    previous = value["previous"]
    if previous is not None and (not isinstance(previous, str) or Path(previous).name != previous
                                 or not previous.startswith(BUILD_PREFIX)):
        raise TypeError(f"generation.previous {previous!r} is not a data folder of the index")
    return Generation(counts[0], previous, counts[1], counts[2], counts[3])


def _check_shards(manifest: Manifest, path: Path) -> None:
    """Shards are folders of the data folder that cover the corpus's documents in order, each once."""
    start = passages = 0
    if len({ref.name for ref in manifest.shards}) != len(manifest.shards):
        raise IndexDirError(f"{path}: a shard is named twice; {REBUILD}")
    for ref in manifest.shards:
        parts = Path(ref.name).parts
        if Path(ref.name).is_absolute() or ".." in parts or not parts:
            raise IndexDirError(f"{path}: shard {ref.name!r} is not a folder inside the index; {REBUILD}")
        if ref.start != start or ref.n_docs < 1:
            raise IndexDirError(f"{path}: shard {ref.name!r} is not the next part of the corpus; {REBUILD}")
        start, passages = start + ref.n_docs, passages + ref.n_passages
    if (start, passages) != (manifest.n_docs, manifest.n_passages):
        raise IndexDirError(f"{path}: shards hold {start} documents and {passages} passages, the index "
                            f"{manifest.n_docs} and {manifest.n_passages}; {REBUILD}")


def _parsed(obj: Any, path: Path) -> Manifest:
    """The manifest a JSON object describes, every field's type checked (TypeError, KeyError, ValueError else)."""
    if not isinstance(obj, dict):
        raise TypeError(f"a JSON {type(obj).__name__}, not an object")
    if obj.get("format") != FORMAT or obj.get("complete") is not True:
        raise IndexDirError(f"{path}: format {obj.get('format')!r} is not {FORMAT!r} or build incomplete; rebuild")
    counts = (obj["n_docs"], obj["n_passages"])
    for count in counts:
        int(count)  # a number no int can hold (1e400, "x") makes the manifest corrupt, as a missing field does
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts) or counts[1] < counts[0]:
        raise IndexDirError(f"{path}: n_docs {counts[0]!r} / n_passages {counts[1]!r} are not counts of documents "
                            f"and their passages; {REBUILD}")
    artifacts = obj.get("artifacts") or {}
    source = Provenance(
        corpus_sha256=obj["corpus_sha256"], encoder_path=obj["encoder"]["path"], encoder_id=obj["encoder"]["id"],
        encoder_sha256=_text(obj["encoder"]["sha256"], "encoder.sha256"),
        config=RetrievalConfig.from_json(obj["config"]), passage_rules=_text(obj["passage_rules"], "passage_rules"),
        artifacts_path=artifacts.get("path"), artifacts_sha256=artifacts.get("manifest_sha256"))
    return manifest(source, str(obj["data_dir"]), counts,
                    check_recorded(obj.get("files"), path), _shards(obj["shards"]) if "shards" in obj else (),
                    (float(obj["built_at"]), obj["citator_version"]),
                    _generation(obj["generation"]) if "generation" in obj else Generation())


def _required(manifest: Manifest) -> tuple[list[str], list[str]]:
    """The files and folders the data folder must hold: of a sharded index, its ids and its shards' manifests."""
    if manifest.shards:
        return [DOC_IDS, TREATMENTS, *(shard_manifest(ref.name) for ref in manifest.shards)], []
    files = [DOC_IDS, PASSAGE_STARTS, DENSE, DOCUMENTS, DOCUMENT_OFFSETS]  # TREATMENTS: not a shard's; its reader
    # (stance/retrieve/treatments.py) requires it of an index opened on its own
    folders = [LEXICAL_DOC, LEXICAL_PASSAGE]
    if manifest.trained:
        files.append(MEMORY_LINKS)
        folders += [MEMORY, LEXICAL_EXPANDED, FINETUNED_ENCODER]
    return files, folders


def read_manifest(index_dir: Path, sha256: str | None = None) -> Manifest:
    """Read and check the manifest; a missing, half-written or foreign index is refused, and so is one whose bytes
    do not hash to `sha256` where it is given (the bytes hashed are the bytes parsed)."""
    path = index_dir / MANIFEST
    if not index_dir.is_dir():
        raise IndexDirError(f"{index_dir}: is a file, not an index directory" if index_dir.exists()
                            else f"{index_dir}: index directory not found; run build.sh first")
    if not path.is_file():
        raise IndexDirError(f"{index_dir}: no {MANIFEST} (half-written or not an index); {REBUILD}")
    raw = path.read_bytes()
    if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
        raise IndexDirError(f"{path}: content differs from what was made (sha256); {REBUILD}")
    try:
        found = _parsed(loads(raw.decode("utf-8")), path)
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError, RecursionError, OSError,
            ConfigError) as exc:  # ArithmeticError: a count such as 1e400, which int() cannot take
        raise IndexDirError(f"{path}: corrupt manifest ({type(exc).__name__}: {exc}); {REBUILD}") from None
    if found.citator_version != citator.__version__:
        raise IndexDirError(f"{path}: built by citator {found.citator_version!r}, this is citator "
                            f"{citator.__version__}; {REBUILD}")
    if Path(found.data_dir).name != found.data_dir or found.data_dir in ("", ".", ".."):
        raise IndexDirError(f"{path}: data_dir {found.data_dir!r} is not a folder of the index; {REBUILD}")
    if found.shards:
        _check_shards(found, path)
    files, folders = _required(found)
    for name in [*files, *folders]:
        if not found.path(index_dir, name).exists():
            raise IndexDirError(f"{index_dir}: {name} is missing; the index is incomplete, {REBUILD}")
    # What is read before any digest check (the ids run.sh validates against, each shard's manifest) is trusted
    # only through the file table, so the table must name it.
    for name in files:
        if name not in found.files:
            raise IndexDirError(f"{path}: the file table does not list {name}; {REBUILD}")
    verify_sizes(index_dir / found.data_dir, found.files)
    # Within a command, its outputs may not replace what it reads here (`--output IDX/manifest.json`).
    mark_read([path, *(index_dir / found.data_dir / name for name in found.files)])
    return found
