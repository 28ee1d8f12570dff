"""Base passages: the base encoder's passage vectors and document tokens of one corpus, and where they are kept.

They are the most costly part of a build and of training (an hour on CaseFacts on two cores), and they depend only
on the corpus, the encoder and the rules that cut and encode passages (`passage_rules`). A `PassageStore` keeps them
in a folder its caller owns (`citator train` keeps one in its model's work folder), keyed by those three; a build
with a model, or a later training, takes them from there, or from an index of the same corpus, instead of encoding.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import citator
from citator.data.atomic import save_npy_atomic
from citator.data.hashing import sha256_file, sha256_text
from citator.engines.passages import PassageSpec
from citator.models.content_tokens import STOPWORDS
from citator.stance.retrieve.config import RetrievalConfig
from citator.stance.retrieve.index_files import load_array
from citator.stance.retrieve.late_interaction import TokenStore
from citator.stance.retrieve.layout import DENSE, IndexFolder
from citator.stance.retrieve.model import StanceModel

# Bump when the code that turns a corpus into base passages changes (layout, the encoder's padding of documents, the
# content-token filter, the token store's quantisation or first-occurrence rule): passages cached or indexed under
# another value are encoded again.
PASSAGE_RULES_VERSION = 2


def passage_rules() -> str:
    """A fingerprint of the rules, besides corpus, encoder and passage spec, that decide base passages and document
    tokens: PASSAGE_RULES_VERSION, the citator version and late interaction's stopwords. Passages made under other
    rules are never reused."""
    raw = json.dumps([PASSAGE_RULES_VERSION, citator.__version__, sorted(STOPWORDS)])
    return sha256_text(raw)[:12]


def default_passages(config: RetrievalConfig) -> bool:
    """Whether a config cuts passages as the store keeps them (PassageSpec's defaults, which training uses): only
    then are stored base passages this index's."""
    spec = PassageSpec()
    return (config.passage_words, config.passage_overlap) == (spec.words, spec.overlap)


@dataclass(frozen=True)
class Passages:
    """The base encoder's passage vectors (n_passages, dim) and the documents' content-token states of a corpus
    (None: not at hand; a build that keeps them encodes them)."""

    vectors: np.ndarray
    tokens: TokenStore | None = None


class PassageStore:
    """Base passages of the default passage spec under the current rules, in `root`, one pair of files (vectors
    .npy, tokens folder) per corpus and encoder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def files(self, corpus_sha256: str, encoder_sha256: str) -> tuple[Path, Path]:
        """Where the passages of this corpus and encoder are kept: (vectors .npy, tokens folder)."""
        stem = f"{_prefix(corpus_sha256, encoder_sha256)}-{passage_rules()}"
        return self.root / f"{stem}.npy", self.root / f"{stem}-tokens"

    def holds(self, corpus_sha256: str, encoder_sha256: str) -> bool:
        vectors, tokens = self.files(corpus_sha256, encoder_sha256)
        return vectors.is_file() and TokenStore.present(tokens)

    def get(self, corpus_sha256: str, encoder_sha256: str) -> Passages | None:
        """The passages kept for this corpus and encoder; None when there are none, or they do not load (a copy cut
        short, say: the caller encodes instead)."""
        if not self.holds(corpus_sha256, encoder_sha256):
            return None
        vectors, tokens = self.files(corpus_sha256, encoder_sha256)
        try:
            return Passages(np.load(vectors, allow_pickle=False), TokenStore.load(tokens))
        except (OSError, ValueError, EOFError) as exc:
            print(f"warning: base passages in {self.root} unreadable ({exc}); encoding the corpus", file=sys.stderr)
            return None

    def put(self, corpus_sha256: str, encoder_sha256: str, vectors: np.ndarray, tokens: TokenStore) -> Passages:
        """Keep these passages for this corpus and encoder; returns them as kept (the tokens memory-mapped)."""
        vectors_file, tokens_dir = self.files(corpus_sha256, encoder_sha256)
        save_npy_atomic(vectors_file, vectors)
        tokens_dir.mkdir(exist_ok=True)
        tokens.save(tokens_dir)
        return Passages(vectors, TokenStore.load(tokens_dir))

    def prune(self, corpus_sha256: str, encoder_sha256: str) -> list[Path]:
        """Remove the passages of this corpus and encoder made under other rules, or named before the rules were
        (they are never read again: each is some 200 MB on CaseFacts); the paths removed. Those of other corpora or
        encoders are kept, and one that cannot be removed is left where it is."""
        prefix = _prefix(corpus_sha256, encoder_sha256)
        ours = re.compile(re.escape(prefix) + r"(-[0-9a-f]{12})?(\.npy|-tokens)")
        keep = {path.name for path in self.files(corpus_sha256, encoder_sha256)}
        removed = []
        for path in sorted(self.root.glob(f"{prefix}*")):
            if path.name in keep or not ours.fullmatch(path.name):
                continue
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
                removed.append(path)
        return removed


def _prefix(corpus_sha256: str, encoder_sha256: str) -> str:
    """What every stored name of this corpus and encoder starts with, under any rules."""
    return f"base-passages-{corpus_sha256[:12]}-{encoder_sha256[:12]}"


def index_passages(folder: IndexFolder, corpus_sha256: str, encoder_sha256: str) -> Passages | None:
    """The base passages of an index built from the same corpus, encoder, passage spec and rules (with a model whose
    ranker reads the document tokens), if it is one: they do not depend on the model."""
    source = folder.manifest.source
    same = (source.corpus_sha256 == corpus_sha256 and source.encoder_sha256 == encoder_sha256
            and default_passages(source.config) and source.passage_rules == passage_rules())
    if not same or not TokenStore.present(folder.data):
        return None
    vectors = load_array(folder.path(DENSE), 2, "f", rows=folder.manifest.n_passages)
    return Passages(vectors.astype(np.float32), TokenStore.load(folder.data))


def model_passages(model: StanceModel, corpus: Path, encoder_path: Path | None,
                   config: RetrievalConfig | None) -> Passages | None:
    """The base passages the training of `model` kept for this very corpus in its work folder (a copy of the model
    without it has none): the numbers a build would compute, so it need not encode the corpus again. None when
    absent, of another encoder than `encoder_path`'s (None: the default), or of another passage spec (`config`;
    None: the model's, which is the default)."""
    from citator.models.fingerprint import model_fingerprint

    encoder_sha256 = model_fingerprint(encoder_path)
    if encoder_sha256 != model.base_encoder.sha256 or (config is not None and not default_passages(config)):
        return None
    found = PassageStore(model.work_dir).get(sha256_file(corpus), encoder_sha256)
    if found is not None:
        print(f"base passages: reused from {model.work_dir} (citator train's, for this corpus and encoder)",
              file=sys.stderr)
    return found
