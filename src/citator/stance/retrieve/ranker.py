"""The learned fusion: a model over per-candidate features, applied to the interpolation's top candidates.

Two kinds share one file format (`ranker.json`, with a "kind"): a linear (logistic) model, and LambdaMART
(gradient-boosted trees trained by LightGBM, kept in LightGBM's own text format inside the JSON).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from citator.data.numbers import finite_number
from citator.data.atomic import write_json_atomic
from citator.data.jsonl import loads
from citator.errors import IndexDirError
from citator.models.encoder import TokenStates
from citator.engines.fusion import Bounds, best_n, normalise, topn_bounds
from citator.stance.retrieve.late_interaction import DEPTH as LATE_DEPTH, SIGNAL as LATE_SIGNAL, TokenStore, maxsim

if TYPE_CHECKING:  # imported where a ranker first scores (import_lightgbm)
    import lightgbm

_YEAR = re.compile(r"^(\d{4})")
# The candidates a year is centred on: the depth the learned ranker reorders at search (it is fitted on more).
YEAR_CENTRE = 100


def doc_years(doc_ids: Sequence[str]) -> np.ndarray:
    """Decision year from ids like "1971.70-18" (the Oyez scheme); NaN when an id carries no year."""
    out = np.full(len(doc_ids), np.nan, dtype=np.float32)
    for i, d in enumerate(doc_ids):
        m = _YEAR.match(d)
        if m and 1700 <= int(m.group(1)) <= 2100:
            out[i] = float(m.group(1))
    return out


@dataclass(frozen=True)
class CandidateValues:
    """What the ranker's features are made of, per query and candidate (arrays (n_queries, n_candidates)):
    each signal's raw and normalised score, the decision year (NaN unknown), the citation counts by key (see
    memory.citation_counts) and the late-interaction score (NaN where not scored). One machine gathers them from
    its score matrices; a sharded index gathers them from its shards."""

    signals: Mapping[str, tuple[np.ndarray, np.ndarray]]
    years: np.ndarray
    citations: Mapping[str, np.ndarray] | None = None
    late: np.ndarray | None = None


def gather_candidates(
    signals: Mapping[str, np.ndarray], years: np.ndarray, candidates: np.ndarray, depth: int = 100,
    citations: Mapping[str, np.ndarray] | None = None, late: np.ndarray | None = None,
    bounds: Bounds | None = None,
) -> CandidateValues:
    """The candidates' values from (n_queries, n_docs) signal matrices and per-document years and citations;
    `bounds` (signal -> (floor, span)) normalise instead of each matrix's own top `depth`."""
    rows = np.arange(candidates.shape[0])[:, None]
    per_signal = {}
    for name, matrix in signals.items():
        scale = bounds[name] if bounds is not None else topn_bounds(best_n(matrix, depth))
        per_signal[name] = (matrix[rows, candidates], normalise(matrix, scale)[rows, candidates])
    cited = None if citations is None else {key: counts[candidates] for key, counts in citations.items()}
    return CandidateValues(per_signal, years[candidates], cited, late)


def candidate_features(
    signals: Mapping[str, np.ndarray], stances: Sequence[str], years: np.ndarray, candidates: np.ndarray, depth: int = 100,
    citations: Mapping[str, np.ndarray] | None = None, late: np.ndarray | None = None,
) -> tuple[list[str], np.ndarray]:
    """(feature names, array (n_queries, n_candidates, n_features)) for the given candidate doc indices.

    `citations` (per document: how many training propositions cite it; see memory.citation_counts) adds a prior:
    a document the training set cites often, and often with the query's stance, is more often the answer; among
    propositions asked with both stances, a document that refuted others tends to refute again.
    `late` (n_queries, n_candidates): the late-interaction score of each candidate, NaN where it was not scored
    (LightGBM routes missing values down a learned branch).
    """
    return features_of(gather_candidates(signals, years, candidates, depth, citations, late), stances)


def features_of(values: CandidateValues, stances: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(feature names, array (n_queries, n_candidates, n_features)) from the candidates' values, in candidate order
    (the first YEAR_CENTRE candidates centre the years)."""
    names: list[str] = []
    columns: list[np.ndarray] = []
    per_signal = [(name, raw, norm) for name, (raw, norm) in values.signals.items()]
    if values.late is not None:
        per_signal.append((LATE_SIGNAL, values.late, _normalise_scored(values.late)))
    for name, raw, norm in sorted(per_signal, key=lambda item: item[0]):
        names.append(f"{name}:norm")
        columns.append(norm)
        if not name.startswith("bm25"):
            names.append(f"{name}:raw")
            columns.append(raw)
    year = values.years
    known = ~np.isnan(year)
    # Centred on the query's first YEAR_CENTRE candidates: only the relative age of a candidate can matter to its
    # rank, and a fixed depth gives a candidate the same value whether 200 are pulled (training) or 100 (search).
    head, head_known = year[:, :YEAR_CENTRE], known[:, :YEAR_CENTRE]
    counts = head_known.sum(axis=1, keepdims=True)
    centre = np.where(head_known, head, 0.0).sum(axis=1, keepdims=True) / np.maximum(counts, 1)
    rel = np.where(known, (year - centre) / 25.0, 0.0).astype(np.float32)
    for stance in ("supported", "refuted"):
        flag = np.array([s == stance for s in stances], dtype=np.float32)[:, None]
        names.append(f"year_rel*{stance}")
        columns.append(rel * flag)
    cited = values.citations
    if cited is not None:
        names.append("citations:log")
        columns.append(np.log1p(cited["all"]))
        # Stance-gated: an `all` query has no stance to prefer, so these are 0 for it.
        for feature, key in (("citations:own_stance", "{own}"), ("citations:paired_own", "paired_{own}"),
                             ("citations:paired_other", "paired_{other}")):
            values_ = np.zeros(year.shape, dtype=np.float32)
            for own, other in (("supported", "refuted"), ("refuted", "supported")):
                flag = np.array([s == own for s in stances])
                values_[flag] = np.log1p(cited[key.format(own=own, other=other)][flag])
            names.append(feature)
            columns.append(values_)
    return names, np.stack(columns, axis=-1).astype(np.float32)


def _normalise_scored(scores: np.ndarray) -> np.ndarray:
    """Per query, the scored (non-NaN) candidates mapped so the best is 1 and the worst 0; NaN stays NaN."""
    with np.errstate(invalid="ignore"):
        if np.isnan(scores).all():
            return scores.astype(np.float32)
        top = np.nanmax(scores, axis=1, keepdims=True)
        floor = np.nanmin(scores, axis=1, keepdims=True)
    span = np.where(top - floor > 1e-12, top - floor, 1.0)
    return ((scores - floor) / span).astype(np.float32)


def late_scores(tokens: TokenStates, candidates: np.ndarray, store: TokenStore) -> np.ndarray:
    """Late interaction of each query's first late_interaction.DEPTH candidates; NaN for the others."""
    late = np.full(candidates.shape, np.nan, dtype=np.float32)
    scored = min(LATE_DEPTH, candidates.shape[1])
    late[:, :scored] = maxsim(tokens, candidates[:, :scored], store)
    return late


def ranked_places(logits: np.ndarray) -> np.ndarray:
    """The ranker's logits as scores in (1, 2), above every non-candidate's (at most -1): how a search places its
    candidates."""
    return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32) + 1.0


class FeatureMismatch(IndexDirError, ValueError):
    """A ranker asks for features this index does not compute: a damaged or foreign ranker file (one line, exit 2)."""


def _select(features: Sequence[str], names: Sequence[str], x: np.ndarray) -> np.ndarray:
    """The columns of x (labelled by `names`) that a ranker's `features` name, in its order."""
    missing = [f for f in features if f not in names]
    if missing:
        raise FeatureMismatch(f"feature mismatch: ranker wants {missing}, which are not among {tuple(names)}: the "
                              "ranker was not trained for this index (rebuild with build.sh)")
    return x[..., [list(names).index(f) for f in features]]


@dataclass(frozen=True)
class LinearRanker:
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    candidates: int = 200

    def score(self, names: Sequence[str], x: np.ndarray) -> np.ndarray:
        """Logit of relevance per candidate; `names` label the last axis of x and must include this ranker's features."""
        x = _select(self.features, names, x)
        z = (x - np.asarray(self.mean, dtype=np.float32)) / np.asarray(self.scale, dtype=np.float32)
        # A missing feature (NaN) counts as its training mean, as in fitting.
        # Summed in float64, so a candidate's logit does not depend on how many rows share the product (exact_inner).
        logits = np.nan_to_num(z).astype(np.float64) @ np.asarray(self.weights, dtype=np.float64) + self.bias
        return logits.astype(np.float32)

    def save(self, path: Path) -> None:
        write_json_atomic(path, {"kind": "linear", **self.__dict__})

    @classmethod
    def load(cls, path: Path) -> LinearRanker:
        return cls.from_json(loads(path.read_text(encoding="utf-8")))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> LinearRanker:
        """Every field checked: a ranker file is read back from disk, and a string weight would fail at search."""
        features = tuple(obj["features"])
        if not features or not all(isinstance(f, str) for f in features):
            raise TypeError("features must be a non-empty list of names")
        columns = [tuple(obj[k]) for k in ("mean", "scale", "weights")]
        for name, values in zip(("mean", "scale", "weights"), columns):
            if len(values) != len(features) or not all(_finite(v) for v in values):
                raise TypeError(f"{name} must be {len(features)} finite numbers, one per feature")
        if not _finite(obj["bias"]) or isinstance(obj.get("candidates", 200), bool) \
                or not isinstance(obj.get("candidates", 200), int) or obj.get("candidates", 200) < 1:
            raise TypeError("bias must be a finite number and candidates a whole number of at least 1")
        mean, scale, weights = columns
        return cls(features, mean, scale, weights, float(obj["bias"]), int(obj.get("candidates", 200)))


@dataclass(frozen=True)
class TreeRanker:
    """LambdaMART: a LightGBM model (its text format) over the named features; the score is its raw output."""

    features: tuple[str, ...]
    model: str
    candidates: int = 200

    @cached_property
    def _booster(self) -> lightgbm.Booster:
        """Parsed from the model text on first use (cached_property writes the instance dict, frozen or not)."""
        return import_lightgbm().Booster(model_str=self.model)

    def score(self, names: Sequence[str], x: np.ndarray) -> np.ndarray:
        x = _select(self.features, names, x)
        flat = np.ascontiguousarray(x.reshape(-1, len(self.features)), dtype=np.float64)
        return np.asarray(self._booster.predict(flat, raw_score=True), dtype=np.float32).reshape(x.shape[:-1])

    def save(self, path: Path) -> None:
        write_json_atomic(path, {"kind": "lambdamart", "features": list(self.features), "candidates": self.candidates,
                                 "model": self.model})


Ranker = LinearRanker | TreeRanker

# Packages lightgbm imports when installed, only for wrappers the Booster does not use. scikit-learn (which
# sentence-transformers installs) alone made `import lightgbm` cost about 1.5 s, a third of a cold run.sh.
_LIGHTGBM_EXTRAS = ("sklearn", "pandas", "matplotlib", "dask", "pyarrow", "cffi", "graphviz", "polars", "datatable")


def import_lightgbm() -> ModuleType:
    """The lightgbm module, imported (the first time) with its optional wrappers' packages held back."""
    if "lightgbm" in sys.modules:
        return sys.modules["lightgbm"]
    held = [m for m in _LIGHTGBM_EXTRAS if m not in sys.modules]
    for name in held:
        # None in sys.modules makes `import name` raise ImportError: Python's documented way to hold a module back.
        sys.modules[name] = None  # type: ignore[assignment]  # sys.modules is typed as holding modules only
    try:
        import lightgbm
    finally:
        for name in held:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return lightgbm


def _finite(value: object) -> bool:
    return finite_number(value)


def load_ranker(path: Path) -> Ranker:
    """Either kind, by the file's "kind" (files written before LambdaMART existed are linear)."""
    from citator.errors import ConfigError

    try:
        obj = loads(path.read_text(encoding="utf-8"))
        kind = obj.get("kind", "linear")
        if kind == "linear":
            return LinearRanker.from_json(obj)
        if kind == "lambdamart":
            features = tuple(obj["features"])
            if not features or not all(isinstance(f, str) for f in features) or not isinstance(obj["model"], str):
                raise TypeError("features must be a non-empty list of names and model the model's text")
            return TreeRanker(features, obj["model"], int(obj.get("candidates", 200)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: not a ranker file ({exc})") from None
    raise ConfigError(f'{path}: field "kind": unknown ranker kind {kind!r} (expected "linear" or "lambdamart")')
