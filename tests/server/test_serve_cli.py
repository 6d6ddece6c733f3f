"""The command line of the server: the extra's message, the protocol schema,
a port in use and a database URL it cannot use (one line, before anything
is announced or written), a clean stop on Ctrl-C."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from qipai.cli import cli


def test_serve_without_the_extra_names_it_in_one_line():
    code = ("import sys; sys.modules['starlette'] = None\n"
            "from qipai.cli import main; main(['serve'])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'qipai[serve]'" in lines[0], p.stderr


def test_schema_protocol_lists_every_message():
    out = CliRunner().invoke(cli, ["schema", "--protocol"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert set(doc["properties"]) == {"ClientMessage", "ServerMessage", "ServerFrame",
                                      "SeatView"}
    defs = doc["$defs"]
    for name in ("Act", "Resync", "Ping", "Welcome", "Events", "Decide", "Ack", "HandEnded",
                 "Closed", "Pong", "Error", "Batch", "SeatView"):
        assert name in defs, name
    # a frame is one message or a batch; a batch holds messages, never a batch
    frame = {d["$ref"].rsplit("/", 1)[1] for d in doc["properties"]["ServerFrame"]["anyOf"]}
    server = {d["$ref"].rsplit("/", 1)[1] for d in doc["properties"]["ServerMessage"]["anyOf"]}
    assert frame == server | {"Batch"} and "Batch" not in server
    inner = defs["Batch"]["properties"]["messages"]["items"]["anyOf"]
    assert {d["$ref"].rsplit("/", 1)[1] for d in inner} == server
    codes = set(defs["Error"]["properties"]["code"]["enum"])
    assert {"IllegalAction", "NotYourTurn", "StaleSeq", "BadToken", "BadMessage", "HandOver",
            "TooLarge", "Throttled"} <= codes


def test_a_bad_database_url_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--db", "nosuchdb://x"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.startswith("error: cannot use database") and p.stderr.count("\n") == 1


def serve(*args: str, cwd: Any = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", "serve", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_port_in_use_is_one_line_before_the_banner(tmp_path):
    """One line, status 2, no banner, and nothing written: no database
    file, no lock file (not the banner after the database was opened, then
    uvicorn's \"ERROR: [Errno 98] …\" and status 3)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        p = serve("--port", str(port), "--db", f"sqlite:///{tmp_path / 'q.db'}")
    assert p.returncode == 2, p.stderr
    assert p.stderr == f"error: cannot listen on 127.0.0.1:{port}: address already in use\n"
    assert p.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_the_listening_socket_holds_the_port_before_uvicorn_starts():
    """listen() listens, not only binds: on Linux another SO_REUSEADDR
    socket could still bind a port only bound, and whichever listened first
    would have it — the check before the banner would then be pointless."""
    from qipai.server.listen import listen

    sock = listen("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                other.bind(("127.0.0.1", port))
                other.listen()
            except OSError as exc:
                assert exc.errno == 98 or "in use" in str(exc)
            else:
                raise AssertionError("another socket listens on the server's port")
    finally:
        sock.close()


def test_port_0_is_announced_as_the_port_chosen_and_ctrl_c_stops_cleanly(tmp_path):
    """The server runs on the socket made before the banner: --port 0 is
    announced as the port the system chose (not \":0\"); Ctrl-C stops it,
    status 0, and the port is free again."""
    proc = subprocess.Popen([sys.executable, "-m", "qipai", "serve", "--port", "0", "--db",
                             f"sqlite:///{tmp_path / 'q.db'}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = proc.stderr.readline()
        assert banner.startswith("qipai serve on http://127.0.0.1:"), banner
        port = int(banner.split("http://127.0.0.1:", 1)[1].split(" ", 1)[0])
        assert port != 0
        end = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
                break
            except httpx.HTTPError:
                assert time.monotonic() < end, "the server did not answer /health"
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["status"] == "ok"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "ERROR" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with socket.socket() as again:   # the server's socket is closed
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))
        again.listen()


@pytest.mark.parametrize("url, line", [
    ("mysql://x/y", ("error: cannot use database 'mysql://x/y': a database URL is "
                     "sqlite:///FILE or postgresql://USER@HOST/DB, not mysql")),
    ("nosuch", ("error: cannot use database 'nosuch': not a database URL (a database URL "
                "is sqlite:///FILE or postgresql://USER@HOST/DB)")),
    # an SQLite URI filename opens u.db while the one-server lock would be
    # taken beside 'file:u.db': a second server on sqlite:///u.db would start
    # and both play the same tables
    ("sqlite:///file:u.db?uri=true", (
        "error: cannot use database 'sqlite:///file:u.db?uri=true': SQLite URI filenames "
        "(file:…, uri=…) are not taken; give the file's path: sqlite:///FILE")),
    ("sqlite:///u.db?uri=true", (
        "error: cannot use database 'sqlite:///u.db?uri=true': SQLite URI filenames "
        "(file:…, uri=…) are not taken; give the file's path: sqlite:///FILE")),
])
def test_a_database_url_of_another_kind_names_what_is_accepted(url, line, tmp_path):
    """One line naming what is accepted (not \"No module named 'MySQLdb'\",
    SQLAlchemy's driver for it); an SQLite URI filename is not opened.
    Nothing is created."""
    p = serve("--port", "0", "--db", url, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr == line + "\n" and p.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_a_missing_folder_of_the_database_is_named(tmp_path):
    """The database the user named, not the server's lock file
    (\"error: …/q.db.lock: No such file or directory\")."""
    missing = tmp_path / "nonexistent" / "dir"
    p = serve("--port", "0", "--db", f"sqlite:///{missing / 'q.db'}")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (f"error: cannot open the database {missing / 'q.db'}: "
                        f"folder {missing} does not exist\n")
    (tmp_path / "file").write_text("")
    p = serve("--port", "0", "--db", f"sqlite:///{tmp_path / 'file' / 'q.db'}")
    assert p.returncode == 2
    assert p.stderr == (f"error: cannot open the database {tmp_path / 'file' / 'q.db'}: "
                        f"folder {tmp_path / 'file'} is not a folder\n")
    assert ".lock" not in p.stderr


@pytest.mark.parametrize("url, words", [
    # the page's http:// address: said before connecting
    ("http://127.0.0.1:1/tables/x/ws", ["is not a seat's WebSocket address",
                                        "ws://HOST:PORT/tables/ID/ws?token=TOKEN"]),
    # websockets' InvalidURI names the URL itself
    ("ws://:1/x", ["isn't a valid URI"]),
    ("ws://127.0.0.1:1/x", ["cannot connect to"]),
])
def test_connect_names_the_url_once(url, words):
    """The URL once, not twice ("error: http://…/ws: http://…/ws isn't a
    valid URI: scheme isn't ws or wss")."""
    res = CliRunner().invoke(cli, ["connect", url])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.count(url) == 1, res.stderr
    for w in words:
        assert w in res.stderr, (w, res.stderr)


@pytest.mark.parametrize("url", ["ws://127.0.0.1:1/tables/x/ws?token=SECRET123",
                                 "ws://:1/tables/x/ws?a=1&token=SECRET123#f"])
def test_connect_does_not_echo_the_token(url):
    """A seat's token is not printed back in an error (a terminal's output is
    pasted and logged): the URL is named with ``token=…``."""
    res = CliRunner().invoke(cli, ["connect", url])
    assert res.exit_code == 2 and res.stderr.startswith("error: "), res.stderr
    assert "SECRET123" not in res.stderr and "token=…" in res.stderr, res.stderr
