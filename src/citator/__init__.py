"""citator: find the legal authority that supports or refutes a proposition, and measure it honestly."""

from citator.errors import CitatorError, DataError
from citator.evaluate import evaluate

__version__ = "0.1.0"

__all__ = ["Brief", "CitatorError", "DataError", "Hit", "StanceIndex", "evaluate", "__version__"]

# Loaded on first use: `import citator` stays light (run.sh's client never pays for numpy or the encoders).
_LAZY = {"StanceIndex": "citator.brief.index", "Brief": "citator.brief.records", "Hit": "citator.brief.records"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'citator' has no attribute {name!r}")
