"""The server's log: text lines, or JSON lines (``qipai serve --log-format json``).

``text`` (the default): the server's ``qipai serve: …`` lines, uvicorn's
own, and a line for each event (below).  ``json`` writes one JSON object a line on
standard error — ``{"time": …, "level": …, "event": …, <its fields>}`` —
for the server's lines (event ``message``, the text in ``message``),
uvicorn's (event ``uvicorn``) and what happens at the tables
(:mod:`qipai.host.events`: ``table_created``, ``table_closed``,
``hand_ended``, ``timeout``, ``refused``).  The events carry no token,
no salt before its reveal and no key (:mod:`qipai.host.events`).

In ``text`` mode the events are lines too (:class:`TextFormatter`), one
an event: ``2026-12-08 00:10:00 table_created table=ab12 key=shop
variant=guilin-mahjong`` — the UTC time, the event, its fields as
``name=value`` (a field that is null left out; a value with a blank or a
character that is not printable written as a JSON string, so a line is
always one line).

``refused`` is logged at most once every :data:`REFUSED_LOG_S` seconds
for each reason (a client sending garbage in a loop would flood the log);
the next one let through says in ``held`` how many were not logged
(``/metrics`` counts every one).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import sys
import time
from datetime import datetime, timezone
from typing import Any

#: Seconds between two logged ``refused`` events of one reason.
REFUSED_LOG_S = 10.0

_json = False


def json_on() -> bool:
    """Whether the log is JSON lines (:func:`setup` was called with ``json``)."""
    return _json


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``time`` (UTC, ISO 8601), ``level``,
    ``event`` and the event's fields (``record.fields``); a record that is
    no event has ``event`` ``message`` (``uvicorn`` for uvicorn's) and its
    text in ``message``."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"time": datetime.fromtimestamp(record.created, timezone.utc)
               .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
               "level": record.levelname.lower()}
        event = getattr(record, "event", None)
        if event is not None:
            out["event"] = event
            for k, v in getattr(record, "fields", {}).items():
                out.setdefault(k, v)
        else:
            out["event"] = "uvicorn" if record.name.startswith("uvicorn") else "message"
            out["message"] = record.getMessage()
        if record.exc_info:
            out["traceback"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


_BARE = re.compile(r"[\w.:/@+#-]+")


def _text_value(value: Any) -> str:
    """A field's value in a text line: bare if it is a simple word, else
    JSON (a string quoted, every character that is not printable escaped)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        if _BARE.fullmatch(value):
            return value
        return "".join(c if c.isprintable() else f"\\u{ord(c):04x}"
                       for c in json.dumps(value, ensure_ascii=False))
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)


class TextFormatter(logging.Formatter):
    """(``--log-format text``.)  An event as one line: the UTC time, the
    event's name, its fields ``name=value`` (``table`` and ``key`` first;
    null ones left out)."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        event = getattr(record, "event", None)
        if event is None:
            return f"{when} {_text_value(record.getMessage())}"
        parts = [when, str(event)]
        fields = getattr(record, "fields", {})
        first = [k for k in ("table", "key") if k in fields]   # what a reader greps for
        for k in (*first, *(k for k in fields if k not in first)):
            if fields[k] is not None:
                parts.append(f"{k}={_text_value(fields[k])}")
        return " ".join(parts)


class RefusedFilter(logging.Filter):
    """Lets one ``refused`` event of each reason through every ``every``
    seconds; the next one let through counts those held back (``held``)."""

    def __init__(self, every: float = REFUSED_LOG_S) -> None:
        super().__init__()
        self.every = every
        self.seen: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "event", None) != "refused":
            return True
        fields = getattr(record, "fields", {})
        reason = str(fields.get("reason"))
        now = time.monotonic()
        last, held = self.seen.get(reason, (None, 0))
        if last is not None and now - last < self.every:
            self.seen[reason] = (last, held + 1)
            return False
        if held:
            record.fields = {**fields, "held": held}
        self.seen[reason] = (now, 0)
        return True


def setup(fmt: str) -> None:
    """Configure the log: ``text`` writes the events (the ``qipai.events``
    logger) as text lines on standard error; ``json`` sends the
    ``qipai`` loggers (the server's lines, the events) to standard error
    as JSON lines (uvicorn's: :func:`json_uvicorn`, once uvicorn set up
    its loggers)."""
    global _json
    _json = fmt == "json"
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if _json else TextFormatter())
    handler.addFilter(RefusedFilter())
    # json: every qipai line; text: the events only (the server's own lines
    # are printed as they were)
    logger = logging.getLogger("qipai" if _json else "qipai.events")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False


def json_uvicorn() -> None:
    """(After uvicorn's Config set up its loggers.)  Their lines as JSON too."""
    if not _json:
        return
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        for h in logging.getLogger(name).handlers:
            h.setFormatter(JsonFormatter())


def client(conn: Any) -> str | None:
    """The client address (host only) of a request or WebSocket, for its
    log lines and ``refused`` events: the address a trusted proxy forwards
    (``qipai serve --forwarded-allow-ips``: uvicorn's proxy headers set it),
    else the socket's peer; None if the server does not know it."""
    return conn.client.host if conn.client is not None else None


#: The headers a proxy adds to a request it forwards.
FORWARDED = ("x-forwarded-for", "forwarded", "x-real-ip")


def local(conn: Any) -> bool:
    """Whether a request or WebSocket comes from this machine itself: a
    loopback client address, and no header saying a proxy forwarded it
    (``X-Forwarded-For``, ``Forwarded``, ``X-Real-IP``) — behind a proxy on
    the same host every request comes from loopback, whoever sent it.  The
    open demo serves its admin routes to such a client only, and does not
    count it against the per-address limits (:mod:`qipai.server.limits`)."""
    host = conn.client.host if conn.client is not None else ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
    return loopback and not any(h in conn.headers for h in FORWARDED)


def line(message: str, level: int = logging.WARNING, event: str | None = None,
         **fields: object) -> None:
    """A line of the server's (``qipai serve: …`` in text) as a JSON log record."""
    extra = {} if event is None else {"event": event, "fields": {"message": message, **fields}}
    logging.getLogger("qipai.serve").log(level, message, extra=extra)
