"""The trained-artifacts directory that `citator train` writes and build.sh/run.sh read (never training data)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citator.errors import IndexDirError

FORMAT = "citator-artifacts/1"
# Where a build finds artifacts it was not given with --artifacts (build.sh sets it to artifacts/ beside itself).
ENV_VAR = "CITATOR_ARTIFACTS"


@dataclass(frozen=True)
class Artifacts:
    root: Path
    weights: dict[str, float]
    fusion: str
    info: dict[str, Any]

    @property
    def encoder_dir(self) -> Path:
        return self.root / "encoder"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def work_dir(self) -> Path:
        """Training's scratch folder (fold encoders, caches): build.sh needs nothing from it, and a copy may lack it."""
        return self.root / "work"

    @property
    def ranker_path(self) -> Path | None:
        path = self.root / "ranker.json"
        return path if path.is_file() else None


def read_artifacts(root: str | Path, allow_incomplete: bool = False) -> Artifacts:
    """Read and check an artifacts directory; one that training has not finished is refused."""
    root = Path(root).absolute()
    path = root / "manifest.json"
    if not path.is_file():
        raise IndexDirError(f"{root}: no manifest.json: not a citator artifacts directory (make one with citator train)")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if obj.get("format") != FORMAT:
            raise IndexDirError(f"{path}: format {obj.get('format')!r} is not {FORMAT!r}")
        if obj.get("complete") is not True and not allow_incomplete:
            raise IndexDirError(f"{root}: training did not finish (manifest not complete); rerun citator train")
        artifacts = Artifacts(root, {k: float(v) for k, v in obj["weights"].items()}, str(obj["fusion"]), obj)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise IndexDirError(f"{path}: corrupt artifacts manifest ({exc}); retrain with citator train") from None
    for part in (artifacts.encoder_dir / "config.json", artifacts.memory_dir / "memory.jsonl"):
        if not part.is_file():
            raise IndexDirError(f"{root}: {part.relative_to(root)} is missing; retrain with citator train")
    return artifacts


def default_artifacts() -> Path | None:
    """The artifacts a build uses when not given --artifacts: $CITATOR_ARTIFACTS when set and not empty, else none.

    The one rule (docs/stance.md): `--artifacts DIR`, else $CITATOR_ARTIFACTS, else no artifacts. The package never
    looks for a source tree; build.sh, which lives in one, sets the variable to `artifacts/` beside itself when that
    holds a manifest and the variable is unset."""
    value = os.environ.get(ENV_VAR, "")
    return Path(value) if value else None
