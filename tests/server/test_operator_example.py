"""docs/examples/operator_backend.py, the worked example of
docs/howto/integrate.md, against a real ``qipai serve --keys`` (SQLite and
PostgreSQL): a table for two named players and two bots, each player's
signed seat link played through ``qipai connect``, the finished hands
listed by name; and its webhook receiver (``--listen``) behind ``qipai
serve --webhook``, crediting each player's money once."""

from __future__ import annotations

import json
import os
import runpy
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hostkit import PATIENCE, start_server

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "operator_backend.py"


def new_key(tmp_path: Path) -> tuple[Path, str, dict[str, str]]:
    """A keys file with key ``shop``: the file, the key, the example's environment."""
    f = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "shop", "--file",
                          str(f)], capture_output=True, text=True, check=True).stdout.strip()
    secret = json.loads(f.read_text())["keys"][0]["secret"]
    return f, key, {**os.environ, "QIPAI_KEY": key, "QIPAI_SIGNING_SECRET": secret}


def seat_and_play(s: Any, env: dict[str, str]) -> str:
    """The example makes a table for its two players, who play one hand
    from their links through ``qipai connect``; the table's id."""
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
    return table


def test_the_operator_backend_example(db_url, tmp_path):
    f, key, env = new_key(tmp_path)
    s = start_server(db_url, tmp_path, "--keys", str(f), "--seed", "3")
    try:
        table = seat_and_play(s, env)
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


def test_the_example_credits_each_player_once_from_the_webhook(db_url, tmp_path, monkeypatch):
    """``qipai serve --webhook`` POSTs to the example's receiver (``--listen``,
    started after the server: the events wait, retried, until it answers):
    each named player's balance in wallet.db is his money net in the
    records (a stake and a rake), and a hand_ended sent again — as a server
    that did not see the 200 does — changes nothing."""
    import httpx

    from hostkit import free_port
    from qipai.server.webhook import signature

    hook_secret = "example-webhook-secret-42"
    monkeypatch.setenv("QIPAI_WEBHOOK_SECRET", hook_secret)   # the server's and the receiver's
    f, key, env = new_key(tmp_path)
    port = free_port()
    s = start_server(db_url, tmp_path, "--keys", str(f), "--seed", "3", "--stake", "10",
                     "--rake-percent", "5", "--rake-cap", "200",
                     "--webhook", f"http://127.0.0.1:{port}/qipai-events",
                     "--webhook-backoff", "0.05", "--webhook-max-attempts", "1000")
    wallet = tmp_path / "wallet"
    wallet.mkdir()
    rx = subprocess.Popen([sys.executable, str(EXAMPLE), s.url, "--key-name", "shop",
                           "--listen", str(port)], cwd=wallet,
                          env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bearer = {"Authorization": f"Bearer {key}"}
    try:
        table = seat_and_play(s, env)
        with s.http() as h:
            end = time.monotonic() + PATIENCE * 2
            while True:   # the events of the hand (and anything after it) delivered
                events = h.get("/events", params={"after": 0}, headers=bearer).json()["events"]
                counts = h.get("/admin/events", headers=bearer).json()   # (read after them)
                if (counts["pending"] == 0 and counts["dead"] == 0
                        and any(e["kind"] == "hand_ended" for e in events)):
                    break
                assert rx.poll() is None, rx.communicate()
                assert time.monotonic() < end, counts
                time.sleep(0.05)
            recs = h.get(f"/tables/{table}/records", headers=bearer).json()
        db = sqlite3.connect(wallet / "wallet.db")
        balances = dict(db.execute("select player, amount from balances").fetchall())
        want = {"u-123": 0, "u-456": 0}
        for hand in recs["hands"]:
            money = hand["record"]["money"]
            assert sum(money["net"]) + money["house"] == 0
            want["u-123"] += money["net"][0]
            want["u-456"] += money["net"][1]
        assert recs["hands"] and balances == want
        seen = {i for (i,) in db.execute("select id from seen")}
        assert seen >= {e["id"] for e in events}
        # a hand_ended sent again (signed anew, as a retry is): 200, nothing credited twice
        ended = next(e for e in events if e["kind"] == "hand_ended")
        body = json.dumps(ended, ensure_ascii=False).encode()
        hook = f"http://127.0.0.1:{port}/qipai-events"
        sig = signature(hook_secret.encode(), int(time.time()), body)
        assert httpx.post(hook, content=body, headers={"x-qipai-signature": sig}).status_code == 200
        bad = signature(b"not the secret", int(time.time()), body)
        assert httpx.post(hook, content=body, headers={"x-qipai-signature": bad}).status_code == 401
        assert dict(db.execute("select player, amount from balances").fetchall()) == want
        db.close()
    finally:
        s.stop()
        rx.kill()
        rx.communicate()
    assert "Traceback" not in s.log_path.read_text()
