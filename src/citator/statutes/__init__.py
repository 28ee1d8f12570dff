"""Statute relevance benchmark: keyword pools of 30, citation controls, metered grading, intervals, calibration."""
