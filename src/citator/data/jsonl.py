"""A strict, streaming JSON-lines reader that names file and line in every error."""

from __future__ import annotations

import contextlib
import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from citator.errors import DataError

MAX_LINE_BYTES = 10 * 1024 * 1024


def _open_binary(path: Path, error: type[DataError]) -> IO[bytes]:
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


def loads(text: str | bytes) -> Any:
    """json.loads, with what it raises besides JSONDecodeError (nesting too deep for the parser, an integer longer
    than Python converts) reported as a JSONDecodeError like any other malformed JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", "", 0) from None
    except ValueError:
        raise json.JSONDecodeError("a number too long to convert", "", 0) from None


def iter_jsonl(path: str | Path, error: type[DataError] = DataError) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line_number, object) for each non-blank line; raise `error` on bytes, size or JSON problems."""
    for line_no, text in iter_text_lines(path, error):
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
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # A JSON escape of one half of a UTF-16 pair (\ud800-\udfff) decodes to no character at all: no
            # tokenizer or writer takes it, and it would fail there naming nothing. Fields no reader uses are kept.
            raise error(path, line, "holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is no character: "
                        "escape the pair or the character itself", field=key) from None
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


def read_json(path: str | Path, error: type[DataError] = DataError) -> Any:
    """Read one whole JSON document (optionally gzipped) with a typed error."""
    path = Path(path)
    if not path.is_file():
        raise error(path, None, f"file not found: {path}")
    with _open_binary(path, error) as handle, _reading(path, error, lambda: None):
        raw = handle.read()
    try:
        return loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(path, None, f"not valid UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise error(path, exc.lineno, f"malformed JSON: {exc.msg} at column {exc.colno}") from None


def iter_text_lines(path: str | Path, error: type[DataError] = DataError) -> Iterator[tuple[int, str]]:
    """Yield (line_number, text) of each line (JSON lines, TREC runs and qrels); raise `error` on a missing or
    unreadable file, a damaged gzip, a line over MAX_LINE_BYTES or bytes that are not UTF-8."""
    path = Path(path)
    if not path.is_file():
        raise error(path, None, f"file not found: {path}")
    line_no = 0
    with _open_binary(path, error) as handle, _reading(path, error, lambda: line_no + 1):
        while True:
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
