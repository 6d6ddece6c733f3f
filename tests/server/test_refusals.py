"""Bad input over HTTP and WebSocket: a typed error on the same channel, the
connection and the table unchanged, nothing written; tokens; timeouts."""

from __future__ import annotations

import json

import msgspec
import pytest
import sqlalchemy as sa

from hostkit import SyncSeat, choose, create, refusal, start_server
from qipai.core.records import decode_record, replay
from qipai.core.table import Table
from qipai.core.timeouts import default_action
from qipai.core.ruleset import load
from qipai.host.store import engine_url


def db_counts(url: str) -> tuple[int, int, int]:
    eng = sa.create_engine(engine_url(url))
    try:
        with eng.connect() as c:
            return tuple(c.execute(sa.text(f"select count(*) from {t}")).scalar()
                         for t in ("qipai_tables", "qipai_hands", "qipai_actions"))
    finally:
        eng.dispose()


def test_bad_table_requests_are_refused_and_write_nothing(served):
    before = db_counts(served.db)
    with served.http() as http:
        for body, code in [
            ({"variant": "no-such-game"}, "UnknownVariant"),
            ({"variant": "四川麻将"}, "UnknownVariant"),       # a Chinese name not shipped
            ({"variant": "guilin mahjong"}, "UnknownVariant"),
            ({"variant": "guilin-mahjong(hubao=maybe, nope=1)"}, "BadOption"),
            ({"variant": "guilin-mahjong(hubao"}, "BadOption"),
            ({"variant": "guilin-mahjong", "bots": [4]}, "BadBots"),
            ({"variant": "guilin-mahjong", "bots": [1, 1]}, "BadBots"),
            ({"variant": "guilin-mahjong", "colour": "red"}, "BadMessage"),
        ]:
            r = http.post("/tables", json=body)
            assert r.status_code == 400, (body, r.text)
            assert r.json()["error"] == code, (body, r.json())
        r = http.post("/tables", content=b"{not json")
        assert r.status_code == 400 and r.json()["error"] == "BadMessage"
        for empty in (b"", b" \n"):   # no body is not a request for the defaults
            r = http.post("/tables", content=empty)
            assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text
            assert "empty" in r.json()["message"] and "{}" in r.json()["message"]
        r = http.post("/tables", json={"variant": "桂林麻将(hubao"})
        assert r.status_code == 400 and r.json()["error"] == "BadOption"
        r = http.post("/tables", content=b"[" * 70000)
        assert r.status_code == 413 and r.json()["error"] == "TooLarge"
        assert http.get("/tables/nope").status_code == 404
        assert http.get("/variants/nope").status_code == 404
        assert http.get("/tables").json() == []
    assert db_counts(served.db) == before


def test_a_chinese_title_and_an_empty_object_create_tables(served):
    with served.http() as http:
        r = http.post("/tables", json={"variant": "桂林字牌(max_flips=1)", "bots": [1, 2]})
        assert r.status_code == 201, r.text
        info = http.get(f"/tables/{r.json()['id']}").json()
        assert (info["variant"], info["spec"], info["players"]) == \
            ("guilin-zipai", "guilin-zipai(max_flips=1)", 3)
        r = http.post("/tables", json={})   # {}: the documented defaults
        assert r.status_code == 201, r.text
        assert sorted(r.json()["seats"]) == ["0", "1", "2", "3"]
        assert http.get(f"/tables/{r.json()['id']}").json()["spec"] == "guilin-mahjong"


def test_variant_card_table_comes_from_the_variant(served):
    rs = load("guilin-zipai")
    with served.http() as http:
        names = [v["name"] for v in http.get("/variants").json()]
        assert {"guilin-mahjong", "guangxi-mahjong", "guilin-zipai"} <= set(names)
        v = http.get("/variants/guilin-zipai").json()
    assert v["players"] == 3 and v["options"] == rs.options_dict()
    kinds = v["cards"]["kinds"]
    assert len(kinds) == rs.cards.n_kinds
    assert [(k["notation"], k["chinese"]) for k in kinds] == \
        [(rs.cards.token(i), rs.cards.chinese(i)) for i in range(rs.cards.n_kinds)]


def test_an_option_that_is_not_text_is_a_typed_error(served):
    """An escaped lone surrogate in an option's value (plain ASCII on the
    wire) is BadOption, at GET /variants/{name} and POST /tables, and makes
    no table (not 500 Internal Server Error and a UnicodeEncodeError
    traceback in the log)."""
    with served.http() as http:
        before = len(http.get("/tables").json())
        r = http.get('/variants/guilin-mahjong(hubao="\\ud800")')
        assert r.status_code == 404 and r.json()["error"] == "BadOption", r.text
        assert "is not text" in r.json()["message"]
        r = http.post("/tables", json={"variant": 'guilin-mahjong(hubao="\\ud800")'})
        assert r.status_code == 400 and r.json()["error"] == "BadOption", r.text
        assert len(http.get("/tables").json()) == before


def test_bad_websocket_input_gets_typed_errors_and_changes_nothing(served):
    t = create(served, "guilin-mahjong")
    rs = load("guilin-mahjong")
    seats = [SyncSeat(served, t["id"], t["seats"][str(s)]) for s in range(4)]
    w = [c.until("welcome") for c in seats]
    dealer = w[0]["view"]["dealer"]
    d = seats[dealer].until("decide")
    other = (dealer + 1) % 4
    c = seats[dealer]
    before = db_counts(served.db)

    def refused(conn, msg, code):
        conn.send(msg)
        got = conn.until("error")
        assert got["code"] == code, got
        conn.send({"type": "ping"})
        conn.until("pong")  # the connection goes on

    good = choose(d["legal"])
    refused(c, "{not json", "BadMessage")
    refused(c, b"\xff\xfe", "BadMessage")
    refused(c, json.dumps([1, 2]), "BadMessage")
    refused(c, {"type": "hello"}, "BadMessage")
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"]}, "BadMessage")
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"], "action": {"type": "fly", "seat": 0}},
            "BadMessage")
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"], "action": good, "x": "y" * 5000},
            "TooLarge")
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"],
                "action": {**good, "seat": other}}, "WrongSeat")
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"] + 7, "action": good}, "StaleSeq")
    refused(c, {"type": "act", "hand": 5, "seq": d["seq"], "action": good}, "StaleSeq")
    hand = set(w[dealer]["view"]["hand"])
    missing = next(k for k in range(rs.cards.n_kinds) if k not in hand)
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"],
                "action": {"type": "discard", "seat": dealer, "card": missing}}, "IllegalAction")
    refused(c, {"type": "act", "hand": 0, "seq": d["seq"],
                "action": {"type": "discard", "seat": dealer, "card": 999}}, "IllegalAction")
    # out of turn: another seat acts for itself
    refused(seats[other], {"type": "act", "hand": 0, "seq": d["seq"],
                           "action": {"type": "discard", "seat": other,
                                      "card": w[other]["view"]["hand"][0]}}, "NotYourTurn")
    # a spectator cannot act
    spec = SyncSeat(served, t["id"], t["spectator_token"])
    spec.until("welcome")
    refused(spec, {"type": "act", "hand": 0, "seq": d["seq"], "action": good}, "Spectator")
    assert db_counts(served.db) == before
    # nothing changed: a resync gives the same view
    c.send({"type": "resync"})
    assert c.until("welcome")["view"] == w[dealer]["view"]
    # the real action is taken once; sent again it is stale
    act = {"type": "act", "hand": 0, "seq": d["seq"], "action": good}
    c.send(act)
    c.until("ack")
    refused(c, act, "StaleSeq")
    assert db_counts(served.db)[2] == before[2] + 1
    # flooding is throttled, not fatal
    for _ in range(600):
        c.send({"type": "ping"})
    c.until("error", lambda m: m["code"] == "Throttled")
    while True:  # the bucket refills: the connection answers again
        c.send({"type": "ping"})
        m = c.recv()
        if m["type"] == "pong":
            break
    for s in seats + [spec]:
        s.close()


def test_tokens(served):
    t = create(served, "guilin-mahjong", bots=[2, 3])
    assert sorted(t["seats"]) == ["0", "1"]
    # a bad token: typed error, then the server closes
    assert refusal(served, t["id"], "not-a-token")["code"] == "BadToken"
    assert refusal(served, "nosuchtable", t["seats"]["0"])["code"] == "UnknownTable"
    # seat 1's token holds seat 1 only: it cannot act for seat 0
    one = SyncSeat(served, t["id"], t["seats"]["1"])
    w = one.until("welcome")
    assert w["seat"] == 1
    one.send({"type": "act", "hand": 0, "seq": 0,
              "action": {"type": "discard", "seat": 0, "card": 0}})
    assert one.until("error")["code"] == "WrongSeat"
    one.close()
    # closing needs the admin token
    with served.http() as http:
        assert http.post(f"/tables/{t['id']}/close").status_code == 403
        assert http.post(f"/tables/{t['id']}/close",
                         headers={"Authorization": f"Bearer {t['seats']['0']}"}).status_code == 403
        r = http.post(f"/tables/{t['id']}/close", headers={"Authorization": f"Bearer {t['admin']}"})
        assert r.status_code == 200 and r.json()["open"] is False
        assert http.get("/tables").json() == []
    late = SyncSeat(served, t["id"], t["seats"]["0"])
    assert late.recv()["code"] == "UnknownTable"
    late.close()


def test_reconnect_resyncs_the_full_view(served):
    t = create(served, "guilin-mahjong", bots=[1, 2, 3])
    c = SyncSeat(served, t["id"], t["seats"]["0"])
    c.until("welcome")
    for _ in range(3):
        d = c.until("decide")
        c.send({"type": "act", "hand": d["hand"], "seq": d["seq"], "action": choose(d["legal"])})
        c.until("ack")
    c.until("decide")   # left with a decision open (the table pauses as it goes)
    seen = [m for m in c.received if m["type"] in ("welcome", "events")]
    c.close()
    again = SyncSeat(served, t["id"], t["seats"]["0"])
    w = again.until("welcome")
    events = []
    for m in seen:
        if m["type"] == "welcome":
            events = list(m["view"]["events"])
        elif m["hand"] == w["hand"]:
            events.extend(m["events"])
    if w["hand"] == seen[0]["hand"]:
        assert w["view"]["events"][:len(events)] == events  # nothing missed, nothing changed
    assert w["next_event"] == len(w["view"]["events"])
    d = again.until("decide")
    assert d["legal"] == w["view"]["legal"]
    again.close()


@pytest.mark.slow
def test_a_seat_that_never_answers_gets_the_default_action(db_url, tmp_path):
    served = start_server(db_url, tmp_path, "--seed", "8", "--turn-timeout", "0.05",
                          "--claim-timeout", "0.05")
    try:
        t = create(served, "guilin-mahjong", bots=[1, 2, 3])
        c = SyncSeat(served, t["id"], t["seats"]["0"])  # watches, never answers
        ended = c.until("hand_ended")
        # an action for the hand that is over
        c.send({"type": "act", "hand": 0, "seq": 0,
                "action": {"type": "pass", "seat": 0}})
        assert c.until("error")["code"] == "HandOver"
        c.close()
        with served.http() as http:
            out = http.get(f"/tables/{t['id']}/records").json()
    finally:
        served.stop()
    rec = decode_record(out["hands"][0]["record"])
    assert rec.result == msgspec.convert(ended["result"], type(rec.result), str_keys=True)
    mine = [i for i, a in enumerate(rec.actions) if a.seat == 0]
    # two timeouts, then the seat is in 托管: the table's bot plays the rest,
    # each move recorded as such (issue 35)
    raw = out["hands"][0]["record"]
    bot = (msgspec.json.decode(raw) if isinstance(raw, (str, bytes)) else raw).get("tuoguan", [])
    assert len(mine) > 2 and rec.timeouts == mine[:2] and bot == mine[2:]
    # each timeout was the default action where it was played
    table = Table(load(rec.variant, rec.options), deal=rec.deal, ask_all=True)
    for i, a in enumerate(rec.actions):
        if i in rec.timeouts:
            assert a == default_action(table, 0)
        table.apply(a)
    assert replay(rec).state.result == rec.result


def test_every_throttled_act_is_answered_with_its_seq(served):
    """A flood of one act: each copy gets exactly one answer naming its seq —
    one ack, the rest StaleSeq (read) or Throttled (dropped unread) — so no
    act is ever lost without an answer."""
    t = create(served, "guilin-mahjong", bots=[1, 2, 3])
    c = SyncSeat(served, t["id"], t["seats"]["0"])
    d = c.until("decide")
    act = json.dumps({"type": "act", "hand": d["hand"], "seq": d["seq"],
                      "action": choose(d["legal"])})
    n = 1000  # far more than the bucket's 200: most are dropped
    for _ in range(n):
        c.send(act)
    answers = []
    while len(answers) < n:
        m = c.recv()
        if m["type"] in ("ack", "error"):
            assert m.get("seq") == d["seq"], m
            answers.append(m)
    codes = [m.get("code", "ack") for m in answers]
    assert codes.count("ack") == 1
    assert set(codes) <= {"ack", "StaleSeq", "Throttled", "NotYourTurn"}, set(codes)
    assert "Throttled" in codes
    throttled = next(m for m in answers if m.get("code") == "Throttled")
    assert str(d["seq"]) in throttled["message"]
    c.close()


def test_two_connections_of_one_seat_act_once_per_decision(served):
    """The same token on two connections at once: both get the decision, the
    first act is taken, the other's answer for it is StaleSeq."""
    t = create(served, "guilin-mahjong", bots=[1, 2, 3])
    a = SyncSeat(served, t["id"], t["seats"]["0"])
    b = SyncSeat(served, t["id"], t["seats"]["0"])
    da, db = a.until("decide"), b.until("decide")
    assert (da["hand"], da["seq"]) == (db["hand"], db["seq"])
    a.send({"type": "act", "hand": da["hand"], "seq": da["seq"], "action": da["legal"][0]})
    a.until("ack")
    b.send({"type": "act", "hand": db["hand"], "seq": db["seq"], "action": db["legal"][-1]})
    got = b.until("error")
    assert got["code"] == "StaleSeq" and got["seq"] == db["seq"], got
    with served.http() as http:
        assert http.get(f"/tables/{t['id']}").json()["connected"] == [0]
    a.close()
    b.close()


def test_the_caps_and_the_throttle_are_options(tmp_path):
    """--max-message-bytes, --max-body-bytes, --rate and --burst set what the
    defaults (4096, 65536, 100/s, 200) would have let through."""
    served = start_server(f"sqlite:///{tmp_path / 'caps.db'}", tmp_path, "--seed", "3",
                          "--max-message-bytes", "1024", "--max-body-bytes", "512",
                          "--rate", "2", "--burst", "3")
    try:
        with served.http() as http:
            body = json.dumps({"variant": "guilin-mahjong", "bots": [1, 2, 3],
                               "pad": "x" * 600})          # 600 < 65536, > 512
            r = http.post("/tables", content=body)
            assert r.status_code == 413 and "512 bytes" in r.json()["message"], r.text
        t = create(served, "guilin-mahjong", bots=[1, 2, 3])
        c = SyncSeat(served, t["id"], t["seats"]["0"])
        c.until("welcome")
        c.send({"type": "ping", "pad": "x" * 2000})   # 2000 < 4096, > 1024
        got = c.until("error")
        assert got["code"] == "TooLarge" and "1024 bytes" in got["message"], got
        for _ in range(10):   # far over a burst of 3 (at 2 a second)
            c.send({"type": "ping"})
        got = c.until("error")
        assert got["code"] == "Throttled" and "more than 2 messages a second" in got["message"]
        c.close()
    finally:
        served.stop()


def test_an_unknown_field_inside_an_action_is_bad_message(served):
    """``act`` refuses unknown fields, and so does its ``action``
    (``{"type": "discard", …, "bogus": 1}`` is not acked and played):
    BadMessage, nothing applied; the same act without it is acked."""
    t = create(served, "guilin-mahjong", bots=[1, 2, 3])
    c = SyncSeat(served, t["id"], t["seats"]["0"])
    d = c.until("decide")
    action = choose(d["legal"])
    c.send({"type": "act", "hand": d["hand"], "seq": d["seq"], "action": {**action, "bogus": 1}})
    m = c.recv()
    while m["type"] not in ("ack", "error"):  # its answer: an ack (before) or the refusal
        m = c.recv()
    assert m["type"] == "error", m
    assert m["code"] == "BadMessage" and "bogus" in m["message"] and "$.action" in m["message"], m
    c.send({"type": "act", "hand": d["hand"], "seq": d["seq"], "action": action})
    assert c.until("ack")["seq"] == d["seq"]
    c.close()
