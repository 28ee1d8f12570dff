"""End-to-end runs on the NRS fixture with a counting in-process chat provider: contracts, controls, determinism."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from citator.statutes.pool import POOL_KEYS, POOL_SIZE
from citator.statutes.receipts import Budget, preflight_tokens
from citator.statutes.run import RunConfig, run_statutes
from citator.data.hashing import sha256_captioned, sha256_text
from citator.errors import ReceiptError
from citator.statutes.providers.base import ChatProvider, Exchange


class CountingProvider(ChatProvider):
    """A deterministic toy grader (ch. 0 captions get 3, others 1) that counts every call."""

    name = "counting"

    def __init__(self, bad_every: int = 0) -> None:
        self.model = "counting-1"
        self.calls: list[Mapping[str, Any]] = []
        self.bad_every = bad_every

    def describe(self) -> dict[str, Any]:
        return {"provider": self.name, "model": self.model, "version": self.model}

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        self.calls.append(payload)
        user = payload["messages"][-1]["content"]
        if self.bad_every and len(self.calls) % self.bad_every == 0:
            content = "I think C1 is relevant."
        else:
            # Grade 3 for captions in chapter 0, else 1: a deterministic, content-dependent grader.
            pairs = re.findall(r"^\[(C\d+)\] NRS (\S+)", user, flags=re.MULTILINE)
            content = json.dumps({label: (3 if num.startswith("0.") else 1) for label, num in pairs})
        return Exchange(200, {"model": self.model, "choices": [{"index": 0, "message": {"role": "assistant",
                        "content": content}, "logprobs": None}], "usage": {"prompt_tokens": 50, "completion_tokens": 9}})


def _run(tmp_path: Path, nrs_sections: Path, nrs_suite: Path, provider: ChatProvider | None, name: str = "run",
         **kw: Any) -> tuple[dict, Path]:
    out = tmp_path / name
    return run_statutes(RunConfig(nrs_sections, nrs_suite, out, **kw), provider), out


def test_keyword_only_run_writes_the_contract(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    metrics, out = _run(tmp_path, nrs_sections, nrs_suite, None)
    assert metrics["provider_requests"] == 0 and metrics["reranked_by_split"] is None
    row = metrics["by_split"]["dev"]["ranking"]
    assert set(row) >= {"queries", "hit@1", "hit@5", "hit@10", "rr", "coverage"} and row["queries"] == 6
    assert isinstance(row["queries"], int) and all(isinstance(row[k], float) for k in row if k != "queries")
    assert metrics["by_split"]["dev"]["exact_citation"] == {
        "queries": 3, "hit@1": 1.0, "hit@5": 1.0, "hit@10": 1.0, "rr": 1.0, "coverage": 1.0}
    lines = [json.loads(x) for x in (out / "pool.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6 * POOL_SIZE
    for line in lines:
        assert tuple(line) == POOL_KEYS
        # Each text is bound together with the heading or caption shown above it.
        assert line["section_sha256"] == sha256_captioned(line["heading"], line["section_text"])
        assert line["passage_sha256"] == sha256_captioned(line["caption"], line["passage"])
        assert len(line["passage"].encode()) <= 1200 and line["passage"] in line["section_text"]
    assert sorted({x["keyword_rank"] for x in lines}) == list(range(1, POOL_SIZE + 1))
    for name in ("manifest.json", "metrics.json", "report.md", "report.html", "usage.json", "failures.jsonl",
                 "control_pools.jsonl"):
        assert (out / name).is_file(), name
    outside = metrics["controls"]["outside_corpus"]
    assert [o["query_id"] for o in outside] == ["nrs-out-01"] and len(outside[0]["keyword_top"]) == 5


def test_exact_citation_controls_make_no_provider_calls(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    provider = CountingProvider()
    metrics, _ = _run(tmp_path, nrs_sections, nrs_suite, provider)
    citation_texts = {"NRS 432B.220", "432B.220", "NRS 0.025"}
    asked = {re.search(r"^Question: (.*)$", c["messages"][-1]["content"], re.MULTILINE).group(1) for c in provider.calls}
    assert not asked & citation_texts
    # 6 ranking + 1 outside-corpus query, 30 candidates each, 4 per request.
    assert len(provider.calls) == 7 * 8 == metrics["provider_requests"]
    assert all(c["provider_calls"] == 0 for c in metrics["controls"]["exact_citation"])
    assert metrics["grading"]["graded"] == 7 * 30 and metrics["grading"]["sources"] == {"parsed": 210}
    assert set(metrics["paired"]["dev"]) == {"hit@1", "hit@5", "hit@10", "rr"}
    # The statutory-construction queries target ch. 0: the toy grader puts them first.
    per = {q["query_id"]: q for q in metrics["per_query"]}
    assert per["nrs-dev-11"]["reranked"]["hit@5"] == 1.0


def test_same_inputs_and_receipts_give_identical_metrics(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    _, out = _run(tmp_path, nrs_sections, nrs_suite, CountingProvider(bad_every=5))
    first = (out / "metrics.json").read_bytes()
    again = CountingProvider()
    _, out2 = _run(tmp_path, nrs_sections, nrs_suite, again)
    assert out2 == out and again.calls == []  # everything came from receipts
    assert (out / "metrics.json").read_bytes() == first
    failures = [json.loads(x) for x in (out / "failures.jsonl").read_text().splitlines()]
    assert failures and all(f["stage"] == "invalid_response" for f in failures)
    receipt = json.loads((out / "receipts" / f"{failures[0]['request_hash']}.json").read_text())
    assert receipt["response"]["choices"][0]["message"]["content"] == "I think C1 is relevant."  # kept raw


def test_resuming_with_other_inputs_is_refused(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    _run(tmp_path, nrs_sections, nrs_suite, None)
    with pytest.raises(ReceiptError, match="provider"):
        _run(tmp_path, nrs_sections, nrs_suite, CountingProvider())


def test_a_second_run_in_the_same_directory_is_refused_while_the_first_holds_it(
        tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    # Two runs at once each spent the budget and interleaved their receipts: the second is refused at once, and
    # the directory serves the next run once the first has ended.
    from citator.data.atomic import run_directory
    from citator.errors import OutputError

    provider = CountingProvider()
    with run_directory(tmp_path / "run"):
        with pytest.raises(OutputError, match="another citator run is writing this run directory"):
            _run(tmp_path, nrs_sections, nrs_suite, provider, budget=Budget(max_requests=3))
    assert provider.calls == []
    metrics, out = _run(tmp_path, nrs_sections, nrs_suite, provider, budget=Budget(max_requests=3))
    assert (out / "manifest.json").is_file()


@pytest.mark.parametrize("fingerprint", [[1], "x", None, 5])
def test_a_run_manifest_without_a_fingerprint_is_refused(tmp_path: Path, nrs_sections: Path, nrs_suite: Path,
                                                         fingerprint: object) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps({"fingerprint": fingerprint}))
    with pytest.raises(ReceiptError, match="no fingerprint of the run's inputs"):
        _run(tmp_path, nrs_sections, nrs_suite, None)


def test_request_budget_stops_sending(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    provider = CountingProvider()
    metrics, _ = _run(tmp_path, nrs_sections, nrs_suite, provider, budget=Budget(max_requests=5))
    assert len(provider.calls) == 5 and metrics["provider_requests"] == 5
    assert metrics["failures"] == {"budget": 7 * 8 - 5}


def test_token_budget_refuses_by_preflight(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    provider = CountingProvider()
    metrics, _ = _run(tmp_path, nrs_sections, nrs_suite, provider, budget=Budget(max_input_tokens=3000))
    # Only requests whose byte bound fits what is left are sent; the multi-kilobyte ones are refused unsent.
    assert all(preflight_tokens(c) <= 3000 for c in provider.calls)
    assert 0 < len(provider.calls) < 56 and metrics["failures"] == {"budget": 56 - len(provider.calls)}
    assert metrics["usage"]["input_tokens_charged"] <= 3000


def test_human_labels_calibration_with_stale_and_unknown(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    _, out = _run(tmp_path, nrs_sections, nrs_suite, CountingProvider())
    pool = [json.loads(x) for x in (out / "pool.jsonl").read_text().splitlines()]
    labels = []
    for i, item in enumerate(pool):
        if item["query_id"] != "nrs-dev-11":
            continue
        grade = 3 if item["doc_id"] == "NRS 0.020" else (1 if i % 2 else 0)
        labels.append({"query_id": item["query_id"], "doc_id": item["doc_id"], "reviewer": "ann",
                       "section_grade": grade, "passage_grade": "unknown" if i % 7 == 0 else grade,
                       "query_sha256": sha256_text(item["query"]), "section_sha256": item["section_sha256"],
                       "passage_sha256": item["passage_sha256"], "complete": True})
    labels.append({**labels[0], "passage_sha256": "0" * 64})  # stale: another passage text
    labels.append({**labels[1], "reviewer": "bob", "complete": False})
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in labels))
    metrics, out = _run(tmp_path, nrs_sections, nrs_suite, CountingProvider(), labels=path)
    human = metrics["human_labels"]
    assert human["labels_used"] == 30 and human["labels_stale"] == 1 and human["labels_incomplete"] == 1
    section = human["section"]["dev"]
    assert section["keyword"]["ndcg@5_queries"] == 1 and section["reranked"]["p@5_queries"] == 1
    cal = human["calibration_passage"]["dev"]
    assert cal["n"] == 30 - sum(1 for lab in labels[:30] if lab["passage_grade"] == "unknown")
    assert len(cal["bins"]) == 5
    assert (out / "reliability.png").is_file()


def test_cli_runs_and_refuses_raised_budgets(tmp_path: Path, nrs_sections: Path, nrs_suite: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from citator.cli.main import main

    base = ["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(nrs_suite), "--provider", "none"]
    assert main([*base, "--out", str(tmp_path / "cli")]) == 0
    assert "dev      ranking" in capsys.readouterr().out
    assert json.loads((tmp_path / "cli" / "metrics.json").read_text())["provider_requests"] == 0
    assert main([*base, "--out", str(tmp_path / "x"), "--max-requests", "273"]) == 2
    assert "budgets may only be lowered" in capsys.readouterr().err


def test_the_review_app_reads_this_pool(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    from citator.statutes.review.pool import keyword_order, read_pool

    _, out = _run(tmp_path, nrs_sections, nrs_suite, None)
    entries = read_pool(out)
    assert len(entries) == 6 * POOL_SIZE
    metrics = json.loads((out / "metrics.json").read_text())
    per = {q["query_id"]: q for q in metrics["per_query"]}
    for qid, order in keyword_order(entries).items():
        assert order[:10] == per[qid]["keyword_top10"]


class CrashingProvider(CountingProvider):
    """Raises on its third call, as a local backend might (out of memory, a bug)."""

    def send(self, payload: Mapping[str, Any]) -> Exchange:
        if len(self.calls) == 2:
            self.calls.append(payload)
            raise RuntimeError("backend fell over")
        return super().send(payload)


def test_a_backend_crash_fails_only_its_request(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    provider = CrashingProvider()
    metrics, out = _run(tmp_path, nrs_sections, nrs_suite, provider)
    assert len(provider.calls) == 56 and metrics["failures"] == {"request": 1}
    failure = json.loads((out / "failures.jsonl").read_text().splitlines()[0])
    assert failure["reason"] == "RuntimeError: backend fell over"
    again = CountingProvider()
    _run(tmp_path, nrs_sections, nrs_suite, again)
    assert again.calls == []  # no automatic retry on resume


def test_labels_exported_by_the_review_store_drive_calibration(tmp_path: Path, nrs_sections: Path,
                                                               nrs_suite: Path) -> None:
    from citator.statutes.review.exchange import export_labels
    from citator.statutes.review.pool import read_pool
    from citator.statutes.review.store import LabelStore

    _, out = _run(tmp_path, nrs_sections, nrs_suite, CountingProvider())
    with LabelStore(tmp_path / "labels.sqlite") as store:
        store.load_items(e.item for e in read_pool(out))
        store.add_reviewer("ann")
        (ann,) = store.reviewers()
        for item in store.items():
            if item.query_id == "nrs-dev-11":
                grade = 3 if item.doc_id == "NRS 0.020" else 0
                store.save_label(ann, item.key, grade, "unknown" if item.doc_id == "NRS 0.010" else grade, "note",
                                 item.hashes, True)
        export_labels(store, tmp_path / "export.jsonl")
    metrics, _ = _run(tmp_path, nrs_sections, nrs_suite, CountingProvider(), labels=tmp_path / "export.jsonl")
    human = metrics["human_labels"]
    assert human["labels_used"] == 30 and human["labels_stale"] == 0
    assert human["section"]["dev"]["keyword"]["ndcg@5_queries"] == 1
    assert human["calibration_section"]["dev"]["n"] == 30 and human["calibration_passage"]["dev"]["n"] == 29


def test_cli_reads_the_label_store_directly(tmp_path: Path, nrs_sections: Path, nrs_suite: Path) -> None:
    from citator.cli.main import main
    from citator.statutes.review.pool import read_pool
    from citator.statutes.review.store import LabelStore

    base = ["bench", "statutes", "--corpus", str(nrs_sections), "--suite", str(nrs_suite), "--provider", "none",
            "--out", str(tmp_path / "run")]
    assert main(base) == 0
    with LabelStore(tmp_path / "store.sqlite") as store:
        store.load_items(e.item for e in read_pool(tmp_path / "run"))
        store.add_reviewer("ann")
        (ann,) = store.reviewers()
        item = store.items()[0]
        store.save_label(ann, item.key, 2, 2, "private note", item.hashes, True)
    assert main([*base, "--label-store", str(tmp_path / "store.sqlite")]) == 0
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["human_labels"]["labels_used"] == 1
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert b"private note" not in path.read_bytes(), path


def test_a_label_goes_stale_when_only_the_heading_it_was_shown_changes(tmp_path: Path, nrs_sections: Path,
                                                                        nrs_suite: Path) -> None:
    _, out = _run(tmp_path, nrs_sections, nrs_suite, None)
    items = [json.loads(x) for x in (out / "pool.jsonl").read_text().splitlines()]
    item = next(x for x in items if x["query_id"] == "nrs-dev-11" and x["doc_id"] == "NRS 0.020")
    label = {"query_id": item["query_id"], "doc_id": item["doc_id"], "reviewer": "ann", "section_grade": 3,
             "passage_grade": 3, "query_sha256": sha256_text(item["query"]), "section_sha256": item["section_sha256"],
             "passage_sha256": item["passage_sha256"], "complete": True}
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps(label) + "\n")
    metrics, _ = _run(tmp_path, nrs_sections, nrs_suite, None, name="same", labels=labels)
    assert (metrics["human_labels"]["labels_used"], metrics["human_labels"]["labels_stale"]) == (1, 0)
    # The same text under a heading that now says it was repealed: the grade was given for what no longer shows.
    sections = [json.loads(x) for x in nrs_sections.read_text(encoding="utf-8").splitlines()]
    changed = next(s for s in sections if s["doc_id"] == "NRS 0.020")
    changed["title"] = "Repealed."  # a section's heading is its title field
    edited = tmp_path / "sections.jsonl"
    edited.write_text("".join(json.dumps(s) + "\n" for s in sections), encoding="utf-8")
    metrics, out = _run(tmp_path, edited, nrs_suite, None, name="renamed", labels=labels)
    assert (metrics["human_labels"]["labels_used"], metrics["human_labels"]["labels_stale"]) == (0, 1)
    again = next(json.loads(x) for x in (out / "pool.jsonl").read_text().splitlines()
                 if json.loads(x)["doc_id"] == "NRS 0.020" and json.loads(x)["query_id"] == "nrs-dev-11")
    assert again["section_text"] == item["section_text"] and again["passage"] == item["passage"]
