"""The index a long-lived reader serves: the generation its manifest names, opened again when the manifest switches.

A build or an update writes a new data folder and replaces the manifest last, atomically (index_dir.switch_to);
the folder of the generation before is kept until the next update (layout.Generation.previous). A reader that
opened one generation answers from it alone, whatever is written beside it, and one that calls `get` before each
answer serves the new generation from the first answer after the switch, without a restart: a stat of the
manifest per answer. It never serves a mix: an opened index reads only the data folder its manifest named.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from citator.stance.retrieve.index_files import FileState, file_state
from citator.stance.retrieve.layout import MANIFEST

T = TypeVar("T")


class Current(Generic[T]):
    """What `open` makes of an index directory (a searcher), made again by `get` once the manifest is replaced; the
    one it replaces is given to `close`."""

    def __init__(self, index_dir: Path, open_index: Callable[[Path], T], close: Callable[[T], None]) -> None:
        self.manifest = Path(index_dir) / MANIFEST
        self._open, self._close = open_index, close
        # Taken before opening: a switch while it opens is seen by the next `get`.
        self._state: FileState | None = file_state(self.manifest)
        self._value = open_index(Path(index_dir))

    def get(self) -> T:
        """The index of the manifest as it is now (opened again if it was replaced since)."""
        state = file_state(self.manifest)
        if state != self._state:
            fresh = self._open(self.manifest.parent)  # a generation that fails to open leaves the one served
            old, self._value, self._state = self._value, fresh, state
            self._close(old)
        return self._value

    def changed(self) -> bool:
        """Whether the manifest was replaced since the index served was opened."""
        return file_state(self.manifest) != self._state
