"""A model folder the user cannot fully read is named for what it is: not readable, not "missing".

safetensors itself opens the weights here, as the model libraries do."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from safetensors import safe_open

from citator.errors import ConfigError
from citator.models.directory import loading


def _refusal_as(uid: int | None, model_dir: Path) -> str:
    """The ConfigError `loading(model_dir)` raises, as `uid` (a forked child: the modules are already loaded)."""
    if uid is None:
        with pytest.raises(ConfigError) as refused:
            with loading(model_dir):
                safe_open(str(model_dir / "model.safetensors"), framework="numpy")
        return str(refused.value)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports and exits without running any test machinery
        os.close(read)
        message = "no error"
        try:
            os.setgid(uid)
            os.setuid(uid)
            with loading(model_dir):
                safe_open(str(model_dir / "model.safetensors"), framework="numpy")
        except ConfigError as exc:
            message = str(exc)
        finally:
            os.write(write, message.encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        message = handle.read().decode()
    os.waitpid(pid, 0)
    return message


def test_an_unreadable_weights_file_is_named_as_unreadable() -> None:
    folder = Path(tempfile.mkdtemp(prefix="citator-test-model-"))
    try:
        os.chmod(folder, 0o755)
        (folder / "config.json").write_text("{}")
        os.chmod(folder / "config.json", 0o644)
        weights = folder / "model.safetensors"
        weights.write_bytes(b"\0" * 16)
        os.chmod(weights, 0o600 if os.geteuid() == 0 else 0o000)
        message = _refusal_as(65534 if os.geteuid() == 0 else None, folder)
        assert message.startswith(f"{weights}: not readable by this user (mode"), message
    finally:
        shutil.rmtree(folder, ignore_errors=True)
