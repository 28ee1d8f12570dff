"""run.sh's client path (argument parsing, the manifest, the socket exchange, validation, the atomic write) imports
no numpy and no model code: a warm run.sh pays only for what it uses (about 0.3 s less per run on CaseFacts)."""

import subprocess
import sys

HEAVY = ("numpy", "torch", "transformers", "lightgbm", "citator.stance.retrieve.index_dir", "citator.stance.retrieve.searcher")


def test_search_client_imports_nothing_heavy() -> None:
    code = ("import sys; import citator.cli.main as m; m.build_parser(); import citator.stance.workload; "
            f"print(','.join(name for name in {HEAVY!r} if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert out == "", f"run.sh's client path imports {out}"
