"""Per-client-address limits of the open demo (``qipai serve
--address-max-tables``, ``--address-tables-per-minute``,
``--address-max-connections``; :mod:`qipai.server.limits`), against a real
server process.

The issue 34 audit: on an open demo with ``--max-connections 20`` one
client made a table with every seat human, opened 8 connections a seat and
held all 20 — another table's player was refused 503; and one client could
create every ``--max-tables`` table.  Now each address is held to its own
share.  The tests tell addresses apart as a server behind a proxy does:
``--forwarded-allow-ips 127.0.0.1`` and an ``X-Forwarded-For`` of each
"client" (a loopback client the server was not forwarded is the machine's
own and is not limited).
"""

from __future__ import annotations

import json
import time

import pytest

from hostkit import PATIENCE, SyncSeat, start_server
from test_keys import bearer, new_key

ATTACKER, OTHER, NORMAL = "203.0.113.7", "198.51.100.20", "192.0.2.44"
PROXY = ("--forwarded-allow-ips", "127.0.0.1")


def via(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def seat(s, tid: str, token: str, address: str | None) -> SyncSeat:
    """A connection from ``address`` (None: a local client, not forwarded)."""
    return SyncSeat(s, tid, token, strict=False,
                    **({"additional_headers": via(address)} if address else {}))


def create(s, address: str | None, bots=(1, 2, 3)):
    with s.http() as h:
        return h.post("/tables", json={"bots": list(bots)},
                      headers=via(address) if address else {})


def poll(what, until):
    end = time.monotonic() + PATIENCE   # a bound on a hang, not a timing
    while not until(value := what()) and time.monotonic() < end:
        time.sleep(0.05)
    return value


def held(s) -> int:
    """The connections the server's tables hold now (``/admin/tables``, asked locally)."""
    with s.http() as h:
        return sum(len(t["connected"]) + t["spectators"] for t in h.get("/admin/tables").json())


def events(s, name: str) -> list[dict]:
    return [x for x in map(json.loads, s.log_path.read_text().splitlines())
            if x.get("event") == name]


def test_one_address_cannot_hold_every_seat_connection(tmp_path):
    # the audit's scenario: one table, every seat human, 8 connections a seat
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--max-connections", "20",
                     "--log-format", "json", *PROXY)
    try:
        r = create(s, ATTACKER, bots=())
        assert r.status_code == 201, r.text
        mine = r.json()
        theirs = create(s, OTHER, bots=[2, 3]).json()
        kept, refused = [], []
        for token in mine["seats"].values():
            for _ in range(8):                       # MAX_CONNS_PER_SEAT
                c = seat(s, mine["id"], token, ATTACKER)
                msg = c.recv()
                if msg["type"] == "welcome":
                    kept.append(c)
                    continue
                refused.append(msg)
                try:
                    c.recv()
                except Exception:  # noqa: BLE001 - the close that follows the error
                    pass
                assert c.ws.close_code == 4429
                c.close()
        # the default: a tenth of --max-connections, at least 8
        assert len(kept) == 8 and len(refused) == 32 - 8
        for msg in refused:
            assert msg["code"] == "TooManyConnections", msg
            assert "--address-max-connections 8" in msg["message"], msg
        # another table's players, from other addresses, still come in
        others = [seat(s, theirs["id"], theirs["seats"]["0"], OTHER),
                  seat(s, theirs["id"], theirs["seats"]["1"], None)]
        for c in others:
            assert c.until("welcome")["type"] == "welcome"
        for c in others + kept:
            c.close()
        with s.http() as h:
            text = h.get("/metrics").text
        assert 'qipai_limit_refusals_total{key="",limit="address_max_connections"} 24.0' \
            in text
        assert 'qipai_refusals_total{reason="TooManyConnections"} 24.0' in text
    finally:
        s.stop()
    out = events(s, "refused")
    assert out and out[0]["reason"] == "TooManyConnections"
    assert out[0]["limit"] == "address_max_connections" and out[0]["client"] == ATTACKER
    assert out[0]["key"] is None
    log = s.log_path.read_text()
    assert "Traceback" not in log and log.count("reached its limit of WebSocket") == 1


def test_one_address_cannot_create_every_table(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--max-tables", "12", *PROXY)
    try:
        made = [create(s, ATTACKER) for _ in range(4)]   # a tenth of 12, at least 4
        assert all(r.status_code == 201 for r in made), [r.text for r in made]
        r = create(s, ATTACKER)
        assert r.status_code == 429, r.text
        body = r.json()
        assert body["error"] == "TooManyTables" and body["limit"] == "address_max_tables"
        assert body["max"] == 4 and "key" not in body and "retry_after" not in body
        assert "Retry-After" not in r.headers
        assert "--address-max-tables 4" in body["message"]
        # somebody else still makes a table, and plays it
        t = create(s, OTHER)
        assert t.status_code == 201, t.text
        c = seat(s, t.json()["id"], t.json()["seats"]["0"], OTHER)
        assert c.until("welcome")["type"] == "welcome"
        c.close()
        # the machine's own client (not forwarded) is not limited by the attacker's count
        assert create(s, None).status_code == 201
        # one of the attacker's tables closed: room for one more of its own
        first = made[0].json()
        with s.http() as h:
            assert h.post(f"/tables/{first['id']}/close",
                          headers={"Authorization": f"Bearer {first['admin']}"}
                          ).status_code == 200
        assert create(s, ATTACKER).status_code == 201
        assert create(s, ATTACKER).status_code == 429
        with s.http() as h:
            text = h.get("/metrics").text
        assert 'qipai_limit_refusals_total{key="",limit="address_max_tables"} 2.0' in text
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()


def test_tables_per_minute_per_address(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--address-tables-per-minute", "3", *PROXY)
    try:
        for _ in range(3):   # created and closed: each counts in the minute
            r = create(s, ATTACKER)
            assert r.status_code == 201, r.text
            t = r.json()
            with s.http() as h:
                h.post(f"/tables/{t['id']}/close",
                       headers={"Authorization": f"Bearer {t['admin']}"})
        r = create(s, ATTACKER)
        assert r.status_code == 429, r.text
        body = r.json()
        assert body["limit"] == "address_tables_per_minute" and body["max"] == 3
        assert 1 <= body["retry_after"] <= 60
        assert r.headers["Retry-After"] == str(body["retry_after"])
        assert create(s, OTHER).status_code == 201
        assert create(s, None).status_code == 201
    finally:
        s.stop()


def test_a_normal_user_is_unaffected(tmp_path):
    # the defaults (4096 connections, 1000 tables): a few tables, a few tabs each
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, *PROXY)
    try:
        conns = []
        for _ in range(3):
            r = create(s, NORMAL, bots=[2, 3])
            assert r.status_code == 201, r.text
            t = r.json()
            for token in (t["seats"]["0"], t["seats"]["1"], t["spectator_token"]):
                conns.append(seat(s, t["id"], token, NORMAL))
        for c in conns:
            assert c.until("welcome")["type"] == "welcome"
        for c in conns:
            c.close()
        with s.http() as h:
            assert "address_" not in h.get("/metrics").text
    finally:
        s.stop()


def test_the_count_goes_down_as_sockets_close(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path,
                     "--address-max-connections", "3", *PROXY)
    try:
        t = create(s, ATTACKER, bots=[1, 2, 3]).json()
        tokens = [t["seats"]["0"], t["spectator_token"], t["spectator_token"]]
        for round_ in range(6):
            conns = [seat(s, t["id"], token, ATTACKER) for token in tokens]
            for c in conns:
                assert c.until("welcome")["type"] == "welcome", round_
            extra = seat(s, t["id"], t["spectator_token"], ATTACKER)
            msg = extra.recv()
            assert msg["type"] == "error" and msg["code"] == "TooManyConnections", msg
            extra.close()
            for c in conns:
                if round_ % 2:
                    c.ws.socket.close()   # gone without a close handshake
                else:
                    c.close()
            # the server has let each go (no connection of the table is left)
            assert poll(lambda: held(s), lambda n: n == 0) == 0
        with s.http() as h:
            text = h.get("/metrics").text
        assert 'qipai_limit_refusals_total{key="",limit="address_max_connections"} 6.0' in text
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()


def test_keyed_server_limits_connections_per_address_only_when_asked(tmp_path):
    f = tmp_path / "keys.json"
    ops = new_key(f, "ops")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    for given, kept in ((), 8), (("--address-max-connections", "2"), 2):
        s = start_server(db, tmp_path, "--keys", str(f), "--max-connections", "20",
                         *given, *PROXY)
        try:
            with s.http() as h:   # the operator's backend: one address, many tables
                made = [h.post("/tables", json={"bots": []}, headers={**bearer(ops),
                                                                      **via(OTHER)})
                        for _ in range(12)]
            assert all(r.status_code == 201 for r in made), [r.text for r in made]
            t = made[0].json()
            conns = [seat(s, t["id"], tok, ATTACKER) for tok in t["seats"].values()
                     for _ in range(2)]
            answers = [c.recv() for c in conns]
            welcomed = sum(1 for m in answers if m["type"] == "welcome")
            assert welcomed == kept, answers   # without the option: all 8 (no limit)
            if given:
                assert {m.get("code") for m in answers if m["type"] == "error"} == \
                    {"TooManyConnections"}
            for c in conns:
                c.close()
        finally:
            s.stop()


@pytest.mark.parametrize("option", ["--address-max-tables", "--address-tables-per-minute"])
def test_table_limits_per_address_are_refused_with_keys(tmp_path, option):
    import subprocess
    import sys

    f = tmp_path / "keys.json"
    new_key(f, "ops")
    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", "0", "--db",
                        f"sqlite:///{tmp_path / 'q.db'}", "--keys", str(f), option, "3"],
                       capture_output=True, text=True, timeout=PATIENCE)
    assert p.returncode == 2
    assert "with --keys every table is made with a key" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1


def test_the_address_counted():
    from types import SimpleNamespace

    from qipai.server.limits import address_of

    def conn(host, **headers):
        return SimpleNamespace(client=SimpleNamespace(host=host) if host else None,
                               headers=headers)

    assert address_of(conn("203.0.113.7")) == "203.0.113.7"
    # one IPv6 host is given a /64: its addresses count as one
    assert address_of(conn("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64"
    assert address_of(conn("2001:db8:1:2:bbbb::9")) == "2001:db8:1:2::/64"
    assert address_of(conn("::ffff:198.51.100.3")) == "198.51.100.3"
    # the machine's own client is not counted; one a proxy forwarded is
    assert address_of(conn("127.0.0.1")) is None and address_of(conn("::1")) is None
    assert address_of(conn("127.0.0.1", **{"x-forwarded-for": "203.0.113.7"})) == "127.0.0.1"
    assert address_of(conn(None)) is None
