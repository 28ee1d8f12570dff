"""Paired family bootstrap: a hand-checked case, family resampling, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from citator.evaluate.bootstrap import REPLICATES, SEED, paired_family_bootstrap


def test_hand_checked_two_families() -> None:
    # Family f1 has two queries improved by 1, f2 one query unchanged. Drawing 2 families gives
    # f1f1 -> 1, f1f2 or f2f1 -> (1+1+0)/3 = 2/3, f2f2 -> 0, with probabilities 1/4, 1/2, 1/4:
    # the 2.5th percentile is 0 and the 97.5th is 1.
    iv = paired_family_bootstrap([0, 0, 0], [1, 1, 0], ["f1", "f1", "f2"])
    assert iv.queries == 3 and iv.families == 2
    assert iv.mean_a == 0 and iv.mean_b == pytest.approx(2 / 3) and iv.difference == pytest.approx(2 / 3)
    assert iv.ci_difference == (0.0, 1.0)
    assert iv.ci_a == (0.0, 0.0)


def test_matches_a_plain_loop_with_the_same_draws() -> None:
    a = [0.0, 1.0, 0.5, 0.2, 1.0, 0.0]
    b = [1.0, 1.0, 0.25, 0.2, 0.0, 1.0]
    fam = ["x", "x", "y", "z", "z", "w"]
    iv = paired_family_bootstrap(a, b, fam)
    names = sorted(set(fam))
    draws = np.random.default_rng(SEED).integers(0, len(names), size=(REPLICATES, len(names)))
    diffs = []
    for row in draws:
        chosen = [i for f in row for i in range(len(fam)) if fam[i] == names[f]]
        diffs.append(sum(b[i] - a[i] for i in chosen) / len(chosen))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    assert iv.ci_difference == pytest.approx((lo, hi), abs=1e-12)


def test_deterministic_and_independent_of_input_order() -> None:
    a, b, fam = [0, 1, 0, 1], [1, 1, 0, 0], ["p", "q", "q", "r"]
    first = paired_family_bootstrap(a, b, fam)
    assert paired_family_bootstrap(a, b, fam) == first
    order = [3, 1, 0, 2]
    shuffled = paired_family_bootstrap([a[i] for i in order], [b[i] for i in order], [fam[i] for i in order])
    assert shuffled.ci_difference == first.ci_difference


def test_no_difference_gives_a_zero_interval() -> None:
    iv = paired_family_bootstrap([0.5, 1.0], [0.5, 1.0], ["a", "b"])
    assert iv.ci_difference == (0.0, 0.0)


def test_refuses_mismatched_inputs() -> None:
    with pytest.raises(ValueError):
        paired_family_bootstrap([1.0], [1.0, 0.0], ["a"])
