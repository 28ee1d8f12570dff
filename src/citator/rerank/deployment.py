"""deployment.json: the only two knobs a submission may set (attention kernel, CPU threads)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citator.data.jsonl import loads
from citator.errors import ConfigError

ATTENTION = ("sdpa", "eager")
ALLOWED_KEYS = frozenset({"attention", "cpu_threads"})


@dataclass(frozen=True)
class Deployment:
    """Validated deployment settings; defaults apply to keys the file leaves out."""

    attention: str = "sdpa"
    cpu_threads: int | None = None

    @classmethod
    def from_json(cls, obj: Any, where: str = "deployment.json") -> Deployment:
        """Validate strictly: an object with only `attention` (sdpa|eager) and `cpu_threads` (int 1-16)."""
        if not isinstance(obj, dict):
            raise ConfigError(f"{where}: expected a JSON object with only attention and cpu_threads")
        unknown = sorted(set(obj) - ALLOWED_KEYS)
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}; only attention and cpu_threads may be set")
        attention = obj.get("attention", "sdpa")
        if attention not in ATTENTION:
            raise ConfigError(f'{where}: attention must be "sdpa" or "eager", got {attention!r}')
        threads = obj.get("cpu_threads")
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 16):
            raise ConfigError(f"{where}: cpu_threads must be an integer from 1 to 16, got {threads!r}")
        return cls(attention, threads)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"attention": self.attention}
        if self.cpu_threads is not None:
            out["cpu_threads"] = self.cpu_threads
        return out


def load_deployment(path: str | Path | None) -> Deployment:
    """Read and validate a deployment file; None means the defaults."""
    if path is None:
        return Deployment()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: deployment file not found")
    try:
        obj = loads(p.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, malformed or too deeply nested JSON
        raise ConfigError(f"{p.name}: not valid JSON ({exc}); write an object like {{\"attention\": \"sdpa\"}}") from None
    return Deployment.from_json(obj, p.name)
