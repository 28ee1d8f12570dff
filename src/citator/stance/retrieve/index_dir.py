"""Building an index directory: everything run.sh needs, built in a fresh sub-folder and switched to by one atomic
manifest write.

`prepare_build` checks what a caller asks (`BuildOptions`) and makes of it one `BuildRequest`, which every build
function takes whole: a sharded build hands the same request to each shard's builder with the shard's part. File
names come from stance/retrieve/layout.py. Only the index directory itself need be writable (the evaluator's
rule), so builds never touch its parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from citator.data import read_corpus, write_json_atomic
from citator.data.atomic import check_output, exclusive_dir, holds_command_input, output_dir, owning
from citator.data.hashing import sha256_file
from citator.data.metadata import SideMetadata, read_side_metadata
from citator.data.records import Document
from citator.engines.dense import DenseIndex
from citator.engines.lexical import CorpusStats, LexicalIndex, Tokenized
from citator.engines.passages import PassageSpec, passage_layout
from citator.errors import CorpusError, IndexDirError
from citator.models.encoder import Encoder
from citator.stance.retrieve import layout
from citator.stance.retrieve.config import BASE_SIGNALS, RetrievalConfig
from citator.stance.retrieve.documents import write_documents
from citator.stance.retrieve.index_files import record_files
from citator.stance.retrieve.metadata_table import write_metadata
from citator.stance.retrieve.late_interaction import TokenStore, reads_late_interaction
from citator.stance.retrieve.layout import (
    BUILD_LOCK, BUILD_MARK, BUILD_PREFIX, DENSE, DOC_IDS, FINETUNED_ENCODER, LEXICAL_DOC, LEXICAL_EXPANDED,
    LEXICAL_PASSAGE, MANIFEST, MEMORY, PASSAGE_STARTS, QUERY_GRAPHS, RANKER, Generation, IndexFolder, Manifest,
    Provenance, query_graph,
)
from citator.stance.retrieve.learned import CorpusSlice, LearnedParts, Links
from citator.stance.retrieve.model import BaseEncoder, StanceModel
from citator.stance.retrieve.passage_store import Passages, passage_rules
from citator.stance.retrieve.treatments import user_rows, write_treatments
from citator.stance.treat import Earlier, Treatment

if TYPE_CHECKING:
    from citator.stance.retrieve.memory import PropositionMemory

# The lexical indexes of an index: lexical_expanded only with a trained model.
LEXICAL = (LEXICAL_DOC, LEXICAL_PASSAGE, LEXICAL_EXPANDED)
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


@dataclass(frozen=True)
class BuildOptions:
    """What a caller asks of a build besides the corpus and the index directory.

    `encoder_path`: the base encoder (default: the bundled MiniLM). `config`: the retrieval settings (default: the
    model's fusion and weights, else the defaults). `artifacts`: a trained model; one trained against another base
    encoder is refused, or skipped with a warning when `artifacts_optional` (it was picked up by default rather than
    asked for). `passages`: base passages already computed for this corpus and encoder, reused. `keep_tokens`:
    store the documents' token states for late interaction (default: when the model's ranker reads them).
    `treatments`: a user's own treatment rows (a JSONL file, docs/treatments.md) laid over the extracted table.
    `metadata`: a side file of document metadata keyed by doc_id (docs/metadata.md).
    """

    encoder_path: Path | None = None
    config: RetrievalConfig | None = None
    artifacts: StanceModel | None = None
    artifacts_optional: bool = False
    passages: Passages | None = None
    keep_tokens: bool | None = None
    min_docs: int = MIN_DOCS
    progress: bool = True
    treatments: Path | None = None
    metadata: Path | None = None


@dataclass(frozen=True)
class BuildRequest:
    """A build's checked inputs: the documents (of the corpus, or of one shard with its `part`), the corpus's
    sha256, the base encoder, the retrieval settings, the trained model (None: none, or skipped as made for
    another encoder), the base passages to reuse, and whether the documents' token states are kept. `earlier`: the
    generation an update replaces (stance/retrieve/update.py): what it holds that no document decides (the model's
    parts it copied in, the query graphs, its provenance) is copied from it rather than made again.
    `treatments`: a user's own treatment rows, checked against the corpus, merged into the index's table.
    `treatments_before`: of an update, the corpus before it and its table, whose rows the change cannot alter are
    kept (treat.affected). `metadata`: the side file of metadata merged over the documents' own as the index stores
    them."""

    docs: Sequence[Document]
    corpus_sha256: str
    encoder: BaseEncoder
    config: RetrievalConfig
    artifacts: StanceModel | None
    passages: Passages | None
    keep_tokens: bool
    part: ShardPart | None = None
    progress: bool = True
    earlier: IndexFolder | None = None
    treatments: tuple[Treatment, ...] = ()
    treatments_before: Earlier | None = None
    metadata: SideMetadata | None = None

    @property
    def corpus(self) -> CorpusSlice:
        """The documents this build indexes, within the corpus they belong to."""
        if self.part is None:
            return CorpusSlice([d.doc_id for d in self.docs], [d.title for d in self.docs], 0, len(self.docs))
        return CorpusSlice(self.part.corpus_ids, self.part.corpus_titles, self.part.start, len(self.docs))

    def provenance(self) -> Provenance:
        """What the index this request builds is built from, as its manifest records it."""
        if self.earlier is not None:  # an update: built from what the earlier generation was, over another corpus
            return replace(self.earlier.manifest.source, corpus_sha256=self.corpus_sha256)
        model = self.artifacts
        return Provenance(self.corpus_sha256, self.encoder.path, self.encoder.model_id, self.encoder.sha256,
                          self.config, passage_rules(), None if model is None else str(model.root),
                          None if model is None else sha256_file(model.manifest_path))


def build_index(corpus_path: Path, index_dir: Path, options: BuildOptions = BuildOptions()) -> Manifest:
    """Build the whole index into a fresh folder inside `index_dir`, then switch the manifest to it."""
    request, encoder = prepare_build(corpus_path, index_dir, options)
    with build_lock(index_dir) as where:
        return build_into(where, request, encoder)


def prepare_build(corpus_path: Path, index_dir: Path, options: BuildOptions, read_docs: bool = True
                  ) -> tuple[BuildRequest, Encoder]:
    """Read and check what a build needs before any work is done: the request, and the base encoder loaded.
    `read_docs=False`: the caller reads the corpus itself (a sharded build on Ray reads it in blocks) and the
    request's documents are empty."""
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path, load_encoder

    output_dir(index_dir, make=False)  # a file, a device or a path under a file: refused before any work
    with owning(index_dir):  # the manifest the build ends by replacing (a symlink, a directory)
        check_output(index_dir / MANIFEST)
    docs: list[Document] = []
    side = None if options.metadata is None else read_side_metadata(options.metadata)
    if read_docs:
        docs = read_corpus(corpus_path, lenient=True)
        check_enough(corpus_path, len(docs), options.min_docs)
        if side is not None:
            side.check_known([d.doc_id for d in docs])
    # A user's rows are checked before any work (one line naming file, line and field); a build that reads the
    # corpus in blocks checks them once it has the corpus's ids (stance/shards/build.py).
    user = user_rows(options.treatments, [d.doc_id for d in docs]) if read_docs else ()
    try:
        corpus_sha256 = sha256_file(corpus_path)
    except OSError as exc:  # read in blocks on Ray, the corpus is first opened here
        raise CorpusError(corpus_path, None, f"cannot read: {exc.strerror or exc}") from None
    encoder_path = Path(options.encoder_path) if options.encoder_path else default_encoder_path()
    encoder = load_encoder(encoder_path)
    base = BaseEncoder(str(encoder_path.absolute()), encoder.model_id, model_fingerprint(encoder_path))
    artifacts = _fitting_model(options, base)
    config = options.config
    if config is None:
        # Never a stance contrast or refuter slots from artifacts: both are opt-in, set by a --config file only
        # (docs/stance.md: neither holds on propositions CaseFacts did not produce).
        config = (RetrievalConfig(fusion=artifacts.fusion, weights=dict(artifacts.weights))
                  if artifacts else RetrievalConfig())
    config.check()
    missing = [s for s, w in config.weights.items() if w and s not in BASE_SIGNALS and artifacts is None]
    if missing:
        raise IndexDirError(f"config weights use {missing}, which need trained artifacts (--artifacts)")
    keep = options.keep_tokens if options.keep_tokens is not None else ranker_reads_tokens(artifacts)
    request = BuildRequest(docs, corpus_sha256, base, config, artifacts, options.passages, keep,
                           progress=options.progress, treatments=user, metadata=side)
    return request, encoder


def _fitting_model(options: BuildOptions, base: BaseEncoder) -> StanceModel | None:
    """The options' model when it was trained against this very base encoder (the weights themselves, not the
    folder's name, decide); else refused, or None with a warning where it was optional."""
    model = options.artifacts
    if model is None or (model.base_encoder.model_id, model.base_encoder.sha256) == (base.model_id, base.sha256):
        return model
    trained_on = model.base_encoder
    message = (f"artifacts {model.root} were trained against encoder {trained_on.model_id!r}"
               f" (sha256 {trained_on.sha256[:12]}), but this index uses {base.model_id!r}"
               f" (sha256 {base.sha256[:12]})")
    if not options.artifacts_optional:
        raise IndexDirError(message + ": build with the same --model or retrain")
    print(f"warning: {message}; building without them", file=sys.stderr)
    return None


def ranker_reads_tokens(model: StanceModel | None) -> bool:
    """Whether a model's ranker scores late interaction (whichever fusion was chosen: benchmarks score the ranker
    too), so its index keeps the documents' token states."""
    if model is None or model.ranker_path is None:
        return False
    from citator.stance.retrieve.ranker import load_ranker

    return reads_late_interaction(load_ranker(model.ranker_path).features)


def check_enough(corpus_path: Path, n_docs: int, min_docs: int = MIN_DOCS) -> None:
    if n_docs < min_docs:
        raise CorpusError(corpus_path, None, f"{n_docs} documents: run.sh answers every query with top-k "
                          f"{min_docs} distinct documents (the contract's), so an index needs at least {min_docs}")


@contextlib.contextmanager
def build_lock(index_dir: Path) -> Iterator[Path]:
    """The index directory (made if absent, absolute), held by this build alone: a second build would delete the
    first one's folder when it finishes."""
    with exclusive_dir(index_dir, BUILD_LOCK, "another build is running in this index directory (or an update)",
                       IndexDirError) as held:
        yield held


def build_into(index_dir: Path, request: BuildRequest, encoder: Encoder | None,
               generation: Generation = Generation()) -> Manifest:
    """The build itself, into a fresh folder of `index_dir` that the index switches to once it is whole (as
    `generation`: an update's keeps the folder of the generation before it). `encoder`: None where the request's
    passages are every document's, so nothing is encoded."""
    with fresh_build(index_dir, keep=generation.previous) as tmp:
        n_passages = write_data(tmp, request, encoder)
        manifest = layout.manifest(request.provenance(), tmp.name, (len(request.docs), n_passages),
                                   record_files(tmp, leave_out=(BUILD_MARK,)), generation=generation)
        switch_to(index_dir, tmp, manifest)
    return manifest


def write_data(data_dir: Path, request: BuildRequest, encoder: Encoder | None) -> int:
    """Every file of an index's data folder for the request; the number of passages."""
    docs, config, part = request.docs, request.config, request.part
    passages, starts = passage_layout([d.title for d in docs], [d.text for d in docs],
                                      PassageSpec(config.passage_words, config.passage_overlap))
    plain = {} if part is not None else lexical_texts(docs, config, names=(LEXICAL_DOC,))
    lexical_index(LEXICAL_DOC, plain.get(LEXICAL_DOC, ()), config, part).save(data_dir / LEXICAL_DOC)
    lexical_index(LEXICAL_PASSAGE, passages, config, part).save(data_dir / LEXICAL_PASSAGE)
    np.save(data_dir / PASSAGE_STARTS, starts)
    vectors = _passage_vectors(data_dir, request, encoder, passages, starts)
    parts = ModelParts.of(request)
    if parts is not None:
        _add_model(data_dir, request, parts, vectors, starts)
    (data_dir / DOC_IDS).write_text(json.dumps([d.doc_id for d in docs]), encoding="utf-8")
    stored = docs if request.metadata is None else request.metadata.apply(docs)
    write_documents(data_dir, stored)  # titles and texts, for briefs that show the passage that scored
    write_metadata(data_dir, stored)
    if part is None:  # a sharded index keeps the corpus's table beside its shards (stance/shards/build.py)
        # from the documents as stored: a side file's dates and citations resolve names (no case cites a later one)
        write_treatments(data_dir, stored, request.treatments, request.progress, request.treatments_before)
    if part is None or part.start == 0:  # of a sharded index, the first shard's graphs encode every query
        export_query_graphs(data_dir, request)
    return len(passages)


def _passage_vectors(data_dir: Path, request: BuildRequest, encoder: Encoder | None, passages: Sequence[str],
                     starts: np.ndarray) -> np.ndarray:
    """The base passage vectors, saved: the request's own where they are of this corpus and encoder, else
    encoded; with `keep_tokens`, the documents' token states beside them, from the same forward pass."""
    given = request.passages
    late = None
    if request.keep_tokens and given is not None and given.tokens is not None \
            and len(given.tokens.offsets) == len(request.docs) + 1:
        late = given.tokens
    dim = encoder.dim if encoder is not None else None
    if given is not None and given.vectors.shape == (len(passages), dim or given.vectors.shape[1]):
        vectors = given.vectors
    elif encoder is None:
        raise IndexDirError(f"{data_dir}: the passages given do not match the documents, and no encoder was loaded "
                            "to encode them")
    elif request.keep_tokens:
        vectors, late = TokenStore.encode(encoder, passages, starts, request.progress)
    else:
        vectors = encoder.encode_documents(passages, progress=request.progress)
    DenseIndex(vectors).save(data_dir / DENSE)
    if request.keep_tokens:
        if late is None:
            if encoder is None:
                raise IndexDirError(f"{data_dir}: the token states given do not match the documents, and no encoder "
                                    "was loaded to encode them")
            late = TokenStore.encode(encoder, passages, starts, request.progress)[1]
        late.save(data_dir)
    return vectors


def lexical_texts(docs: Sequence[Document], config: RetrievalConfig, memory: PropositionMemory | None = None,
                  links: Links | None = None, names: Sequence[str] = LEXICAL) -> dict[str, list[str]]:
    """The texts of each named lexical index: whole documents, their passages and, with a memory and its links,
    the documents expanded by the propositions that cite them."""
    from citator.stance.retrieve import expansion

    titles, texts = [d.title for d in docs], [d.text for d in docs]
    out = {}
    if LEXICAL_DOC in names:
        out[LEXICAL_DOC] = [f"{t}\n{x}" for t, x in zip(titles, texts)]
    if LEXICAL_PASSAGE in names:
        out[LEXICAL_PASSAGE] = passage_layout(titles, texts, PassageSpec(config.passage_words,
                                                                           config.passage_overlap))[0]
    if LEXICAL_EXPANDED in names and memory is not None and links is not None:
        out[LEXICAL_EXPANDED] = expansion.expanded_texts(titles, texts, memory, links)
    return out


def lexical_index(name: str, texts: Sequence[str] | Tokenized, config: RetrievalConfig,
                  part: ShardPart | None = None) -> LexicalIndex:
    """Lexical index `name` of `texts` (a shard's: of the tokens it counted, scored with the corpus's statistics),
    with its (k1, b): the config's, except the expanded documents' own (stance/retrieve/expansion.py)."""
    from citator.stance.retrieve import expansion

    k1, b = (expansion.K1, expansion.B) if name == LEXICAL_EXPANDED else (config.k1, config.b)
    if part is not None:
        return LexicalIndex.build(part.tokens[name], k1, b, stats=part.stats[name])
    return LexicalIndex.build(texts, k1, b)


@dataclass(frozen=True)
class ModelParts:
    """Where a build copies a trained model's parts from: the model's folder, or the index generation an update
    replaces (which holds its own copy: the model's folder may be gone)."""

    memory_dir: Path
    encoder_dir: Path
    ranker_path: Path | None

    @classmethod
    def of(cls, request: BuildRequest) -> ModelParts | None:
        """The request's model's parts (None: it is built without one)."""
        model, earlier = request.artifacts, request.earlier
        if model is not None:
            return cls(model.memory_dir, model.encoder_dir, model.ranker_path)
        if earlier is None or not earlier.manifest.trained:
            return None
        ranker = earlier.path(RANKER)
        return cls(earlier.path(MEMORY), earlier.path(FINETUNED_ENCODER), ranker if ranker.is_file() else None)


def _add_model(data_dir: Path, request: BuildRequest, model: ModelParts, passage_vectors: np.ndarray,
               starts: np.ndarray) -> None:
    """The model's fine-tuned query encoder, proposition memory and ranker copied in, and its parts fitted to these
    documents (LearnedParts.fit_to, as training fits them): the memory's links, the learned document vectors and
    the BM25 index of the documents expanded by the propositions that cite them.

    The fine-tuned encoder is a query encoder trained against the base encoder's passage vectors; prepare_build
    has checked that this index uses that same base encoder.
    """
    from citator.stance.retrieve.doc_embedding import DocumentOffsets, base_document_vectors
    from citator.stance.retrieve.memory import PropositionMemory

    shutil.copytree(model.memory_dir, data_dir / MEMORY, copy_function=shutil.copyfile)
    # The index answers on its own: moving, retraining or deleting the model leaves it whole. Copied without the
    # model's permission bits (training writes its weights 0600): the index's files are readable as its others are.
    shutil.copytree(model.encoder_dir, data_dir / FINETUNED_ENCODER, ignore=shutil.ignore_patterns(".*"),
                    copy_function=shutil.copyfile)
    if model.ranker_path is not None:
        shutil.copyfile(model.ranker_path, data_dir / RANKER)
    memory = PropositionMemory.load(data_dir / MEMORY)
    base = base_document_vectors(passage_vectors, starts)
    offsets = DocumentOffsets.load(data_dir / MEMORY, base.shape[1])
    expand = partial(_expanded_index, request, memory)
    LearnedParts.fit_to(memory, offsets, request.corpus, base, expand).save(data_dir)


def _expanded_index(request: BuildRequest, memory: PropositionMemory, links: Links) -> LexicalIndex:
    """BM25 over the request's documents expanded by the propositions linked to them (a shard's from the tokens it
    counted in the first round)."""
    texts = {} if request.part is not None else lexical_texts(request.docs, request.config, memory, links,
                                                              (LEXICAL_EXPANDED,))
    return lexical_index(LEXICAL_EXPANDED, texts.get(LEXICAL_EXPANDED, ()), request.config, request.part)


@contextlib.contextmanager
def fresh_build(index_dir: Path, keep: str | None = None) -> Iterator[Path]:
    """A new build folder inside `index_dir`, removed if the build fails; once the build has switched to it
    (`switch_to`), the folders of earlier builds are removed, but `keep` (an update's previous generation)."""
    earlier = _data_dirs_named(index_dir)
    tmp = Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=index_dir))
    try:
        (tmp / BUILD_MARK).touch()
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for stale in index_dir.glob(f"{BUILD_PREFIX}*"):
        # Only folders a build made: one a build left unfinished (BUILD_MARK) or one the manifest named (its data
        # folder, and an update's previous generation, kept until the update after):
        # a user's own `build-personal` beside the index is not citator's to remove, nor a folder holding a file
        # or folder this command reads (a corpus given from an earlier build's copy).
        ours = (stale / BUILD_MARK).is_file() or stale.name in earlier
        mine = stale != tmp and stale.name != keep and stale.is_dir() and not stale.is_symlink() and ours
        if mine and not holds_command_input(stale):
            shutil.rmtree(stale, ignore_errors=True)


def _data_dirs_named(index_dir: Path) -> set[str]:
    """The build folders the index's current manifest names: its data folder and the previous generation's kept
    beside it (read leniently: a damaged manifest names none, and the build replaces it)."""
    try:
        found = json.loads((index_dir / MANIFEST).read_text(encoding="utf-8"))
        names = [found.get("data_dir"), (found.get("generation") or {}).get("previous")]
    except (OSError, ValueError, AttributeError):
        return set()
    return {name for name in names if isinstance(name, str) and name.startswith(BUILD_PREFIX) and "/" not in name}


def switch_to(index_dir: Path, data_dir: Path, manifest: Manifest) -> None:
    """Make `data_dir` the index's: its manifest goes last and atomically, so until it names the new folder,
    readers see the old build."""
    os.chmod(data_dir, 0o755)
    # Finished: the folder is the index's now, named by its manifest (the mark is for folders a build left).
    (data_dir / BUILD_MARK).unlink(missing_ok=True)
    write_json_atomic(index_dir / MANIFEST, manifest.to_json())


def export_query_graphs(data_dir: Path, request: BuildRequest) -> None:
    """The query encoders a search uses as ONNX graphs in the index, for a cold search's onnxruntime
    (models/onnx_encoder.py): the fine-tuned one of the model, and the base one unless the model's weights
    leave its dense signal out. An encoder that backend does not run gets none and searches through torch."""
    from citator.models import onnx_encoder

    earlier = request.earlier
    if earlier is not None:  # the graphs are of the encoders, which an update keeps: copied, not exported again
        if earlier.path(QUERY_GRAPHS).is_dir():
            shutil.copytree(earlier.path(QUERY_GRAPHS), data_dir / QUERY_GRAPHS, copy_function=shutil.copyfile)
        return
    model = request.artifacts
    base_used = model is None or bool(request.config.weights.get("dense"))
    encoders = {"base": Path(request.encoder.path) if base_used else None,
                "finetuned": model.encoder_dir if model is not None else None}
    for name, model_dir in encoders.items():
        if model_dir is not None and onnx_encoder.supports(Path(model_dir)):
            (data_dir / QUERY_GRAPHS).mkdir(exist_ok=True)
            onnx_encoder.export_onnx(Path(model_dir), data_dir / query_graph(name))
