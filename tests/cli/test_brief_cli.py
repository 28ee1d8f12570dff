"""`citator brief` prints the API's brief as a table, Markdown or JSON; bad input ends in one line and exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from citator.stance.brief.index import StanceIndex
from citator.cli.main import main
from citator.data.escape import markdown_text
from fixtures.brief import HOSTILE_ID

TEXT = "A grant of land is a contract that a later legislature may not void."


def _brief(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["brief", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_the_apis_brief(brief_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _brief(capsys, "--index-dir", str(brief_index), "--format", "json", "--k", "4", TEXT)
    assert code == 0 and err == ""
    (line,) = out.splitlines()
    got = json.loads(line)
    expected = StanceIndex.open(brief_index).brief(TEXT, k=4)
    assert got["proposition"] == TEXT and got["trained"] is False
    # Untrained: one list, and no column claims a stance it was not ranked for.
    assert got["stance_ranked"] is False and got["supported"] is None and got["refuted"] is None
    assert got["heading"] == "Relevant authority (stance not ranked: train artifacts to rank it)"
    for stance in ("relevant",):
        assert [h["doc_id"] for h in got[stance]] == [h.doc_id for h in expected.column(stance)]
        assert [h["score"] for h in got[stance]] == pytest.approx([h.score for h in expected.column(stance)], abs=1e-4)
        for hit in got[stance]:
            ev = hit["evidence"]
            assert all(ev["text"][a:b] for a, b in ev["marks"]) and hit["memory"] is None
            assert {s["family"] for s in hit["signals"]} == {"lexical", "dense"}


def test_table_and_markdown_show_the_list_escaped(brief_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _brief(capsys, "--index-dir", str(brief_index), "--k", "41", TEXT)
    assert code == 0
    assert out.startswith(f"Proposition: {TEXT}\n\nRelevant authority (stance not ranked: train artifacts to rank it)\n")
    assert "SUPPORT" not in out and "REFUT" not in out
    assert "memory: no trained memory" in out and "signals: fused " in out and "*contract*" in out
    # An authority's line: its rank, title, citation and id, no fused score (raw scores are in its signals line).
    top = StanceIndex.open(brief_index).brief(TEXT, k=41).column("relevant")[0]
    first = out.splitlines()[3]
    assert first == f"  1. {top.title} | {top.label} | {top.doc_id}", first
    signals = next(line for line in out.splitlines() if line.startswith("     signals: "))
    assert signals.startswith(f"     signals: fused {top.score:.4f}; lexical: bm25 ")
    code, out, _ = _brief(capsys, "--index-dir", str(brief_index), "--k", "41", "--format", "markdown", TEXT)
    assert code == 0 and "#### Relevant authority (stance not ranked: train artifacts to rank it)" in out
    assert "Supported" not in out and " **contract** " in out
    assert not re.search(r"\w\*\*contract|contract\*\*\w", out)  # a marked term keeps its spaces
    # The hostile document's title is shown as text: no raw tag, no cell break.
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert f"<code>{markdown_text(HOSTILE_ID)}</code>" in out and "<b>" not in out
    for row in (r for r in out.splitlines() if r.startswith("| ") and r[2].isdigit()):
        assert row.count(" | ") == 3, row


def test_queries_file_gives_one_brief_per_distinct_text(brief_index: Path, small_stance_set: dict[str, Path],
                                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [json.loads(line) for line in small_stance_set["queries"].open()][:6]
    texts = list(dict.fromkeys(r["text"] for r in rows))
    out_file = tmp_path / "briefs.jsonl"
    code, out, err = _brief(capsys, "--index-dir", str(brief_index), "--queries", str(small_stance_set["queries"]),
                            "--format", "json", "--output", str(out_file))
    briefs = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert code == 0 and out == "" and err == f"wrote {out_file} ({len(briefs)} briefs)\n"
    all_texts = list(dict.fromkeys(json.loads(line)["text"] for line in small_stance_set["queries"].open()))
    assert [b["proposition"] for b in briefs] == [" ".join(t.split()) for t in all_texts]
    assert [b["proposition"] for b in briefs][: len(texts)] == [" ".join(t.split()) for t in texts]


@pytest.mark.parametrize("args,message", [
    ([], "give one proposition or --queries"),
    (["law", "--queries", "QUERIES"], "give one proposition or --queries"),
    (["--k", "0", "law"], "citator brief: --k must be a whole number from 1 to 100, got 0"),
    (["   "], "the proposition is empty"),
    (["--queries", "BAD"], "bad.jsonl line 2"),
    (["--index-dir", "MISSING", "law"], "index directory not found"),
])
def test_bad_input_is_one_line_and_exit_2(brief_index: Path, small_stance_set: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "a", "text": "law"}\n{"query_id": "b", "text": \n')
    swap = {"QUERIES": str(small_stance_set["queries"]), "BAD": str(bad), "MISSING": str(tmp_path / "none")}
    args = [swap.get(a, a) for a in args]
    index_args = [] if "--index-dir" in args else ["--index-dir", str(brief_index)]
    code, out, err = _brief(capsys, *index_args, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_a_cold_brief_in_a_real_process(brief_index: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "citator.cli.main", "brief", "--index-dir", str(brief_index),
                           "--format", "json", "--k", "3", TEXT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    expected = StanceIndex.open(brief_index).brief(TEXT, k=3)
    assert [h["doc_id"] for h in got["relevant"]] == [h.doc_id for h in expected.column("relevant")]
    assert "Traceback" not in done.stderr


def test_a_terminal_sees_no_control_characters(brief_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An escape sequence typed or stored in a corpus reaches the terminal as text, never as a command to it.
    code, out, _ = _brief(capsys, "--index-dir", str(brief_index), "--k", "2", "a grant \x1b[31mof land\x07 \u202e")
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert out.startswith("Proposition: a grant \\x1b[31mof land\\x07 \\u202e\n")


def test_one_line_escapes_what_is_not_printable() -> None:
    from citator.errors import one_line

    assert one_line("plain text, é, 中文, soft\u00adhyphen, zero\u200cjoiner") == (
        "plain text, é, 中文, soft\u00adhyphen, zero\u200cjoiner")
    assert one_line("a\nb\x1b[2J\u202e\ud800") == "a\\nb\\x1b[2J\\u202e\\ud800"
