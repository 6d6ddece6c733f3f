"""A platform's backend in front of ``qipai serve --keys`` (docs/howto/integrate.md).

It holds one operator key (its name, the key, and the signing secret
``qipai keys new`` printed), and:

* makes a table for two of its players and two bots (``create_table``);
* hands each player a signed seat link, a short-lived JWT naming the table,
  his seat and his account id (``seat_link``): qipai stores none of the
  platform's users, and a player who opens a new link comes back as himself;
* lists the table's finished hands, by the players' names (``finished``);
* receives the server's events (``qipai serve --webhook URL``): checks
  each one's signature and credits each player's balance from every
  ``hand_ended`` exactly once, by event id (``receive``; ``--listen PORT``
  serves it).

Run it against a server, the key and the secret in its environment (not on
its command line, where any user of the machine could read them with ``ps``)::

    QIPAI_KEY=qk_… QIPAI_SIGNING_SECRET=… \\
        python docs/examples/operator_backend.py http://127.0.0.1:8000 --key-name shop

It needs only the standard library and PyJWT (``pip install pyjwt``).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sqlite3
import time
import urllib.request
from typing import Any

import jwt


def call(server: str, method: str, path: str, bearer: str, body: Any = None) -> Any:
    """One JSON request to the qipai server, as ``Authorization: Bearer``."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server + path, data=data, method=method, headers={
        "Authorization": f"Bearer {bearer}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def create_table(server: str, key: str, players: list[dict[str, Any]],
                 variant: str = "guilin-mahjong") -> dict[str, Any]:
    """A table for ``players`` (``{"seat", "player", "name"}``), bots at the other seats."""
    seats = {p["seat"] for p in players}
    return call(server, "POST", "/tables", key, {
        "variant": variant, "bots": [s for s in range(4) if s not in seats],
        "players": players})


def seat_token(table: str, seat: int, player: str, key_name: str, secret: str,
               minutes: int = 60) -> str:
    """A seat token signed for ``player``: valid ``minutes``, for that seat only."""
    return jwt.encode({"table": table, "seat": seat, "player": player,
                       "exp": int(time.time()) + minutes * 60},
                      secret, algorithm="HS256", headers={"kid": key_name})


def seat_link(server: str, table: str, seat: int, player: str, key_name: str,
              secret: str, minutes: int = 60) -> str:
    """The page's link that plays that seat (the token stays in the fragment)."""
    return f"{server}/#play/{table}/{seat_token(table, seat, player, key_name, secret, minutes)}"


def finished(server: str, key: str, table: str) -> list[dict[str, int]]:
    """Each finished hand of ``table`` as ``{name or "seat N": net}``."""
    got = call(server, "GET", f"/tables/{table}/records", key)
    names = got["names"]
    return [{names.get(str(s), f"seat {s}"): net
             for s, net in enumerate(h["record"]["result"]["net"])} for h in got["hands"]]


def verify(secret: bytes, header: str, body: bytes, tolerance: int = 300) -> bool:
    """Whether ``X-Qipai-Signature`` (``t=TIMESTAMP,v1=HEX``) signs ``body``
    with ``secret`` (``QIPAI_WEBHOOK_SECRET``), sent within ``tolerance`` s."""
    try:
        parts = dict(p.split("=", 1) for p in header.split(","))
        mac = hmac.new(secret, parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
        return (hmac.compare_digest(mac, parts["v1"])
                and abs(time.time() - int(parts["t"])) <= tolerance)
    except (ValueError, KeyError):
        return False


def ledger(path: str) -> sqlite3.Connection:
    """The wallet: the events taken (by id) and each player's balance (子)."""
    db = sqlite3.connect(path, check_same_thread=False)
    db.execute("create table if not exists seen (id integer primary key)")
    db.execute("create table if not exists balances (player text primary key, "
               "amount integer not null)")
    return db


def receive(db: sqlite3.Connection, secret: bytes, signature: str, body: bytes) -> int:
    """The webhook: the HTTP status to answer one POSTed event.  401 for a
    bad signature; else each named player's net of a ``hand_ended`` is
    credited — in money (minor units, after the rake) when the table has a
    stake, else in 子 — once: the event id and the credits commit together, and a
    repeat (the server sends again what it did not see answered) changes
    nothing — and 200."""
    if not verify(secret, signature, body):
        return 401
    event = json.loads(body)
    with db:   # one transaction
        if db.execute("insert or ignore into seen (id) values (?)",
                      (event["id"],)).rowcount == 0:
            return 200   # taken already
        if event["kind"] == "hand_ended":
            data = event["data"]
            money = data.get("money")   # a table with a stake: money nets, after the rake
            for seat, net in enumerate(money["net"] if money else data["net"]):
                named = data["named"].get(str(seat))
                if named is not None:
                    db.execute("insert into balances (player, amount) values (?, ?) on "
                               "conflict (player) do update set amount = amount + ?",
                               (named["player"], net, net))
    return 200


def listen(port: int, db: sqlite3.Connection, secret: bytes) -> None:
    """Serve :func:`receive` on ``port`` (any path), one request at a time."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(receive(db, secret, self.headers.get("x-qipai-signature", ""),
                                       body))
            self.send_header("content-length", "0")
            self.end_headers()

    HTTPServer(("127.0.0.1", port), Hook).serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("server", help="the qipai server, http://HOST:PORT")
    ap.add_argument("--key-name", required=True, help="the operator key's name (the JWT's kid)")
    ap.add_argument("--hands-of", metavar="TABLE", help="list a table's finished hands")
    ap.add_argument("--listen", metavar="PORT", type=int,
                    help="receive the webhook's events on this port (QIPAI_WEBHOOK_SECRET in "
                         "the environment), crediting the players in wallet.db")
    a = ap.parse_args()
    if a.listen:
        listen(a.listen, ledger("wallet.db"), os.environ["QIPAI_WEBHOOK_SECRET"].encode())
        return
    missing = [v for v in ("QIPAI_KEY", "QIPAI_SIGNING_SECRET") if not os.environ.get(v)]
    if missing:
        ap.error(f"set {' and '.join(missing)} in the environment (qipai keys new prints them)")
    a.key, a.secret = os.environ["QIPAI_KEY"], os.environ["QIPAI_SIGNING_SECRET"]
    if a.hands_of:
        for i, nets in enumerate(finished(a.server, a.key, a.hands_of)):
            print(f"hand {i + 1}: {nets}")
        return
    players = [{"seat": 0, "player": "u-123", "name": "阿明"},
               {"seat": 1, "player": "u-456", "name": "小红"}]
    t = create_table(a.server, a.key, players)
    print(f"table {t['id']}")
    for p in players:
        link = seat_link(a.server, t["id"], p["seat"], p["player"], a.key_name, a.secret)
        print(f"{p['name']}: {link}")


if __name__ == "__main__":
    main()
