"""run.sh's search step: a server answer is checked like any other before it is used."""

from __future__ import annotations

from pathlib import Path

import pytest

import citator.stance.workload as stance
from citator.data import read_corpus, read_queries
from citator.data.records import ResultLine, ScoredDoc
from citator.data.results import validate_results


def test_a_server_answer_that_breaks_the_output_rules_is_searched_again_here(
    small_index: Path, small_stance_set: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = read_queries(small_stance_set["queries"])
    bogus = [ResultLine(q.query_id, (ScoredDoc("not-a-document", 1.0),) * 10) for q in queries]
    monkeypatch.setattr(stance, "search_via_service", lambda *args, **kwargs: (bogus, "server"))
    results, how = stance.search(small_index, small_stance_set["queries"], 10)
    assert how == "in-process, since the server's answer broke the output rules"
    corpus_ids = {d.doc_id for d in read_corpus(small_stance_set["corpus"])}
    assert validate_results(results, corpus_ids, queries, 10) == []
