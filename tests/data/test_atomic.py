"""Atomic writes leave either the old file or the new one, never a partial file."""

from __future__ import annotations

from pathlib import Path

import pytest

from citator.data import atomic_open, write_json_atomic
from citator.errors import OutputError


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_json_atomic(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_open(target) as handle:
            handle.write("partial")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == '{\n  "v": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_atomic_files_get_the_usual_mode_not_mkstemps_0600(tmp_path: Path) -> None:
    import os

    target = tmp_path / "out.json"
    old = os.umask(0o022)
    try:
        write_json_atomic(target, {})
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_target_swapped_for_a_symlink_while_writing_is_not_replaced(tmp_path: Path) -> None:
    """The output rule is checked again just before the rename: a symbolic link put in the target's place during
    the write is refused, the file it points to untouched, and no temporary file is left."""
    target, victim = tmp_path / "out.txt", tmp_path / "victim"
    target.write_text("old")
    victim.write_text("precious")
    with pytest.raises(OutputError, match="symbolic link"):
        with atomic_open(target) as handle:
            handle.write("new")
            target.unlink()
            target.symlink_to(victim)
    assert victim.read_text() == "precious" and target.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "victim"]
