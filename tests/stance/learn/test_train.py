"""`citator train` end to end on a tiny dataset, and the query-side fine-tuning on a tiny Qwen3."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citator.data import Query, read_queries, validate_results
from citator.errors import CitatorError, IndexDirError
from citator.stance.learn.finetune import FinetuneConfig, QueryExample, finetune_query_encoder
from citator.stance.learn.folds import proposition_folds
from citator.stance.learn.labeled import load_labeled
from citator.stance.learn.train import TrainingOptions
from citator.stance.retrieve import contrast


def write_resplit(small_stance_set: dict[str, Path], tmp_path: Path,
                  split_of: Callable[[int, dict[str, Any], list[str]], str]) -> Path:
    """The fixture's queries with `split` set by split_of(row index, row, sorted proposition ids), in tmp_path."""
    rows = [json.loads(line) for line in small_stance_set["queries"].open()]
    props = sorted({r["proposition_id"] for r in rows})
    for i, r in enumerate(rows):
        r["split"] = split_of(i, r, props)
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return queries


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_query_finetuning_lowers_the_loss(tiny_qwen3_embedding_dir: Path, tmp_path: Path, precision: str) -> None:
    rng = np.random.default_rng(0)
    passages = rng.normal(size=(12, 32)).astype(np.float32)
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    starts = np.array([0, 3, 6, 9])
    stances = ["supported", "refuted"]
    examples = [QueryExample(f"question number {i} about doc {i % 4}", stances[i % 2], (i % 4,), ((i + 1) % 4,))
                for i in range(16)]
    stats = finetune_query_encoder(tiny_qwen3_embedding_dir, examples, passages, starts, tmp_path / "ft",
                                   FinetuneConfig(epochs=12, batch_size=8, learning_rate=3e-3, frozen_layers=0,
                                                  precision=precision), progress=False)
    assert stats["loss_last_tenth"] < 0.7 * stats["loss_first_tenth"]

    # The saved directory is the trained model, not the base: its queries find their document, above the
    # opposite-stance one, where the base's do not.
    from citator.models.load import load_encoder

    def doc_scores(model_dir: Path) -> np.ndarray:
        q = load_encoder(model_dir).encode_queries([e.text for e in examples], [e.stance for e in examples])
        return np.maximum.reduceat(q @ passages.T, starts, axis=1)

    rows = np.arange(len(examples))
    pos, opp = np.array([e.positives[0] for e in examples]), np.array([e.opposite[0] for e in examples])
    tuned, base = doc_scores(tmp_path / "ft"), doc_scores(tiny_qwen3_embedding_dir)
    assert (tuned[rows, pos] - tuned[rows, opp]).mean() > (base[rows, pos] - base[rows, opp]).mean() + 0.1
    assert (tuned.argmax(axis=1) == pos).mean() >= 0.75 > (base.argmax(axis=1) == pos).mean()


def test_bf16_autocast_trains_another_encoder_than_fp32(tiny_qwen3_embedding_dir: Path, tmp_path: Path) -> None:
    from safetensors.numpy import load_file

    rng = np.random.default_rng(1)
    passages = rng.normal(size=(8, 32)).astype(np.float32)
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    examples = [QueryExample(f"claim {i}", "supported", (i % 4,)) for i in range(8)]
    weights = {}
    for precision in ("fp32", "bf16", "fp32"):
        out = tmp_path / f"{precision}-{len(weights)}"
        finetune_query_encoder(tiny_qwen3_embedding_dir, examples, passages, np.array([0, 2, 4, 6]), out,
                               FinetuneConfig(epochs=2, batch_size=4, learning_rate=1e-3, precision=precision),
                               progress=False)
        weights[out.name] = load_file(out / "model.safetensors")
    fp32, bf16, fp32_again = weights.values()
    assert all(v.dtype == np.float32 for v in bf16.values())  # master weights stay fp32
    assert all(np.array_equal(fp32[k], fp32_again[k]) for k in fp32)  # deterministic
    assert not all(np.array_equal(fp32[k], bf16[k]) for k in fp32)  # the forward pass really ran in bf16


def test_auto_precision_is_bf16_on_a_gpu_or_a_cpu_with_bf16_units(monkeypatch: pytest.MonkeyPatch) -> None:
    from citator.stance.learn import finetune

    amx = "processor\t: 0\nflags\t\t: fpu sse avx512f amx_bf16 amx_tile\n"
    zen4 = "flags\t\t: fpu avx2 avx512f avx512_bf16\n"
    avx2 = "flags\t\t: fpu sse avx2 fma\nbugs\t\t: amx_bf16\n"  # a flag outside the flags line does not count
    assert finetune.cpu_has_bf16_units(amx) and finetune.cpu_has_bf16_units(zen4)
    assert not finetune.cpu_has_bf16_units(avx2) and not finetune.cpu_has_bf16_units("")
    for explicit in ("fp32", "bf16"):
        assert finetune.resolve_precision(explicit, "cpu") == finetune.resolve_precision(explicit, "cuda") == explicit
    assert finetune.resolve_precision("auto", "cuda") == "bf16"
    monkeypatch.setattr(finetune, "cpu_has_bf16_units", lambda cpuinfo=None: False)
    assert finetune.resolve_precision("auto", "cpu") == "fp32"
    monkeypatch.setattr(finetune, "torch_has_cpu_bf16", lambda: True)
    assert finetune.resolve_precision("auto", "cpu") == "fp32"  # kernels without the units
    monkeypatch.setattr(finetune, "cpu_has_bf16_units", lambda cpuinfo=None: True)
    assert finetune.resolve_precision("auto", "cpu") == "bf16"
    monkeypatch.setattr(finetune, "torch_has_cpu_bf16", lambda: False)
    assert finetune.resolve_precision("auto", "cpu") == "fp32"  # the units without torch's kernels


def test_paired_order_puts_queries_of_one_document_side_by_side_and_keeps_each_once() -> None:
    import random

    from citator.stance.learn.finetune import paired_order

    examples = [QueryExample(f"q{i}", "all", (i % 5,)) for i in range(13)] + [QueryExample("lone", "all", (9,))]
    order = paired_order(examples, random.Random(0))
    assert sorted(e.text for e in order) == sorted(e.text for e in examples)
    # 13 queries over 5 documents: 2 or 3 each, so 5 pairs; the lone one and 3 leftovers come alone.
    pairs = sum(1 for a, b in zip(order, order[1:]) if a.positives == b.positives)
    assert pairs >= 5


def test_pair_loss_rewards_queries_of_one_document_lying_together() -> None:
    import torch

    from citator.stance.learn.finetune import _pair_loss

    batch = [QueryExample("a", "all", (0,)), QueryExample("b", "all", (0,)), QueryExample("c", "all", (1,)),
             QueryExample("d", "all", (2,))]
    together = torch.nn.functional.normalize(torch.tensor([[1.0, 0, 0], [1, 0.1, 0], [0, 1, 0], [0, 0, 1]]), dim=1)
    apart = together[[0, 2, 1, 3]]  # the two queries of document 0 now point different ways
    assert _pair_loss(together, batch, 0.05) < 0.01 < _pair_loss(apart, batch, 0.05)
    alone = [QueryExample("x", "all", (0,)), QueryExample("y", "all", (1,))]
    assert float(_pair_loss(together[:2], alone, 0.05)) == 0.0  # no pair in the batch: nothing to learn


def test_test_split_is_never_loaded(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    g = tmp_path / "g.jsonl"
    q.write_text("".join(json.dumps({"query_id": f"q{i}", "text": "t", "stance": "all", "split": s}) + "\n"
                         for i, s in enumerate(["train", "dev", "test"])))
    g.write_text("".join(json.dumps({"query_id": f"q{i}", "relevant_doc_ids": ["d"]}) + "\n" for i in range(3)))
    assert [x.query_id for x in load_labeled([(q, g)], "train")[0]] == ["q0"]
    with pytest.raises(CitatorError, match="no labeled queries for split 'test'"):
        load_labeled([(q, g)], "test")


@pytest.mark.slow
def test_train_then_build_and_search_with_artifacts(small_stance_set: dict[str, Path], small_index: Path,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citator.cli.main import main
    from citator.data import read_corpus, read_ground_truth
    from citator.evaluate import evaluate
    from citator.stance.learn.pairs import QUERY_PREFIXES, query_examples
    from citator.stance.learn.fitting import examples_hash
    from citator.models.load import load_encoder
    from citator.models.transformer_encoder import QUERY_FORMAT_FILE
    from citator.stance.retrieve.ranker import LinearRanker, TreeRanker, load_ranker
    from citator.stance.retrieve.layout import read_manifest
    from citator.stance.retrieve.searcher import StanceSearcher

    # The fixture's queries are all `dev`; relabel about two thirds `train` (by proposition) for this test.
    rows = [json.loads(line) for line in small_stance_set["queries"].open()]
    props = sorted({r["proposition_id"] for r in rows})
    for r in rows:
        r["split"] = "train" if props.index(r["proposition_id"]) % 3 else "dev"
    # Two dev propositions are also asked with the other stance (answered by another dev proposition's document),
    # so that training chooses the stance contrast on dev.
    gt_rows = [json.loads(line) for line in small_stance_set["gt"].open()]
    answers = {g["query_id"]: g["relevant_doc_ids"] for g in gt_rows}
    dev_rows = [r for r in rows if r["split"] == "dev" and r["stance"] != "all"]
    for r, other in zip(dev_rows[:2], dev_rows[2:4]):
        flip = {**r, "query_id": r["query_id"] + ":flip", "stance": "refuted" if r["stance"] == "supported" else "supported"}
        rows.append(flip)
        gt_rows.append({"query_id": flip["query_id"], "relevant_doc_ids": answers[other["query_id"]]})
    queries, gt = tmp_path / "queries.jsonl", tmp_path / "ground_truth.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gt.write_text("".join(json.dumps(g) + "\n" for g in gt_rows))
    art = tmp_path / "artifacts"
    assert main(["train", "--corpus", str(small_stance_set["corpus"]), "--queries", str(queries),
                 "--ground-truth", str(gt), "--out", str(art), "--epochs", "1"]) == 0
    from citator.stance.retrieve.model import StanceModel

    model = StanceModel.load(art)
    assert model.complete and model.fusion in ("interpolate", "learned")
    dev = model.report["dev_ndcg@10"]
    assert set(dev["signals"]) >= {"bm25", "dense", "ft_dense", "memory_max", "doc_embedding", "bm25_expanded"}
    assert set(dev["fusions"]) == {"untrained_hybrid", "interpolation", "linear_cv", "lambdamart_out_of_fold"}
    # The fusion is the one that scored best on dev, and the shipped ranker is that one.
    by_ranker = {"none": dev["fusions"]["interpolation"], "linear": dev["fusions"]["linear_cv"],
                 "lambdamart": dev["fusions"]["lambdamart_out_of_fold"]}
    assert by_ranker[model.ranker] == max(by_ranker.values())
    assert model.fusion == ("interpolate" if model.ranker == "none" else "learned")
    shipped = load_ranker(art / "ranker.json")
    assert isinstance(shipped, TreeRanker if model.ranker == "lambdamart" else LinearRanker)
    # The out-of-fold features came from encoders fine-tuned on exactly the other fold's train queries.
    train_q, train_qrels = load_labeled([(queries, gt)], "train")
    doc_ids = [d.doc_id for d in read_corpus(small_stance_set["corpus"])]
    fold_of = proposition_folds(train_q, 2)
    full = json.loads((art / "encoder" / "citator_finetune.json").read_text())
    assert full["examples_sha256"] == examples_hash(query_examples(train_q, train_qrels, doc_ids))
    for f in (0, 1):
        fold = json.loads((art / "work" / "folds" / f"fold-{f}" / "encoder" / "citator_finetune.json").read_text())
        others = [q for q, k in zip(train_q, fold_of) if k != f]
        assert fold["examples_sha256"] == examples_hash(query_examples(others, train_qrels, doc_ids))
    assert "dense" not in model.weights  # superseded by ft_dense: searches encode each query once
    # The manifest reports the stance-contrast weight that scored best on dev's two both-stance propositions
    # (smallest on a tie) unless the chosen ranker was fitted on dev itself; no build takes it.
    # Never the refuter slots (a CaseFacts-specific prior, opt-in by --config only): the manifest has no number for
    # them, though the shipped memory, which also holds dev's propositions, knows refuters.
    from citator.stance.retrieve.memory import PropositionMemory, citation_counts

    shipped_memory = PropositionMemory.load(art / "memory")
    titles = [d.title for d in read_corpus(small_stance_set["corpus"])]
    doc_ids = [d.doc_id for d in read_corpus(small_stance_set["corpus"])]
    links = shipped_memory.link(doc_ids, titles)
    assert contrast.known_refuters(citation_counts(shipped_memory, links, len(doc_ids))).any()
    assert "refuter_slots" not in json.dumps(model.to_json())
    table = model.report["stance_contrast"]["dev"]
    assert model.ranker != "linear"  # else no weight would be chosen (test_contrast covers that skip)
    assert set(table) == {f"{w:g}" for w in contrast.GRID} and table["0"]["queries"] == 4
    best = max(v["strict_ndcg@10"] for v in table.values())
    first = next(table[f"{w:g}"] for w in contrast.GRID if table[f"{w:g}"]["strict_ndcg@10"] == best)
    assert model.report["stance_contrast"]["best_on_dev"] == first["weight"]
    # The fine-tuned MiniLM carries its learned stance instructions and applies them.
    saved_format = json.loads((art / "encoder" / QUERY_FORMAT_FILE).read_text())
    assert saved_format["query_prefixes"] == QUERY_PREFIXES
    assert load_encoder(art / "encoder").format_query("x", "refuted") == QUERY_PREFIXES["refuted"] + "x"
    assert not (art / "work" / "dev-index").exists()
    # Selection over, the shipped memory holds train's and dev's propositions (dev ones encoded like train's).
    props = {split: {r["proposition_id"] for r in rows if r["split"] == split} for split in ("train", "dev")}
    memory_props = [e["proposition_id"] for e in map(json.loads, (art / "memory" / "memory.jsonl").open())]
    assert set(memory_props) == props["train"] | props["dev"]
    assert model.report["training"]["memory_entries_from_dev"] == sum(p in props["dev"] for p in memory_props) > 0
    assert len(np.load(art / "memory" / "memory_vectors.npy")) == len(memory_props)

    # A rerun with the same inputs and settings reuses the finished encoder (resume); other settings retrain it.
    weights = art / "encoder" / "model.safetensors"
    before = weights.stat().st_mtime_ns
    train_args = ["train", "--corpus", str(small_stance_set["corpus"]), "--queries", str(queries),
                  "--ground-truth", str(gt), "--out", str(art), "--epochs", "1"]
    assert model.report["timings"]["reused_encoders"] == 0
    assert main(train_args) == 0 and weights.stat().st_mtime_ns == before
    rerun = StanceModel.load(art)
    assert rerun.complete and rerun.report["timings"]["reused_encoders"] == 3  # the full one and both folds'
    assert main([*train_args[:-1], "2"]) == 0 and weights.stat().st_mtime_ns != before
    assert StanceModel.load(art).report["timings"]["reused_encoders"] == 0
    # --memory-train-only keeps dev out of the memory (the encoders are reused: the same settings as just now).
    assert main([*train_args[:-1], "2", "--memory-train-only"]) == 0
    assert {e["proposition_id"] for e in map(json.loads, (art / "memory" / "memory.jsonl").open())} == props["train"]
    assert "memory_entries_from_dev" not in StanceModel.load(art).report["training"]

    index = tmp_path / "index"
    # The build takes the base passages training left in artifacts/work (same corpus, same encoder): it encodes
    # nothing. A copy of the artifacts without work/ builds as well, encoding the corpus itself.
    from citator.stance.retrieve.late_interaction import TokenStore

    def encodings_in_build(artifacts: Path, index_dir: Path) -> int:
        """How often a `citator build` with these artifacts encoded the corpus's passages."""
        calls: list[int] = []
        with monkeypatch.context() as patch:
            patch.setattr(TokenStore, "encode", counting(TokenStore.encode, calls))
            assert main(["build", "--corpus", str(small_stance_set["corpus"]), "--index-dir", str(index_dir),
                         "--artifacts", str(artifacts), "--no-serve"]) == 0
        return len(calls)

    assert encodings_in_build(art, index) == 0
    copied = tmp_path / "artifacts-copy"
    shutil.copytree(art, copied, ignore=shutil.ignore_patterns("work"))
    assert encodings_in_build(copied, tmp_path / "index-copy")
    # A damaged cache (a copy cut short) is not fatal either: the build warns and encodes.
    damaged = tmp_path / "artifacts-damaged"
    shutil.copytree(art, damaged, ignore=shutil.ignore_patterns("folds"))
    cached = next((damaged / "work").glob("base-passages-*.npy"))
    cached.write_bytes(cached.read_bytes()[:100])
    assert encodings_in_build(damaged, tmp_path / "index-damaged")
    assert np.array_equal(np.load(read_manifest(index).path(index, "dense.npy")),
                          np.load(read_manifest(tmp_path / "index-copy").path(tmp_path / "index-copy", "dense.npy")))
    assert read_manifest(index).source.artifacts_path == str(art.absolute())
    searcher = StanceSearcher(index)
    assert {"memory_max", "doc_embedding", "bm25_expanded"} <= set(searcher.available_signals())
    assert searcher.learned is not None and searcher.learned.expanded is not None
    assert searcher.learned.doc_vectors is not None and searcher.learned.doc_vectors.shape[0] == len(searcher.doc_ids)
    assert "dense" not in searcher.needed_signals()
    # The ranker reads late interaction, so the index holds every document's content tokens and searches use them.
    assert searcher.ranker is not None and "maxsim:raw" in searcher.ranker.features
    assert searcher.uses_late_interaction and searcher.late_store is not None
    assert len(searcher.late_store.offsets) == len(searcher.doc_ids) + 1 and len(searcher.late_store.tokens) > 0
    all_queries = read_queries(queries)
    results = searcher.search(all_queries, 10)
    assert validate_results(results, set(searcher.doc_ids), all_queries, 10) == []
    # The artifacts are what ranks: on these (learned) queries they beat the same corpus indexed without them.
    qrels = read_ground_truth(gt)
    ids = [q.query_id for q in all_queries]

    def ndcg(res) -> float:  # type: ignore[no-untyped-def]
        return evaluate(qrels, {r.query_id: [d.doc_id for d in r.results] for r in res}, ["ndcg@10"], ids)["ndcg@10"]

    assert ndcg(results) > ndcg(StanceSearcher(small_index).search(all_queries, 10)) + 0.05
    # The build takes no contrast weight and no refuter slots from artifacts (both opt-in by --config). With a
    # weight, every text asked with both stances (here all of them, each with the stance it lacks as well) has
    # answers moved; `all` queries keep theirs.
    assert searcher.config.stance_contrast == 0.0
    assert searcher.config.refuter_slots == 0
    flipped = [Query(q.query_id + ":other", q.text, "refuted" if q.stance == "supported" else "supported")
               for q in all_queries if q.stance != "all"]
    asked = flipped + list(all_queries)
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=0.0, refuter_slots=0)
    before = searcher.search(asked, 10)
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=2.0)
    after = searcher.search(asked, 10)
    assert validate_results(after, set(searcher.doc_ids), asked, 10) == []
    moved = [q.stance for q, a, b in zip(asked, before, after) if a.doc_ids != b.doc_ids]
    assert len(moved) >= len(asked) // 4 and "all" not in moved
    # Refuter slots, when a --config file turns them on: the memory's known refuters take the first places of every
    # both-stance refuted answer and leave those of the supported ones; `all` answers do not move. (This memory is train's, which asks nothing
    # both ways: three documents are made refuters by hand.)
    assert not contrast.known_refuters(searcher.learned.citations).any()
    paired = np.zeros(len(searcher.doc_ids), dtype=np.float32)
    paired[[1, 4, 7]] = 1.0
    original = searcher.learned
    searcher.learned = dataclasses.replace(original, citations={**original.citations, "paired_refuted": paired})
    refuters = contrast.known_refuters(searcher.learned.citations)
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=0.0, refuter_slots=2)
    slotted = searcher.search(asked, 10)
    assert validate_results(slotted, set(searcher.doc_ids), asked, 10) == []
    known = {searcher.doc_ids[i] for i in np.flatnonzero(refuters)}
    for q, a, b in zip(asked, before, slotted):
        if q.stance == "all":
            assert a.doc_ids == b.doc_ids
        elif q.stance == "refuted":
            assert set(b.doc_ids[: min(2, len(known))]) <= known
        else:
            assert not set(b.doc_ids[:2]) & known
    assert [r.doc_ids for r in searcher.search(asked, 10, batch_size=3)] == [r.doc_ids for r in slotted]
    searcher.learned = original
    searcher.config = dataclasses.replace(searcher.config, stance_contrast=0.0, refuter_slots=0)
    assert searcher._encoder is None  # the base encoder was never needed, so never loaded
    # A cold run.sh (the index's ONNX query encoder) ranks exactly as the server (torch) does.
    # It hashes the index's files it reads, and not the fine-tuned encoder's weights, which it never loads.
    from citator.stance.retrieve import index_files

    hashed: list[str] = []
    with monkeypatch.context() as patch:
        patch.setattr(index_files, "sha256_file", counting(index_files.sha256_file, hashed, by_name=True))
        cold = StanceSearcher(index, cold=True)
    assert type(cold.ft_encoder).__name__ == "OnnxEncoder"
    assert "finetuned.onnx" in hashed and "dense.npy" in hashed and "model.safetensors" not in hashed
    assert [[d.doc_id for d in r.results] for r in cold.search(all_queries, 10)] == [[d.doc_id for d in r.results] for r in results]

    # A rebuild for these artifacts can take the base passages from the index already built from the same corpus and
    # encoder (benchmarks/learning.py --reuse-passages): nothing is encoded again and the answers are the same.
    # An index of another corpus offers nothing.
    from citator.stance.workload import build
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path
    from citator.data.hashing import sha256_file
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.retrieve.layout import open_folder
    from citator.stance.retrieve.model import StanceModel
    from citator.stance.retrieve.passage_store import index_passages

    base_sha256 = model_fingerprint(default_encoder_path())
    reused = index_passages(open_folder(index), sha256_file(small_stance_set["corpus"]), base_sha256)
    assert reused is not None
    other_corpus = tmp_path / "other-corpus.jsonl"
    other_corpus.write_text("".join(small_stance_set["corpus"].read_text().splitlines(keepends=True)[1:]))
    assert index_passages(open_folder(index), sha256_file(other_corpus), base_sha256) is None
    with monkeypatch.context() as patch:
        patch.setattr(TokenStore, "encode", crash_if_called)
        # The copy without work/: nothing but the passages handed over can spare the encoding.
        build(small_stance_set["corpus"], tmp_path / "index-reused",
              BuildOptions(artifacts=StanceModel.load(copied), passages=reused), serve=False)
    rebuilt = StanceSearcher(tmp_path / "index-reused")
    assert rebuilt.config.refuter_slots == 0 and rebuilt.config.stance_contrast == 0
    again = rebuilt.search(all_queries, 10)
    assert [r.doc_ids for r in again] == [r.doc_ids for r in results]

    # Under learned fusion the documents below the ranker's candidates are placed per query: a query's scores do
    # not depend on the rest of the batch (float noise of batched encoding aside).
    searcher.ranker = dataclasses.replace(searcher.ranker, candidates=5)  # type: ignore[arg-type]
    searcher.config = dataclasses.replace(searcher.config, fusion="learned", stance_contrast=0.0, refuter_slots=0)
    together = searcher.search(all_queries, 20)
    for q, joint in zip(all_queries[:4], together):
        single = searcher.search([q], 20)[0]
        assert single.doc_ids[:5] == joint.doc_ids[:5]
        assert np.allclose([d.score for d in single.results], [d.score for d in joint.results], atol=1e-4)

    # A retrain that dies half-way (here in the document vectors, after the new encoder replaced the old one)
    # leaves artifacts that are refused, not the new encoder passing with the old memory and ranker.
    from citator.errors import IndexDirError
    from citator.stance.learn import fitting as fitting_module
    from citator.stance.retrieve.model import StanceModel

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("power cut")

    monkeypatch.setattr(fitting_module, "fit_document_deltas", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        main([*train_args[:-1], "3"])
    stamp = json.loads((art / "encoder" / "citator_finetune.json").read_text())["finetune"]
    assert stamp["epochs"] == 3
    # "auto" is recorded as what it stood for on this machine.
    from citator.stance.learn.finetune import resolve_precision, training_device

    assert stamp["precision"] == resolve_precision("auto", training_device()) in ("fp32", "bf16")
    with pytest.raises(IndexDirError, match="training did not finish"):
        StanceModel.load(art)
    # The index built before holds its own copy of what it searches with: the half-retrained artifacts leave it
    # answering exactly as it did.
    assert [r.doc_ids for r in StanceSearcher(index).search(all_queries, 10)] == [r.doc_ids for r in results]
    assert main(["build", "--corpus", str(small_stance_set["corpus"]), "--index-dir", str(tmp_path / "index2"),
                 "--artifacts", str(art), "--no-serve"]) == 2


def crash_if_called(*args: object, **kwargs: object) -> None:
    raise AssertionError("called")


def counting(function, calls: list, by_name: bool = False):  # type: ignore[no-untyped-def]
    """`function`, noting each call in `calls` (the name of its first argument, a path, with `by_name`)."""
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(Path(args[0]).name if by_name else 1)
        return function(*args, **kwargs)
    return wrapper


def test_proposition_folds_keep_a_propositions_stances_together() -> None:
    from citator.data import Query

    queries = [Query(f"p{i}:{s}", f"text {i}", s, extra={"proposition_id": f"p{i}"})
               for i in range(40) for s in ("supported", "refuted", "all")]
    folds = proposition_folds(queries, 2)
    by_prop: dict[str, set[int]] = {}
    for q, f in zip(queries, folds):
        by_prop.setdefault(q.extra["proposition_id"], set()).add(int(f))
    assert all(len(v) == 1 for v in by_prop.values())
    assert set(folds.tolist()) == {0, 1}
    assert proposition_folds(queries, 2).tolist() == folds.tolist()  # the same in every process (no salted hash)


@pytest.mark.slow
def test_train_with_one_training_proposition_skips_lambdamart_and_says_why(small_stance_set: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    from citator.stance.learn.train import train

    first = json.loads(small_stance_set["queries"].open().readline())["proposition_id"]
    queries = write_resplit(small_stance_set, tmp_path,
                            lambda i, r, props: "train" if r["proposition_id"] == first else "dev")
    model = train(small_stance_set["corpus"], [(queries, small_stance_set["gt"])], [], tmp_path / "art",
                  TrainingOptions(finetune=FinetuneConfig(epochs=1), progress=False))
    assert model.complete and model.report["skipped"]["lambdamart"] == "train's propositions all fall in one fold"
    assert model.ranker in ("none", "linear")
    assert "lambdamart_out_of_fold" not in model.report["dev_ndcg@10"]["fusions"]
    # Nothing is asked with both stances here, and a ranker fitted on dev could not choose a contrast either.
    found = model.report["stance_contrast"]
    assert found["best_on_dev"] == 0.0
    assert ("fitted on dev" if model.ranker == "linear" else "no proposition") in found["dev"]["skipped"]


@pytest.mark.slow
def test_dev_with_one_proposition_skips_the_cross_validated_ranker_and_says_why(
    small_stance_set: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from citator.stance.learn.train import train

    last = json.loads(small_stance_set["queries"].read_text().splitlines()[-1])["proposition_id"]
    queries = write_resplit(small_stance_set, tmp_path,
                            lambda i, r, props: "dev" if r["proposition_id"] == last else "train")
    model = train(small_stance_set["corpus"], [(queries, small_stance_set["gt"])], [], tmp_path / "art",
                  TrainingOptions(finetune=FinetuneConfig(epochs=1), progress=True))
    assert model.complete and model.report["skipped"]["linear"] == "dev's propositions all fall in one of the two folds"
    assert "linear_cv" not in model.report["dev_ndcg@10"]["fusions"] and model.ranker != "linear"
    # The long stages without a progress bar of their own say when they start.
    err = capsys.readouterr().err
    for stage in ("dev index and fusion weights on", "out-of-fold ranker features for", "fold 1 of 2:",
                  "fold 2 of 2:"):
        assert stage in err, stage
    assert ("LambdaMART on" in err) == ("lambdamart_out_of_fold" in model.report["dev_ndcg@10"]["fusions"])


def test_train_and_dev_must_not_share_propositions(small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    from citator.stance.learn.train import train

    # The stances of one proposition land on both sides.
    queries = write_resplit(small_stance_set, tmp_path, lambda i, r, props: "train" if i % 2 else "dev")
    with pytest.raises(CitatorError, match="propositions are in both train and dev"):
        train(small_stance_set["corpus"], [(queries, small_stance_set["gt"])], [], tmp_path / "art",
              TrainingOptions(progress=False))


def test_train_refuses_fewer_than_two_folds_before_any_work(small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    from citator.stance.learn.train import train

    with pytest.raises(CitatorError, match="folds must be at least 2"):
        train(small_stance_set["corpus"], [(small_stance_set["queries"], small_stance_set["gt"])], [], tmp_path / "art",
              TrainingOptions(folds=1, progress=False))
    assert not (tmp_path / "art").exists()


def test_a_changed_base_encoder_is_not_taken_for_the_old_one(small_stance_set: dict[str, Path], tmp_path: Path) -> None:
    """Same folder name, other weights: the fine-tuned encoder and cached vectors are not reused, and an index
    built with the new weights refuses artifacts trained on the old ones."""
    import shutil

    from safetensors.numpy import load_file, save_file

    from citator.errors import IndexDirError
    from citator.stance.learn.train import train
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path
    from citator.stance.retrieve.index_dir import BuildOptions, build_index
    from citator.stance.retrieve.model import StanceModel

    queries = write_resplit(small_stance_set, tmp_path,
                            lambda i, r, props: "train" if props.index(r["proposition_id"]) % 2 else "dev")
    model = tmp_path / "a" / "model"
    shutil.copytree(default_encoder_path(), model)
    art = tmp_path / "art"
    args = (small_stance_set["corpus"], [(queries, small_stance_set["gt"])], [], art)
    first = train(*args, TrainingOptions(base_encoder=model, finetune=FinetuneConfig(epochs=1), progress=False))
    assert first.base_encoder.sha256 == model_fingerprint(model)
    weights = model / "model.safetensors"
    tensors = load_file(weights)
    name = next(k for k in tensors if k.endswith("word_embeddings.weight"))
    tensors[name] = tensors[name] * 1.5
    save_file(tensors, weights)
    assert model_fingerprint(model) != first.base_encoder.sha256
    with pytest.raises(IndexDirError, match="trained against encoder"):
        build_index(small_stance_set["corpus"], tmp_path / "index",
                    BuildOptions(model, artifacts=StanceModel.load(art), progress=False))
    second = train(*args, TrainingOptions(base_encoder=model, finetune=FinetuneConfig(epochs=1), progress=False))
    assert second.report["timings"]["reused_encoders"] == 0
    assert second.base_encoder.sha256 == model_fingerprint(model)
    assert len(list((art / "work").glob("base-passages-*.npy"))) == 2  # new vectors, cached under the new weights
    build_index(small_stance_set["corpus"], tmp_path / "index",
                BuildOptions(model, artifacts=StanceModel.load(art), progress=False))


@pytest.mark.slow
def test_base_passages_are_reused_only_under_the_same_rules_and_a_base_index_leaves_them_cached(
        small_stance_set: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citator.data.hashing import sha256_file
    from citator.stance.learn.train import train
    from citator.models.fingerprint import model_fingerprint
    from citator.models.load import default_encoder_path
    from citator.stance.retrieve import passage_store
    from citator.stance.retrieve.index_dir import BuildOptions
    from citator.stance.retrieve.layout import open_folder
    from citator.stance.retrieve.model import StanceModel
    from citator.stance.retrieve.passage_store import PassageStore, index_passages
    from citator.stance.workload import build
    from citator.stance.retrieve.late_interaction import TokenStore

    queries = write_resplit(small_stance_set, tmp_path,
                            lambda i, r, props: "train" if props.index(r["proposition_id"]) % 2 else "dev")
    corpus, base_sha256 = small_stance_set["corpus"], model_fingerprint(default_encoder_path())
    first = tmp_path / "first"
    one_epoch = TrainingOptions(finetune=FinetuneConfig(epochs=1), progress=False)
    train(corpus, [(queries, small_stance_set["gt"])], [], first, one_epoch)
    index = tmp_path / "index"
    with monkeypatch.context() as patch:
        patch.setattr(TokenStore, "encode", crash_if_called)
        build(corpus, index, BuildOptions(artifacts=StanceModel.load(first)), serve=False)
        # Training from that index encodes nothing, and caches what it took: building with its artifacts needn't.
        second = tmp_path / "second"
        train(corpus, [(queries, small_stance_set["gt"])], [], second,
              dataclasses.replace(one_epoch, base_index=index))
        build(corpus, tmp_path / "index2", BuildOptions(artifacts=StanceModel.load(second)), serve=False)
    store = PassageStore(second / "work")
    assert store.holds(sha256_file(corpus), base_sha256)
    assert index_passages(open_folder(index), sha256_file(corpus), base_sha256) is not None

    # Passages made under other rules (another citator version, token filter or PASSAGE_RULES_VERSION) are not
    # found, in a work folder or in an index: a build encodes the corpus again.
    with monkeypatch.context() as patch:
        patch.setattr(passage_store, "PASSAGE_RULES_VERSION", passage_store.PASSAGE_RULES_VERSION + 1)
        assert not store.holds(sha256_file(corpus), base_sha256)
        assert index_passages(open_folder(index), sha256_file(corpus), base_sha256) is None
        calls: list[int] = []
        patch.setattr(TokenStore, "encode", counting(TokenStore.encode, calls))
        build(corpus, tmp_path / "index3", BuildOptions(artifacts=StanceModel.load(second)), serve=False)
        assert calls
        # Training again under the new rules caches passages under them and removes the old rules' cache.
        old_cache = [p.name for p in (second / "work").glob("base-passages-*")]
        train(corpus, [(queries, small_stance_set["gt"])], [], second, one_epoch)
        new_cache = [p.name for p in store.files(sha256_file(corpus), base_sha256)]
        assert sorted(p.name for p in (second / "work").glob("base-passages-*")) == sorted(new_cache)
        assert len(old_cache) == 2 and not set(old_cache) & set(new_cache)
    # A manifest without the rules is not an index of this format: refused, so nothing is reused from it.
    manifest_path = index / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["passage_rules"]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(IndexDirError, match="passage_rules"):
        index_passages(open_folder(index), sha256_file(corpus), base_sha256)


def test_side_by_side_by_default_only_on_two_cpu_cores_without_a_gpu_and_for_enough_steps() -> None:
    from citator.stance.learn.fitting import SIDE_BY_SIDE_MIN_STEPS, side_by_side_by_default, usable_cpus

    assert side_by_side_by_default(1128, 2, cuda=False)  # CaseFacts' three encoders on this machine
    assert not side_by_side_by_default(1128, 2, cuda=True)
    assert not side_by_side_by_default(1128, 1, cuda=False)
    assert not side_by_side_by_default(SIDE_BY_SIDE_MIN_STEPS - 1, 2, cuda=False)
    assert usable_cpus() >= 1


@pytest.mark.slow
def test_encoders_fine_tuned_side_by_side_are_the_ones_a_single_thread_would_train(
        small_stance_set: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from safetensors.numpy import load_file

    from citator.cli.main import main
    from citator.stance.learn import fitting as fitting_module
    from citator.stance.learn.train import train
    from citator.stance.retrieve.model import StanceModel

    queries = write_resplit(small_stance_set, tmp_path,
                            lambda i, r, props: "train" if props.index(r["proposition_id"]) % 2 else "dev")
    args = (small_stance_set["corpus"], [(queries, small_stance_set["gt"])], [])
    if torch.cuda.is_available():
        pytest.skip("compares against single-thread CPU training")
    # The fixture is far below the steps that make side by side pay (by default it runs in-process): asked for.
    options = TrainingOptions(finetune=FinetuneConfig(epochs=1), progress=False, side_by_side=True)
    side = train(*args, tmp_path / "side", options)
    # The full encoder and both folds' are fine-tuned in the lanes; none counts as reused.
    assert side.report["timings"]["finetuned_side_by_side"] == 3 and side.report["timings"]["reused_encoders"] == 0
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        with monkeypatch.context() as patch:  # with --no-side-by-side nothing may go to other processes
            patch.setattr(fitting_module, "run_in_lanes", crash_if_called)
            assert main(["train", "--corpus", str(small_stance_set["corpus"]), "--queries", str(queries),
                         "--ground-truth", str(small_stance_set["gt"]), "--out", str(tmp_path / "alone"),
                         "--epochs", "1", "--no-side-by-side"]) == 0
    finally:
        torch.set_num_threads(threads)
    alone = StanceModel.load(tmp_path / "alone")
    assert alone.report["timings"]["finetuned_side_by_side"] == 0
    encoders = ["encoder", "work/folds/fold-0/encoder", "work/folds/fold-1/encoder"]
    for name in encoders:
        a, b = (load_file(tmp_path / run / name / "model.safetensors") for run in ("side", "alone"))
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a), name
    # A rerun finds all three finished: nothing is fine-tuned, side by side or not.
    with monkeypatch.context() as patch:
        patch.setattr(fitting_module, "run_in_lanes", crash_if_called)
        patch.setattr(fitting_module, "finetune_query_encoder", crash_if_called)
        again = train(*args, tmp_path / "side", options)
    assert again.report["timings"]["reused_encoders"] == 3 and again.report["timings"]["finetuned_side_by_side"] == 0


def test_finetune_settings_out_of_range_are_refused_before_any_work(small_stance_set: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    from citator.cli.main import main
    from citator.errors import ConfigError

    for bad in ({"epochs": 0}, {"batch_size": 0}, {"learning_rate": float("nan")}, {"learning_rate": -1e-5},
                {"precision": "fp16"}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            FinetuneConfig(**bad)
    out = tmp_path / "art"
    assert main(["train", "--corpus", str(small_stance_set["corpus"]), "--queries", str(small_stance_set["queries"]),
                 "--ground-truth", str(small_stance_set["gt"]), "--out", str(out), "--epochs", "-3"]) == 2
    assert not out.exists()


def test_mispaired_or_partly_labeled_training_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, g, other = tmp_path / "q.jsonl", tmp_path / "g.jsonl", tmp_path / "other.jsonl"
    q.write_text("".join(json.dumps({"query_id": f"q{i}", "text": f"claim {i}", "stance": "supported",
                                     "split": "train"}) + "\n" for i in range(3)))
    other.write_text(json.dumps({"query_id": "x", "relevant_doc_ids": ["d1"]}) + "\n")
    with pytest.raises(CitatorError, match="none of its 3 train queries has ground truth"):
        load_labeled([(q, other)], "train")
    g.write_text(json.dumps({"query_id": "q0", "relevant_doc_ids": ["d1", "gone"]}) + "\n"
                 + json.dumps({"query_id": "q1", "relevant_doc_ids": ["d2"]}) + "\n")
    queries, qrels = load_labeled([(q, g)], "train", corpus_ids={"d1", "d2"})
    assert [x.query_id for x in queries] == ["q0", "q1"]
    err = capsys.readouterr().err
    assert '1 train queries have no ground truth' in err and 'query_id "q2"' in err
    assert '1 relevant_doc_ids of 1 queries are not in the corpus' in err and '"gone"' in err


def test_a_rerun_that_fails_before_replacing_anything_leaves_the_artifacts_usable(small_stance_set: dict[str, Path],
                                                                                 tmp_path: Path) -> None:
    from citator.errors import ConfigError
    from citator.stance.learn.train import train

    queries = write_resplit(small_stance_set, tmp_path,
                            lambda i, r, props: "train" if props.index(r["proposition_id"]) % 2 else "dev")
    art = tmp_path / "art"
    art.mkdir()
    manifest = {"format": "citator-artifacts/1", "complete": True, "fusion": "interpolate", "weights": {}}
    (art / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="not a model directory"):  # a mistyped --model
        train(small_stance_set["corpus"], [(queries, small_stance_set["gt"])], [], art,
              TrainingOptions(base_encoder=tmp_path / "typo", progress=False))
    assert json.loads((art / "manifest.json").read_text()) == manifest


def test_an_empty_proposition_id_counts_as_none() -> None:
    from citator.stance.learn.labeled import memory_entries, proposition_of
    from citator.data import Qrels

    q = Query("q1", "a claim", "supported", extra={"proposition_id": " "})
    assert proposition_of(q) == "q1"
    entries = memory_entries([q], Qrels.from_dict({"q1": {"d1": 1}}), {"d1": "A v. B"})
    assert entries[0].proposition_id == "q1"


def test_train_defaults_are_the_chosen_settings_and_make_artifacts_passes_data_only() -> None:
    """`citator train` with no hyperparameter flag trains what was chosen on dev (FinetuneConfig's defaults), and
    `make artifacts` adds no setting of its own, so the documented command and the shipped model are the same."""
    import re

    from citator.cli.main import build_parser

    args = build_parser().parse_args(["train", "--corpus", "c", "--queries", "q", "--ground-truth", "g", "--out", "o"])
    default = FinetuneConfig()
    assert (args.epochs, args.batch_size, args.learning_rate) == (default.epochs, default.batch_size,
                                                                   default.learning_rate)
    assert (default.epochs, default.learning_rate) == (3, 5e-5)
    makefile = (Path(__file__).resolve().parents[3] / "Makefile").read_text()
    recipe = re.search(r"^artifacts:.*?\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe is not None and "citator train" in recipe.group(1)
    # The train command: from `citator train` to its last continued line (the recipe then builds the CaseFacts
    # index with what it trained).
    lines = []
    for line in recipe.group(1).split("citator train", 1)[1].split("\n"):
        lines.append(line)
        if not line.rstrip().endswith("\\"):
            break
    flags = set(re.findall(r"--[a-z-]+", "\n".join(lines)))
    assert flags == {"--corpus", "--queries", "--ground-truth", "--out"}, flags
