"""Issue 36, item 2: stakes and rake, shown — against a real server.  A room
with a stake and a rake plays to its end: each hand's record, ``hand_ended``
message and event, ``GET /tables/{id}`` and the 大结算 carry the money, the
rake a line of its own to the house, everything summing to zero with it;
``qipai verify`` passes on the records and fails on an edited money line.
Bad stakes and rakes are refused by name, nothing created; ``qipai serve
--stake`` gives the tables made without one theirs."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from hostkit import SyncSeat, start_server

SEEDED = ("--seed", "5", "--ready-timeout", "600")
RAKE = {"percent": 5, "cap": 30}


def make(served, **body: Any) -> dict[str, Any]:
    with served.http() as h:
        r = h.post("/tables", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def get(served, path: str, **params: Any) -> Any:
    with served.http() as h:
        r = h.get(path, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def watched(served, t: dict[str, Any]) -> SyncSeat:
    """A spectator, read until the table closes (the bots play meanwhile)."""
    c = SyncSeat(served, t["id"], t["spectator_token"])
    c.until("closed")
    c.close()
    return c


def rule(money: dict[str, Any], net: list[int]) -> None:
    """``money`` is the stake and rake rule applied to ``net`` (子)."""
    stake, rake = money["stake"], money["rake"]
    gains = [v * stake for v in net]
    want = [{"payer": s, "amount": min(rake["cap"], g * rake["percent"] // 100),
             "payee": "house"} for s, g in enumerate(gains)
            if g > 0 and min(rake["cap"], g * rake["percent"] // 100) > 0]
    assert money["rake_lines"] == want
    assert money["net"] == [g - sum(x["amount"] for x in want if x["payer"] == s)
                            for s, g in enumerate(gains)]
    assert money["house"] == sum(x["amount"] for x in want)
    assert sum(money["net"]) + money["house"] == 0


def verify(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", "verify", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_a_room_with_a_stake_and_a_rake_shows_the_money_everywhere(db_url, tmp_path):
    served = start_server(db_url, tmp_path, *SEEDED)
    try:
        t = make(served, bots=[0, 1, 2, 3], hands=3, stake=10, rake=RAKE)
        c = watched(served, t)
        ended = [m for m in c.received if m["type"] == "hand_ended"]
        tally = next(m for m in c.received if m["type"] == "tally")
        assert [m["hand"] for m in ended] == [0, 1, 2]
        running = [0, 0, 0, 0]
        for m in ended:
            money = m["money"]
            assert money["stake"] == 10 and money["rake"] == RAKE
            assert [(p["payer"], p["payee"], p["zi"], p["amount"]) for p in money["payments"]] \
                == [(p["payer"], p["payee"], p["amount"], p["amount"] * 10)
                    for p in m["result"]["payments"]]
            rule(money, m["result"]["net"])
            running = [a + b for a, b in zip(running, money["net"])]
            assert m["money_totals"] == running
        house = sum(m["money"]["house"] for m in ended)
        assert [s["money"] for s in tally["seats"]] == running
        assert tally["stake"] == 10 and tally["house"] == house
        assert sum(running) + house == 0
        # the table's totals in money, as the database holds them
        info = get(served, f"/tables/{t['id']}")
        assert info["stake"] == 10 and info["rake"] == RAKE
        assert info["money_totals"] == running and info["house"] == house
        assert info["tally"]["seats"] == tally["seats"]
        # the records carry the money block
        recs = get(served, f"/tables/{t['id']}/records")
        for h, m in zip(recs["hands"], ended, strict=True):
            assert h["record"]["money"] == m["money"]
        # the hand_ended events too
        events = get(served, "/events", after=0)["events"]
        created = [e for e in events if e["kind"] == "table_created" and e["table"] == t["id"]]
        assert created[0]["data"]["stake"] == 10 and created[0]["data"]["rake"] == RAKE
        feed = [e["data"] for e in events if e["kind"] == "hand_ended" and e["table"] == t["id"]]
        assert [e["money"] for e in feed] == [m["money"] for m in ended]
        assert [e["money_totals"] for e in feed] == [m["money_totals"] for m in ended]
        # qipai verify: the money check passes, and fails on an edited line
        path = tmp_path / "records.json"
        path.write_text(json.dumps(recs))
        ok = verify(path)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert "money" in ok.stdout
        hand = next(h for h in recs["hands"] if h["record"]["money"]["payments"])
        hand["record"]["money"]["payments"][0]["amount"] += 1
        path.write_text(json.dumps(recs))
        bad = verify(path)
        assert bad.returncode == 1, bad.stdout + bad.stderr
        assert "money" in bad.stdout and "payments" in bad.stdout
    finally:
        served.stop()


@pytest.fixture
def quick(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'm.db'}", tmp_path, *SEEDED)
    yield s
    s.stop()


@pytest.mark.parametrize("body, field", [
    ({"stake": 0}, "stake"), ({"stake": 1_000_001}, "stake"), ({"stake": 2.5}, "stake"),
    ({"stake": "10"}, "stake"), ({"stake": True}, "stake"), ({"stake": [10]}, "stake"),
    ({"stake": 10, "rake": {"percent": 101, "cap": 5}}, "rake.percent"),
    ({"stake": 10, "rake": {"percent": -1, "cap": 5}}, "rake.percent"),
    ({"stake": 10, "rake": {"percent": "5", "cap": 5}}, "rake.percent"),
    ({"stake": 10, "rake": {"percent": 5, "cap": -1}}, "rake.cap"),
    ({"stake": 10, "rake": {"percent": 5, "cap": 0.5}}, "rake.cap"),
    ({"stake": 10, "rake": {"percent": 5}}, "cap"),
    ({"stake": 10, "rake": 5}, "rake"),
    ({"rake": RAKE}, "stake"),
])
def test_a_bad_stake_or_rake_is_refused_by_name_and_creates_nothing(quick, body, field):
    with quick.http() as h:
        r = h.post("/tables", json={"bots": [1, 2, 3], **body})
        assert r.status_code == 400, r.text
        assert r.json()["error"] == "BadStake" and field in r.json()["message"], r.text
        assert h.get("/tables").json() == []
        assert h.get("/events", params={"after": 0}).json()["events"] == []


def test_no_stake_no_money(quick):
    t = make(quick, bots=[0, 1, 2, 3], hands=1)
    c = watched(quick, t)
    ended = next(m for m in c.received if m["type"] == "hand_ended")
    assert ended["money"] is None and ended["money_totals"] is None
    info = get(quick, f"/tables/{t['id']}")
    assert info["money_totals"] is None and info["stake"] is None and info["house"] is None
    rec = get(quick, f"/tables/{t['id']}/records")["hands"][0]["record"]
    assert "money" not in rec
    events = get(quick, "/events", after=0)["events"]
    assert all("money" not in e["data"] and "stake" not in e["data"] for e in events)


def test_serve_stake_and_rake_are_the_tables_defaults(tmp_path):
    served = start_server(f"sqlite:///{tmp_path / 'd.db'}", tmp_path, *SEEDED, "--stake", "25",
                          "--rake-percent", "3", "--rake-cap", "100")
    try:
        t = make(served, bots=[1, 2, 3])
        info = get(served, f"/tables/{t['id']}")
        assert info["stake"] == 25 and info["rake"] == {"percent": 3, "cap": 100}
        assert info["money_totals"] == [0, 0, 0, 0] and info["house"] == 0
        own = make(served, bots=[1, 2, 3], stake=7, rake=None)
        info = get(served, f"/tables/{own['id']}")
        assert info["stake"] == 7 and info["rake"] is None
        none = make(served, bots=[1, 2, 3], stake=None, rake=None)
        assert get(served, f"/tables/{none['id']}").get("stake") is None
    finally:
        served.stop()


def test_serve_refuses_a_rake_without_its_parts(tmp_path):
    for args in (["--rake-percent", "3"], ["--stake", "5", "--rake-cap", "3"],
                 ["--rake-percent", "3", "--rake-cap", "3"]):
        r = subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", "0", "--db",
                            f"sqlite:///{tmp_path / 'x.db'}", *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "--rake" in r.stderr + r.stdout, r.stderr


HOUSE_RAKE = '''
from qipai.core.hookspecs import hookimpl
from qipai.core.money import RakeLine


@hookimpl
def qipai_rake(result, stake, rake, gains, options):
    """A flat 1 minor unit from each winner."""
    return [RakeLine(payer=s, amount=1) for s, g in enumerate(gains) if g > 0]
'''


def test_a_house_plugins_rake_and_a_restart_keep_the_money(tmp_path):
    """A house plugin's qipai_rake replaces the rule (and verify, given the
    plugin, agrees); a SIGKILLed server restarted shows the same money totals
    and the last hand's money in a welcome."""
    plugin = tmp_path / "house_rake.py"
    plugin.write_text(HOUSE_RAKE)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    served = start_server(db, tmp_path, *SEEDED, "--plugin", str(plugin))
    try:
        t = make(served, bots=[1, 2, 3], hands=3, stake=10, rake=RAKE)
        c = SyncSeat(served, t["id"], t["seats"]["0"])
        while True:
            m = c.recv()
            if m["type"] == "hand_ended":
                break
            if m["type"] == "decide":
                from hostkit import choose

                c.send({"type": "act", "hand": m["hand"], "seq": m["seq"],
                        "action": choose(m["legal"])}, paced=True)
        c.close()
        money = m["money"]
        winners = [s for s, v in enumerate(m["result"]["net"]) if v > 0]
        assert money["rake_lines"] == [{"payer": s, "amount": 1, "payee": "house"}
                                       for s in winners]
        assert sum(money["net"]) + money["house"] == 0
        before = get(served, f"/tables/{t['id']}")
        assert before["money_totals"] == money["net"] == m["money_totals"]
        served.kill()
        served = start_server(db, tmp_path, *SEEDED, "--plugin", str(plugin))
        after = get(served, f"/tables/{t['id']}")
        assert after["money_totals"] == before["money_totals"]
        assert after["house"] == before["house"] == money["house"]
        w = SyncSeat(served, t["id"], t["seats"]["0"])
        welcome = w.until("welcome")
        w.close()
        assert welcome["last_result"]["money"] == money
        assert welcome["money_totals"] == money["net"] and welcome["stake"] == 10
        recs = get(served, f"/tables/{t['id']}/records")
        path = tmp_path / "records.json"
        path.write_text(json.dumps(recs))
        ok = subprocess.run([sys.executable, "-m", "qipai", "verify", str(path), "--plugin",
                             str(plugin)], capture_output=True, text=True, timeout=120)
        assert ok.returncode == 0, ok.stdout + ok.stderr
    finally:
        served.stop()
