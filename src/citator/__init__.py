"""citator: find the legal authority that supports or refutes a proposition, and measure it honestly."""

from citator.errors import CitatorError, DataError
from citator.evaluate import evaluate

__version__ = "0.1.0"

__all__ = ["CitatorError", "DataError", "evaluate", "__version__"]
