"""Calibration of graded predictions: Brier score, equal-width reliability bins, ECE, confidence vs agreement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BINS = 5
# P(useful) at or above this is a diagnostic only, never a decision rule.
DIAGNOSTIC_THRESHOLD = 0.8


@dataclass(frozen=True)
class ReliabilityBin:
    """One equal-width bin [lo, hi) (the last one closed): count, mean prediction, observed frequency."""

    lo: float
    hi: float
    count: int
    mean_predicted: float | None
    observed: float | None


@dataclass(frozen=True)
class Calibration:
    """Calibration of P(useful) against human usefulness and of confidence against exact-grade agreement."""

    n: int
    brier: float
    bins: tuple[ReliabilityBin, ...]
    ece: float
    agreement: float
    confidence_bins: tuple[ReliabilityBin, ...]
    confidence_ece: float
    threshold_n: int
    threshold_useful_rate: float | None


def brier(probs: Sequence[float], outcomes: Sequence[int]) -> float:
    """Mean squared difference between probabilities and 0/1 outcomes."""
    if len(probs) != len(outcomes) or not probs:
        raise ValueError("probs and outcomes must be non-empty and of equal length")
    return sum((p - y) ** 2 for p, y in zip(probs, outcomes)) / len(probs)


def reliability_bins(probs: Sequence[float], outcomes: Sequence[int], bins: int = BINS) -> tuple[ReliabilityBin, ...]:
    """Equal-width bins over [0, 1]; a probability of exactly 1 falls in the last bin."""
    members: list[list[int]] = [[] for _ in range(bins)]
    for i, p in enumerate(probs):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"probability out of [0, 1]: {p}")
        members[min(int(p * bins), bins - 1)].append(i)
    out = []
    for b, idx in enumerate(members):
        mean_p = sum(probs[i] for i in idx) / len(idx) if idx else None
        obs = sum(outcomes[i] for i in idx) / len(idx) if idx else None
        out.append(ReliabilityBin(b / bins, (b + 1) / bins, len(idx), mean_p, obs))
    return tuple(out)


def expected_calibration_error(bins: Sequence[ReliabilityBin]) -> float:
    """Sum over bins of (share of items) x |mean prediction - observed frequency|."""
    n = sum(b.count for b in bins)
    if n == 0:
        raise ValueError("no items in any bin")
    # A bin with items has a mean prediction and an observed frequency; an empty one has neither.
    return sum(b.count / n * abs(b.mean_predicted - b.observed) for b in bins
               if b.mean_predicted is not None and b.observed is not None)


def calibrate(
    p_useful: Sequence[float], confidence: Sequence[float], predicted: Sequence[int], human: Sequence[int],
    bins: int = BINS,
) -> Calibration:
    """Human grades 0-3 (unknowns already removed): useful means grade 2 or 3; agreement means equal grades."""
    if not (len(p_useful) == len(confidence) == len(predicted) == len(human)) or not human:
        raise ValueError("all inputs must be non-empty and of equal length")
    useful = [int(g >= 2) for g in human]
    agree = [int(p == h) for p, h in zip(predicted, human)]
    rel = reliability_bins(p_useful, useful, bins)
    conf = reliability_bins(confidence, agree, bins)
    above = [u for p, u in zip(p_useful, useful) if p >= DIAGNOSTIC_THRESHOLD]
    return Calibration(
        len(human), brier(p_useful, useful), rel, expected_calibration_error(rel),
        sum(agree) / len(agree), conf, expected_calibration_error(conf),
        len(above), sum(above) / len(above) if above else None,
    )
