"""The names under which a PassageStore keeps base passages, and its pruning of those made under other rules."""

from __future__ import annotations

from pathlib import Path

from citator.stance.retrieve.passage_store import PassageStore


def test_pruning_removes_only_this_corpus_and_encoders_caches_under_other_rules(tmp_path: Path) -> None:
    corpus, encoder, other = "c" * 64, "e" * 64, "f" * 64

    def make(vectors: Path, tokens: Path) -> None:
        vectors.write_bytes(b"npy")
        tokens.mkdir()
        (tokens / "part").write_bytes(b"tokens")

    store = PassageStore(tmp_path)
    current = store.files(corpus, encoder)
    stale = (tmp_path / f"base-passages-{corpus[:12]}-{encoder[:12]}-000000000000.npy",
             tmp_path / f"base-passages-{corpus[:12]}-{encoder[:12]}-000000000000-tokens")
    other_encoder = (tmp_path / f"base-passages-{corpus[:12]}-{other[:12]}-000000000000.npy",
                     tmp_path / f"base-passages-{corpus[:12]}-{other[:12]}-000000000000-tokens")
    # Named before the rules were part of the name (53fab41).
    legacy = (tmp_path / f"base-passages-{corpus[:12]}-{encoder[:12]}.npy",
              tmp_path / f"base-passages-{corpus[:12]}-{encoder[:12]}-tokens")
    for pair in (current, stale, other_encoder, legacy):
        make(*pair)
    unknown = tmp_path / f"base-passages-{corpus[:12]}-{encoder[:12]}-notes.txt"  # not a cache: left alone
    unknown.write_text("mine")
    assert store.prune(corpus, encoder) == sorted(stale + legacy)
    assert all(p.exists() for p in current + other_encoder + (unknown,))
    assert not any(p.exists() for p in stale + legacy)
    assert store.prune(corpus, encoder) == []
