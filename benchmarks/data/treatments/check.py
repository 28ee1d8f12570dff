"""Self-check of the hand-labelled treatment set (run once; prints counts, exits 1 on any error).

Checks: ids exist in the corpus, one split per document, mentions only in listed documents and in
their document's split, labels in the allowed set, every passage verbatim in the citing text
(segments joined by " [...] " are checked one by one), mention ids unique and well formed.
"""
import collections, json, re, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/stance/casefacts/corpus.jsonl")
LABELS = {"overrules", "abrogates", "limits", "questions", "follows", "distinguishes"}
KEYS = {"mention_id", "citing_doc_id", "cited_name", "cited_doc_id", "treatment", "passage", "split", "note"}


def rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as lines:  # iterate on "\n" only: texts hold U+2028
        return [json.loads(line) for line in lines if line.strip()]


def main() -> int:
    texts = {r["doc_id"]: r["text"] for r in rows(CORPUS)}
    docs, mentions, errors = rows(HERE / "docs.jsonl"), rows(HERE / "mentions.jsonl"), []
    split = {}
    for d in docs:
        if d["doc_id"] not in texts or d["doc_id"] in split or d["split"] not in ("dev", "test"):
            errors.append(f"doc {d}")
        split[d["doc_id"]] = d["split"]
    seen = set()
    for m in mentions:
        mid, doc = m.get("mention_id"), m.get("citing_doc_id")
        if not KEYS <= set(m) or not re.fullmatch(r"tm-\d{4}", mid or "") or mid in seen:
            errors.append(f"{mid}: keys or id")
        seen.add(mid)
        if doc not in split or m["split"] != split[doc]:
            errors.append(f"{mid}: citing doc not listed or split differs")
        if m["treatment"] not in LABELS:
            errors.append(f"{mid}: label {m['treatment']}")
        for cid in [m["cited_doc_id"]] + m.get("cited_doc_ids_any", []):
            if cid is not None and cid not in texts:
                errors.append(f"{mid}: unknown cited id {cid}")
        if m["cited_doc_id"] and "cited_doc_ids_any" in m and m["cited_doc_id"] not in m["cited_doc_ids_any"]:
            errors.append(f"{mid}: cited_doc_id not among cited_doc_ids_any")
        for seg in m["passage"].split(" [...] "):
            if not seg or seg not in texts.get(doc, ""):
                errors.append(f"{mid}: passage not verbatim: {seg[:60]!r}")
    for e in errors:
        print("ERROR", e)
    count = collections.Counter((m["split"], m["treatment"]) for m in mentions)
    print(f"{len(docs)} documents ({collections.Counter(split.values())}), {len(mentions)} mentions")
    for s in ("dev", "test"):
        print(s, {t: count[(s, t)] for t in sorted(LABELS)})
    print("errors:", len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
