"""`make demo`: the main job on the bundled sample (filled in by the retrieval engine)."""

from __future__ import annotations

import sys


def main() -> int:
    print("citator demo: the stance-retrieval demo is not built yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
