"""Check pairs.jsonl and pairs-more.jsonl against the CaseFacts corpus; print their counts. Run once after writing.

pairs-more.jsonl is train only, over documents that no CaseFacts dev or test claim is about and that neither
pairs.jsonl nor a fresh-stance set holds.

    python benchmarks/data/legal-stance-pairs/check.py [/work/shared/data/stance/casefacts/corpus.jsonl]
"""
import collections
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
CORPUS = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/stance/casefacts/corpus.jsonl"
LABELS = {"supports", "contradicts", "neutral"}
KINDS = {"paraphrase", "negation", "antonym", "modal", "party-flip", "scope", "question-answer",
         "plain-language", "dissent-trap", "neutral-topic"}
PARTS = {"conclusion": "Conclusion: ", "question": "Question: ", "facts": "Facts of the case: "}
FIELDS = ["pair_id", "doc_id", "passage", "part", "proposition", "label", "split", "kind", "note"]


def part_text(text: str, part: str) -> str:
    start = text.find(PARTS[part])
    ends = [text.find(p, start + 1) for p in PARTS.values() if text.find(p, start + 1) > start]
    return text[start:min(ends)] if ends else text[start:]


def more_errors(more: list[dict], first: set[str], casefacts: pathlib.Path) -> list[str]:
    """What pairs-more.jsonl must keep besides every row's checks: train only, and none of the documents that
    pairs.jsonl, a fresh-stance set or a CaseFacts dev/test claim is about."""
    split = {}
    for name in ("queries.jsonl", "queries_overruled.jsonl"):
        split.update({q["query_id"]: q["split"] for q in map(json.loads, open(casefacts / name))})
    held = set()
    for name in ("ground_truth.jsonl", "ground_truth_overruled.jsonl"):
        held |= {d for g in map(json.loads, open(casefacts / name)) if split[g["query_id"]] != "train"
                 for d in g["relevant_doc_ids"]}
    for name in ("fresh-stance", "fresh-stance-2"):
        held |= {d for g in map(json.loads, open(REPO / "benchmarks/data" / name / "ground_truth.jsonl"))
                 for d in g["relevant_doc_ids"]}
    errors = [f"{r['pair_id']}: pairs-more rows are train only" for r in more if r["split"] != "train"]
    errors += [f"{r['pair_id']}: doc {r['doc_id']} is in pairs.jsonl" for r in more if r["doc_id"] in first]
    errors += [f"{r['pair_id']}: doc {r['doc_id']} is held out (CaseFacts dev/test or fresh-stance)"
               for r in more if r["doc_id"] in held]
    return errors


def main() -> int:
    corpus = {d["doc_id"]: d["text"] for d in map(json.loads, open(CORPUS))}
    sample = {json.loads(x)["doc_id"] for x in open(REPO / "src/citator/samples/casefacts/corpus.jsonl")}
    fresh = {json.loads(x)["text"].lower() for x in open(REPO / "benchmarks/data/fresh-stance/queries.jsonl")}
    rows = [json.loads(x) for x in open(HERE / "pairs.jsonl")]
    more = [json.loads(x) for x in open(HERE / "pairs-more.jsonl")]
    errors = more_errors(more, {r["doc_id"] for r in rows}, pathlib.Path(CORPUS).parent)
    rows += more
    split_of, labels_of = {}, collections.defaultdict(set)
    for r in rows:
        where = r.get("pair_id")
        if list(r) != FIELDS:
            errors.append(f"{where}: fields {list(r)}")
            continue
        text = corpus.get(r["doc_id"])
        if text is None or r["part"] not in PARTS or r["passage"] not in part_text(text, r["part"]):
            errors.append(f"{where}: passage is not a verbatim excerpt of the doc's {r['part']}")
        if r["label"] not in LABELS or r["kind"] not in KINDS or r["split"] not in {"train", "dev", "test"}:
            errors.append(f"{where}: bad label, kind or split")
        if (r["kind"] == "neutral-topic") != (r["label"] == "neutral"):
            errors.append(f"{where}: neutral-topic kind and neutral label must go together")
        if split_of.setdefault(r["doc_id"], r["split"]) != r["split"]:
            errors.append(f"{where}: doc {r['doc_id']} is in two splits")
        if r["split"] != "train" and r["doc_id"] in sample:
            errors.append(f"{where}: {r['split']} doc is in the bundled sample")
        if r["proposition"].lower() in fresh or r["proposition"].rstrip().endswith("?"):
            errors.append(f"{where}: proposition is a fresh-stance proposition or a question")
        labels_of[r["doc_id"]].add(r["label"])
    errors += [f"doc {d}: lacks a label among {sorted(LABELS - s)}" for d, s in labels_of.items() if s != LABELS]
    ids = [r["pair_id"] for r in rows]
    dupes = collections.Counter((r["doc_id"], r["proposition"]) for r in rows)
    errors += [f"duplicate pair_id {i}" for i, n in collections.Counter(ids).items() if n > 1]
    errors += [f"duplicate proposition for {k[0]}" for k, n in dupes.items() if n > 1]
    docs = collections.Counter(split_of.values())
    in_sample = sum(d in sample for d in split_of)
    print(f"{len(rows)} pairs, {len(split_of)} docs ({in_sample} in the bundled sample); docs per split {dict(docs)}")
    table = collections.Counter((r["split"], r["label"]) for r in rows)
    for s in ("train", "dev", "test"):
        print(f"  {s:5}  " + "  ".join(f"{lab} {table[(s, lab)]}" for lab in sorted(LABELS)))
    kinds = collections.Counter((r["kind"], r["label"]) for r in rows)
    for k in sorted(KINDS):
        print(f"  {k:15} " + "  ".join(f"{lab} {kinds[(k, lab)]}" for lab in sorted(LABELS) if kinds[(k, lab)]))
    for e in errors:
        print("ERROR", e)
    print("OK" if not errors else f"{len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
