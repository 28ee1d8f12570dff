"""Proposition memory votes and links; the linear and LambdaMART rankers learn, save and refuse foreign features."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citator.errors import ConfigError
from citator.stance.learn.ranker_fit import LambdaMartSettings, fit_lambdamart, fit_linear_ranker
from citator.stance.retrieve.memory import MemoryEntry, PropositionMemory, citation_counts, memory_signals
from citator.stance.retrieve.ranker import LinearRanker, TreeRanker, candidate_features, doc_years, load_ranker


def unit(*rows: list[float]) -> np.ndarray:
    a = np.array(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


ENTRIES = [
    MemoryEntry("p1", "supported", "old rule", ("1970.1",), ("Old v. Rule",)),
    MemoryEntry("p2", "refuted", "new rule", ("1990.2",), ("New v. Rule",)),
    MemoryEntry("p3", "supported", "other", ("2000.3",), ("Other v. Case",)),
]
VECTORS = unit([1, 0, 0], [0.9, 0.1, 0], [0, 0, 1])


def test_link_by_id_then_by_unique_title() -> None:
    memory = PropositionMemory(ENTRIES, VECTORS)
    rows, cols = memory.link(["1970.1", "x-renamed", "2000.3"], ["Old v. Rule", "NEW v. RULE", "Other v. Case"])
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(0, 0), (1, 1), (2, 2)]
    rows, _ = memory.link(["a", "b"], ["New v. Rule", "New v. Rule"])  # ambiguous title: no link
    assert rows.tolist() == []
    # A document the training corpus lacked has no title: it never links to the one untitled document here.
    gone = PropositionMemory([MemoryEntry("p9", "supported", "x", ("gone",), ("",))], VECTORS[:1])
    assert gone.link(["d1", "d2"], ["Some v. Case", ""])[0].tolist() == []
    assert gone.link(["d1"], ["  --  "])[0].tolist() == []  # nothing left of it once punctuation is dropped


def test_memory_signals_stance_and_exclusion() -> None:
    memory = PropositionMemory(ENTRIES, VECTORS)
    links = memory.link(["1970.1", "1990.2", "2000.3"], ["", "", ""])
    q = unit([1, 0.05, 0])
    out = memory_signals(q, ["refuted"], memory, links, 3)
    assert out["memory_max"][0, 0] > out["memory_max"][0, 1] > out["memory_max"][0, 2]
    # Same-stance: a refuted query only hears refuting propositions.
    assert out["memory_same"][0, 0] == -1.0 and out["memory_same"][0, 1] > 0.9
    # The vote is a softmax over the nearest propositions: it follows similarity, and the far one gets nothing.
    assert out["memory_vote"][0].sum() == pytest.approx(1.0, abs=1e-5)
    assert out["memory_vote"][0, 0] > out["memory_vote"][0, 1] > 0.4 and out["memory_vote"][0, 2] < 1e-6
    # Document-side expansion: each document is the centroid of the propositions citing it (here one each).
    assert out["memory_centroid"][0] == pytest.approx((q @ VECTORS.T)[0], abs=1e-5)
    # An `all` query hears every stance.
    assert np.array_equal(memory_signals(q, ["all"], memory, links, 3)["memory_same"], out["memory_max"])
    # Its own proposition cannot vote for it, in any signal.
    hidden = memory_signals(q, ["refuted"], memory, links, 3, exclude=["p1"])
    assert hidden["memory_max"][0, 0] == -1.0
    hidden = memory_signals(q, ["refuted"], memory, links, 3, exclude=["p2"])
    assert hidden["memory_max"][0, 1] == hidden["memory_same"][0, 1] == -1.0
    assert hidden["memory_vote"][0, 1] < 1e-6 and hidden["memory_vote"][0, 0] == pytest.approx(1.0, abs=1e-5)


def test_the_vote_breaks_ties_at_the_last_neighbour_by_entry_order() -> None:
    """Entries as similar to the query as the k-th nearest one: the first of them votes, whatever the arrangement
    (argpartition alone picks among them by where its kernel happens to leave them)."""
    rng = np.random.default_rng(0)
    k, n = 5, 12
    for _ in range(50):
        sims = rng.permutation(np.linspace(0.1, 0.9, n)).astype(np.float32)
        order = np.argsort(-sims, kind="stable")
        tied = order[k - 1: k + 2]
        sims[tied] = sims[order[k - 1]]  # three entries tie at the k-th place: only the first of them may vote
        # Vectors with exactly these similarities to the query e0.
        vectors = np.zeros((n, 2), dtype=np.float32)
        vectors[:, 0], vectors[:, 1] = sims, np.sqrt(1 - sims.astype(np.float64) ** 2)
        entries = [MemoryEntry(f"p{j}", "supported", "t", (f"d{j}",), ("",)) for j in range(n)]
        memory = PropositionMemory(entries, vectors)
        links = memory.link([f"d{j}" for j in range(n)], [""] * n)
        vote = memory_signals(unit([1, 0]), ["supported"], memory, links, n, neighbours=k)["memory_vote"][0]
        voters = set(np.flatnonzero(vote > 0).tolist())
        assert voters == set(order[: k - 1].tolist()) | {int(tied.min())}


def test_document_side_expansion_is_the_centroid_of_every_citing_proposition() -> None:
    entries = [*ENTRIES, MemoryEntry("p4", "refuted", "another wording", ("1970.1",), ("Old v. Rule",))]
    memory = PropositionMemory(entries, np.vstack([VECTORS, unit([0, 1, 0])]))
    links = memory.link(["1970.1", "1990.2", "2000.3"], ["", "", ""])
    q = unit([1, 0.05, 0])
    out = memory_signals(q, ["supported"], memory, links, 3)
    assert out["memory_centroid"][0, 0] == pytest.approx(float(q[0] @ unit([1, 1, 0])[0]), abs=1e-5)
    assert out["memory_centroid"][0, 1:] == pytest.approx((q @ VECTORS.T)[0, 1:], abs=1e-5)
    # Max takes the closer citing proposition; same-stance only the supporting one (p1), not the refuting p4.
    assert out["memory_max"][0, 0] == pytest.approx(float(q[0] @ VECTORS[0]), abs=1e-5)
    assert out["memory_same"][0, 0] == pytest.approx(float(q[0] @ VECTORS[0]), abs=1e-5)
    refuted = memory_signals(q, ["refuted"], memory, links, 3)
    assert refuted["memory_same"][0, 0] == pytest.approx(float(q[0, 1]), abs=1e-5)  # p4 = [0, 1, 0]


def test_memory_round_trip(tmp_path: Path) -> None:
    PropositionMemory(ENTRIES, VECTORS).save(tmp_path / "m")
    loaded = PropositionMemory.load(tmp_path / "m")
    assert loaded.entries == ENTRIES and np.allclose(loaded.vectors, VECTORS, atol=1e-3)
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["memory.jsonl", "memory_vectors.npy"]  # no temp


@pytest.mark.parametrize("line, field", [
    ('{"proposition_id": "p1", "stance": "supported", "text": "t", "doc_titles": []}', "doc_ids"),
    ('{"proposition_id": "p1", "stance": "maybe", "text": "t", "doc_ids": [], "doc_titles": []}', "stance"),
    ('{"proposition_id": "p1", "stance": "all", "text": "t", "doc_ids": ["a"], "doc_titles": []}', "doc_titles"),
    ('{"stance": "all", "text": "t", "doc_ids": [], "doc_titles": []}', "proposition_id"),
])
def test_memory_reader_names_file_line_and_field(tmp_path: Path, line: str, field: str) -> None:
    from citator.errors import ArtifactError

    PropositionMemory(ENTRIES, VECTORS).save(tmp_path)
    lines = (tmp_path / "memory.jsonl").read_text().splitlines()
    (tmp_path / "memory.jsonl").write_text("\n".join([lines[0], line, lines[2]]) + "\n")
    with pytest.raises(ArtifactError, match=f'memory.jsonl line 2 field "{field}"'):
        PropositionMemory.load(tmp_path)


def test_memory_reader_refuses_vectors_that_do_not_match_the_entries(tmp_path: Path) -> None:
    from citator.errors import ArtifactError

    PropositionMemory(ENTRIES, VECTORS).save(tmp_path)
    np.save(tmp_path / "memory_vectors.npy", VECTORS[:2])
    with pytest.raises(ArtifactError, match="vectors for the 3 entries"):
        PropositionMemory.load(tmp_path)
    (tmp_path / "memory_vectors.npy").write_bytes(b"")  # what a crash in a non-atomic write could leave
    with pytest.raises(ArtifactError, match="memory_vectors.npy: unreadable"):
        PropositionMemory.load(tmp_path)


def test_doc_years() -> None:
    years = doc_years(["1971.70-18", "1789_1850.10us87", "scifact-12", "NRS 1.010"])
    assert years[0] == 1971 and years[1] == 1789 and np.isnan(years[2]) and np.isnan(years[3])


def test_ranker_learns_the_informative_feature_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    nq, nc = 60, 20
    good = rng.random((nq, nc)).astype(np.float32)
    noise = rng.random((nq, nc)).astype(np.float32)
    y = (good == good.max(axis=1, keepdims=True)).astype(np.float32)
    x = np.stack([good, noise], axis=-1)
    ranker = fit_linear_ranker(["good", "noise"], x, y)
    assert ranker.weights[0] > 0 and abs(ranker.weights[1]) < ranker.weights[0] / 3
    top = np.argmax(ranker.score(["good", "noise"], x), axis=1)
    assert (y[np.arange(nq), top] == 1).mean() > 0.95
    ranker.save(tmp_path / "r.json")
    assert LinearRanker.load(tmp_path / "r.json") == ranker
    # Features are taken by name: another order, or extra features, give the same scores; a missing one is refused.
    swapped = ranker.score(["noise", "extra", "good"], np.stack([noise, good * 0, good], axis=-1))
    assert np.allclose(swapped, ranker.score(["good", "noise"], x))
    with pytest.raises(ValueError, match="feature mismatch"):
        ranker.score(["noise"], x[..., 1:])


def test_lambdamart_learns_what_a_linear_ranker_cannot_and_round_trips(tmp_path: Path) -> None:
    # The relevant candidate is the one whose `mid` is nearest 0.5: no linear weight can express that.
    rng = np.random.default_rng(1)
    nq, nc = 400, 20
    mid = rng.random((nq, nc)).astype(np.float32)
    noise = rng.random((nq, nc)).astype(np.float32)
    y = (np.abs(mid - 0.5) == np.abs(mid - 0.5).min(axis=1, keepdims=True)).astype(np.float32)
    x = np.stack([mid, noise], axis=-1)
    fit, held = slice(0, 300), slice(300, None)

    def hit_rate(ranker) -> float:  # type: ignore[no-untyped-def]
        top = np.argmax(ranker.score(["mid", "noise"], x[held]), axis=1)
        return float(y[held][np.arange(len(top)), top].mean())

    trees = fit_lambdamart(["mid", "noise"], x[fit], y[fit], LambdaMartSettings(trees=100, min_leaf=20))
    assert hit_rate(trees) > 0.6 and hit_rate(fit_linear_ranker(["mid", "noise"], x[fit], y[fit])) < 0.3
    trees.save(tmp_path / "r.json")
    loaded = load_ranker(tmp_path / "r.json")
    assert isinstance(loaded, TreeRanker) and loaded == trees
    assert np.array_equal(loaded.score(["mid", "noise"], x), trees.score(["mid", "noise"], x))
    # By name, as the linear ranker: another column order gives the same scores; a missing feature is refused.
    assert np.array_equal(trees.score(["noise", "mid"], x[..., ::-1]), trees.score(["mid", "noise"], x))
    with pytest.raises(ValueError, match="feature mismatch"):
        trees.score(["noise"], x[..., 1:])
    # Deterministic: the same data fit twice give the same model.
    assert fit_lambdamart(["mid", "noise"], x[fit], y[fit], LambdaMartSettings(trees=100, min_leaf=20)).model == trees.model


def test_load_ranker_reads_both_kinds_and_names_the_bad_field(tmp_path: Path) -> None:
    linear = LinearRanker(("a",), (0.0,), (1.0,), (2.0,), 0.5)
    linear.save(tmp_path / "linear.json")
    assert load_ranker(tmp_path / "linear.json") == linear
    (tmp_path / "old.json").write_text('{"features": ["a"], "mean": [0], "scale": [1], "weights": [2], "bias": 0.5}')
    assert load_ranker(tmp_path / "old.json") == linear  # written before rankers had a kind
    (tmp_path / "odd.json").write_text('{"kind": "forest", "features": []}')
    with pytest.raises(ConfigError, match='odd.json: field "kind": unknown ranker kind'):
        load_ranker(tmp_path / "odd.json")
    (tmp_path / "cut.json").write_text('{"kind": "lambdamart", "features": ["a"]')
    with pytest.raises(ConfigError, match="cut.json: not a ranker file"):
        load_ranker(tmp_path / "cut.json")


def test_candidate_features_year_is_relative_and_stance_gated() -> None:
    signals = {"dense": np.array([[0.9, 0.8, 0.1]], dtype=np.float32)}
    years = np.array([1960.0, 2010.0, np.nan], dtype=np.float32)
    cand = np.array([[0, 1, 2]])
    names, x = candidate_features(signals, ["refuted"], years, cand)
    assert names == ["dense:norm", "dense:raw", "year_rel*supported", "year_rel*refuted"]
    assert x[0, :, 2].tolist() == [0.0, 0.0, 0.0]  # supported column is off for a refuted query
    assert x[0, 0, 3] < 0 < x[0, 1, 3] and x[0, 2, 3] == 0.0  # unknown year: neutral


def test_candidate_year_is_centred_on_a_fixed_depth_so_pulling_more_candidates_does_not_change_it() -> None:
    from citator.stance.retrieve.ranker import YEAR_CENTRE

    rng = np.random.default_rng(0)
    n = 2 * YEAR_CENTRE
    signals = {"dense": np.sort(rng.random((1, n)).astype(np.float32))[:, ::-1].copy()}
    years = rng.integers(1800, 2020, n).astype(np.float32)
    cand = np.arange(n)[None, :]
    names, deep = candidate_features(signals, ["supported"], years, cand)
    _, shallow = candidate_features(signals, ["supported"], years, cand[:, :YEAR_CENTRE])
    col = names.index("year_rel*supported")
    assert np.allclose(deep[0, :YEAR_CENTRE, col], shallow[0, :, col])
    assert deep[0, :YEAR_CENTRE, col].mean() == pytest.approx(0.0, abs=1e-5)


def test_citation_prior_counts_and_follows_the_query_stance() -> None:
    entries = ENTRIES + [MemoryEntry("p4", "refuted", "again", ("1970.1",), ("Old v. Rule",))]
    memory = PropositionMemory(entries, unit([1, 0, 0], [0.9, 0.1, 0], [0, 0, 1], [0, 1, 0]))
    counts = citation_counts(memory, memory.link(["1970.1", "1990.2", "2000.3"], ["", "", ""]), 3)
    assert counts["all"].tolist() == [2, 1, 1]
    assert counts["supported"].tolist() == [1, 0, 1] and counts["refuted"].tolist() == [1, 1, 0]
    assert counts["paired_supported"].tolist() == [0, 0, 0]  # no proposition here has both stances
    paired = PropositionMemory(entries + [MemoryEntry("p3", "refuted", "other", ("1990.2",), ("",))], memory.vectors[:1]
                               .repeat(5, axis=0))
    both = citation_counts(paired, paired.link(["1970.1", "1990.2", "2000.3"], ["", "", ""]), 3)
    assert both["paired_supported"].tolist() == [0, 0, 1] and both["paired_refuted"].tolist() == [0, 1, 0]
    signals = {"bm25": np.zeros((2, 3), dtype=np.float32)}
    names, x = candidate_features(signals, ["refuted", "all"], np.full(3, np.nan), np.array([[0, 1, 2]] * 2),
                                  citations=counts)
    own = names.index("citations:own_stance")
    assert x[0, :, own] == pytest.approx(np.log1p([1, 1, 0]))
    assert {"citations:paired_own", "citations:paired_other"} <= set(names)
    assert x[1, :, own].tolist() == [0.0, 0.0, 0.0]  # an `all` query has no stance to prefer
    assert x[1, :, names.index("citations:log")] == pytest.approx(np.log1p([2, 1, 1]))


def test_lightgbm_is_imported_without_scikit_learn_and_leaves_it_importable() -> None:
    import subprocess
    import sys

    code = ("import sys; from citator.stance.retrieve.ranker import import_lightgbm; lgb = import_lightgbm(); "
            "assert 'sklearn' not in sys.modules and hasattr(lgb, 'Booster'); "
            "import sklearn; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_late_interaction_features_are_raw_and_normalised_among_the_scored_candidates() -> None:
    signals = {"bm25": np.array([[3.0, 2.0, 1.0, 0.5]], dtype=np.float32)}
    late = np.array([[0.8, 0.6, 0.7, np.nan]], dtype=np.float32)  # the last candidate was not scored
    names, x = candidate_features(signals, ["all"], np.full(4, np.nan), np.array([[0, 1, 2, 3]]), late=late)
    assert names[:3] == ["bm25:norm", "maxsim:norm", "maxsim:raw"]
    assert x[0, :, 1][:3] == pytest.approx([1.0, 0.0, 0.5]) and np.isnan(x[0, 3, 1])
    assert x[0, :3, 2] == pytest.approx([0.8, 0.6, 0.7]) and np.isnan(x[0, 3, 2])


def test_linear_ranker_counts_a_missing_feature_as_its_mean() -> None:
    rng = np.random.default_rng(4)
    nq, nc = 80, 10
    good = rng.random((nq, nc)).astype(np.float32)
    y = (good == good.max(axis=1, keepdims=True)).astype(np.float32)
    partial = np.where(np.arange(nc) < 5, good, np.nan).astype(np.float32)  # known for the first five only
    x = np.stack([good, partial], axis=-1)
    ranker = fit_linear_ranker(["good", "partial"], x, y)
    assert np.isfinite(ranker.weights).all() and np.isfinite(ranker.mean).all()
    assert ranker.mean[1] == pytest.approx(float(np.nanmean(partial)), rel=1e-5)
    scores = ranker.score(["good", "partial"], x)
    assert np.isfinite(scores).all() and (y[np.arange(nq), np.argmax(scores, axis=1)] == 1).mean() > 0.8
    # At search time too, a missing value scores exactly as its training mean would.
    filled = np.stack([good, np.where(np.isnan(partial), np.float32(ranker.mean[1]), partial)], axis=-1)
    assert np.allclose(scores, ranker.score(["good", "partial"], filled), atol=1e-5)
