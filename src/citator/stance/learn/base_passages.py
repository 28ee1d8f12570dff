"""The frozen document side training fits against: the base encoder's passages of the corpus.

Kept in training's work folder by a `PassageStore` (stance/retrieve/passage_store.py), which a build with the model
reads too: the most costly part of training is paid once per corpus, encoder and passage rules.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citator.data.hashing import sha256_file
from citator.data.records import Document
from citator.engines.passages import PassageSpec, passage_layout
from citator.stance.retrieve.late_interaction import TokenStore
from citator.stance.retrieve.layout import open_folder
from citator.stance.retrieve.model import BaseEncoder
from citator.stance.retrieve.passage_store import Passages, PassageStore, index_passages


@dataclass(frozen=True)
class BasePassages:
    """The base encoder, and its passage vectors and document tokens of the corpus (`starts`: each document's first
    passage)."""

    encoder: BaseEncoder
    passages: Passages
    starts: np.ndarray
    corpus_sha256: str

    @property
    def vectors(self) -> np.ndarray:
        return self.passages.vectors


def base_passages(corpus: Path, docs: Sequence[Document], encoder_path: Path, work: Path, base_index: Path | None,
                  progress: bool) -> BasePassages:
    """The base encoder's passages of the corpus: from the store in the work folder, else from `base_index` (an
    index of the same corpus and encoder), else encoded; kept in the store either way, so that a build with the
    model need not encode either."""
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import load_encoder

    base = load_encoder(encoder_path)
    sha256 = model_fingerprint(encoder_path)  # the weights themselves, not the folder's name
    corpus_sha256 = sha256_file(corpus)
    passages, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    store = PassageStore(work)
    found = store.get(corpus_sha256, sha256)
    if found is None:
        # A base index is read only when the work folder keeps none of its own (it would be read for nothing).
        reused = index_passages(open_folder(base_index), corpus_sha256, sha256) if base_index else None
        vectors, tokens = ((reused.vectors, reused.tokens) if reused is not None and reused.tokens is not None
                           else TokenStore.encode(base, passages, starts, progress))
        found = store.put(corpus_sha256, sha256, vectors, tokens)
    for stale in store.prune(corpus_sha256, sha256):
        print(f"removed {stale.name} from {work} (base passages made under other rules)", file=sys.stderr)
    return BasePassages(BaseEncoder(str(Path(encoder_path).absolute()), base.model_id, sha256), found, starts,
                        corpus_sha256)
