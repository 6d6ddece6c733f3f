"""docs/examples/operator_backend.py, the worked example of
docs/howto/integrate.md, against a real ``qipai serve --keys`` (SQLite and
PostgreSQL): a table for two named players and two bots, each player's
signed seat link played through ``qipai connect``, the finished hands
listed by name."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

from hostkit import PATIENCE, start_server

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "operator_backend.py"


def test_the_operator_backend_example(db_url, tmp_path):
    f = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "shop", "--file",
                          str(f)], capture_output=True, text=True, check=True).stdout.strip()
    secret = json.loads(f.read_text())["keys"][0]["secret"]
    env = {**os.environ, "QIPAI_KEY": key, "QIPAI_SIGNING_SECRET": secret}
    s = start_server(db_url, tmp_path, "--keys", str(f), "--seed", "3")
    try:
        out = subprocess.run([sys.executable, str(EXAMPLE), s.url, "--key-name", "shop"],
                             capture_output=True, text=True, timeout=PATIENCE, check=True,
                             env=env).stdout
        table = out.splitlines()[0].split()[1]
        links = dict(line.split(": ", 1) for line in out.splitlines()[1:])
        assert set(links) == {"阿明", "小红"}
        # each player plays his link's seat (the page's link: its token is the fragment's)
        players = [subprocess.Popen(
            [sys.executable, "-m", "qipai", "connect", "--auto", "--hands", "1",
             s.ws(f"/tables/{table}/ws?token={link.rsplit('/', 1)[1]}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for link in links.values()]
        for p in players:
            got, err = p.communicate(timeout=PATIENCE * 4)
            assert p.returncode == 0, err
            assert "players: seat 0 阿明" in got and "小红" in got
        ex = runpy.run_path(str(EXAMPLE))
        hands = ex["finished"](s.url, key, table)
        assert len(hands) == 1 and set(hands[0]) == {"阿明", "小红", "seat 2", "seat 3"}
        assert sum(hands[0].values()) == 0
        out = subprocess.run([sys.executable, str(EXAMPLE), s.url, "--key-name", "shop",
                              "--hands-of", table],
                             capture_output=True, text=True, timeout=PATIENCE, check=True,
                             env=env).stdout
        assert out.startswith("hand 1: {'阿明': ")
        # the webhook's receiver: a signed hand_ended credits each named player once
        from qipai.server.webhook import signature

        db = ex["ledger"](str(tmp_path / "wallet.db"))
        body = json.dumps({"id": 7, "kind": "hand_ended", "table": table, "created": 0.0,
                           "data": {"net": [3, -1, -2, 0],
                                    "named": {"0": {"player": "u-123", "name": "阿明"}}}}
                          ).encode()
        secret = b"s3cret"
        now = int(__import__("time").time())
        assert ex["receive"](db, secret, signature(b"wrong", now, body), body) == 401
        for _ in range(2):   # a repeat of event 7 changes nothing
            assert ex["receive"](db, secret, signature(secret, now, body), body) == 200
        assert db.execute("select player, amount from balances").fetchall() == [("u-123", 3)]
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()
