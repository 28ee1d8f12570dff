"""The trained stance model: what `citator train` learns and a build copies into an index, typed and versioned.

A model directory holds the fine-tuned query encoder (`encoder/`), the proposition memory with the learned
document offsets (`memory/`), the ranker (`ranker.json`) and `manifest.json`: this record, with the size and
sha256 of every file of those parts. `load` checks the format, every field and every file's digest, so a model
edited, cut short, or written by another version of this format is refused with "retrain" before a build copies
it. Whatever else the folder holds (training's `work/`) is neither recorded nor read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from citator.data.numbers import finite_number
from citator.data.jsonl import loads
from citator.data.atomic import write_json_atomic
from citator.errors import IndexDirError
from citator.stance.retrieve.index_files import check_recorded, file_entry, record_files, verify_digests, verify_sizes

FORMAT = "citator-stance-model/1"
MANIFEST = "manifest.json"
# Where a build finds the model it was not given with --artifacts (build.sh sets it to artifacts/ beside itself).
ENV_VAR = "CITATOR_ARTIFACTS"
RETRAIN = "retrain with citator train"
Fusion = Literal["interpolate", "learned"]
# The ranker a model's fusion uses: "none" interpolates its weights; the others reorder the top candidates.
RankerKind = Literal["none", "linear", "lambdamart"]
FUSIONS: tuple[Fusion, ...] = ("interpolate", "learned")
RANKERS: tuple[RankerKind, ...] = ("none", "linear", "lambdamart")
# The parts a model ships (recorded and verified); the encoder and the memory are required.
ENCODER, MEMORY, RANKER = "encoder", "memory", "ranker.json"
# Training's scratch folder beside the parts (fold encoders, the dev index, its base passages): no part of the
# model, and a copy of the model may lack it.
WORK = "work"
REQUIRED = (f"{ENCODER}/config.json", f"{MEMORY}/memory.jsonl")
FIELDS = {"format", "complete", "base_encoder", "fusion", "weights", "ranker", "files", "report"}


@dataclass(frozen=True)
class BaseEncoder:
    """The encoder a model was trained against: its query encoder searches this encoder's passage vectors, so an
    index it is copied into must use the very same weights (by fingerprint, not by folder name)."""

    path: str
    model_id: str
    sha256: str


@dataclass(frozen=True)
class StanceModel:
    """A trained stance model directory, read and checked (`load`) or about to be recorded (`save`).

    `report`: what training measured and chose by (dev scores, timings, settings). It is for people and
    benchmarks; nothing that builds or searches reads it.
    """

    root: Path
    base_encoder: BaseEncoder
    fusion: Fusion
    weights: Mapping[str, float]
    ranker: RankerKind
    complete: bool
    report: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def encoder_dir(self) -> Path:
        return self.root / ENCODER

    @property
    def memory_dir(self) -> Path:
        return self.root / MEMORY

    @property
    def work_dir(self) -> Path:
        return work_dir(self.root)

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def ranker_path(self) -> Path | None:
        """The fitted ranker, which training saves even when the fusion interpolates (benchmarks score it too)."""
        return self.root / RANKER if RANKER in self.files else None

    def save(self) -> StanceModel:
        """Record the parts as they are now and write the manifest atomically; the model as recorded."""
        files = {f"{part}/{name}": entry for part in (ENCODER, MEMORY) if (self.root / part).is_dir()
                 for name, entry in record_files(self.root / part).items()}
        if (self.root / RANKER).is_file():
            files[RANKER] = file_entry(self.root / RANKER)
        saved = replace(self, files=files)
        write_json_atomic(self.manifest_path, saved.to_json())
        return saved

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "complete": self.complete, "base_encoder": vars(self.base_encoder),
                "fusion": self.fusion, "weights": dict(self.weights), "ranker": self.ranker,
                "files": dict(self.files), "report": dict(self.report)}

    @classmethod
    def load(cls, root: str | Path, allow_incomplete: bool = False) -> StanceModel:
        """Read and check a model directory; one that training has not finished is refused unless
        `allow_incomplete` (training's own dev index reads it half-way)."""
        root = Path(root).absolute()
        path = root / MANIFEST
        if not path.is_file():
            raise IndexDirError(f"{root}: no {MANIFEST}: not a citator model directory (make one with citator train)")
        try:
            obj = loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise IndexDirError(f"{path}: unreadable ({type(exc).__name__}); {RETRAIN}") from None
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            found = obj.get("format") if isinstance(obj, dict) else None
            raise IndexDirError(f"{path}: format {found!r} is not {FORMAT!r}; {RETRAIN}")
        unknown = sorted(set(obj) - FIELDS)
        if unknown:
            raise IndexDirError(f"{path}: unknown field {unknown[0]!r} (not written by this citator); {RETRAIN}")
        model = cls(root, _base_encoder(obj.get("base_encoder"), path), _one_of(obj, "fusion", FUSIONS, path),
                    _weights(obj.get("weights"), path), _one_of(obj, "ranker", RANKERS, path),
                    _flag(obj, "complete", path), _mapping(obj, "report", path),
                    check_recorded(obj.get("files"), path, RETRAIN))
        if model.complete is False and not allow_incomplete:
            raise IndexDirError(f"{root}: training did not finish (manifest not complete); rerun citator train")
        if (model.fusion == "learned") != (model.ranker != "none"):
            raise IndexDirError(f"{path}: fusion {model.fusion!r} with ranker {model.ranker!r}; {RETRAIN}")
        for part in REQUIRED + ((RANKER,) if model.ranker != "none" else ()):
            if part not in model.files:
                raise IndexDirError(f"{root}: {part} is not recorded; {RETRAIN}")
        _refuse_unrecorded(model)
        verify_sizes(root, model.files, RETRAIN)
        verify_digests(root, model.files, RETRAIN)
        return model


def work_dir(root: Path) -> Path:
    """The work folder of the model in `root` (training writes it before the model is recorded)."""
    return root / WORK


def default_artifacts() -> Path | None:
    """The model a build uses when not given --artifacts: $CITATOR_ARTIFACTS when set and not empty, else none.

    The one rule (docs/stance.md): `--artifacts DIR`, else $CITATOR_ARTIFACTS, else no model. The package never
    looks for a source tree; build.sh, which lives in one, sets the variable to `artifacts/` beside itself when that
    holds a manifest and the variable is unset."""
    value = os.environ.get(ENV_VAR, "")
    return Path(value) if value else None


def _refuse_unrecorded(model: StanceModel) -> None:
    """A file in a shipped part that training did not record would be copied into every index built from it."""
    for part in (ENCODER, MEMORY):
        for path in sorted((model.root / part).rglob("*")):
            name = path.relative_to(model.root).as_posix()
            if not path.is_dir() and not path.name.startswith(".") and name not in model.files:
                raise IndexDirError(f"{path}: not recorded in {model.manifest_path}; {RETRAIN}")


def _base_encoder(value: Any, path: Path) -> BaseEncoder:
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) and value[k]
                                              for k in ("path", "model_id", "sha256")):
        raise IndexDirError(f"{path}: base_encoder must give path, model_id and sha256; {RETRAIN}")
    return BaseEncoder(value["path"], value["model_id"], value["sha256"])


def _one_of(obj: dict[str, Any], key: str, allowed: tuple[str, ...], path: Path) -> Any:
    if obj.get(key) not in allowed:
        raise IndexDirError(f"{path}: {key} {obj.get(key)!r} is not one of {list(allowed)}; {RETRAIN}")
    return obj[key]


def _weights(value: Any, path: Path) -> dict[str, float]:
    ok = isinstance(value, dict) and all(isinstance(k, str) and finite_number(v) for k, v in value.items())
    if not ok:
        raise IndexDirError(f"{path}: weights must map signal names to finite numbers; {RETRAIN}")
    return {k: float(v) for k, v in cast(dict[str, float], value).items()}


def _flag(obj: dict[str, Any], key: str, path: Path) -> bool:
    if not isinstance(obj.get(key), bool):
        raise IndexDirError(f"{path}: {key} must be true or false; {RETRAIN}")
    return bool(obj[key])


def _mapping(obj: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    if not isinstance(obj.get(key, {}), dict):
        raise IndexDirError(f"{path}: {key} must be an object; {RETRAIN}")
    return obj.get(key, {})
