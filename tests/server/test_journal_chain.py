"""Issue 36, item 4: a tamper-evident journal.  A real server plays rooms,
then its database is edited behind its back — an action row changed, an
action row deleted, two hands' rows swapped, a commitment changed — and
``qipai verify --db`` (a CLI process) names the first broken link each
time, clean before and after each edit is undone; ``qipai verify`` on the
table's records file catches a changed action, a deleted one and swapped hands; the
``hand_ended`` events carry the database's heads; a server SIGKILLed
mid-room goes on with the chain where it stood."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from hostkit import PATIENCE, start_server
from pgcluster import sqlalchemy_url
from webhooks import db_events, make_room, watch


def _verify(*args: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "qipai", "verify", *args], capture_output=True,
                       text=True, timeout=PATIENCE)
    return p.returncode, p.stdout + p.stderr


def _sql(db: str, q: str, **params: Any) -> list[dict[str, Any]]:
    engine = sa.create_engine(sqlalchemy_url(db))
    try:
        with engine.begin() as c:
            r = c.execute(sa.text(q), params)
            return [dict(x) for x in r.mappings()] if r.returns_rows else []
    finally:
        engine.dispose()


def _heads(db: str, tid: str) -> dict[int, str]:
    """hand → the chain head its stored hand_ended event carried."""
    out = {}
    for e in db_events(db):
        if e["table_id"] == tid and e["kind"] == "hand_ended":
            body = json.loads(e["body"])
            out[body["hand"]] = body["chain"]
    return out


def _played_room(db: str, tmp_path: Path, hands: int) -> tuple[dict[str, Any], dict]:
    """A room of all bots played to its end; its records; the events as the
    operator read them (``GET /events``), kept in ``tmp_path/events.json``."""
    served = start_server(db, tmp_path)
    try:
        t = make_room(served, hands=hands)
        watch(served, t)   # the bots play while a spectator watches, until it closes
        with served.http() as h:
            recs = h.get(f"/tables/{t['id']}/records").json()
            (tmp_path / "events.json").write_text(h.get("/events?after=0").text)
    finally:
        served.stop()
    return t, recs


def test_verify_db_names_the_first_broken_link_of_each_edit(db_url, tmp_path):
    t, recs = _played_room(db_url, tmp_path, hands=2)
    tid = t["id"]
    code, out = _verify("--db", db_url)
    assert code == 0, out
    assert f"ok   table {tid}: 2 hands" in out
    # the hand_ended events carry the database's heads; each record its own
    rows = _sql(db_url, "select hand, link, end_link from qipai_hands where table_id = :t "
                        "order by hand", t=tid)
    assert _heads(db_url, tid) == {r["hand"]: r["end_link"] for r in rows}
    assert [h["record"]["chain"]["head"] for h in recs["hands"]] == [r["end_link"] for r in rows]
    assert all(r["link"] and r["end_link"] for r in rows)
    assert not _sql(db_url, "select seq from qipai_actions where table_id = :t and link is null",
                    t=tid)

    def broken(where: str) -> None:
        code, out = _verify("--db", db_url, "--table", tid)
        assert code == 1, out
        assert f"FAIL table {tid}: {where}" in out, out

    # 1. an action row changed
    act = _sql(db_url, "select * from qipai_actions where table_id = :t and hand = 1 and "
                       "seq = 5", t=tid)[0]
    a = json.loads(act["action"])
    a["seat"] = (a["seat"] + 1) % 4
    _sql(db_url, "update qipai_actions set action = :a where table_id = :t and hand = 1 and "
                 "seq = 5", a=json.dumps(a), t=tid)
    broken("hand 1, action 5: its link")
    _sql(db_url, "update qipai_actions set action = :a where table_id = :t and hand = 1 and "
                 "seq = 5", a=act["action"], t=tid)

    # 2. an action row deleted
    _sql(db_url, "delete from qipai_actions where table_id = :t and hand = 1 and seq = 5", t=tid)
    broken("hand 1, action 5 is missing")
    _sql(db_url, "insert into qipai_actions (table_id, hand, seq, action, timeout, tuoguan, "
                 "link) values (:table_id, :hand, :seq, :action, :timeout, :tuoguan, :link)",
         **act)

    # 3. two hands' rows swapped (everything but their index)
    cols = ("deal", "seed", "commitment", "salt", "record", "net", "link", "end_link")
    h0, h1 = (_sql(db_url, "select * from qipai_hands where table_id = :t and hand = :h",
                   t=tid, h=n)[0] for n in (0, 1))

    def put(n: int, row: dict[str, Any]) -> None:
        _sql(db_url, f"update qipai_hands set {', '.join(f'{c} = :{c}' for c in cols)} "
                     f"where table_id = :t and hand = :n", t=tid, n=n,
             **{c: row[c] for c in cols})

    put(0, h1)
    put(1, h0)
    broken("hand 0: its link")
    put(0, h0)
    put(1, h1)

    # 4. a commitment changed
    _sql(db_url, "update qipai_hands set commitment = :c where table_id = :t and hand = 1",
         c="0" * 64, t=tid)
    broken("hand 1: its link")
    _sql(db_url, "update qipai_hands set commitment = :c where table_id = :t and hand = 1",
         c=recs["hands"][1]["record"]["commitment"], t=tid)

    # 5. a forger who recomputes the links after his change (here the net of the
    #    last hand: nothing follows it) is caught by the heads the events carried
    from qipai.core import chain

    net = json.loads(_sql(db_url, "select net from qipai_hands where table_id = :t and "
                                  "hand = 1", t=tid)[0]["net"])
    last = _sql(db_url, "select link from qipai_actions where table_id = :t and hand = 1 "
                        "order by seq desc", t=tid)[0]["link"]
    forged = chain.end_link(last, tid, 1, [net[1], net[0], *net[2:]])
    _sql(db_url, "update qipai_hands set net = :n, end_link = :e where table_id = :t and "
                 "hand = 1", n=json.dumps([net[1], net[0], *net[2:]]), e=forged, t=tid)
    if net[0] != net[1]:
        broken("hand 1's end: its link")
    else:   # (the swap changed nothing)
        assert _verify("--db", db_url)[0] == 0
    _sql(db_url, "update qipai_hands set net = :n, end_link = :e where table_id = :t and "
                 "hand = 1", n=json.dumps(net), e=rows[1]["end_link"], t=tid)
    code, out = _verify("--db", db_url)
    assert code == 0, out

    # 6. a forger who rewrites the stored events too: only the operator's own show it
    kept = str(tmp_path / "events.json")
    assert _verify("--db", db_url, "--events", kept)[0] == 0
    swapped = [net[1] + 1, net[0] - 1, *net[2:]]
    forged = chain.end_link(last, tid, 1, swapped)
    _sql(db_url, "update qipai_hands set net = :n, end_link = :e where table_id = :t and "
                 "hand = 1", n=json.dumps(swapped), e=forged, t=tid)
    for e in db_events(db_url):
        body = json.loads(e["body"])
        if e["kind"] == "hand_ended" and body["hand"] == 1:
            body["chain"] = forged
            _sql(db_url, "update qipai_events set body = :b where id = :i",
                 b=json.dumps(body, separators=(",", ":")), i=e["id"])
    code, out = _verify("--db", db_url)   # the stored record still says otherwise
    assert code == 1 and f"FAIL table {tid}: hand 1's stored record" in out, out
    (row,) = _sql(db_url, "select record from qipai_hands where table_id = :t and hand = 1",
                  t=tid)
    rec = json.loads(row["record"])   # so the forger rewrites it too
    rec["result"]["net"], rec["chain"]["head"] = swapped, forged
    _sql(db_url, "update qipai_hands set record = :r where table_id = :t and hand = 1",
         r=json.dumps(rec), t=tid)
    code, out = _verify("--db", db_url)
    assert code == 0, out            # consistent: the database alone cannot tell
    code, out = _verify("--db", db_url, "--events", kept)
    assert code == 1 and f"FAIL table {tid}: hand 1's end: its link" in out, out
    # 7. the last hand removed outright (its actions, its row, its events)
    _sql(db_url, "delete from qipai_actions where table_id = :t and hand = 1", t=tid)
    _sql(db_url, "delete from qipai_events where table_id = :t and body like :b", t=tid,
         b='%"hand":1%')
    _sql(db_url, "delete from qipai_hands where table_id = :t and hand = 1", t=tid)
    code, out = _verify("--db", db_url)
    assert code == 0, out
    code, out = _verify("--db", db_url, "--events", kept)
    assert code == 1 and f"FAIL table {tid}: hand 1 is missing" in out, out

    # the records file: clean, then a changed action, then two hands swapped
    path = tmp_path / "records.json"
    path.write_text(json.dumps(recs))
    code, out = _verify(str(path), "--events", kept)
    assert code == 0, out
    assert "hand 2: chain: " in out and "session: order" in out
    bad = json.loads(json.dumps(recs))
    x = bad["hands"][1]["record"]["actions"][3]
    x["seat"] = (x["seat"] + 1) % 4
    path.write_text(json.dumps(bad))
    code, out = _verify(str(path))
    assert code == 1 and "FAIL hand 2: chain: hand 1's links" in out, out
    bad = json.loads(json.dumps(recs))
    del bad["hands"][1]["record"]["actions"][3]   # an action deleted
    path.write_text(json.dumps(bad))
    code, out = _verify(str(path))
    assert code == 1 and "FAIL hand 2: chain: hand 1's links" in out, out
    bad = json.loads(json.dumps(recs))
    bad["hands"][0], bad["hands"][1] = bad["hands"][1], bad["hands"][0]
    path.write_text(json.dumps(bad))
    code, out = _verify(str(path))
    assert code == 1 and "FAIL hand 2: chain: hand 0 follows hand 1" in out, out


def test_verify_db_refuses_what_it_cannot_read(tmp_path):
    code, out = _verify("--db", f"sqlite:///{tmp_path}/none.db")
    assert code == 2 and "error:" in out, out
    assert not (tmp_path / "none.db").exists()   # read-only: never created
    code, out = _verify("--db", "mysql://x@y/z")
    assert code == 2 and "error:" in out, out
    sa.create_engine(f"sqlite:///{tmp_path}/other.db").connect().close()
    code, out = _verify("--db", f"sqlite:///{tmp_path}/other.db")
    assert code == 2 and "not a qipai database" in out, out
    code, out = _verify(str(tmp_path / "x.json"), "--db", f"sqlite:///{tmp_path}/other.db")
    assert code == 2, out
    code, out = _verify("--table", "abc")
    assert code == 2 and "--table goes with --db" in out, out
    (tmp_path / "bad.json").write_text("[1, 2]")
    code, out = _verify("--db", f"sqlite:///{tmp_path}/other.db", "--events",
                        str(tmp_path / "bad.json"))
    assert code == 2 and "not the events' envelopes" in out, out
    code, out = _verify("--db", f"sqlite:///{tmp_path}/other.db", "--events",
                        str(tmp_path / "none.json"))
    assert code == 2 and "cannot read" in out, out
    code, out = _verify("-", "--events", "-")
    assert code == 2 and "cannot both be stdin" in out, out
    code, out = _verify()
    assert code == 2 and "give a RECORD" in out, out


def test_verify_db_of_an_unknown_table_is_bad_input(db_url, tmp_path):
    served = start_server(db_url, tmp_path)   # (the schema made)
    served.stop()
    code, out = _verify("--db", db_url, "--table", "nosuchtable")
    assert code == 2 and "no table nosuchtable" in out, out
    code, out = _verify("--db", db_url)
    assert code == 0 and "verified: 0 tables" in out, out


def test_a_server_killed_mid_room_goes_on_with_its_chain(db_url, tmp_path):
    served = start_server(db_url, tmp_path)
    t = make_room(served, hands=4)
    for k in (5, 40):   # killed twice, each time a few moves into a hand
        ws = watch(served, t, until_closed=False)
        try:
            while '"type":"hand_ended"' not in ws.recv(timeout=PATIENCE):
                pass
            for _ in range(k):
                ws.recv(timeout=PATIENCE)
        finally:
            served.kill()
            ws.close()
            served.stop()
        served = start_server(db_url, tmp_path)
    try:
        watch(served, t)
        with served.http() as h:
            recs = h.get(f"/tables/{t['id']}/records").json()
    finally:
        served.stop()
    assert len(recs["hands"]) == 4
    code, out = _verify("--db", db_url)
    assert code == 0, out
    path = tmp_path / "records.json"
    path.write_text(json.dumps(recs))
    code, out = _verify(str(path))
    assert code == 0, out
    heads = _heads(db_url, t["id"])
    assert [h["record"]["chain"]["head"] for h in recs["hands"]] == [heads[n] for n in range(4)]


def test_rows_made_before_links_start_the_chain_later(tmp_path):
    """An older database's rows have no links: a server restarted on it goes
    on from the genesis, and verify --db starts the chain where links start."""
    db = f"sqlite:///{tmp_path}/q.db"
    served = start_server(db, tmp_path)
    try:
        t = make_room(served, hands=2)
        ws = watch(served, t, until_closed=False)
        try:   # hand 0 ended: nobody watches, the table pauses in hand 1
            while '"type":"hand_ended"' not in ws.recv(timeout=PATIENCE):
                pass
        finally:
            ws.close()
    finally:
        served.stop()
    assert _sql(db, "select open from qipai_tables")[0]["open"]
    _sql(db, "update qipai_hands set link = null, end_link = null")
    _sql(db, "update qipai_actions set link = null")
    for e in db_events(db):   # nor did its events carry heads
        body = json.loads(e["body"])
        body.pop("chain", None)
        _sql(db, "update qipai_events set body = :b where id = :i", b=json.dumps(body),
             i=e["id"])
    served = start_server(db, tmp_path)
    try:
        watch(served, t)
    finally:
        served.stop()
    code, out = _verify("--db", db)
    assert code == 0, out
    assert "rows before the chain starts" in out, out
    linked = _sql(db, "select hand, link, end_link from qipai_hands order by hand")
    assert [r["link"] for r in linked] == [None, None] and linked[1]["end_link"], (linked, out)


@pytest.mark.slow
def test_many_kills_at_random_moments_leave_an_unbroken_chain(db_url, tmp_path):
    """Three rooms played while the server is SIGKILLed ten times, each after
    a random number of frames: every table's chain holds, its heads are its
    events'."""
    import random

    rng = random.Random(36)
    served = start_server(db_url, tmp_path)
    tables = [make_room(served, hands=5) for _ in range(3)]
    for _ in range(10):
        socks = []
        for t in tables:
            try:
                socks.append(watch(served, t, until_closed=False))
            except Exception:  # noqa: BLE001 - closed already
                pass
        try:
            for _ in range(rng.randrange(1, 400)):
                if not socks:
                    break
                ws = rng.choice(socks)
                try:
                    ws.recv(timeout=PATIENCE)
                except Exception:  # noqa: BLE001 - its table closed
                    socks.remove(ws)
        finally:
            served.kill()
            for ws in socks:
                ws.close()
            served.stop()
        served = start_server(db_url, tmp_path)
    try:
        for t in tables:
            watch(served, t)
    finally:
        served.stop()
    code, out = _verify("--db", db_url)
    assert code == 0, out
    assert out.count("ok   table") == 3 and "5 hands" in out, out
    for t in tables:
        heads = _heads(db_url, t["id"])
        rows = _sql(db_url, "select hand, end_link from qipai_hands where table_id = :t "
                            "order by hand", t=t["id"])
        assert heads == {r["hand"]: r["end_link"] for r in rows}


def test_a_table_whose_last_link_is_not_a_link_is_refused_alone(tmp_path):
    """Its next row would be chained to it: the table is refused at restore
    (as a row that does not replay), the others are served."""
    db = f"sqlite:///{tmp_path}/q.db"
    served = start_server(db, tmp_path)
    try:
        bad, good = served.create(bots=[]), served.create(bots=[])
    finally:
        served.stop()
    _sql(db, "update qipai_hands set link = 'not a link' where table_id = :t", t=bad["id"])
    served = start_server(db, tmp_path)
    try:
        with served.http() as h:
            assert h.get("/health").json()["refused"] == 1
            assert [t["id"] for t in h.get("/tables").json()] == [good["id"]]
    finally:
        served.stop()
    assert "its chain's last link" in served.log_path.read_text()
    code, out = _verify("--db", db)
    assert code == 1 and f"FAIL table {bad['id']}: hand 0: its link" in out, out
    assert f"ok   table {good['id']}" in out, out


def test_a_stakes_money_is_chained(tmp_path):
    """A room with a stake and a rake: each hand's end link covers its money
    net and the house's take — a changed money row is a broken link, the
    records file verifies with its money."""
    db = f"sqlite:///{tmp_path}/q.db"
    served = start_server(db, tmp_path)
    try:
        with served.http() as h:
            r = h.post("/tables", json={"variant": "guilin-mahjong", "bots": [0, 1, 2, 3],
                                        "hands": 2, "stake": 10,
                                        "rake": {"percent": 5, "cap": 200}})
            assert r.status_code == 201, r.text
            t = r.json()
        watch(served, t)
        with served.http() as h:
            recs = h.get(f"/tables/{t['id']}/records").json()
    finally:
        served.stop()
    assert all(h["record"]["money"]["stake"] == 10 for h in recs["hands"])
    path = tmp_path / "records.json"
    path.write_text(json.dumps(recs))
    code, out = _verify(str(path))
    assert code == 0, out
    assert _verify("--db", db)[0] == 0
    row = _sql(db, "select money from qipai_hands where table_id = :t and hand = 0",
               t=t["id"])[0]
    m = json.loads(row["money"])
    m["house"] += 1
    m["net"][0] -= 1
    _sql(db, "update qipai_hands set money = :m where table_id = :t and hand = 0",
         m=json.dumps(m), t=t["id"])
    code, out = _verify("--db", db)
    assert code == 1 and f"FAIL table {t['id']}: hand 0's end: its link" in out, out


def test_verify_db_checks_the_stored_records_against_the_chain(tmp_path):
    """What ``GET /tables/{id}/records`` serves is the hand row's ``record``
    column, which no link covers: an action, the net or the money of a
    stored record edited (the chained rows untouched) passed ``qipai verify
    --db``.  Each stored record's chain must reach the hand's end link."""
    db = f"sqlite:///{tmp_path}/q.db"
    served = start_server(db, tmp_path)
    try:
        with served.http() as h:
            r = h.post("/tables", json={"variant": "guilin-mahjong", "bots": [0, 1, 2, 3],
                                        "hands": 2, "stake": 10,
                                        "rake": {"percent": 5, "cap": 200}})
            assert r.status_code == 201, r.text
            t = r.json()
        watch(served, t)
    finally:
        served.stop()
    tid = t["id"]
    assert _verify("--db", db)[0] == 0
    (row,) = _sql(db, "select record from qipai_hands where table_id = :t and hand = 1", t=tid)
    for edit in ("action", "money", "head"):
        rec = json.loads(row["record"])
        if edit == "action":
            a = rec["actions"][3]
            a["seat"] = (a["seat"] + 1) % 4
        elif edit == "money":
            rec["money"]["house"] += 1
            rec["money"]["net"][0] -= 1
        else:   # the record's own links recomputed: its head is no longer the stored one
            from qipai.core.chain import Chain, record_links

            rec["money"]["house"] += 1
            rec["money"]["net"][0] -= 1
            c = rec["chain"]
            *_, (_, rec["chain"]["head"]) = record_links(Chain(**c), rec)
        _sql(db, "update qipai_hands set record = :r where table_id = :t and hand = 1",
             r=json.dumps(rec), t=tid)
        code, out = _verify("--db", db, "--table", tid)
        assert code == 1 and f"FAIL table {tid}: hand 1's stored record" in out, (edit, out)
        if edit == "head":
            assert "not the hand's stored end link" in out, out
    _sql(db, "update qipai_hands set record = :r where table_id = :t and hand = 1",
         r=row["record"], t=tid)
    assert _verify("--db", db)[0] == 0
