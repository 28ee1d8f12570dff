"""Typed errors that say where the problem is and what to do about it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


# Bidirectional controls: they reorder what follows them on the line (an id could show as another).
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# What no terminal line may carry raw: control characters (C0, DEL and C1: line breaks, escape and OSC sequences,
# the 8-bit CSI), lone surrogates, line and paragraph separators and the bidi controls. Joiners and soft hyphens
# are text.
UNSAFE_CHARS = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029{_BIDI}]")


def one_line(text: str) -> str:
    """`text` as one line on a terminal: every UNSAFE_CHARS character written as its Python escape, so no input
    can break, recolour or reorder the line; other text (joiners, soft hyphens) is left as it is."""
    return UNSAFE_CHARS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class CitatorError(Exception):
    """Base class of every error citator raises on purpose."""


class DataError(CitatorError):
    """A file that citator reads is malformed; the message names file, line and field."""

    def __init__(self, path: str | Path, line: int | None, message: str, field: str | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = Path(self.path).name
        if line is not None:
            where += f" line {line}"
        if field is not None:
            where += f' field "{field}"'
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type[DataError], tuple[Any, ...]]:
        # Rebuilt from its parts (not from the one-line message): it crosses processes (a Ray task's error) whole.
        return type(self), (self.path, self.line, self.reason, self.field)


class CorpusError(DataError):
    """The corpus file is malformed."""


class QueryError(DataError):
    """The queries file is malformed."""


class JudgmentError(DataError):
    """A ground-truth or qrels file is malformed."""


class ResultsError(DataError):
    """A results (run) file is malformed or breaks the output rules."""


class TreatmentError(DataError):
    """A treatment table file (written by citator or given with --treatments) is malformed."""


class MetadataError(DataError):
    """A document metadata file (`--metadata FILE.jsonl`) or a corpus record's metadata is malformed."""


class FilterError(CitatorError):
    """A metadata filter (`--filter "KEY OP VALUE"`) is malformed or names a key no document of the index has."""


class ArtifactError(DataError):
    """A file of a trained artifacts directory (e.g. the proposition memory) is malformed."""


class UpdateError(DataError):
    """An index update's input (documents to add, doc ids to remove) is malformed or does not fit the index."""


class RunError(CitatorError):
    """A ranking handed to a metric breaks its rules (a document listed twice)."""


class ShapeError(CitatorError, TypeError):
    """Judgments or a run handed to `citator.evaluate` in a shape it does not take (a TypeError too, as Python's
    own functions raise for a wrong argument type)."""


class OutputError(CitatorError):
    """A path citator was asked to write breaks the output rule (not a regular file, a symlink, an input)."""


class IndexDirError(CitatorError):
    """An index directory is missing, half-written or built for other inputs."""


class ConfigError(CitatorError):
    """A configuration or deployment file is invalid."""


class ConfigFileError(DataError):
    """A configuration file cannot be read as JSON."""


class PropositionError(CitatorError):
    """A proposition asked directly (command line, web page, Python) is empty, too long or asked wrongly."""


class PoolError(DataError):
    """A statute run's pool.jsonl is malformed or its hashes do not match its texts."""


class LabelError(DataError):
    """A label file (JSONL export) is malformed or names items the store does not hold."""


class LabelStoreError(CitatorError):
    """The SQLite label store is unusable or a request to it breaks its rules."""


class NoReviewItem(LabelStoreError):
    """A label names a review item the store does not hold."""


class LabelStoreBusy(LabelStoreError):
    """Another writer held the label store past the wait: nothing was written; trying again may succeed."""


class StatuteError(DataError):
    """A statute sections file is malformed (statute benchmark)."""


class SuiteError(DataError):
    """A statute query suite file is malformed or names sections the corpus lacks."""


class ProviderError(CitatorError):
    """A grading provider is misconfigured or unreachable."""


class BudgetError(CitatorError):
    """A provider request would exceed, or did exceed, the run's request or token budget."""


class ReceiptError(CitatorError):
    """A run directory's request receipts are inconsistent with the command being resumed."""
