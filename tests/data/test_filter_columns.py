"""A filter decided for every document at once (`Column`, what an index's `MetadataTable.allowed` uses) decides
each exactly as `Filter.matches` does one value: property tests over mixed columns of dates, text that looks like a
date or a number, integers past float precision, floats and absent values."""

from __future__ import annotations

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from citator.data.filters import OPS, Filter, matches_all
from citator.stance.retrieve.metadata_table import MetadataTable

_dates = st.dates(datetime.date(1700, 1, 1), datetime.date(2100, 12, 31)).map(datetime.date.isoformat)
_texts = st.sampled_from(["Supreme Court", "supreme court", "2020-13-01", "1991-05-30x", "10", "9.5", "", "Ä", "z"])
_numbers = st.one_of(st.integers(-(2**60), 2**60), st.floats(allow_nan=False, allow_infinity=False),
                     st.sampled_from([2**53, 2**53 + 1, 9, 10, 9.5]))
_values = st.one_of(st.none(), _dates, _texts, _numbers)
_filter_values = st.one_of(_dates, _texts, _numbers.map(str), st.sampled_from(["9007199254740993", "1e3", "nan"]))
_filters = st.lists(st.builds(Filter, st.sampled_from(["a", "b"]), st.sampled_from(sorted(OPS)), _filter_values),
                    min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional={"a": _values, "b": _values}), min_size=1, max_size=30), _filters)
def test_a_column_decides_every_document_as_the_filter_decides_each(rows: list[dict], filters: list[Filter]) -> None:
    stored = tuple({k: v for k, v in r.items() if v is not None} for r in rows)
    table = MetadataTable(stored, frozenset({"a", "b"}))
    expected = [matches_all(filters, r) for r in stored]
    assert table.allowed(filters, check=False).tolist() == expected
    assert table.allowed(filters, check=False).tolist() == expected  # again, from the columns it keeps
