"""Formats and validation: every file citator reads or writes goes through here."""

from citator.data.atomic import atomic_open, write_json_atomic, write_jsonl_atomic, write_text_atomic
from citator.data.corpus import iter_corpus, read_corpus, write_corpus
from citator.data.judgments import (
    read_graded_qrels,
    read_ground_truth,
    read_trec_qrels,
    write_ground_truth,
    write_trec_qrels,
)
from citator.data.jsonl import iter_jsonl, read_json
from citator.data.queries import iter_queries, read_queries, write_queries
from citator.data.records import STANCES, Document, Qrels, Query, ResultLine, ScoredDoc
from citator.data.results import (
    iter_results,
    read_results,
    read_trec_run,
    validate_results,
    write_results,
    write_trec_run,
)

__all__ = [
    "STANCES", "Document", "Qrels", "Query", "ResultLine", "ScoredDoc",
    "atomic_open", "write_json_atomic", "write_jsonl_atomic", "write_text_atomic",
    "iter_corpus", "read_corpus", "write_corpus",
    "iter_queries", "read_queries", "write_queries",
    "read_ground_truth", "write_ground_truth", "read_graded_qrels", "read_trec_qrels", "write_trec_qrels",
    "iter_results", "read_results", "write_results", "validate_results", "read_trec_run", "write_trec_run",
    "iter_jsonl", "read_json",
]
