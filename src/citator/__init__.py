"""citator: find the legal authority that supports or refutes a proposition, and measure it honestly.

The public API: `evaluate` (any run against any judgments), `StanceIndex` (build, open, search, brief),
`Reranker` (a built-in strategy over a local LLM under the token budget), `statute_benchmark`, and `SAMPLE`,
the bundled CaseFacts sample's directory. Everything else is internal and may change.
"""

import os
from pathlib import Path

# MKL (torch's CPU kernels) may round a product by its buffer's alignment, so a passage encoded in one index's batch
# and in a shard's could part in the last bit, which float16 storage can turn into a step of 3e-5 (a sharded index's
# scores then parted from one index's by 1.1e-5 on an Intel Xeon). Strict mode rounds alike every time, at no cost
# measured on MiniLM. Set before torch loads MKL; a user's own setting stands, and the processes citator starts
# (search servers, Ray workers, training lanes) inherit it.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

from citator.errors import CitatorError, DataError  # noqa: E402
from citator.evaluate import evaluate  # noqa: E402

__version__ = "0.1.0"

# The bundled CaseFacts sample: corpus.jsonl, queries.jsonl, ground_truth.jsonl (CC BY-NC; see its PROVENANCE.md).
SAMPLE = Path(__file__).parent / "samples" / "casefacts"

__all__ = ["Brief", "CitatorError", "DataError", "Hit", "Ranking", "Reranker", "SAMPLE", "StanceIndex", "evaluate",
           "statute_benchmark", "__version__"]

# Loaded on first use: `import citator` stays light (run.sh's client never pays for numpy or the encoders).
_LAZY = {"StanceIndex": "citator.stance.brief.index", "Brief": "citator.stance.brief.records", "Hit": "citator.stance.brief.records",
         "Reranker": "citator.rerank.reranker", "Ranking": "citator.rerank.reranker",
         "statute_benchmark": "citator.statutes.run"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'citator' has no attribute {name!r}")
