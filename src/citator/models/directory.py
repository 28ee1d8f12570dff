"""A model directory given by path: read, and loaded, with one clear line when it is not a model citator can run.

Model directories are user input like any file: a config.json that is not JSON, or a folder without weights, must
end in a ConfigError naming the folder, not in a library's traceback.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citator.data.jsonl import loads
from citator.errors import ConfigError


def read_config(model_dir: Path, name: str = "config.json") -> dict[str, Any]:
    """`name` in `model_dir` as a JSON object; a ConfigError naming the file when it is missing or not one."""
    path = model_dir / name
    if not path.is_file():
        raise ConfigError(f"{model_dir}: not a model directory (no {name}); give a local model path")
    try:
        obj = loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, malformed or too deeply nested JSON
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ConfigError(f"{path}: a JSON {type(obj).__name__}, not an object")
    return obj


@contextmanager
def loading(model_dir: Path) -> Iterator[None]:
    """Turn what a model library raises for a folder it cannot load (no weights, a broken tokenizer, a config it
    does not know) into one ConfigError line naming the folder, or the file in it the user may not read (the
    libraries report that as missing)."""
    from safetensors import SafetensorError
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a local folder loads in seconds: a bar per load is noise in a command's output
    try:
        yield
    except ConfigError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, ImportError,
            SafetensorError) as exc:
        _refuse_unreadable(model_dir)
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ConfigError(f"{model_dir}: not a model citator can load ({type(exc).__name__}: {first})") from None


def _refuse_unreadable(model_dir: Path) -> None:
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(model_dir), key=lambda e: e.name):
            if entry.is_file() and not os.access(entry.path, os.R_OK):
                raise ConfigError(f"{entry.path}: not readable by this user (mode "
                                  f"{stat.S_IMODE(entry.stat().st_mode):o}); make it readable or load another copy")
