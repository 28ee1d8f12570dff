"""The surfaces of hostile input beyond the readers, counted for benchmarks/hostile.py: the brief (its renderers and
the command), the research page (its HTML and its HTTP server), the Python API, the statute vector cache, and locks
with the folders citator keeps.

Each surface is fed generated or fixed hostile inputs and every outcome is sorted into one of: answered (as it
should be), refused (one CitatorError line, exit 2), an escape (data acting in its medium: markup, a control
sequence, a file made through a planted link), a wrong answer (a forged or refused input answered, a held
connection, a foreign Host served), or a traceback (any other exception). The checks are the test suite's own
(tests/stance/brief/test_render_escaping.py, tests/server/test_ui_app.py, ...), run here on more inputs.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parents[1] / "tests"
OUTCOMES = ("tried", "answered", "refused", "escapes", "wrong_answers", "tracebacks")


class Tally:
    """Counts of one surface's outcomes."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def run(self, case: Callable[[], str | None]) -> None:
        """`case` returns "answered" or "refused", or raises AssertionError for an escape or a wrong answer (its
        message starting "escape" or not), or anything else: a traceback."""
        from citator.errors import CitatorError

        self.counts["tried"] += 1
        try:
            self.counts[case() or "answered"] += 1
        except CitatorError:
            self.counts["refused"] += 1
        except AssertionError as exc:
            self.counts["escapes" if str(exc).startswith("escape") else "wrong_answers"] += 1
        except Exception:  # noqa: BLE001 - what this counts
            self.counts["tracebacks"] += 1

    def row(self) -> dict[str, int]:
        return {k: self.counts[k] for k in OUTCOMES}


def _test_module(path: str) -> Any:
    """A module of the test suite, by its path under tests/ (benchmarks/ has modules of the same first names)."""
    import importlib.util
    import sys

    name = "citator_tests." + path.removesuffix(".py").replace("/", ".")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TESTS / path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


def _examples(n: int) -> Callable[[Any], Any]:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


def _as_escape(check: Callable[[], None]) -> str:
    """Run a test's check: its failure is data acting in the medium."""
    try:
        check()
    except AssertionError as exc:
        raise AssertionError(f"escape: {exc}") from None
    return "answered"


# -- the brief ----------------------------------------------------------------------------------------------------
def brief_renderers(examples: int) -> dict[str, int]:
    """Generated briefs (hostile ids, titles, citations, evidence, memory) through table, Markdown and JSON."""
    from fixtures.brief import hostile_briefs

    checks = _test_module("stance/brief/test_render_escaping.py")

    tally = Tally()
    tests = (checks.test_json_reads_back_as_the_brief_and_carries_no_control_character,
             checks.test_a_table_has_its_own_lines_only,
             checks.test_markdown_parses_to_the_tables_it_means_with_every_field_as_text)

    @_examples(examples)
    @given(hostile_briefs())
    def feed(brief: Any) -> None:
        for test in tests:
            tally.run(lambda: _as_escape(lambda: test.hypothesis.inner_test(brief)))

    feed()
    return tally.row()


def hostile_corpus(sample: Path, out: Path, n: int = 24) -> list[dict[str, str]]:
    """The bundled sample plus `n` documents whose id, title and text carry hostile pieces around words a
    proposition matches, so they are found."""
    from fixtures.hostile import HOSTILE_PIECES

    docs = [json.loads(line) for line in sample.read_text(encoding="utf-8").split("\n") if line.strip()]
    pieces = [p for p in HOSTILE_PIECES if p.strip("\n\r\t\x0b\x0c\x85\u2028\u2029 ")]
    hostile = []
    for i in range(n):
        a, b, c = pieces[i % len(pieces)], pieces[(3 * i + 1) % len(pieces)], pieces[(7 * i + 2) % len(pieces)]
        hostile.append({"doc_id": f"h{i}{a}", "title": f"{b} grant {c}",
                        "text": f"A grant of land {a} is a contract {b} that a legislature {c} may not void. " * 3})
    out.write_text("".join(json.dumps(d) + "\n" for d in docs + hostile), encoding="utf-8")
    return hostile


def _check_cli_output(fmt: str, out: str, expected: Any) -> None:
    """The brief command's output for one proposition, checked against the API's brief of it."""
    from markdown_it import MarkdownIt

    from citator.errors import UNSAFE_CHARS

    checks = _test_module("stance/brief/test_render_escaping.py")

    assert not UNSAFE_CHARS.search(out.replace("\n", "")), "escape: a control character reached the terminal"
    hits = sum(len(column) for _, _, column in expected.columns())
    if fmt == "json":
        # The command searches cold (onnxruntime's query graphs): its floats may part from torch's in the 4th place.
        assert _rounded(json.loads(out)) == _rounded(expected.to_json()), "the JSON is not the API's brief"
    elif fmt == "markdown":
        tokens = MarkdownIt("commonmark").enable("table").parse(out)
        inline = [c for t in tokens if t.type == "inline" for c in t.children or []]
        assert not [t for t in tokens if t.type == "html_block"], "escape: an HTML block"
        assert {c.content for c in inline if c.type == "html_inline"} <= checks._OWN_HTML, "escape: HTML"
        assert not [c for c in inline if c.type in ("link_open", "image")], "escape: a link"
        assert len(checks._cells(tokens)) == hits, "escape: the tables' rows are not the hits"
    else:
        lines = out.split("\n")
        titles = [heading.upper() if expected.stance_ranked else heading for _, heading, _ in expected.columns()]
        assert [line for line in lines if line in titles] == titles, "escape: a line of the table's own"


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def brief_command(index: Path, propositions: list[str]) -> dict[str, int]:
    """`citator brief` in this process over an index holding hostile documents, in each format."""
    from citator.cli.main import main
    from citator.stance.brief.index import StanceIndex

    api = StanceIndex.open(index)
    tally = Tally()
    for text in propositions:
        for fmt in ("table", "markdown", "json"):
            def case(text: str = text, fmt: str = fmt) -> str:
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main(["brief", "--index-dir", str(index), "--k", "10", "--format", fmt, text])
                if code == 2 and len(err.getvalue().strip().splitlines()) == 1:
                    return "refused"
                assert code == 0, f"exit {code}: {err.getvalue()[-300:]}"
                _check_cli_output(fmt, out.getvalue().rstrip("\n"), api.brief(text, 10))
                return "answered"
            tally.run(case)
    return tally.row()


# -- the page -----------------------------------------------------------------------------------------------------
def page_html(index: Path, hostile: list[dict[str, str]], examples: int) -> dict[str, int]:
    """The research page's brief and document pages for hostile queries, ids and ?stance= values."""
    from urllib.parse import urlencode

    from fastapi.testclient import TestClient

    from citator.server.ui import create_app

    checks = _test_module("server/test_ui_app.py")
    from fixtures.brief import hostile_briefs
    from fixtures.hostile import hostile_strings

    client = TestClient(create_app(index, k=5))
    home = checks._tags_of(client.get("/").text)
    allowed = home.tags | {"h1", "div", "section", "h2", "ol", "li", "article", "h3", "a", "p", "blockquote", "mark",
                           "details", "summary", "dl", "dt", "dd", "ul", "span", "nav", "code", "em", "strong",
                           "q"}  # a flag's reason and a "cited by" passage are quoted
    tally = Tally()

    def page(url: str, forbidden: str = "") -> str:
        reply = client.get(url)
        assert reply.status_code < 500, f"status {reply.status_code}"
        found = checks._tags_of(reply.text)
        assert found.tags <= allowed, f"escape: tags {found.tags - allowed}"
        assert not [a for a in found.attributes if a.startswith("on")], "escape: an event attribute"
        assert not forbidden or f"evidence for <em>{forbidden}" not in reply.text, "escape: ?stance reflected"
        return "answered" if reply.status_code < 400 else "refused"

    for doc in hostile:
        tally.run(lambda doc=doc: page("/?" + urlencode({"q": doc["title"] + " a grant of land is a contract"})))
        tally.run(lambda doc=doc: page("/document?" + urlencode({"id": doc["doc_id"], "p": 0, "q": "grant",
                                                                  "stance": "supported"})))

    @_examples(examples)
    @given(hostile_strings, hostile_strings)
    def feed(text: str, stance: str) -> None:
        doc = hostile[len(text) % len(hostile)]
        tally.run(lambda: page("/?" + urlencode({"q": text})))
        shown = "" if stance in ("supported", "refuted", "all") else stance
        tally.run(lambda: page("/document?" + urlencode({"id": doc["doc_id"], "p": 0, "q": text, "stance": stance}),
                               forbidden=shown))

    @_examples(examples)
    @given(hostile_briefs())
    def templates(brief: Any) -> None:
        tally.run(lambda: _as_escape(lambda: checks.test_every_field_on_a_page_is_text.hypothesis.inner_test(brief)))

    feed()
    templates()
    return tally.row()


@contextlib.contextmanager
def _served(app: Any) -> Iterator[int]:
    """`app` behind the servers' guard with its default limits, on a real socket of this machine."""
    from citator.server.guard import allowed_hosts
    from citator.server.pages import guarded_server, listen

    sock = listen("127.0.0.1", 0)
    server = guarded_server(app, allowed_hosts("127.0.0.1"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def _closed_within(port: int, send: bytes, seconds: float) -> bool:
    """Whether the server closes a connection that sends `send` and nothing more within `seconds`."""
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(send)
        conn.settimeout(seconds)
        try:
            while conn.recv(65536):
                pass
            return True
        except (TimeoutError, ConnectionResetError) as exc:
            return isinstance(exc, ConnectionResetError)


def page_http(index: Path, review_db: Path) -> dict[str, int]:
    """The research page's and the review app's servers over real sockets: foreign Host headers, a request line
    alone, a body cut short, 300 idle connections; each must still answer its own name afterwards."""
    import httpx

    from citator.server.guard import Limits
    from citator.server.review import create_app as review_app
    from citator.server.ui import create_app as ui_app

    limits, tally = Limits(), Tally()
    for app, body_start in ((ui_app(index, k=5), b"GET /?q=grant"), (review_app(review_db), b"POST /login")):
        with _served(app) as port:
            url = f"http://127.0.0.1:{port}/"
            for host in ("evil.example.com", f"evil.example.com:{port}", "127.0.0.1.evil.example.com", "localhost.",
                         "[::2]", "0.0.0.0", "10.0.0.1", "LOCALHOST.evil", "127.0.0.1 x", "xn--80ak6aa92e.com"):
                def foreign(host: str = host) -> str:
                    reply = httpx.get(url, headers={"Host": host}, timeout=30)
                    assert reply.status_code == 400, f"{host} answered {reply.status_code}"
                    return "refused"
                tally.run(foreign)
            outcomes: dict[str, bool] = {}
            jobs = {"line": lambda: _closed_within(port, b"GET / HTTP/1.1\r\n", limits.header_seconds + 5),
                    "body": lambda: _closed_within(port, body_start + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                                   b"application/x-www-form-urlencoded\r\nContent-Length: 99\r\n\r\na",
                                                   limits.body_seconds + 5)}
            threads = [threading.Thread(target=lambda k=k, j=j: outcomes.__setitem__(k, j())) for k, j in jobs.items()]
            for t in threads:
                t.start()
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
            time.sleep(1.0)
            held = len(idle) - _test_module("fixtures/servers.py").closed_count(idle)
            for conn in idle:
                conn.close()
            for t in threads:
                t.join(120)

            def kept(what: str) -> str:
                assert outcomes.get(what), f"a {what} held its connection"
                return "refused"
            tally.run(lambda: kept("line"))
            tally.run(lambda: kept("body"))

            def capped() -> str:
                assert held <= limits.max_connections, f"{held} idle connections held"
                return "refused"
            tally.run(capped)
            def still_answers() -> str:
                assert httpx.get(url, timeout=60).status_code == 200, "its own name is no longer answered"
                return "answered"
            tally.run(still_answers)
    return tally.row()


# -- the Python API -----------------------------------------------------------------------------------------------
def python_api(index: Path, examples: int) -> dict[str, int]:
    """Any Python value in every argument of StanceIndex, evaluate over generated and empty judgments."""
    import citator
    from citator.stance.brief.index import StanceIndex

    checks = _test_module("stance/brief/test_stance_index.py")

    tally, opened = Tally(), StanceIndex.open(index)
    checks._OPENED[index] = opened
    places = ["open", "open cold", "open ray", "document", "passage", "passage text", "cited", "search k",
              "search stance", "brief"]

    @_examples(examples)
    @given(checks._ANY, st.sampled_from(places))
    def feed(value: Any, where: str) -> None:
        tally.run(lambda: checks.test_any_argument_is_answered_or_refused_with_a_typed_error.hypothesis.inner_test(
            index, value, where))

    values = st.one_of(st.integers(-3, 3), st.floats(), st.text(max_size=3), st.none(), st.booleans())
    shapes = st.dictionaries(st.text(max_size=3), st.one_of(st.dictionaries(st.text(max_size=3), values, max_size=3),
                                                            values, st.lists(values, max_size=3)), max_size=3)

    @_examples(examples)
    @given(shapes, shapes, st.sampled_from([["ndcg@10"], ["rr", "p@1"], "recall@5"]))
    def measured(qrels: Any, run: Any, measures: Any) -> None:
        def case() -> str:
            scores = citator.evaluate(qrels, run, measures)
            assert all(0.0 <= v <= 1.0 for v in scores.values()), f"a score outside [0, 1]: {scores}"
            return "answered"
        tally.run(case)

    def zero() -> str:
        citator.evaluate({}, {}, ["ndcg@10"])
        raise AssertionError("a mean over zero queries answered")
    feed()
    measured()
    tally.run(zero)
    return tally.row()


# -- the caches ---------------------------------------------------------------------------------------------------
def vector_cache(sections_path: Path) -> dict[str, int]:
    """The statute vector cache, damaged and resealed every way the tests know: each must be refused."""
    from citator.data.statutes import read_sections
    from citator.models.load import default_encoder_path, load_encoder
    from citator.statutes.vectors import CAPTIONS, PASSAGE_KEYS, PASSAGES, SectionVectors, section_passages

    checks = _test_module("statutes/test_hybrid_retrieval.py")

    encoder, sections = load_encoder(default_encoder_path()), read_sections(sections_path)
    texts = [t for s in sections[:3] for t in section_passages(s)][:6]
    forgeries: list[tuple[str, Callable[[Path], None], bool]] = [
        (CAPTIONS, checks._random_rows, True), (CAPTIONS, checks._reversed, True),
        (PASSAGES, checks._random_rows, True),
        (PASSAGES, checks._swap_two, True), (CAPTIONS, checks._wide, True), (PASSAGES, checks._wide, True),
        (PASSAGES, checks._truncated, True), (CAPTIONS, checks._pickled, True),
        (PASSAGE_KEYS, checks._keys("[1, 2]"), True), (PASSAGE_KEYS, checks._keys("{not json"), True),
        (PASSAGE_KEYS, checks._keys('["' + "a" * 64 + '"]'), True),
        ("hybrid_vectors.json", checks._keys("[" * 100_000), False),
        (CAPTIONS, checks._random_rows, False), (PASSAGES, checks._swap_two, False),
    ]
    tally = Tally()
    for name, forge, reseal in forgeries:
        def case(name: str = name, forge: Callable[[Path], None] = forge, reseal: bool = reseal) -> str:
            directory = Path(tempfile.mkdtemp(prefix="citator-cache-"))
            try:
                SectionVectors(sections, encoder, "enc", directory, progress=False).passages(texts)
                forge(directory / name)
                if reseal:
                    checks._reseal(directory)
                SectionVectors(sections, encoder, "enc", directory, progress=False)
                raise AssertionError(f"{name} forged ({getattr(forge, '__name__', 'edit')}) was used")
            finally:
                shutil.rmtree(directory, ignore_errors=True)
        tally.run(case)
    return tally.row()


# -- locks and the folders citator keeps ----------------------------------------------------------------------------
def locks(index: Path) -> dict[str, int]:
    """A symbolic link at each kind of lock, and outputs aimed at locks and inside kept folders through commands."""
    import fcntl

    from citator.cli.main import main
    from citator.data.atomic import CACHE_LOCK, RUN_LOCK
    from citator.stance.retrieve.layout import BUILD_LOCK, MANIFEST, PID_NAME, SERVICE_DIR, read_manifest

    checks = _test_module("data/test_output_rule.py")

    tally = Tally()
    root = Path(tempfile.mkdtemp(prefix="citator-locks-"))
    for lock in (BUILD_LOCK, RUN_LOCK, CACHE_LOCK):
        for existing in (False, True):
            def planted(lock: str = lock, existing: bool = existing) -> str:
                folder = Path(tempfile.mkdtemp(dir=root))
                victim = folder.parent / f"{folder.name}-victim"
                if existing:
                    victim.write_text("precious")
                (folder / lock).symlink_to(victim)
                try:
                    checks.take_lock(folder, lock)
                finally:
                    made = victim.exists() and (not existing or victim.read_text() != "precious")
                    assert not made, "escape: the lock made or changed a file through a symbolic link"
                raise AssertionError("a lock was taken through a symbolic link")
            tally.run(planted)
    copy = root / "idx"
    shutil.copytree(index, copy, ignore=shutil.ignore_patterns(SERVICE_DIR))
    data = copy / read_manifest(copy).data_dir
    (copy / SERVICE_DIR).mkdir()
    cache, run = root / "cache", root / "run"
    for folder, lock in ((cache, CACHE_LOCK), (run, RUN_LOCK)):
        folder.mkdir()
        (folder / lock).write_text("")
    (cache / "captions.npy").write_bytes(b"vectors")
    eval_args = checks._eval_files(root)
    targets = (copy / BUILD_LOCK, run / RUN_LOCK, cache / CACHE_LOCK, copy / SERVICE_DIR / PID_NAME,
               data / "new.json", cache / "captions.npy", cache / "new.json", copy / MANIFEST)
    with open(copy / BUILD_LOCK, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        for target in targets:
            for command in (["brief", "--index-dir", str(index), "--k", "1", "--output", str(target), "law"],
                            eval_args + ["--json", str(target)]):
                def aimed(command: list[str] = command, target: Path = target) -> str:
                    before = target.read_bytes() if target.exists() else None
                    err = io.StringIO()
                    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                        code = main(command)
                    after = target.read_bytes() if target.exists() else None
                    assert after == before, "the output was written"
                    assert code == 2 and len(err.getvalue().strip().splitlines()) == 1, f"exit {code}"
                    return "refused"
                tally.run(aimed)
    shutil.rmtree(root, ignore_errors=True)
    return tally.row()


def surfaces(sample_corpus: Path, sections: Path, examples: int) -> dict[str, dict[str, int]]:
    """Every surface's tally (an index of `sample_corpus` plus hostile documents is built for the brief and page)."""
    from citator.stance.retrieve.index_dir import BuildOptions, build_index
    from citator.statutes.review import LabelStore

    work = Path(tempfile.mkdtemp(prefix="citator-surfaces-"))
    corpus = work / "corpus.jsonl"
    hostile = hostile_corpus(sample_corpus, corpus)
    index = work / "index"
    build_index(corpus, index, BuildOptions(progress=False))
    LabelStore(work / "labels.sqlite").close()
    propositions = [f"{d['title']} a grant of land is a contract" for d in hostile]
    out = {
        "brief renderers": brief_renderers(examples),
        "brief command": brief_command(index, propositions[: max(4, examples // 25)]),
        "page HTML": page_html(index, hostile, examples),
        "page HTTP (ui, review)": page_http(index, work / "labels.sqlite"),
        "Python API": python_api(index, examples),
        "vector cache": vector_cache(sections),
        "locks and kept folders": locks(index),
    }
    shutil.rmtree(work, ignore_errors=True)
    return out
