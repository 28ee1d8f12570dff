"""The run report: Markdown and HTML tables, a forest plot of paired intervals and a reliability diagram."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

from citator.data.atomic import atomic_open, write_text_atomic

KEYS = ("queries", "hit@1", "hit@5", "hit@10", "rr", "coverage")


def _f(x: Any) -> str:
    if x is None:
        return "–"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _table(by_split: dict[str, Any] | None) -> list[list[str]]:
    rows = []
    for split, kinds in sorted((by_split or {}).items()):
        for kind, row in sorted(kinds.items()):
            rows.append([split, kind, *(_f(row[k]) for k in KEYS)])
    return rows


def _paired_rows(paired: dict[str, Any] | None) -> list[list[str]]:
    rows = []
    for split, metrics in sorted((paired or {}).items()):
        for metric, iv in metrics.items():
            rows.append([split, metric, str(iv["queries"]), str(iv["families"]), _f(iv["keyword"]), _f(iv["reranked"]),
                         _f(iv["difference"]), f"[{_f(iv['difference_ci95'][0])}, {_f(iv['difference_ci95'][1])}]"])
    return rows


def _human_rows(human: dict[str, Any]) -> list[list[str]]:
    rows = []
    for split, orders in sorted((human.get("section") or {}).items()):
        for order, m in sorted(orders.items()):
            rows.append([split, order, str(m["queries"]), str(m["p@5_queries"]), _f(m["p@5"]), str(m["ndcg@5_queries"]),
                         _f(m["ndcg@5"])])
    return rows


def _calibration_rows(human: dict[str, Any]) -> list[list[str]]:
    rows = []
    for against in ("passage", "section"):
        for split, cal in sorted((human.get(f"calibration_{against}") or {}).items()):
            if cal is None:
                rows.append([against, split, "0", "–", "–", "–", "–", "–"])
                continue
            rows.append([against, split, str(cal["n"]), _f(cal["brier"]), _f(cal["ece"]), _f(cal["agreement"]),
                         _f(cal["confidence_ece"]),
                         f"{_f(cal['threshold_useful_rate'])} (n={cal['threshold_n']})"])
    return rows


def _failure_rows(out: Path, limit: int = 50) -> list[list[str]]:
    import json

    path = out / "failures.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    rows = []
    for line in lines[:limit]:
        f = json.loads(line)
        rows.append([f["query_id"], f["stage"], f["reason"][:160], (f["request_hash"] or "–")[:12]])
    if len(lines) > limit:
        rows.append(["…", "", f"{len(lines) - limit} more in failures.jsonl", ""])
    return rows


def _model_hit(hit: dict[str, Any]) -> str:
    if "p_useful" in hit:
        return f"{hit['doc_id']} (P(useful) {hit['p_useful']:.2f})"
    if "similarity" in hit:
        return f"{hit['doc_id']} (cos {hit['similarity']:.2f})"
    return f"{hit['doc_id']} (ungraded)"


def _provider(described: dict[str, Any]) -> str:
    parts = [described.get("provider", "?"), described.get("model"), described.get("version")]
    return " ".join(str(p) for i, p in enumerate(parts) if p and (i < 2 or p != parts[1]))


def _html_fact(fact: str) -> str:
    """A Markdown fact line as HTML: escaped, with `code` spans kept as code."""
    pieces = html.escape(fact[2:]).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


def _md(header: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return "_none_\n"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def forest_plot(paired: dict[str, Any] | None) -> bytes | None:
    """Reranked minus keyword, with 95% intervals, one row per split and metric."""
    rows = [(f"{split} {metric}", iv) for split, ms in sorted((paired or {}).items()) for metric, iv in ms.items()]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 0.45 * len(rows) + 1))
    for y, (_, iv) in enumerate(reversed(rows)):
        lo, hi = iv["difference_ci95"]
        ax.plot([lo, hi], [y, y], color="black")
        ax.plot([iv["difference"]], [y], "o", color="tab:blue")
    ax.axvline(0, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(rows)), [name for name, _ in reversed(rows)])
    ax.set_xlabel("reranked − keyword (paired family bootstrap, 95%)")
    data = _png(fig)
    plt.close(fig)
    return data


def reliability_diagram(calibration: dict[str, Any] | None) -> bytes | None:
    """Observed usefulness against mean P(useful) per bin, one line per split."""
    splits = {s: c for s, c in sorted((calibration or {}).items()) if c}
    if not splits:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
    for split, cal in splits.items():
        pts = [(b["mean_predicted"], b["observed"]) for b in cal["bins"] if b["count"]]
        ax.plot([p for p, _ in pts], [o for _, o in pts], "o-", label=f"{split} (n={cal['n']}, ECE={cal['ece']:.3f})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean P(useful) in bin")
    ax.set_ylabel("share judged useful (grade ≥ 2)")
    ax.legend(loc="upper left", fontsize=8)
    data = _png(fig)
    plt.close(fig)
    return data


def _facts(manifest: dict[str, Any], metrics: dict[str, Any], human: dict[str, Any]) -> list[str]:
    """The run's facts, one line each: suite and corpus, provider and versions, budget, fallbacks, intervals."""
    facts = [
        (f"- suite: `{metrics['suite_version']}`; corpus sha256 `{manifest['corpus']['sha256'][:16]}…` "
        f"({manifest['corpus']['sections']} sections)"),
        (f"- provider: `{_provider(metrics['provider'])}`; prompt `{metrics['prompt_version']}`; retrieval "
        f"`{metrics['retrieval_version']}`; passages `{metrics['passage_version']}`"),
        (f"- provider requests: {metrics['provider_requests']} (budget {manifest['budget']['max_requests']} requests, "
        f"{manifest['budget']['max_input_tokens']} input tokens); failures: {metrics['failures'] or 'none'}"),
        (f"- keyword fallbacks (no query term matched): {metrics['keyword_fallback_queries'] or 'none'}; "
        f"secondary-baseline fallbacks: {len(metrics['secondary_baseline']['fallback_queries'])}"),
        f"- intervals: {metrics['paired_method']}",
        "- targets are provisional and incomplete: hits are not precision or recall",
    ]
    if human:
        facts.append(f"- human labels `{human['file']}`: used {human['labels_used']}, stale {human['labels_stale']}, "
                     f"incomplete {human['labels_incomplete']}, not in pool {human['labels_not_in_pool']}")
    return facts


def write_report(out: Path, manifest: dict[str, Any], metrics: dict[str, Any]) -> None:
    """report.md and report.html (figures embedded in the HTML and written beside it as PNG)."""
    header = ["split", "kind", *KEYS]
    paired_header = ["split", "metric", "queries", "families", "keyword", "reranked", "difference", "95% CI"]
    human = metrics.get("human_labels") or {}
    forest = forest_plot(metrics.get("paired"))
    reliability = reliability_diagram(human.get("calibration_passage"))
    for name, data in (("forest.png", forest), ("reliability.png", reliability)):
        if data is not None:
            with atomic_open(out / name, "wb") as handle:
                handle.write(data)
    sections = [
        ("Keyword order (primary baseline)", header, _table(metrics["by_split"])),
        ("Reranked order of the same 30", header, _table(metrics.get("reranked_by_split"))),
        ("Paired intervals (reranked − keyword)", paired_header, _paired_rows(metrics.get("paired"))),
        ("Secondary baseline: " + metrics["secondary_baseline"]["name"], header,
         _table(metrics["secondary_baseline"]["by_split"])),
    ]
    citations = [[c["query_id"], c["text"], ", ".join(c["resolved"]) or "–", c["message"]]
                 for c in metrics["controls"]["exact_citation"]]
    outside = [[c["query_id"], c["text"][:80], ", ".join(f"{h['doc_id']} ({h['score']:.2f})" for h in c["keyword_top"][:3]),
                ", ".join(_model_hit(h) for h in (c["reranked_top"] or [])[:3]) or "–"]
               for c in metrics["controls"]["outside_corpus"]]
    facts = _facts(manifest, metrics, human)
    md = ["# Statute relevance benchmark — run report", "", *facts, ""]
    for title, head, rows in sections:
        md += [f"## {title}", "", _md(head, rows)]
    if forest:
        md += ["![forest plot](forest.png)", ""]
    md += ["## Exact-citation controls (direct lookup, no model calls)", "",
           _md(["query", "text", "resolved", "message"], citations)]
    md += ["## Outside-corpus controls (not auto-judged: nothing relevant exists; inspect the top scores)", "",
           _md(["query", "text", "top keyword hits (BM25)", "top reranked hits"], outside)]
    failures = _failure_rows(out)
    failure_header = ["query", "stage", "reason", "request"]
    md += ["## Failures", "", _md(failure_header, failures)]
    human_header = ["split", "order", "queries", "P@5 queries", "P@5", "nDCG@5 queries", "pooled nDCG@5"]
    cal_header = ["grades", "split", "n", "Brier", "ECE", "exact agreement", "confidence ECE", "useful if P≥0.8"]
    if human:
        md += ["## Human labels (section grades; only fully judged queries count)", "",
               _md(human_header, _human_rows(human)),
               "## Calibration (P(useful) vs grade ≥ 2; confidence vs exact-grade agreement)", "",
               _md(cal_header, _calibration_rows(human))]
    if reliability:
        md += ["![reliability diagram](reliability.png)", ""]
    write_text_atomic(out / "report.md", "\n".join(md))

    def img(data: bytes | None, alt: str) -> str:
        if data is None:
            return ""
        return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'

    body = ["<h1>Statute relevance benchmark — run report</h1>",
            "<ul>" + "".join(f"<li>{_html_fact(f)}</li>" for f in facts) + "</ul>"]
    for title, head, rows in sections:
        body += [f"<h2>{html.escape(title)}</h2>", _html_table(head, rows)]
    body += [img(forest, "forest plot"), "<h2>Exact-citation controls</h2>",
             _html_table(["query", "text", "resolved", "message"], citations),
             "<h2>Outside-corpus controls</h2>", _html_table(["query", "text", "top keyword hits (BM25)", "top reranked hits"], outside)]
    body += ["<h2>Failures</h2>", _html_table(failure_header, failures)]
    if human:
        body += ["<h2>Human labels (section grades)</h2>", _html_table(human_header, _human_rows(human)),
                 "<h2>Calibration</h2>", _html_table(cal_header, _calibration_rows(human))]
    body.append(img(reliability, "reliability diagram"))
    style = "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}" \
        "td,th{border:1px solid #ccc;padding:2px 6px}"
    opening = (f"<!doctype html><html><head><meta charset='utf-8'><title>citator statutes report</title>"
               f"<style>{style}</style>")
    page = opening + "</head><body>" + "\n".join(body) + "</body></html>\n"
    write_text_atomic(out / "report.html", page)
