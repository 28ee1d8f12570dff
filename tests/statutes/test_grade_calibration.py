"""Brier score, five equal-width bins, ECE and confidence-agreement against hand-computed values."""

from __future__ import annotations

import pytest

from citator.evaluate.calibration import brier, calibrate, expected_calibration_error, reliability_bins


def test_brier_by_hand() -> None:
    # (0.9-1)^2 + (0.2-0)^2 + (0.6-0)^2 = 0.01 + 0.04 + 0.36 = 0.41, / 3
    assert brier([0.9, 0.2, 0.6], [1, 0, 0]) == pytest.approx(0.41 / 3)


def test_bins_and_ece_by_hand() -> None:
    probs = [0.1, 0.15, 0.5, 0.55, 0.95, 1.0]
    outcomes = [0, 1, 1, 1, 1, 0]
    bins = reliability_bins(probs, outcomes)
    assert [b.count for b in bins] == [2, 0, 2, 0, 2]  # 1.0 falls in the last bin
    assert bins[0].mean_predicted == pytest.approx(0.125) and bins[0].observed == 0.5
    assert bins[1].mean_predicted is None and bins[1].observed is None
    assert bins[4].mean_predicted == pytest.approx(0.975) and bins[4].observed == 0.5
    # ECE = 2/6*|0.125-0.5| + 2/6*|0.525-1| + 2/6*|0.975-0.5| = (0.375 + 0.475 + 0.475) / 3
    assert expected_calibration_error(bins) == pytest.approx(1.325 / 3)


def test_calibrate_useful_and_exact_agreement() -> None:
    cal = calibrate(
        p_useful=[0.9, 0.85, 0.1, 0.3],
        confidence=[0.9, 0.5, 0.7, 0.3],
        predicted=[3, 2, 0, 1],
        human=[3, 1, 0, 2],
    )
    # useful = [1, 0, 0, 1]; Brier = (0.01 + 0.7225 + 0.01 + 0.49) / 4
    assert cal.n == 4 and cal.brier == pytest.approx(1.2325 / 4)
    # agreement = [1, 0, 1, 0]
    assert cal.agreement == 0.5
    # confidence bins: 0.3 -> bin1 (agree 0), 0.5 -> bin2 (0), 0.7 -> bin3 (1), 0.9 -> bin4 (1)
    assert cal.confidence_ece == pytest.approx((0.3 + 0.5 + 0.3 + 0.1) / 4)
    # P(useful) >= 0.8 diagnostic: two items, one useful
    assert cal.threshold_n == 2 and cal.threshold_useful_rate == 0.5


def test_out_of_range_probability_is_refused() -> None:
    with pytest.raises(ValueError):
        reliability_bins([1.2], [1])


def test_p_useful_of_a_distribution_over_2_and_3_only_stays_a_probability() -> None:
    from citator.statutes.providers.grades import GradeDistribution, _token_distribution

    # Normalised, these two add up to 1.0000000000000002 in floating point; calibration refuses anything above 1.
    probs = _token_distribution({"top_logprobs": [{"token": "2", "logprob": -4.93}, {"token": "3", "logprob": -3.39}]})
    assert probs is not None and probs[2] + probs[3] > 1.0
    grades = GradeDistribution(probs, "logprobs")
    assert grades.p_useful == 1.0
    calibrate([grades.p_useful], [grades.confidence], [grades.grade], [2])
