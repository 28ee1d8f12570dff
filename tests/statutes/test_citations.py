"""Every citation form the spec names resolves by direct lookup; versions and unknowns are plain."""

from __future__ import annotations

from pathlib import Path

import pytest

from citator.data.citations import Citation, CitationResolver, parse_citation
from citator.data.statutes import read_sections


@pytest.mark.parametrize(
    ("text", "jurisdiction", "number"),
    [
        ("NRS 432B.220", "NV", "432B.220"),
        ("432B.220", "NV", "432B.220"),
        ("N.R.S. 1.210", "NV", "1.210"),
        ("Nev. Rev. Stat. § 432B.260", "NV", "432B.260"),
        ("NRS 0.025", "NV", "0.025"),
        ("  nrs 432b.220 ", "NV", "432B.220"),
        ("NRS 432B.220 .", "NV", "432B.220"),
        ("D.C. Official Code Ann. § 28:2-201", "DC", "28:2-201"),
        ("D.C. Code § 42-3505.01", "DC", "42-3505.01"),
        ("DC Code 16-1501", "DC", "16-1501"),
        ("§ 22-3211", "DC", "22-3211"),
        ("D.C. Code § 28:2-201", "DC", "28:2-201"),
    ],
)
def test_every_form_parses(text: str, jurisdiction: str, number: str) -> None:
    assert parse_citation(text) == Citation(jurisdiction, number)


@pytest.mark.parametrize("text", ["", "child abuse reporting", "NRS", "NRS 22-3211", "D.C. Code § 432B.220", "§§"])
def test_non_citations_are_refused(text: str) -> None:
    assert parse_citation(text) is None


def test_long_runs_of_space_cost_one_pass() -> None:
    """A page's question box and a suite's query reach the parser: 20,000 spaces once took it 8 s (two `\\s*` side
    by side try every split). Here 10^6 characters, and the pattern itself on 200,000: quadratic would run for
    hours, so the subprocess's limit stops a regression instead of letting it hang the suite."""
    import subprocess
    import sys

    code = ("from citator.data.citations import _CITATION, base_doc_id, parse_citation\n"
            "assert base_doc_id('x' + ' ' * 200_000 + 'y').endswith('y')\n"
            "assert parse_citation(' ' * 10**6 + 'x') is None and parse_citation('NRS' + ' ' * 10**6) is None\n"
            "assert _CITATION.fullmatch('NRS' + ' ' * 200_000 + 'x') is None\n"
            "assert _CITATION.fullmatch('NRS 432B.220' + ' ' * 200_000 + 'x') is None\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize(
    ("text", "doc_id"),
    [("NRS 432B.220", "NRS 432B.220"), ("432B.220", "NRS 432B.220"), ("N.R.S. 1.210", "NRS 1.210"),
     ("Nev. Rev. Stat. § 432B.260", "NRS 432B.260")],
)
def test_nrs_forms_resolve_in_the_corpus(nrs_sections: Path, text: str, doc_id: str) -> None:
    resolver = CitationResolver(s.doc_id for s in read_sections(nrs_sections))
    res = resolver.resolve(text)
    assert res.found and res.doc_ids == (doc_id,)


@pytest.mark.parametrize(
    ("text", "doc_id"),
    [("D.C. Code § 42-3505.01", "D.C. Code § 42-3505.01"), ("DC Code 16-1501", "D.C. Code § 16-1501"),
     ("§ 22-3211", "D.C. Code § 22-3211"), ("D.C. Code § 28:2-201", "D.C. Code § 28:2-201")],
)
def test_dc_forms_resolve_in_the_corpus(dc_sections: Path, text: str, doc_id: str) -> None:
    resolver = CitationResolver(s.doc_id for s in read_sections(dc_sections))
    assert resolver.resolve(text).doc_ids == (doc_id,)


def test_a_section_printed_twice_returns_both_versions(nrs_sections: Path) -> None:
    resolver = CitationResolver(s.doc_id for s in read_sections(nrs_sections))
    res = resolver.resolve("NRS 1.510")
    assert res.doc_ids == ("NRS 1.510", "NRS 1.510 (version 2)")
    assert "2 printed versions" in res.message


def test_unknown_citations_say_so_plainly(nrs_sections: Path) -> None:
    resolver = CitationResolver(s.doc_id for s in read_sections(nrs_sections))
    missing = resolver.resolve("NRS 999.999")
    assert not missing.found and missing.message == "NRS 999.999 is not in this corpus"
    other = resolver.resolve("§ 22-3211")
    assert other.message == "D.C. Code § 22-3211 is not in this corpus"
    junk = resolver.resolve("what is the law")
    assert junk.citation is None and junk.message.startswith("not a recognised NRS or D.C. Code citation")
