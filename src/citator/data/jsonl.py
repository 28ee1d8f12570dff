"""A strict, streaming JSON-lines reader that names file and line in every error."""

from __future__ import annotations

import contextlib
import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from citator.data.numbers import finite_number
from citator.errors import DataError

MAX_LINE_BYTES = 10 * 1024 * 1024


def _open_binary(path: Path, error: type[DataError]) -> IO[bytes] | gzip.GzipFile:
    """The file's bytes (decompressed for `.gz`); a file that cannot be opened is a typed error naming it."""
    try:
        handle: IO[bytes] = path.open("rb")
    except OSError as exc:
        raise error(path, None, f"cannot read: {exc.strerror or exc}") from None
    return gzip.GzipFile(fileobj=handle, mode="rb") if path.suffix == ".gz" else handle


@contextlib.contextmanager
def _reading(path: Path, error: type[DataError], where: Callable[[], int | None]) -> Iterator[None]:
    """Turn what a damaged file raises while it is read (a `.gz` that is no gzip or is cut short, an I/O error)
    into the reader's typed error, at the line reached."""
    try:
        yield
    except (OSError, EOFError, zlib.error) as exc:
        what = "not a valid gzip file" if path.suffix == ".gz" else "read failed"
        raise error(path, where(), f"{what} ({exc.strerror if isinstance(exc, OSError) and exc.strerror else exc})"
                    ) from None


def _int(digits: str) -> int:
    # An integer past float's range (about 1.8e308) is no count, score or setting citator reads: taken, it raises
    # OverflowError wherever it meets a float. (The length test first: no 5,000-digit conversion.)
    if len(digits.lstrip("-")) > 309 or not finite_number(value := int(digits)):
        raise ValueError("an integer too large for a number")
    return value


class _DuplicateKey(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A key given twice is refused: json keeps the last silently, so one reader could see what another did not.
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"the key {key[:40]!r} given twice in one object")
            seen.add(key)
    return out


# One decoder for every read (json.loads would build a new one per call when given parse_int).
_DECODER = json.JSONDecoder(parse_int=_int, object_pairs_hook=_object)


def loads(text: str | bytes) -> Any:
    """json.loads, with what it raises besides JSONDecodeError (nesting too deep for the parser, an integer longer
    than Python converts or past float's range, a key given twice in one object) reported as a JSONDecodeError like
    any other malformed JSON."""
    try:
        if isinstance(text, (bytes, bytearray)):
            text = text.decode(json.detect_encoding(text), "surrogatepass")  # as json.loads reads bytes
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return _DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
    except ValueError as exc:
        what = str(exc) if "too large" in str(exc) or isinstance(exc, _DuplicateKey) else "a number too long to convert"
        raise json.JSONDecodeError(what, "", 0) from None


def encodable(text: str) -> bool:
    """Whether `text` is characters UTF-8 can carry: a JSON escape of one half of a UTF-16 pair (\\ud800-\\udfff)
    decodes to no character at all, which no tokenizer or writer takes."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def iter_jsonl(path: str | Path, error: type[DataError] = DataError, span: LineSpan | None = None
               ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line_number, object) for each non-blank line (of `span` only, if given); raise `error` on bytes,
    size or JSON problems."""
    for line_no, text in iter_text_lines(path, error, span):
        if not text.strip():
            continue
        try:
            obj = loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as exc:
            raise error(path, line_no, f"malformed JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(obj, dict):
            raise error(path, line_no, f"expected a JSON object, got {type(obj).__name__}")
        yield line_no, obj


def require_str(
    obj: dict[str, Any], key: str, path: Path | str, line: int, error: type[DataError], *, nonempty: bool = True
) -> str:
    """Return obj[key] as a string or raise a typed error naming the field."""
    if key not in obj:
        raise error(path, line, "missing field", field=key)
    value = obj[key]
    if not isinstance(value, str):
        raise error(path, line, f"expected a string, got {type(value).__name__}", field=key)
    if nonempty and not value.strip():
        raise error(path, line, "must not be empty", field=key)
    if not encodable(value):
        # Refused here, where the field can be named; a tokenizer or writer would fail on it naming nothing. Fields
        # no reader uses are kept.
        raise error(path, line, "holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is no character: "
                    "escape the pair or the character itself", field=key)
    return value


def require_unique_str(
    obj: dict[str, Any], key: str, seen: dict[str, int], path: Path | str, line: int, error: type[DataError]
) -> str:
    """`require_str` for an id that must not repeat in the file; `seen` maps each id to its first line."""
    value = require_str(obj, key, path, line, error)
    if value in seen:
        raise error(path, line, f'duplicate {key} "{value}" (first on line {seen[value]})', field=key)
    seen[value] = line
    return value


def require_file(path: str | Path, error: type[DataError] = DataError) -> Path:
    """`path` as a Path, when it names a regular file; else `error` saying what it names instead (a directory, a
    device or FIFO, nothing)."""
    path = Path(path)
    if path.is_dir():
        raise error(path, None, "is a directory; give a file")
    if not path.is_file():
        raise error(path, None, "is not a regular file (a device or a FIFO); give a file" if path.exists()
                    else f"file not found: {path}")
    return path


def read_json(path: str | Path, error: type[DataError] = DataError) -> Any:
    """Read one whole JSON document (optionally gzipped) with a typed error."""
    path = require_file(path, error)
    with _open_binary(path, error) as handle, _reading(path, error, lambda: None):
        raw = handle.read()
    try:
        return loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(path, None, f"not valid UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise error(path, exc.lineno, f"malformed JSON: {exc.msg} at column {exc.colno}") from None


@dataclass(frozen=True)
class LineSpan:
    """The lines of a file that start at bytes [start, end), the first of them line number `first_line`: a block
    of a large file that a reader in another process reads on its own."""

    start: int
    end: int
    first_line: int


def line_spans(path: str | Path, block_bytes: int, error: type[DataError] = DataError) -> list[tuple[int, int]]:
    """The file cut into [start, end) byte ranges of about `block_bytes` at line starts (one range for a `.gz`
    file, which cannot be read from the middle), found by reading one line at each cut."""
    path = Path(path)
    if not path.is_file():
        raise error(path, None, f"file not found: {path}")
    size = path.stat().st_size
    if path.suffix == ".gz" or size <= block_bytes:
        return [(0, size)]
    cuts = [0]
    with _open_binary(path, error) as handle, _reading(path, error, lambda: None):
        for at in range(block_bytes, size, block_bytes):
            if at <= cuts[-1]:
                continue
            handle.seek(at - 1)
            handle.readline()  # to the start of the next line (at itself, if a line ends at at - 1)
            if handle.tell() < size:
                cuts.append(handle.tell())
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], size])]


def count_lines(path: str | Path, start: int, end: int) -> int:
    """How many lines start in bytes [start, end) of a file whose line starts `start` and `end` are."""
    count, at = 0, start
    with Path(path).open("rb") as handle:
        handle.seek(start)
        while at < end:
            chunk = handle.read(min(1 << 24, end - at))
            if not chunk:
                break
            count += chunk.count(b"\n")
            at += len(chunk)
            last = chunk[-1:]
    return count + (at > start and last != b"\n")  # a last line without its newline counts too


def iter_text_lines(path: str | Path, error: type[DataError] = DataError, span: LineSpan | None = None
                    ) -> Iterator[tuple[int, str]]:
    """Yield (line_number, text) of each line (JSON lines, TREC runs and qrels), or of the lines of `span`; raise
    `error` on a missing or unreadable file, a damaged gzip, a line over MAX_LINE_BYTES or bytes that are not
    UTF-8."""
    path = require_file(path, error)
    line_no = 0 if span is None else span.first_line - 1
    # A .gz file is one span, read whole (its positions are not the compressed file's).
    end = None if span is None or path.suffix == ".gz" else span.end
    with _open_binary(path, error) as handle, _reading(path, error, lambda: line_no + 1):
        if end is not None and span is not None and span.start:
            handle.seek(span.start)
        while True:
            if end is not None and handle.tell() >= end:
                return
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            line_no += 1
            if len(raw) > MAX_LINE_BYTES:
                raise error(path, line_no, f"line is longer than {MAX_LINE_BYTES} bytes")
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark is not part of the first line
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(path, line_no, f"not valid UTF-8 (byte {exc.start}): re-encode the file as UTF-8") from None
            yield line_no, text
