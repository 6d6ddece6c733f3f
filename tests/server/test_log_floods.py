"""A client cannot flood the server's log: uvicorn's warning for each
malformed request ("Invalid HTTP request received.", "Unsupported upgrade
request.") is written once a minute at most, the next line saying how many
were held back; errors are never held back.  (Unheld, 500 garbage requests
write 500 lines in 0.6 s; the refusals over ``--max-connections`` are
counted the same way, see test_max_connections.)"""

from __future__ import annotations

import logging
import socket
import time

from hostkit import start_server
from qipai.server.listen import RepeatsFilter


def test_garbage_requests_are_logged_once(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path)
    try:
        for data in (b"\x16\x03\x01\x00\xa5garbage\r\n\r\n",   # TLS on the plain port
                     b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                     b"Upgrade: h2c\r\n\r\n"):
            for _ in range(40):
                with socket.create_connection(("127.0.0.1", s.port)) as c:
                    c.sendall(data)
                    c.settimeout(10)
                    try:
                        c.recv(4096)   # its answer (the connection may stay open)
                    except OSError:
                        pass
        assert s.alive()
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert log.count("Invalid HTTP request received.") == 1, log
    assert log.count("Unsupported upgrade request.") == 1, log


def record(msg: str, level: int = logging.WARNING, *args) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.error", level, __file__, 1, msg, args or None, None)


def test_the_filter_holds_back_repeats_and_counts_them():
    f = RepeatsFilter(every=0.2)
    assert f.filter(record("Invalid HTTP request received."))
    assert not any(f.filter(record("Invalid HTTP request received.")) for _ in range(5))
    assert f.filter(record("Unsupported upgrade request."))     # another message
    assert all(f.filter(record("boom %s", logging.ERROR, i)) for i in range(3))  # errors pass
    end = time.monotonic() + 30   # a bound on a hang only
    while time.monotonic() < end:
        r = record("Invalid HTTP request received.")
        if f.filter(r):
            break
        time.sleep(0.05)
    said = r.getMessage()
    assert said.startswith("Invalid HTTP request received. (") and \
        "more like it in the" in said, said
    held = int(said.split("(")[1].split()[0])
    assert held >= 5, said   # the five above, and those of the wait
