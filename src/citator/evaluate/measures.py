"""Metric names (`ndcg@10`, `hit@5`, `rr`, `p@5`, `recall@100`) and per-query evaluation of a run."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from citator.data.records import Qrels
from citator.errors import CitatorError, RunError, one_line
from citator.evaluate.hit import hit
from citator.evaluate.ndcg import ndcg
from citator.evaluate.precision import precision
from citator.evaluate.recall import recall
from citator.evaluate.rr import reciprocal_rank
from citator.evaluate.shapes import Run, as_qrels, as_rankings

_FUNCS: dict[str, Callable[..., float]] = {
    "ndcg": ndcg,
    "hit": hit,
    "p": precision,
    "recall": recall,
    "rr": reciprocal_rank,
}
_PATTERN = re.compile(r"^(ndcg|hit|p|recall|rr)(?:@(\d+))?$")


@dataclass(frozen=True)
class Measure:
    """A metric with its cut-off, named as users write it."""

    family: str
    k: int | None

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    def __call__(self, ranking: Sequence[str], grades: Mapping[str, int]) -> float:
        return _FUNCS[self.family](ranking, grades, self.k)


def parse_measure(name: str) -> Measure:
    """Parse `ndcg@10` style names; `rr` may go without a cut-off, the others need one."""
    if not isinstance(name, str):
        raise CitatorError(f"a metric name is text such as ndcg@10, got {type(name).__name__}")
    m = _PATTERN.match(name.strip().lower()) if len(name) <= 40 else None
    if not m:
        shown = one_line(name[:40] + ("…" if len(name) > 40 else ""))
        raise CitatorError(f'unknown metric "{shown}": use ndcg@K, hit@K, p@K, recall@K or rr[@K]')
    family, k = m.group(1), m.group(2)
    if k is None and family != "rr":
        raise CitatorError(f'metric "{name}" needs a cut-off, e.g. {family}@10')
    if k is not None and int(k) < 1:
        raise CitatorError(f'metric "{name}": cut-off must be >= 1')
    return Measure(family, None if k is None else int(k))


def per_query(
    qrels: Qrels | Mapping[str, Mapping[str, int]], run: Run, measures: Iterable[str] | str,
    query_ids: Iterable[str] | None = None,
) -> dict[str, dict[str, float]]:
    """metric name -> query_id -> value; a query without a ranking scores 0.

    `qrels` and `run` take the shapes of evaluate/shapes.py (a `{doc: score}` run is ranked as trec_eval ranks it).
    `query_ids` defaults to every query in the qrels: the evaluated set is fixed by the judgments,
    never by what the run happens to contain.
    """
    qrels, run = as_qrels(qrels), as_rankings(run)
    if isinstance(measures, str):
        measures = [measures]
    if not isinstance(measures, Iterable):
        raise CitatorError(f"measures must be a metric name or a list of them, got {type(measures).__name__}")
    # A string is an iterable of one-character "ids": scoring "q1" as queries "q" and "1" would be silently wrong.
    if query_ids is not None and (isinstance(query_ids, (str, bytes)) or not isinstance(query_ids, Iterable)):
        raise CitatorError(f"query_ids must be a list of query ids, got {type(query_ids).__name__}")
    ids = list(qrels.query_ids() if query_ids is None else query_ids)
    if not all(isinstance(q, str) for q in ids):
        raise CitatorError("query_ids must be a list of query ids (strings)")
    out: dict[str, dict[str, float]] = {}
    for name in measures:
        measure = parse_measure(name)
        values: dict[str, float] = {}
        for q in ids:
            try:
                values[q] = measure(run.get(q, ()), qrels.of(q))
            except RunError as exc:
                raise RunError(f'run, query "{q}": {exc}') from None
        out[measure.name] = values
    return out


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]], run: Run, measures: Iterable[str] | str,
    query_ids: Iterable[str] | None = None,
) -> dict[str, float]:
    """Mean of each metric over the evaluated queries: `evaluate(qrels, run, ["ndcg@10", "rr"])`, with qrels
    `{query_id: {doc_id: grade}}` (or a `Qrels`) and a run `{query_id: [doc_id, ...]}` or
    `{query_id: {doc_id: score}}`. Zero queries (qrels that judge none, an empty `query_ids`) are refused: a
    mean over nothing is no score, and 0.0 would read as a measured one."""
    values = per_query(qrels, run, measures, query_ids)
    if any(not v for v in values.values()):
        where = "query_ids is empty" if query_ids is not None else "the qrels judge no query"
        raise CitatorError(f"no queries to evaluate ({where}): a mean over zero queries is not a score")
    return {name: fmean(v.values()) for name, v in values.items()}
