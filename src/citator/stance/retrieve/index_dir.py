"""The index directory: everything run.sh needs, built in a fresh sub-folder and switched to by one atomic manifest write.

Only the index directory itself need be writable (the evaluator's rule), so builds never touch its parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import citator
from citator.data import read_corpus, write_json_atomic
from citator.data.atomic import INDEX_LOCK, check_output, exclusive_dir, holds_command_input, output_dir, owning
from citator.data.hashing import sha256_file, sha256_text
from citator.errors import CorpusError, IndexDirError
from citator.data.records import Document
from citator.models.content_tokens import STOPWORDS
from citator.stance.retrieve.config import BASE_SIGNALS, RetrievalConfig
from citator.engines.dense import DenseIndex
from citator.stance.retrieve.index_files import BUILD_MARK, record_files
from citator.stance.retrieve.documents import write_documents
from citator.stance.retrieve.late_interaction import TokenStore, reads_late_interaction
from citator.engines.lexical import CorpusStats, LexicalIndex, Tokenized
from citator.stance.retrieve.manifest import FINETUNED_ENCODER, MANIFEST, QUERY_GRAPHS, Manifest
from citator.stance.retrieve.model import StanceModel
from citator.engines.passages import PassageSpec, passage_layout

# Bump when the code that turns a corpus into base passages changes (layout, the encoder's padding of documents, the
# content-token filter, the token store's quantisation or first-occurrence rule): passages cached or indexed under
# another value are encoded again.
PASSAGE_RULES_VERSION = 2
# The lexical indexes of an index, by folder name: lexical_expanded only with trained artifacts.
LEXICAL = ("lexical_doc", "lexical_passage", "lexical_expanded")
# The contract's top-k: run.sh must answer every query with this many distinct documents, so a smaller corpus
# could build but never answer. Refused at build time.
MIN_DOCS = 10


@dataclass(frozen=True)
class ShardPart:
    """A shard of a larger corpus: where its documents start in the corpus, the corpus's ids and titles (memory
    entries and learned offsets reach documents by titles unique in the whole corpus, not in one shard), and the
    whole corpus's BM25 statistics per lexical index, so that the shard scores as one index over everything would.
    `tokens`: the shard's texts per lexical index, already tokenized to count those statistics."""

    start: int
    corpus_ids: Sequence[str]
    corpus_titles: Sequence[str]
    stats: Mapping[str, CorpusStats]
    tokens: Mapping[str, Tokenized]


def corpus_links(memory, corpus_ids: Sequence[str], corpus_titles: Sequence[str], start: int,  # type: ignore[no-untyped-def]
                 n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """(memory entry, document) links of a PropositionMemory to documents `start` .. `start + n_docs - 1` of a
    corpus (a shard's, or all of them), made against the whole corpus's ids and titles, documents numbered from
    `start`."""
    rows, cols = memory.link(corpus_ids, corpus_titles)
    keep = (cols >= start) & (cols < start + n_docs)
    return rows[keep], cols[keep] - start


def lexical_texts(docs: Sequence[Document], config: RetrievalConfig, memory=None,  # type: ignore[no-untyped-def]
                  links: tuple[np.ndarray, np.ndarray] | None = None, names: Sequence[str] = LEXICAL
                  ) -> dict[str, list[str]]:
    """The texts of each named lexical index: whole documents, their passages and, with a memory and its links,
    the documents expanded by the propositions that cite them."""
    from citator.stance.retrieve import expansion

    titles, texts = [d.title for d in docs], [d.text for d in docs]
    out = {}
    if "lexical_doc" in names:
        out["lexical_doc"] = [f"{t}\n{x}" for t, x in zip(titles, texts)]
    if "lexical_passage" in names:
        out["lexical_passage"] = passage_layout(titles, texts, PassageSpec(config.passage_words,
                                                                            config.passage_overlap))[0]
    if "lexical_expanded" in names and memory is not None and links is not None:
        out["lexical_expanded"] = expansion.expanded_texts(titles, texts, memory, links)
    return out


def bm25_params(name: str, config: RetrievalConfig) -> tuple[float, float]:
    """(k1, b) of a lexical index: the config's, except the expanded documents' own (stance/retrieve/expansion.py)."""
    from citator.stance.retrieve import expansion

    return (expansion.K1, expansion.B) if name == "lexical_expanded" else (config.k1, config.b)


def build_lexical(directory: Path, name: str, texts: Sequence[str] | Tokenized, config: RetrievalConfig,
                  part: ShardPart | None = None) -> None:
    """Lexical index `name` of `texts` saved under `directory` (a shard's: the tokens it counted, the corpus's
    statistics)."""
    k1, b = bm25_params(name, config)
    if part is not None:
        LexicalIndex.build(part.tokens[name], k1, b, stats=part.stats[name]).save(directory / name)
    else:
        LexicalIndex.build(texts, k1, b).save(directory / name)


def build_index(
    corpus_path: Path, index_dir: Path, encoder_path: Path | None = None, config: RetrievalConfig | None = None,
    progress: bool = True, artifacts: StanceModel | None = None, passage_vectors: np.ndarray | None = None,
    artifacts_optional: bool = False, passage_tokens: TokenStore | None = None, min_docs: int = MIN_DOCS,
) -> Manifest:
    """Build the whole index into a fresh folder inside `index_dir`, then switch the manifest to it.

    A model (`artifacts`) trained against another base encoder is refused, or skipped with a warning when
    `artifacts_optional` (it was picked up by default rather than asked for). `passage_vectors` (and
    `passage_tokens`, the documents' content-token states) already computed for this corpus and encoder are reused.
    """
    inputs = prepare_build(corpus_path, index_dir, encoder_path, config, artifacts, artifacts_optional, min_docs)
    with build_lock(index_dir) as where:
        return build_locked(inputs.docs, corpus_path, where, inputs.encoder_path, inputs.encoder, inputs.config,
                             progress, inputs.artifacts, passage_vectors, passage_tokens, inputs.encoder_sha256)


@dataclass(frozen=True)
class BuildInputs:
    """A build's checked inputs: the corpus's documents, the base encoder (its folder, loaded model and
    fingerprint), the retrieval config, and the artifacts (None: none, or skipped as made for another encoder)."""

    docs: list[Document]
    encoder_path: Path
    encoder: Any
    encoder_sha256: str
    config: RetrievalConfig
    artifacts: StanceModel | None


def prepare_build(corpus_path: Path, index_dir: Path, encoder_path: Path | None, config: RetrievalConfig | None,
                  artifacts: StanceModel | None, artifacts_optional: bool, min_docs: int = MIN_DOCS,
                  read_docs: bool = True) -> BuildInputs:
    """Read and check what a build needs before any work is done (see build_index). `read_docs=False`: the
    caller reads the corpus itself (a sharded build on Ray reads it in blocks) and `docs` is empty."""
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path, load_encoder

    output_dir(index_dir, make=False)  # a file, a device or a path under a file: refused before any work
    with owning(index_dir):  # the manifest the build ends by replacing (a symlink, a directory)
        check_output(index_dir / MANIFEST)
    docs: list[Document] = []
    if read_docs:
        docs = read_corpus(corpus_path, lenient=True)
        check_enough(corpus_path, len(docs), min_docs)
    encoder_path = Path(encoder_path) if encoder_path else default_encoder_path()
    encoder = load_encoder(encoder_path)
    encoder_sha256 = model_fingerprint(encoder_path)
    # The weights themselves, not the folder's name, decide whether the model fits this encoder.
    trained_on = artifacts.base_encoder if artifacts is not None else None
    if trained_on is not None and (trained_on.model_id, trained_on.sha256) != (encoder.model_id, encoder_sha256):
        message = (f"artifacts {artifacts.root} were trained against encoder {trained_on.model_id!r}"  # type: ignore[union-attr]
                   f" (sha256 {trained_on.sha256[:12]}), but this index uses {encoder.model_id!r}"
                   f" (sha256 {encoder_sha256[:12]})")
        if not artifacts_optional:
            raise IndexDirError(message + ": build with the same --model or retrain")
        print(f"warning: {message}; building without them", file=sys.stderr)
        artifacts = None
    if config is None:
        # Never a stance contrast or refuter slots from artifacts: both are opt-in, set by a --config file only
        # (docs/stance.md: neither holds on propositions CaseFacts did not produce).
        config = (RetrievalConfig(fusion=artifacts.fusion, weights=dict(artifacts.weights))
                  if artifacts else RetrievalConfig())
    config.check()
    missing = [s for s, w in config.weights.items() if w and s not in BASE_SIGNALS and artifacts is None]
    if missing:
        raise IndexDirError(f"config weights use {missing}, which need trained artifacts (--artifacts)")
    return BuildInputs(docs, encoder_path, encoder, encoder_sha256, config, artifacts)


def check_enough(corpus_path: Path, n_docs: int, min_docs: int = MIN_DOCS) -> None:
    if n_docs < min_docs:
        raise CorpusError(corpus_path, None, f"{n_docs} documents: run.sh answers every query with top-k "
                          f"{min_docs} distinct documents (the contract's), so an index needs at least {min_docs}")


@contextlib.contextmanager
def build_lock(index_dir: Path) -> Iterator[Path]:
    """The index directory (made if absent, absolute), held by this build alone: a second build would delete the
    first one's folder when it finishes."""
    with exclusive_dir(index_dir, INDEX_LOCK, "another build is running in this index directory",
                       IndexDirError) as held:
        yield held


def default_passages(config: RetrievalConfig) -> bool:
    """Whether a config cuts passages as `citator train` does (PassageSpec's defaults): only then are base passages
    computed elsewhere this index's."""
    spec = PassageSpec()
    return (config.passage_words, config.passage_overlap) == (spec.words, spec.overlap)


def passage_rules() -> str:
    """A fingerprint of the rules, besides corpus, encoder and passage spec, that decide base passages and document
    tokens: PASSAGE_RULES_VERSION, the citator version and late interaction's stopwords. Passages made under other
    rules are never reused."""
    raw = json.dumps([PASSAGE_RULES_VERSION, citator.__version__, sorted(STOPWORDS)])
    return sha256_text(raw)[:12]


def build_locked(docs: list[Document], corpus_path: Path, index_dir: Path, encoder_path: Path, encoder,  # type: ignore[no-untyped-def]
                  config: RetrievalConfig, progress: bool, artifacts: StanceModel | None,
                  passage_vectors: np.ndarray | None, passage_tokens: TokenStore | None,
                  encoder_sha256: str | None = None, part: ShardPart | None = None) -> Manifest:
    """The build itself, into a fresh folder of `index_dir`; `part`: these documents are a shard of a larger corpus."""
    with fresh_build(index_dir) as tmp:
        titles = [d.title for d in docs]
        texts = [d.text for d in docs]
        spec = PassageSpec(config.passage_words, config.passage_overlap)
        passages, starts = passage_layout(titles, texts, spec)
        plain = {} if part is not None else lexical_texts(docs, config, names=("lexical_doc",))
        build_lexical(tmp, "lexical_doc", plain.get("lexical_doc", ()), config, part)
        build_lexical(tmp, "lexical_passage", passages, config, part)
        np.save(tmp / "passage_starts.npy", starts)
        # Vectors already computed for this very corpus and encoder (e.g. by `citator train`) are reused; document
        # tokens for late interaction come from the same forward pass, when the artifacts' ranker reads them.
        tokens_needed = needs_document_tokens(artifacts)
        reusable = passage_tokens is not None and len(passage_tokens.offsets) == len(docs) + 1
        late = passage_tokens if tokens_needed and reusable else None
        if passage_vectors is not None and passage_vectors.shape == (len(passages), encoder.dim):
            vectors = passage_vectors
        elif tokens_needed:
            vectors, late = TokenStore.encode(encoder, passages, starts, progress)
        else:
            vectors = encoder.encode_documents(passages, progress=progress)
        DenseIndex(vectors).save(tmp / "dense.npy")
        if tokens_needed:
            (late if late is not None else TokenStore.encode(encoder, passages, starts, progress)[1]).save(tmp)
        if artifacts is not None:
            _add_artifacts(tmp, artifacts, docs, vectors, starts, config, part)
        (tmp / "doc_ids.json").write_text(json.dumps([d.doc_id for d in docs]), encoding="utf-8")
        write_documents(tmp, docs)  # titles and texts, for briefs that show the passage that scored
        if part is None or part.start == 0:  # of a sharded index, the first shard's graphs encode every query
            export_query_graphs(tmp, encoder_path, artifacts, config)
        manifest = Manifest(
            corpus_sha256=sha256_file(corpus_path), n_docs=len(docs), n_passages=len(passages),
            encoder_path=str(encoder_path.absolute()), encoder_id=encoder.model_id, config=config,
            citator_version=citator.__version__, built_at=time.time(), data_dir=tmp.name,
            artifacts_path=None if artifacts is None else str(artifacts.root),
            artifacts_sha256=None if artifacts is None else sha256_file(artifacts.manifest_path),
            encoder_sha256=encoder_sha256, passage_rules=passage_rules(), files=record_files(tmp),
        )
        switch_to(index_dir, tmp, manifest)
    return manifest


@contextlib.contextmanager
def fresh_build(index_dir: Path) -> Iterator[Path]:
    """A new build folder inside `index_dir`, removed if the build fails; once the build has switched to it
    (`switch_to`), the folders of earlier builds are removed."""
    earlier = _data_dir_named(index_dir)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=index_dir))
    try:
        (tmp / BUILD_MARK).touch()
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for stale in index_dir.glob("build-*"):
        # Only folders a build made: one a build left unfinished (BUILD_MARK) or the one the manifest named:
        # a user's own `build-personal` beside the index is not citator's to remove, nor a folder holding a file
        # or folder this command reads (a corpus given from an earlier build's copy).
        ours = (stale / BUILD_MARK).is_file() or stale.name == earlier
        if stale != tmp and stale.is_dir() and not stale.is_symlink() and ours and not holds_command_input(stale):
            shutil.rmtree(stale, ignore_errors=True)


def _data_dir_named(index_dir: Path) -> str | None:
    """The build folder the index's current manifest names, if it names one."""
    try:
        name = json.loads((index_dir / MANIFEST).read_text(encoding="utf-8")).get("data_dir")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name.startswith("build-") and "/" not in name else None


def switch_to(index_dir: Path, data_dir: Path, manifest: Manifest) -> None:
    """Make `data_dir` the index's: its manifest goes last and atomically, so until it names the new folder,
    readers see the old build."""
    os.chmod(data_dir, 0o755)
    # Finished: the folder is the index's now, named by its manifest (the mark is for folders a build left).
    (data_dir / BUILD_MARK).unlink(missing_ok=True)
    write_json_atomic(index_dir / MANIFEST, manifest.to_json())


def export_query_graphs(data_dir: Path, encoder_path: Path, artifacts: StanceModel | None,
                        config: RetrievalConfig) -> None:
    """The query encoders a search uses as ONNX graphs in the index, for a cold search's onnxruntime
    (models/onnx_encoder.py): the fine-tuned one of the artifacts, and the base one unless the artifacts' weights
    leave its dense signal out. An encoder that backend does not run gets none and searches through torch."""
    from citator.models import onnx_encoder

    base_used = artifacts is None or bool(config.weights.get("dense"))
    encoders = {"base": encoder_path if base_used else None,
                "finetuned": artifacts.encoder_dir if artifacts is not None else None}
    for name, model_dir in encoders.items():
        if model_dir is not None and onnx_encoder.supports(Path(model_dir)):
            (data_dir / QUERY_GRAPHS).mkdir(exist_ok=True)
            onnx_encoder.export_onnx(Path(model_dir), data_dir / QUERY_GRAPHS / f"{name}.onnx")


def needs_document_tokens(artifacts: StanceModel | None) -> bool:
    """Late interaction's document tokens are stored when the artifacts' ranker reads them (whichever fusion was
    chosen: benchmarks score the ranker too), or while training is still choosing (its dev index scores them all)."""
    if artifacts is None:
        return False
    if not artifacts.complete:
        return True
    if artifacts.ranker_path is None:
        return False
    from citator.stance.retrieve.ranker import load_ranker

    return reads_late_interaction(load_ranker(artifacts.ranker_path).features)


def _add_artifacts(data_dir: Path, artifacts: StanceModel, docs: list[Document], passage_vectors: np.ndarray,
                   starts: np.ndarray, config: RetrievalConfig, part: ShardPart | None = None) -> None:
    """The fine-tuned query encoder, the proposition memory, the ranker, the memory's links to this corpus, the
    learned document vectors and the BM25 index of the documents expanded by the propositions that cite them.

    The fine-tuned encoder is a query encoder trained against the base encoder's passage vectors; build_index
    has checked that this index uses that same base encoder.
    """
    from citator.stance.retrieve.doc_embedding import apply_deltas, base_document_vectors
    from citator.stance.retrieve.memory import PropositionMemory

    shutil.copytree(artifacts.memory_dir, data_dir / "memory", copy_function=shutil.copyfile)
    # The index answers on its own: moving, retraining or deleting the artifacts leaves it whole. Copied without the
    # artifacts' permission bits (training writes its weights 0600): the index's files are readable as its others are.
    shutil.copytree(artifacts.encoder_dir, data_dir / FINETUNED_ENCODER, ignore=shutil.ignore_patterns(".*"),
                    copy_function=shutil.copyfile)
    if artifacts.ranker_path is not None:
        shutil.copyfile(artifacts.ranker_path, data_dir / "ranker.json")
    memory = PropositionMemory.load(data_dir / "memory")
    # Matched against the whole corpus: a shard's documents are reached by titles unique in all of it.
    ids, titles, start = ((part.corpus_ids, part.corpus_titles, part.start) if part is not None
                          else ([d.doc_id for d in docs], [d.title for d in docs], 0))
    rows, cols = corpus_links(memory, ids, titles, start, len(docs))
    np.save(data_dir / "memory_links.npy", np.stack([rows, cols]))
    expanded = {} if part is not None else lexical_texts(docs, config, memory, (rows, cols), ("lexical_expanded",))
    build_lexical(data_dir, "lexical_expanded", expanded.get("lexical_expanded", ()), config, part)
    learned = apply_deltas(data_dir / "memory", ids, titles, base_document_vectors(passage_vectors, starts), start)
    if learned is not None:
        np.save(data_dir / "doc_embedding.npy", learned)
