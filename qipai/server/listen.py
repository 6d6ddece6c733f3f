"""Binding the server's socket and running uvicorn on it (``qipai serve``)."""

from __future__ import annotations

import logging
import socket
import sys
import time
from typing import Any

from qipai.server import logs
from qipai.server.app import create_app
from qipai.server.state import REFUSALS_LOG_S, SHUTDOWN_S, Server
from qipai.server.uvicorn_ws import ws_protocol

#: The WebSocket transport's frame cap (bytes): a larger frame closes the
#: connection (code 1009).  At least the message cap.
MAX_FRAME_BYTES = 1024 * 1024


#: The listening socket's backlog (uvicorn's default, which it sets again).
BACKLOG = 2048


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound to ``host:port`` and listening — made
    before the database is opened and anything is announced, so that a port
    in use fails first, in one line, with nothing written; :func:`run` hands
    it to uvicorn.  Made as uvicorn makes its own (``Config.bind_socket``):
    IPv6 for a host with a ``:``, ``SO_REUSEADDR`` (a restart binds while
    the last run's connections are in TIME_WAIT).

    Raises:
        OSError: the address cannot be listened on (in use, not this
            machine's, a privileged port, a host name that does not resolve).
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # listening now, not once uvicorn starts: on Linux two SO_REUSEADDR
        # sockets may both be bound to a port none of them listens on, and the
        # first to listen has it — only a listening socket holds the port
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


class RepeatsFilter(logging.Filter):
    """A logging filter letting one warning (or lesser record) of each
    message (its format string) through every ``every`` seconds; the next
    one let through says how many were held back.  Errors all pass (a
    server's or a plugin's failure is never held back).  On uvicorn's own
    logger (:func:`run`), which writes a warning for every malformed request
    a client sends ("Invalid HTTP request received.": 500 garbage requests,
    500 lines in 0.6 s)."""

    def __init__(self, every: float = REFUSALS_LOG_S) -> None:
        super().__init__()
        self.every = every
        self.seen: dict[Any, tuple[float, int]] = {}   # message → (last let through, held back)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        now = time.monotonic()
        key = record.msg if isinstance(record.msg, str) else type(record.msg)
        last, held = self.seen.get(key, (None, 0))
        if last is not None and now - last < self.every:
            self.seen[key] = (last, held + 1)
            return False
        if held:
            record.msg = (f"{record.getMessage()} ({held} more like it in the "
                          f"{now - last:.0f} s before were not logged)")
            record.args = None
        if len(self.seen) >= 1000:   # messages of their own, one at a time: forget them
            self.seen.clear()
        self.seen[key] = (now, 0)
        return True


def run(sock: socket.socket, server: Server, log_level: str = "warning",
        forwarded_allow_ips: str | None = None) -> None:
    """Serve ``server`` with uvicorn on ``sock`` (:func:`listen`) until
    interrupted; uvicorn closes the socket at its shutdown.  Exits with
    status 3 (uvicorn's startup failure) if the server did not start.

    ``forwarded_allow_ips``: the reverse proxies (comma-separated addresses
    or networks, ``*`` any) whose ``X-Forwarded-For``/``X-Forwarded-Proto``
    uvicorn's proxy-headers middleware believes, making the forwarded
    address the request's client (``scope["client"]``).  None: no proxy
    headers at all — uvicorn's own default (trust 127.0.0.1, or the
    ``FORWARDED_ALLOW_IPS`` environment variable) is not used, so a client
    cannot name its own address."""
    import uvicorn

    config = uvicorn.Config(create_app(server), log_level=log_level, access_log=False,
                            ws_max_size=max(MAX_FRAME_BYTES, server.max_message_bytes),
                            ws=ws_protocol(server), lifespan="on", backlog=BACKLOG,
                            # a request still waiting for a database that does not answer
                            # is cancelled then, so SIGTERM stops the server (SHUTDOWN_S)
                            timeout_graceful_shutdown=SHUTDOWN_S,
                            proxy_headers=forwarded_allow_ips is not None,
                            forwarded_allow_ips=forwarded_allow_ips)
    # (uvicorn's Config has just configured its loggers)
    logging.getLogger("uvicorn.error").addFilter(RepeatsFilter())
    logs.json_uvicorn()   # --log-format json: uvicorn's lines too
    userver = uvicorn.Server(config)
    server.exit_now = lambda: setattr(userver, "should_exit", True)
    try:
        userver.run(sockets=[sock])   # as uvicorn.run, on our socket
    except KeyboardInterrupt:
        pass
    if not userver.started:
        sys.exit(3)
