"""Write the metadata of a CaseFacts corpus in citator's schema (docs/metadata.md) from the shared metadata.jsonl.

    python scripts/casefacts_metadata.py SHARED_METADATA.jsonl CORPUS.jsonl OUT.jsonl

One line per document of CORPUS, in its order. The shared file's values are kept as they are, except that a null is
left out (absent) and a list of names (concurring, dissenting) becomes one text, the names joined by "; ": the
schema takes strings and numbers only. `name` is left out (the corpus's title is the case name).
`make demo`'s sample metadata (src/citator/samples/casefacts/metadata.jsonl) and the metadata `make artifacts` builds
the CaseFacts index with are made by this command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def converted(row: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in row.items():
        if value is None or key == "name":
            continue
        if isinstance(value, list):
            value = "; ".join(str(v) for v in value)
            if not value:
                continue
        out[key] = value
    return out


def main(shared: str, corpus: str, out: str) -> int:
    rows = {}
    for line in Path(shared).read_text(encoding="utf-8").split("\n"):
        if line.strip():
            row = json.loads(line)
            rows[row["doc_id"]] = converted(row)
    ids = [json.loads(line)["doc_id"] for line in Path(corpus).read_text(encoding="utf-8").split("\n") if line.strip()]
    lines = [json.dumps(rows[d], ensure_ascii=False) for d in ids if d in rows]
    Path(out).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"wrote {out}: metadata of {len(lines)} of the {len(ids)} documents", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
