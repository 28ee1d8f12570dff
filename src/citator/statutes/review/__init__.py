"""The human-label store: review items from a statute run, reviewers, and labels bound to text hashes."""

from citator.statutes.review.exchange import ExportCounts, export_labels, import_labels, read_labels
from citator.statutes.review.pool import PoolEntry, keyword_order, read_pool
from citator.statutes.review.records import GRADES, LabelRecord, Reviewer, ReviewItem, parse_grade
from citator.statutes.review.store import LabelStore, LoadCounts, Progress, command_store

__all__ = [
    "GRADES", "LabelRecord", "Reviewer", "ReviewItem", "parse_grade",
    "LabelStore", "LoadCounts", "Progress", "command_store",
    "PoolEntry", "read_pool", "keyword_order",
    "ExportCounts", "export_labels", "import_labels", "read_labels",
]
