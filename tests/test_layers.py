"""The architecture is a contract: `lint-imports` checks every contract of pyproject.toml (the layers of the core,
the products and the surfaces, the layers inside stance retrieval, the statute benchmark's forbidden imports, and
no import cycle between siblings)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    contracts = (ROOT / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert contracts >= 4 and f"{contracts} kept, 0 broken" in done.stdout, done.stdout[-2000:]
