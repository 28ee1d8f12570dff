"""Typed errors of the reranking runner (strategy misbehaviour is never raised: it fails that query)."""

from __future__ import annotations

from citator.errors import CitatorError


class RerankError(CitatorError):
    """The runner itself cannot work: bad limits, no usable strategy interpreter, model load/warm-up too slow."""
