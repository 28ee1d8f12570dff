"""A server that cannot start says why in one line, before any banner says it is serving."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from citator.cli.main import main


@pytest.fixture()
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_taken_port_is_one_line_and_no_banner(taken_port: int, brief_index: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "labels.sqlite"
    for argv in (["review", "serve", "--db", str(store)], ["ui", "--index-dir", str(brief_index)],
                 ["provider-serve", "--model", str(tmp_path / "no-model")]):
        assert main([*argv, "--port", str(taken_port)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1] == f"ConfigError: cannot listen on 127.0.0.1:{taken_port}: Address already in use", err
        assert not any("http://" in line for line in err)
    assert not store.exists()  # a server that never started made no store


@pytest.mark.parametrize("port", ["-1", "65536", "99999", "http"])
@pytest.mark.parametrize("command", [["review", "serve", "--db", "x.sqlite"], ["ui", "--index-dir", "idx"],
                                     ["provider-serve", "--model", "m"]])
def test_a_port_outside_the_range_is_an_argument_error(command: list[str], port: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--port", port]) == 2
    shown = port if port.lstrip("-").isdigit() else repr(port)
    prog = " ".join(["citator", *command[:-2]])
    assert capsys.readouterr().err == f"{prog}: --port must be a whole number from 0 to 65535, got {shown}\n"


def test_stopping_a_folder_that_is_not_there_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stop", "--index-dir", str(tmp_path / "mistyped")]) == 2
    assert capsys.readouterr().err.strip() == f"IndexDirError: {tmp_path / 'mistyped'}: index directory not found"
    assert main(["stop", "--index-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().err.strip() == "no server running"


def test_a_name_listens_on_ipv4_and_an_ipv6_banner_is_bracketed() -> None:
    from citator.server.pages import address_of, listen

    with listen("localhost", 0) as sock:  # "localhost" may name ::1 first; clients mostly ask 127.0.0.1
        assert sock.family == socket.AF_INET and address_of("localhost", sock).startswith("http://localhost:")
    try:
        six = listen("::1", 0)
    except Exception:  # noqa: BLE001 - a host without IPv6 loopback
        pytest.skip("no IPv6 loopback here")
    with six:
        assert address_of("::1", six) == f"http://[::1]:{six.getsockname()[1]}"
