"""The HTTP routes of ``qipai serve`` (docs/reference/protocol.md): health,
variants, the vocabulary, tables, records, replays and the page; each answers a refusal as a
typed JSON error (:class:`~qipai.host.protocol.HttpError`)."""

from __future__ import annotations

import mimetypes
import re
import secrets
from pathlib import Path
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket

from qipai.core.errors import QipaiError
from qipai.host import protocol as P
from qipai.host.errors import LOCK_LOST
from qipai.host.levels import DEFAULT_LEVEL
from qipai.host.match import HostedTable
from qipai.host.offload import Crowded, Stopped
from qipai.host.replay import replay_steps, shown
from qipai.host.store import LockLost, ReadsBusy, StoreError, StoreStopped, token_hash
from qipai.server import limits, logs
from qipai.server.identity import Denied, Seating, looks_signed, verify
from qipai.server.state import (
    REPLAY_WAITING, REPLAY_WORKERS, SPEC_WAITING, SPEC_WORKERS, Draining, Server, TooManyTables,
)

#: What a table id may be in a path: the server makes 12 hex digits; any
#: other id is answered ``UnknownTable`` without asking the database.
_TABLE_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


_ENC = msgspec.json.Encoder()


def _json(obj: Any, status: int = 200) -> Response:
    return Response(_ENC.encode(obj), status_code=status, media_type="application/json")


def _error(code: str, message: str, status: int) -> Response:
    return _json(P.HttpError(error=code, message=message), status)


def _server(request: Request | WebSocket) -> Server:
    return request.app.state.server


def _bearer(request: Request) -> str | None:
    """The ``Authorization: Bearer X`` value (None: no such header)."""
    auth = request.headers.get("authorization")
    if auth is None:
        return None
    return auth[7:].strip() if auth[:7].lower() == "bearer " else ""


def _no_key(s: Server, code: str, message: str, request: Request) -> Response:
    """The 401 answer of a request without a valid operator key, counted and
    logged as a ``refused`` event (its reason, path and client address,
    never the key sent): a client guessing keys shows in the log and in
    ``qipai_refusals_total``."""
    s.events.emit("refused", reason=code, path=request.url.path[:128],
                  client=logs.client(request))
    r = _error(code, message, 401)
    r.headers["WWW-Authenticate"] = f'Bearer realm="qipai", error="invalid_token"' \
        if code == "BadKey" else 'Bearer realm="qipai"'
    return r


def _key_or_refusal(request: Request, what: str) -> str | Response | None:
    """With ``--keys``: the name of the configured key the request sends
    (logged the first time it is used), or its 401 answer (``NoKey``,
    ``BadKey``: each a ``refused`` event, :func:`_no_key`; the text log says
    ``BadKey`` once per reload of the keys).  Without
    keys: None (the open demo)."""
    s = _server(request)
    if s.keys is None:
        return None
    token = _bearer(request)
    if token is None or token == "":
        return _no_key(s, "NoKey", f"{what} needs an operator key: "
                                   f"Authorization: Bearer KEY (qipai keys new NAME)", request)
    name = s.keys.name(token)
    if name is None:
        if not logs.json_on():   # (a JSON log has the refused event, each reason every 10 s)
            s.log_once("bad-key", f"a request from {logs.client(request)} sent a key that is "
                                  f"not (or no longer) in the keys file: refused 401 BadKey "
                                  f"(logged once until the next reload)")
        return _no_key(s, "BadKey", f"{what}: the key sent is not one of this server's "
                                    f"(revoked, or mistyped)", request)
    s.log_once(f"key:{name}", f"key {name!r} used (first time since the keys were loaded)")
    return name


def _denied(s: Server, tid: str, d: Denied, client: str | None = None) -> Response:
    """The answer of a signed seat token refused (:mod:`qipai.server.identity`),
    counted and logged as a refusal (its reason, table and client address,
    never the token)."""
    s.events.emit("refused", reason=d.code, table=tid, client=client)
    r = _error(d.code, d.message, d.status)
    if d.status == 401:
        r.headers["WWW-Authenticate"] = 'Bearer realm="qipai", error="invalid_token"'
    return r


def _table_reader(request: Request, tid: str, row: dict[str, Any]) -> Response | None:
    """With ``--keys``, who may read table ``tid``'s records and replays
    (open or closed): a configured key, or a seat token of that table —
    the one the server made, or one the operator signed (a JWT,
    :func:`~qipai.server.identity.verify`) — (a player sees his table's
    finished hands); a seat token of another table → 403 ``WrongTable``.
    None: allowed."""
    s = _server(request)
    if s.keys is None:
        return None
    token = _bearer(request)
    if token and looks_signed(token):   # a seat token the operator signed (JWT)
        try:
            verify(s.keys, token, Seating.of_row(row))
        except Denied as d:
            return _denied(s, tid, d, logs.client(request))
        return None
    if token:
        h = token_hash(token)
        seats = msgspec.json.decode(row["tokens"], type=dict[str, str]).values()
        if any(secrets.compare_digest(h, x) for x in seats):
            return None
        if any(h in t.seat_of_hash for t in s.tables.values() if t.id != tid):
            return _denied(s, tid, Denied("WrongTable", f"that seat token is of another "
                                                        f"table, not {tid}", 403),
                           logs.client(request))
    refusal = _key_or_refusal(request, f"reading table {tid}'s records")
    return refusal if isinstance(refusal, Response) else None


async def health(request: Request) -> Response:
    s = _server(request)
    counts = {"tables": len(s.tables), "refused": len(s.refused), "connections": s.connections,
              "db": s.store.dialect}
    lost = s.store.lost
    if lost is not None:
        return _json({"status": "lock-lost", **counts, "message": LOCK_LOST}, 503)
    halted = sorted(t.id for t in s.tables.values() if t.halted is not None)
    if halted:   # a hand not read back after a failed write, or an internal error
        # /health answers anyone: on a keyed server table ids are the
        # operator's, so they are left to the log (and GET /admin/tables)
        shown_ids = ("their ids in the log" if s.keys is not None else
                     ", ".join(halted[:5]) + (f" and {len(halted) - 5} more"
                                              if len(halted) > 5 else ""))
        why = sorted({"after a failed write the hand could not be read back from the database"
                      if s.tables[i].halted[0] != "InternalError" else  # type: ignore[index]
                      "an internal error (of the server or a plugin) stopped it"
                      for i in halted})
        return _json({"status": "halted", **counts, "halted": len(halted),
                      "message": f"{len(halted)} table(s) take no action until the server is "
                                 f"restarted ({shown_ids}): {'; '.join(why)} (the server's log "
                                 f"says why); restart the server once the cause is fixed"}, 503)
    stall = s.note_stall()
    if stall is not None:
        waited, what = stall
        return _json({"status": "stalled", **counts,
                      "message": f"{what} has waited {waited:.0f} s for the database (more than "
                                 f"--stall-seconds {s.stall_s:g}): while a write waits nothing "
                                 f"commits and no act is acknowledged"}, 503)
    return _json({"status": "ok", **counts})


def _lost(s: Server) -> Response | None:
    """The typed 503 answer of a write once the server lock is lost
    (:data:`~qipai.host.errors.LOCK_LOST`: the reason is in the log)."""
    return None if s.store.lost is None else _error("LockLost", LOCK_LOST, 503)


def _unread(s: Server, exc: StoreError) -> Response:
    """The typed 503 answer of a read the database failed (``Unavailable``:
    the database's own words, which may name its host and user, go to the
    server's log, not to the client) or that too many reads wait before
    (``Busy``, :class:`ReadsBusy`)."""
    if isinstance(exc, ReadsBusy):
        return _error("Busy", str(exc), 503)
    if isinstance(exc, StoreStopped):
        return _error("Unavailable", str(exc), 503)
    s.log(f"a read failed: {exc}")
    return _error("Unavailable", "the database did not answer the read (the server's log "
                                 "says why); try again shortly", 503)


def _table_id(request: Request | WebSocket) -> str | None:
    """The path's table id if it can be one (:data:`_TABLE_ID`), else None."""
    tid = request.path_params["id"]
    return tid if _TABLE_ID.fullmatch(tid) else None


def _no_table(request: Request | WebSocket) -> Response:
    return _error("UnknownTable", f"no table {shown(request.path_params['id'])}", 404)


def _refused(s: Server, tid: str) -> Response | None:
    """The typed 409 answer for a table this server refused to restore."""
    exc = s.refused.get(tid)
    if exc is None:
        return None
    return _error(type(exc).__name__, f"table {tid} is not served: {exc}", 409)


def _no_spec_load(exc: Crowded | Stopped) -> Response:
    """503 for a ruleset load not taken (:meth:`Server.ruleset_async`): too
    many waiting (``Busy``), or the server stopping (``Unavailable``)."""
    if isinstance(exc, Crowded):
        return _error("Busy", f"{SPEC_WORKERS} ruleset load runs and {SPEC_WAITING} wait "
                              f"already: try again shortly", 503)
    return _error("Unavailable", str(exc), 503)


async def variants(request: Request) -> Response:
    from qipai.core.ruleset import available

    s = _server(request)
    out = []
    for name in sorted(available()):
        try:
            rs = await s.ruleset_async(name, house=False)
        except (Crowded, Stopped) as exc:
            return _no_spec_load(exc)
        except Exception:  # noqa: BLE001 - a broken plugin does not hide the others
            continue
        m = rs.manifest
        out.append({"name": name, "title": m.title, "family": m.family, "players": m.players,
                    "version": m.version, "options": rs.options_dict()})
    return _json(out)


async def variant(request: Request) -> Response:
    name = request.path_params["name"]
    if len(name) > 64 or not name.isprintable():
        return _error("UnknownVariant", f"no variant {shown(name)}", 404)
    try:
        rs = await _server(request).ruleset_async(name, house=False)
    except (Crowded, Stopped) as exc:
        return _no_spec_load(exc)
    except QipaiError as exc:
        return _error(type(exc).__name__, str(exc), 404)
    m = rs.manifest
    cards = m.cards
    glyph = getattr(cards, "glyph", None)
    table = [{"kind": k, "notation": cards.token(k), "chinese": cards.chinese(k),
              "glyph": glyph(k) if glyph else None} for k in range(cards.n_kinds)]
    return _json({"name": rs.name, "title": m.title, "family": m.family, "players": m.players,
                  "version": m.version, "options": rs.options_dict(),
                  "options_schema": msgspec.json.schema(m.options_type),
                  "names": dict(m.names),
                  "cards": {"system": cards.name, "copies": cards.copies, "kinds": table}})


async def vocabulary(request: Request) -> Response:
    """``GET /vocabulary?lang=zh``: the words the command line writes
    (:func:`qipai.text.vocabulary`), so the page shows the same ones; a
    variant's ``names`` (``GET /variants/{name}``) come first over them."""
    from qipai.text import LANGUAGES, vocabulary as words

    lang = request.query_params.get("lang", "zh")
    if lang not in LANGUAGES:
        return _error("BadMessage", f"lang is one of {', '.join(LANGUAGES)}, not {shown(lang)}",
                      400)
    return _json(words(lang))


async def _body(request: Request, cap: int | None = None) -> bytes | Response:
    cap = cap or _server(request).max_body_bytes
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return _error("TooLarge", f"a request body is at most {cap} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


async def create_table(request: Request) -> Response:
    key = _key_or_refusal(request, "creating a table")
    if isinstance(key, Response):
        return key
    body = await _body(request)
    if isinstance(body, Response):
        return body
    if not body.strip():
        return _error("BadMessage", 'the body is empty: a table request is a JSON object, '
                                    '{"variant": "guilin-mahjong", "bots": [1, 2, 3]} '
                                    '({} for the defaults)', 400)
    try:
        spec = msgspec.json.decode(body, type=P.CreateTable)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return _error("BadMessage", f"not a table request: {exc}", 400)
    lost = _lost(_server(request))
    if lost is not None:
        return lost
    s = _server(request)
    try:
        # the key's own limits, or (no key) the client address's (429), then the server's
        with s.quota.table_for(key, limits.address_of(request)) as made:
            _, created = await s.create(spec, key)
            made(created.id)
    except limits.LimitReached as exc:
        return limits.refusal(s, exc, logs.client(request))
    except LockLost:
        return _error("LockLost", LOCK_LOST, 503)
    except TooManyTables as exc:
        return _error("TooManyTables", str(exc), 503)
    except Draining as exc:
        return _error("Draining", str(exc), 503)
    except (Crowded, Stopped) as exc:
        return _no_spec_load(exc)
    except StoreError as exc:
        s.log(f"a new table was not written: {exc}")   # the database's words: log only
        return _error("Unavailable", "the database did not take the table (the server's log "
                                     "says why); try again shortly", 503)
    except QipaiError as exc:
        return _error(type(exc).__name__, str(exc), 400)
    return _json(created, 201)


async def list_tables(request: Request) -> Response:
    """The tables this server plays: open and not halted (a halted table's
    hand in memory may not be the database's; ``GET /tables/{id}`` reads it).
    With ``--keys`` it needs a key, unless the server was started with
    ``--lobby``."""
    s = _server(request)
    if not s.lobby:   # --lobby: the open tables are listed to anyone (names, never tokens)
        key = _key_or_refusal(request, "listing the tables")
        if isinstance(key, Response):
            return key
    here = [t.info() for t in s.tables.values() if t.open and t.halted is None]
    if s.cluster is None:
        return _json(here)
    # a cluster: the other nodes' open tables too, as the database holds them
    try:
        rows = await s.store.read(s.store.open_elsewhere, s.cluster.node, s.max_tables)
    except StoreError as exc:
        return _unread(s, exc)
    listed = []
    for r in rows:
        if r["id"] in s.tables:
            continue
        try:
            listed.append(_listed(s, r))
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError):
            pass   # a damaged row (its node refuses it): not listed, as outside a cluster
    return _json([*here, *listed])


def _listed(s: Server, row: dict[str, Any]) -> dict[str, Any]:
    """(A cluster's ``GET /tables``.)  Another node's open table as the
    database holds it: the fields of a table answer, its committed hand and
    totals (``connected`` and ``watched`` are that node's to know: empty)."""
    nets = [net for _, net, _ in row["hand_rows"] if net is not None]
    done, totals = len(nets), _totals(row, nets)
    seats = len(totals)
    hand, _, commitment = row["hand_rows"][-1] if row["hand_rows"] else (0, None, "")
    return {"id": row["id"], "spec": row["spec"], "variant": row["variant"], "players": seats,
            "bots": msgspec.json.decode(row["bots"]), "hand": hand, "hands_done": done,
            "dealer": None, "rng": row["rng"], "commitment": commitment, "totals": totals,
            "open": True, "connected": [], "watched": False, "names": _names(row),
            "levels": _levels(row),
            **_room(row), **s.where(row.get("owner"))}


def _table(request: Request) -> HostedTable | None:
    return _server(request).tables.get(request.path_params["id"])


async def get_table(request: Request) -> Response:
    s = _server(request)
    t = _table(request)
    if t is not None and t.halted is None:
        return _json(t.info())
    refused = _refused(s, request.path_params["id"])
    if refused is not None:
        return refused
    stored = await _stored(s, request)
    if isinstance(stored, Response):
        return stored
    row, done, totals = stored
    out = {"id": row["id"], "spec": row["spec"], "variant": row["variant"],
           "players": len(totals), "bots": msgspec.json.decode(row["bots"]),
           "rng": row["rng"], "open": bool(row["open"]), "hands_done": done, "totals": totals,
           "names": _names(row), "levels": _levels(row), **_room(row)}
    out.update(stake=None, rake=None, money_totals=None, house=None)   # no stake: no money
    if row.get("stake") is not None:   # a table with a stake: its totals in money
        money = await _stored_money(s, row)
        if isinstance(money, Response):
            return money
        out.update(money)
    if t is not None and t.halted is not None:
        # halted: what the database holds, not the hand in memory (it may hold
        # actions the database does not), and why it is not played
        out["halted"], out["message"] = t.halted
    if s.cluster is not None:   # any node answers; the owner's address for its clients
        out.update(s.where(row.get("owner")) if row["open"] else s.where())
    return _json(out)


async def _stored_money(s: Server, row: dict[str, Any]) -> Response | dict[str, Any]:
    """A stored table with a stake's ``stake``, ``rake``, ``money_totals``
    (per seat, after the rake, over its finished hands) and ``house``."""
    try:
        stored = await s.store.read(s.store.money_of, row["id"])
    except StoreError as exc:
        return _unread(s, exc)
    seats = len(msgspec.json.decode(row["bots"])) + len(msgspec.json.decode(row["tokens"]))
    totals, house = [0] * seats, 0
    for text in stored:
        m = msgspec.json.decode(text)
        totals = [a + b for a, b in zip(totals, m["net"])]
        house += m["house"]
    return {"stake": row["stake"], "rake": msgspec.json.decode(row["rake"]) if row.get("rake")
            else None, "money_totals": totals, "house": house}


def _room(row: dict[str, Any]) -> dict[str, Any]:
    """A stored table row's room: ``hands`` (局数, None: open-ended),
    ``ready`` (a ready step between hands; NULL, a row made before the
    choice: a room's yes, an open-ended table's no), ``ended``
    (``finished``, ``dissolved``, ``closed``; None: open) and ``tally``
    (its 大结算, once a room ended; else None)."""
    tally = row.get("tally")
    ready = row.get("ready")
    return {"hands": row.get("hands"),
            "ready": bool(ready) if ready is not None else row.get("hands") is not None,
            "ended": row.get("ended"),
            "tally": msgspec.json.decode(tally) if tally else None}


def _levels(row: dict[str, Any]) -> dict[str, str]:
    """A stored table row's bot seats' levels (``{"1": "hard"}``); a row
    made before levels: ``normal`` at each (:mod:`qipai.host.levels`)."""
    levels = msgspec.json.decode(row.get("bot_levels") or "{}", type=dict[str, str])
    return {str(b): levels.get(str(b), DEFAULT_LEVEL) for b in msgspec.json.decode(row["bots"])}


def _names(row: dict[str, Any]) -> dict[str, str]:
    """The named seats' names of a stored table row (``{"0": "阿明"}``; never
    their player ids)."""
    named = msgspec.json.decode(row.get("players") or "{}", type=dict[str, dict[str, str]])
    return {s: p["name"] for s, p in sorted(named.items(), key=lambda i: int(i[0]))}


async def _stored(s: Server, request: Request
                  ) -> Response | tuple[dict[str, Any], int, list[int]]:
    """The path's table as the database holds it: ``(row, hands done,
    totals)`` — the totals one per seat (0 each before a hand is done) —
    or the error answer (``UnknownTable``, or the read failed)."""
    tid = _table_id(request)
    if tid is None:
        return _no_table(request)
    try:
        row = await s.store.read(s.store.table, tid)
        if row is None:
            return _no_table(request)
        nets = await s.store.read(s.store.nets_of, row["id"])
    except StoreError as exc:
        return _unread(s, exc)
    return row, len(nets), _totals(row, nets)


def _totals(row: dict[str, Any], nets: list[Any]) -> list[int]:
    """A stored table's running totals, one per seat: the sum of its
    finished hands' ``net`` (JSON text each)."""
    # every seat is a bot's or has a token (POST /tables)
    seats = len(msgspec.json.decode(row["bots"])) + len(msgspec.json.decode(row["tokens"]))
    totals = [0] * seats
    for net in nets:
        totals = [a + b for a, b in zip(totals, msgspec.json.decode(net))]
    return totals


async def _readable(s: Server, request: Request) -> Response | dict[str, Any]:
    """The path's table row if the request may read its stored hands (it
    exists; with ``--keys``, a key or one of its seat tokens is sent), else
    the error answer (:func:`_table_reader`, ``UnknownTable``, a failed read)."""
    tid = _table_id(request)
    if tid is None:
        return _no_table(request)
    try:
        row = await s.store.read(s.store.table, tid)
    except StoreError as exc:
        return _unread(s, exc)
    if row is None:
        return _no_table(request)
    refusal = _table_reader(request, tid, row)
    return row if refusal is None else refusal


async def records(request: Request) -> Response:
    s = _server(request)
    row = await _readable(s, request)
    if isinstance(row, Response):
        return row
    try:
        stored = await s.store.read(s.store.hands_of, row["id"])
    except StoreError as exc:
        return _unread(s, exc)
    return _json(records_of(row, stored))


def records_of(row: dict[str, Any], stored: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``GET /tables/{id}/records`` answers for a stored table row and
    its hand rows (``hands_of``): every finished hand's record (what ``qipai
    verify`` checks), the total, the names, the room's end — also the body
    of a closed table's archive file (:mod:`qipai.server.retention`)."""
    hands, total = [], None
    for h in stored:
        if h["net"] is None:  # unfinished (or abandoned at close): not a finished hand
            continue
        rec = msgspec.json.decode(h["record"])
        net = msgspec.json.decode(h["net"])
        total = net if total is None else [a + b for a, b in zip(total, net)]
        hands.append({"hand": h["hand"], "record": rec})
    room = _room(row)
    return {"table": row["id"], "hands": hands, "total": total, "names": _names(row),
            "room_hands": room["hands"], "ended": room["ended"], "tally": room["tally"]}


async def finished(request: Request) -> Response:
    """``GET /records``: the latest finished hands (``?limit=N``, at most 500)."""
    key = _key_or_refusal(request, "reading the records")
    if isinstance(key, Response):
        return key
    limit = _whole(request.query_params.get("limit", "50"))
    if limit is None:
        return _error("BadMessage", f"limit must be a whole number written in ASCII digits, "
                                    f"not {shown(request.query_params['limit'])}", 400)
    limit = max(1, min(500, limit))
    s = _server(request)
    store = s.store
    try:
        rows = await store.read(store.finished_hands, limit)
    except StoreError as exc:
        return _unread(s, exc)
    return _json([{"table": r["table_id"], "hand": r["hand"], "spec": r["spec"],
                   "variant": r["variant"], "net": msgspec.json.decode(r["net"]),
                   "names": _names(r)} for r in rows])


_WHOLE = re.compile(r"0|[1-9][0-9]{0,17}")


def _whole(text: str) -> int | None:
    """``text`` as a whole number if it is one written in ASCII digits,
    without sign, spaces, underscores or leading zeros (``int()`` also
    reads ``"٣"``, ``" 3"``, ``"+3"`` and ``"1_0"``), else None."""
    return int(text) if _WHOLE.fullmatch(text) else None


def _replay_json(server: Server, data: bytes, table: str | None, hand: int | None) -> bytes:
    """The replay's JSON answer (run in a worker thread)."""
    return msgspec.json.encode(replay_steps(data, plugins=server.plugins, table=table, hand=hand,
                                            max_bytes=server.max_replay_bytes))


async def _replayed(server: Server, data: bytes, table: str | None = None,
                    hand: int | None = None) -> Response:
    """Replay ``data`` in a worker thread (:data:`REPLAY_WORKERS` at once,
    :data:`REPLAY_WAITING` more queued, the next answered 503 ``Busy``), so
    that a large record does not stall the event loop and every table."""
    try:
        body = await server.replays.run(_replay_json, server, data, table, hand, what="a replay")
    except Crowded:
        return _error("Busy", f"{REPLAY_WORKERS} replay runs and {REPLAY_WAITING} wait "
                              f"already: try again shortly", 503)
    except QipaiError as exc:
        return _error(type(exc).__name__, str(exc), 400)
    return Response(body, media_type="application/json")


async def replay_stored(request: Request) -> Response:
    """``GET /tables/{id}/records/{hand}/replay``: a stored finished hand,
    step by step (an unfinished hand is 404, its cards never served)."""
    s = _server(request)
    row = await _readable(s, request)
    if isinstance(row, Response):
        return row
    tid = row["id"]
    hand = _whole(request.path_params["hand"])
    if hand is None:
        return _error("UnknownHand", f"a hand is a whole number written in ASCII digits "
                                     f"(0, 1, …), not {shown(request.path_params['hand'])}", 404)
    try:
        stored = await s.store.read(s.store.hands_of, tid)
    except StoreError as exc:
        return _unread(s, exc)
    for h in stored:
        if h["hand"] == hand and h["net"] is not None:
            return await _replayed(s, h["record"].encode(), tid, hand)
    return _error("UnknownHand", f"table {tid} has no finished hand {hand}", 404)


async def replay_posted(request: Request) -> Response:
    """``POST /replay``: a record in the body (at most ``--max-replay-bytes``)."""
    s = _server(request)
    body = await _body(request, s.max_replay_bytes)
    if isinstance(body, Response):
        return body
    return await _replayed(s, body)


#: The page's files (index.html, page.css, page.js, tiles.js, fonts/), served under /static.
STATIC = Path(__file__).with_name("static")
# the faces' font: Python 3.11 knows .woff2 only from the system's mime.types, which a slim
# image lacks (Starlette would answer text/plain)
mimetypes.add_type("font/woff2", ".woff2")


async def page(request: Request) -> Response:
    """``GET /``: the browser page."""
    return Response((STATIC / "index.html").read_bytes(), media_type="text/html; charset=utf-8")


async def close_table(request: Request) -> Response:
    """``POST /tables/{id}/close``; a table closed already (by this server
    or an earlier one: it is no longer held) answers as its close did, so
    a client that lost the first answer may ask again."""
    s = _server(request)
    t = _table(request)
    refused = _refused(s, request.path_params["id"])
    if refused is not None:
        return refused
    token = _bearer(request) or ""
    # with --keys: an operator key closes any table; the table's admin token still its own
    keyed = s.keys is not None and s.keys.name(token) is not None
    if keyed:
        _key_or_refusal(request, "closing a table")   # (logs its first use)
    if t is None:
        stored = await _stored(s, request)
        if isinstance(stored, Response):
            return stored
        row, _, totals = stored
        if not keyed and not _admin(token, row["admin_hash"]):
            return _close_refused(request)
        if row["open"] and s.cluster is not None:   # another node's: asked again there
            return _elsewhere(s, request, row)
        if row["open"]:   # open in the database yet not served: not this server's
            return _error("UnknownTable", f"no open table {shown(row['id'])} is served here",
                          404)
        return _json({"id": row["id"], "open": False, "totals": totals})
    if not keyed and not _admin(token, t.admin_hash):
        return _close_refused(request)
    lost = _lost(s)
    if lost is not None:
        return lost
    if t.halted is not None and t.halted[0] == "InternalError":   # not worth retrying
        return _error("InternalError", t.halted[1], 503)
    try:
        await t.close()
    except LockLost as exc:
        return _error("LockLost", str(exc), 503)
    except StoreError as exc:   # its message names no database detail (logged)
        return _error("Unavailable", str(exc), 503)
    return _json({"id": t.id, "open": False, "totals": t.totals})


def _elsewhere(s: Server, request: Request, row: dict[str, Any]) -> Response:
    """(A cluster.)  A request only the table's node answers, made to
    another: 307 to the same path there (``Location``; the body names the
    node and its address, ``Moved``), or 503 ``Unavailable`` while no live
    node serves it (its node died: a survivor takes it over within seconds)."""
    where = s.where(row.get("owner"))
    if where["address"] is None:
        return _error("Unavailable", f"no node serves table {shown(row['id'])} now: its node "
                                     f"stopped and another is taking it over; try again "
                                     f"in a few seconds", 503)
    body = {"error": "Moved", "message": f"table {row['id']} is served by node "
                                         f"{where['node']}, at {where['address']}", **where}
    return Response(msgspec.json.encode(body), status_code=307, media_type="application/json",
                    headers={"location": f"{where['address']}{request.url.path}"})


def _admin(token: str, admin_hash: str) -> bool:
    """Whether ``token`` is the table's admin token (compared in constant time)."""
    return bool(token) and secrets.compare_digest(token_hash(token), admin_hash)


def _close_refused(request: Request) -> Response:
    """A close refused: with ``--keys`` 401 ``NoKey``/``BadKey``, else 403 ``BadToken``."""
    refusal = _key_or_refusal(request, "closing a table (an operator key, or the table's "
                                       "admin token)")
    return refusal if isinstance(refusal, Response) else _bad_admin()


def _bad_admin() -> Response:
    return _error("BadToken", "closing a table needs its admin token "
                              "(Authorization: Bearer ADMIN)", 403)


async def not_found(request: Request, exc: Exception) -> Response:
    """An unknown path (``/static/../app.py`` too) or method: a typed JSON
    error, like every other refusal, not Starlette's plain text."""
    status = getattr(exc, "status_code", 404)
    if status == 405:
        return _error("BadMethod", f"{request.method} is not served at {request.url.path}", 405)
    return _error("NotFound", f"nothing is served at {request.url.path}", 404)

