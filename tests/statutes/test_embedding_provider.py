"""The embedding-similarity reranker with the default MiniLM: real, local, no provider requests."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.suites import write_suite

from citator.statutes.run import RunConfig, run_statutes
from citator.statutes.providers.embedding import EmbeddingProvider

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def provider(minilm_dir: Path) -> EmbeddingProvider:
    return EmbeddingProvider(minilm_dir)


def test_similarity_prefers_the_matching_text(provider: EmbeddingProvider) -> None:
    scores = provider.similarity("who must report child abuse",
                                 ["Teachers must report suspected child abuse within 24 hours.",
                                  "The severability of statutes."])
    assert scores[0] > scores[1] and all(-1.0 <= s <= 1.0 for s in scores)


def test_embedding_run_is_unmetered_and_reproducible(provider: EmbeddingProvider, tmp_path: Path,
                                                     nrs_sections: Path, nrs_suite: Path) -> None:
    suite = write_suite(tmp_path / "suite.jsonl", nrs_suite, ["nrs-dev-10", "nrs-dev-01", "nrs-exact-02"])
    config = RunConfig(nrs_sections, suite, tmp_path / "run")
    metrics = run_statutes(config, provider)
    assert metrics["provider_requests"] == 0 and metrics["grading"]["ungraded"] == 0
    assert metrics["reranked_by_split"]["dev"]["ranking"]["queries"] == 2
    assert metrics["paired"]["dev"]["hit@5"]["families"] == 2
    first = (tmp_path / "run" / "metrics.json").read_bytes()
    assert (tmp_path / "run" / "similarity.jsonl").is_file()
    run_statutes(config, provider)
    assert (tmp_path / "run" / "metrics.json").read_bytes() == first
