"""The base passages `citator train` keeps in its work folder, and where a build or a retrain finds them again.

The base encoder's passage vectors and document tokens of a corpus are the most costly part of training and of a
build (an hour on CaseFacts on two cores), and they depend only on the corpus, the encoder and the passage rules:
training caches them under those three, and a build with its model, or a later training, takes them from there
or from an index of the same corpus instead of encoding again.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citator.data.atomic import save_npy_atomic
from citator.data.hashing import sha256_file
from citator.data.records import Document
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_dir import default_passages, passage_rules
from citator.stance.retrieve.index_files import load_array
from citator.stance.retrieve.late_interaction import TokenStore
from citator.stance.retrieve.manifest import read_manifest
from citator.stance.retrieve.model import BaseEncoder, StanceModel
from citator.engines.passages import PassageSpec, passage_layout

Passages = tuple[np.ndarray, TokenStore]


def work_dir(model_root: Path) -> Path:
    """Training's scratch folder beside the model it writes (fold encoders, caches): builds need nothing from it,
    and a copy of the model may lack it."""
    return model_root / "work"


def base_passage_cache(work: Path, corpus_sha256: str, encoder_sha256: str) -> tuple[Path, Path]:
    """Where `citator train` keeps the base encoder's passage vectors and document tokens of one corpus in its work
    folder (default passage spec, these rules): (vectors .npy, tokens folder)."""
    stem = f"{_passage_cache_prefix(corpus_sha256, encoder_sha256)}-{passage_rules()}"
    return work / f"{stem}.npy", work / f"{stem}-tokens"


def _passage_cache_prefix(corpus_sha256: str, encoder_sha256: str) -> str:
    """What every cache name of this corpus and encoder starts with, under any rules."""
    return f"base-passages-{corpus_sha256[:12]}-{encoder_sha256[:12]}"


def prune_passage_caches(work: Path, corpus_sha256: str, encoder_sha256: str) -> list[Path]:
    """Remove the cached base passages of this corpus and encoder made under other rules, or named before the rules
    were (they are never read again: each is some 200 MB on CaseFacts); the paths removed. Caches of other corpora
    or encoders are kept, and one that cannot be removed is left where it is."""
    prefix = _passage_cache_prefix(corpus_sha256, encoder_sha256)
    ours = re.compile(re.escape(prefix) + r"(-[0-9a-f]{12})?(\.npy|-tokens)")
    keep = {path.name for path in base_passage_cache(work, corpus_sha256, encoder_sha256)}
    removed = []
    for path in sorted(work.glob(f"{prefix}*")):
        if path.name in keep or not ours.fullmatch(path.name):
            continue
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed


def training_passage_files(work: Path, corpus_sha256: str, encoder_sha256: str) -> tuple[Path, Path] | None:
    """The files of base passages `citator train` cached in its work folder for this corpus and encoder
    (vectors .npy, tokens folder), if both are there."""
    vectors, tokens = base_passage_cache(work, corpus_sha256, encoder_sha256)
    return (vectors, tokens) if vectors.is_file() and TokenStore.present(tokens) else None


def training_passages(model: StanceModel, corpus_path: Path, encoder_sha256: str,
                      config: RetrievalConfig | None) -> Passages | None:
    """The base passage vectors and document tokens that the training of `model` computed for this very corpus and
    left in its work folder (a copy of the model without it has none): the same numbers a build would compute, so
    it need not encode the corpus again. None when absent, of another encoder than the build's (`encoder_sha256`)
    or of another passage spec (`config`; None: the model's, which is the default)."""
    if encoder_sha256 != model.base_encoder.sha256 or (config is not None and not default_passages(config)):
        return None
    files = training_passage_files(work_dir(model.root), sha256_file(corpus_path), encoder_sha256)
    if files is None:
        return None
    vectors, tokens = files
    try:
        found = np.load(vectors, allow_pickle=False), TokenStore.load(tokens)
    except (OSError, ValueError, EOFError) as exc:  # a damaged copy (cut short, say): encode instead
        print(f"warning: base passages in {vectors.parent} unreadable ({exc}); encoding the corpus", file=sys.stderr)
        return None
    print(f"base passages: reused from {vectors.parent} (citator train's, for this corpus and encoder)", file=sys.stderr)
    return found


def reusable_passages(index_dir: Path, corpus: Path, encoder_sha256: str) -> Passages | None:
    """The base passage vectors and document tokens of an existing index built from the same corpus, encoder and
    passage spec and rules (with a model whose ranker reads the tokens), if any: what `build_index` takes as
    `passage_vectors`/`passage_tokens`, since they do not depend on the model."""
    manifest = read_manifest(index_dir)
    same = (manifest.corpus_sha256 == sha256_file(corpus) and manifest.encoder_sha256 == encoder_sha256
            and default_passages(manifest.config) and manifest.passage_rules == passage_rules())
    data = index_dir / manifest.data_dir
    if not same or not TokenStore.present(data):
        return None
    vectors = load_array(manifest.path(index_dir, "dense.npy"), 2, "f", rows=manifest.n_passages)
    return vectors.astype(np.float32), TokenStore.load(data)


@dataclass(frozen=True)
class BasePassages:
    """The frozen document side training fits against: the base encoder, and its passage vectors and document
    tokens of the corpus (`starts`: each document's first passage)."""

    encoder: BaseEncoder
    vectors: np.ndarray
    tokens: TokenStore
    starts: np.ndarray
    corpus_sha256: str


def base_passages(corpus: Path, docs: Sequence[Document], encoder_path: Path, work: Path, base_index: Path | None,
                  progress: bool) -> BasePassages:
    """The base encoder's passages of the corpus: from this work folder's cache, else from `base_index` (an index
    of the same corpus and encoder), else encoded; cached in `work` either way, so that a build with the model need
    not encode either."""
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import load_encoder

    base = load_encoder(encoder_path)
    sha256 = model_fingerprint(encoder_path)  # the weights themselves, not the folder's name
    passages, starts = passage_layout([d.title for d in docs], [d.text for d in docs], PassageSpec())
    corpus_sha256 = sha256_file(corpus)
    cache, token_cache = base_passage_cache(work, corpus_sha256, sha256)
    # A base index is read only when this work folder has no cache of its own (it would be read for nothing).
    cached = training_passage_files(work, corpus_sha256, sha256)
    reusable = reusable_passages(base_index, corpus, sha256) if base_index and cached is None else None
    if cached is not None:
        vectors, tokens = np.load(cache), TokenStore.load(token_cache)
    else:
        vectors, tokens = reusable if reusable is not None else TokenStore.encode(base, passages, starts, progress)
        save_npy_atomic(cache, vectors)
        token_cache.mkdir(exist_ok=True)
        tokens.save(token_cache)
        tokens = TokenStore.load(token_cache)
    for stale in prune_passage_caches(work, corpus_sha256, sha256):
        print(f"removed {stale.name} from {work} (base passages made under other rules)", file=sys.stderr)
    return BasePassages(BaseEncoder(str(Path(encoder_path).absolute()), base.model_id, sha256), vectors, tokens,
                        starts, corpus_sha256)
