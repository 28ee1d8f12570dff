"""An index directory's manifest: what run.sh reads first, so it stays light (no numpy, no models).

The manifest names the data folder of the current build and records what the index was built from; its
fingerprint is what a search server must echo (retrieve/service_protocol.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citator.errors import IndexDirError
from citator.retrieve.config import RetrievalConfig

FORMAT = "citator-stance-index/1"
MANIFEST = "manifest.json"


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
    artifacts_path: str | None = None
    artifacts_sha256: str | None = None
    encoder_sha256: str | None = None  # models.encoder.encoder_fingerprint; None in indexes built before it
    passage_rules: str | None = None  # index_dir.passage_rules at build time; None in indexes built before it

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
            "data_dir": self.data_dir, "artifacts": None if self.artifacts_path is None else {
                "path": self.artifacts_path, "manifest_sha256": self.artifacts_sha256},
        }

    def path(self, index_dir: Path, name: str) -> Path:
        return index_dir / self.data_dir / name


def read_manifest(index_dir: Path) -> Manifest:
    """Read and check the manifest; a missing, half-written or foreign index is refused."""
    path = index_dir / MANIFEST
    if not index_dir.is_dir():
        raise IndexDirError(f"{index_dir}: index directory not found; run build.sh first")
    if not path.is_file():
        raise IndexDirError(f"{index_dir}: no {MANIFEST} (half-written or not an index); rebuild with build.sh")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
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
            encoder_sha256=obj["encoder"].get("sha256"),
            passage_rules=obj.get("passage_rules"),
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IndexDirError(f"{path}: corrupt manifest ({type(exc).__name__}: {exc}); rebuild with build.sh") from None
    parts = ["doc_ids.json", "passage_starts.npy", "dense.npy", "lexical_doc", "lexical_passage"]
    if manifest.artifacts_path is not None:
        parts += ["memory", "memory_links.npy"]
    for name in parts:
        if not manifest.path(index_dir, name).exists():
            raise IndexDirError(f"{index_dir}: {name} is missing; the index is incomplete, rebuild with build.sh")
    return manifest
