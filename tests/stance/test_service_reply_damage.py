"""What the search client reads back from a server's files and replies is checked: anything damaged means "search
in process", never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from citator.data.records import Query
from citator.stance.retrieve.service_protocol import READY_NAME, decode_results, search_via_service, service_dir


@pytest.mark.parametrize("ready", ["[1]", '"x"', "null", '{"pid": 1e400, "fingerprint": "f"}',
                                   '{"pid": true, "fingerprint": "f"}', '{"pid": 0, "fingerprint": "f"}',
                                   '{"pid": -1, "fingerprint": "f"}', '{"pid": 99999999999, "fingerprint": "f"}',
                                   '{"fingerprint": "f"}'])
def test_a_damaged_ready_file_means_no_server(tmp_path: Path, ready: str) -> None:
    service_dir(tmp_path).mkdir(parents=True)
    (service_dir(tmp_path) / READY_NAME).write_text(ready)
    results, why = search_via_service(tmp_path, "f", [Query("q1", "law", "supported")], 10)
    assert results is None and "is damaged (no process id)" in why, why


def test_a_ready_file_that_is_not_json_means_no_server(tmp_path: Path) -> None:
    service_dir(tmp_path).mkdir(parents=True)
    (service_dir(tmp_path) / READY_NAME).write_text('{"pid": ' + "9" * 400 + ', "fingerprint": "f"}')
    results, why = search_via_service(tmp_path, "f", [Query("q1", "law", "supported")], 10)
    assert results is None and "no usable answer" in why and "too large" in why, why


@pytest.mark.parametrize("reply", [
    {"results": "x"}, {"results": [1]}, {"results": [{"query_id": 5, "results": []}]},
    {"results": [{"query_id": "q", "results": [{"doc_id": ["d"], "score": 1.0}]}]},
    {"results": [{"query_id": "q", "results": [{"doc_id": "d", "score": "1"}]}]},
    {"results": [{"query_id": "q", "results": [{"doc_id": "d", "score": float("nan")}]}]},
    {"results": [{"query_id": "q", "results": [{"doc_id": "d", "score": True}]}]},
    {"results": [{"query_id": "q", "results": {"doc_id": "d"}}]},
])
def test_a_reply_of_another_shape_is_refused(reply: dict) -> None:
    with pytest.raises(TypeError):
        decode_results(reply)


def test_a_well_formed_reply_is_read() -> None:
    (line,) = decode_results({"results": [{"query_id": "q", "results": [{"doc_id": "d", "score": 2}]}]})
    assert line.query_id == "q" and [(d.doc_id, d.score) for d in line.results] == [("d", 2.0)]
