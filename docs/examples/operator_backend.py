"""A platform's backend in front of ``qipai serve --keys`` (docs/howto/integrate.md).

It holds one operator key (its name, the key, and the signing secret
``qipai keys new`` printed), and:

* makes a table for two of its players and two bots (``create_table``);
* hands each player a signed seat link, a short-lived JWT naming the table,
  his seat and his account id (``seat_link``): qipai stores none of the
  platform's users, and a player who opens a new link comes back as himself;
* lists the table's finished hands, by the players' names (``finished``).

Run it against a server::

    python docs/examples/operator_backend.py http://127.0.0.1:8000 \\
        --key-name shop --key qk_… --secret …

It needs only the standard library and PyJWT (``pip install pyjwt``).
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("server", help="the qipai server, http://HOST:PORT")
    ap.add_argument("--key-name", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--hands-of", metavar="TABLE", help="list a table's finished hands")
    a = ap.parse_args()
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
