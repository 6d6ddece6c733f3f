"""``qipai serve --bot LEVEL=BOT`` and ``POST /tables`` bot seats with a
level, on a real server process: the operator's bots (``plugbot:…``, a
module outside qipai) play the levels it offers, a client names only those
levels, a bot that fails a decision is logged (``bot_fault``) while greedy
answers for it, and each seat's level is kept through a restart; a row made
before levels reads ``normal``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from hostkit import PATIENCE, SyncSeat, start_server

HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")
OPERATOR = ("--bot", "pro=plugbot:FirstBot", "--bot", "weird=plugbot:RaisingBot")


def faults(served) -> list[dict]:
    lines = [json.loads(x) for x in served.log_path.read_text().splitlines()
             if x.startswith("{")]
    return [x for x in lines if x.get("event") == "bot_fault"]


def one_hand(served, t: dict) -> None:
    """Watch ``t`` (an all-bot table) until a hand ends."""
    watch = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
    try:
        watch.until("hand_ended")
    finally:
        watch.close()


@pytest.fixture
def helpers_path(monkeypatch):
    # the server process imports plugbot: it must be importable there
    monkeypatch.setenv("PYTHONPATH", HELPERS)


def test_levels_the_operators_bots_a_fault_and_a_restart(tmp_path, helpers_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    s = start_server(db, tmp_path, "--seed", "2", "--log-format", "json", *OPERATOR)
    try:
        with httpx.Client(base_url=s.url, timeout=PATIENCE) as h:
            bots = [{"seat": 0, "level": "weird"}, 1, {"seat": 2, "level": "pro"},
                    {"seat": 3, "level": "easy"}]
            r = h.post("/tables", json={"bots": bots})
            assert r.status_code == 201, r.text
            t = r.json()
            levels = {"0": "weird", "1": "normal", "2": "pro", "3": "easy"}
            assert h.get(f"/tables/{t['id']}").json()["levels"] == levels
            # a client names a level the server offers, never a bot
            for bad, words in (({"seat": 1, "level": "plugbot:FirstBot"}, "is not offered"),
                               ({"seat": 1, "level": "greedy"}, "is not offered"),
                               ({"seat": 9, "level": "easy"}, "distinct seats"),
                               ({"seat": 1, "level": 3}, "not a table request")):
                r = h.post("/tables", json={"bots": [bad]})
                assert r.status_code == 400, r.text
                assert words in r.json()["message"]
            assert r.json()["error"] == "BadMessage"
            # a plain list of seats stays valid: normal at each
            old = h.post("/tables", json={"bots": [1, 2, 3]}).json()
            assert h.get(f"/tables/{old['id']}").json()["levels"] == {
                "1": "normal", "2": "normal", "3": "normal"}
        one_hand(s, t)   # seat 0's bot raises at every decision: the hand still ends
        got = faults(s)
        assert got and {f["seat"] for f in got} == {0}
        assert got[0]["table"] == t["id"] and got[0]["bot_level"] == "weird"
        assert got[0]["bot"] == "plugbot:RaisingBot" and "plugbot gave up" in got[0]["error"]
    finally:
        s.stop()
    # a row made before levels: its bot seats are normal
    with sqlite3.connect(tmp_path / "q.db") as c:
        c.execute("update qipai_tables set bot_levels = null where id = ?", (old["id"],))
    s = start_server(db, tmp_path, "--seed", "2", "--log-format", "json", *OPERATOR)
    try:
        assert s.info(t["id"])["levels"] == levels      # kept in the row
        assert s.info(old["id"])["levels"] == {"1": "normal", "2": "normal", "3": "normal"}
        one_hand(s, t)
        assert {f["bot_level"] for f in faults(s)} == {"weird"}   # seat 0 is still weird's
    finally:
        s.stop()
    # a server that no longer offers the level: normal plays the seat, logged
    s = start_server(db, tmp_path, "--seed", "2")
    try:
        assert s.info(t["id"])["levels"] == levels
        one_hand(s, t)
        assert "level 'weird' is not offered by this server" in s.log_path.read_text()
        assert not faults(s)
    finally:
        s.stop()


@pytest.mark.parametrize("bot, words", [
    ("pro=nosuchmodule:Bot", ["--bot pro=nosuchmodule:Bot", "does not import"]),
    ("hard=plugbot:NoAct", ["--bot hard=plugbot:NoAct", "has no act(view, legal)"]),
    ("pro", ["write NAME=BOT"]),
])
def test_a_bad_operator_bot_is_one_line_at_start(bot, words, tmp_path, helpers_path):
    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", "0",
                        "--db", f"sqlite:///{tmp_path / 'q.db'}", "--bot", bot],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    for w in words:
        assert w in p.stderr
    assert not (tmp_path / "q.db").exists()   # refused before the database is opened
