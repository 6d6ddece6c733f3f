"""Rooms of N hands (issue 35), against a real server: the 摊牌 at a hand's
end and in a rejoining player's welcome, the ready step, the final tally and
the room's close, the dissolve vote, presence and 托管, bad input, a restart."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hostkit import SyncSeat, choose, start_server

#: seeded deals, and 托管 answered at once (the server's default waits a player's
#: pace, --tuoguan-delay 1)
SEEDED = ("--seed", "5", "--tuoguan-delay", "0")


def sqlite(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'rooms.db'}"


def make(served, **body: Any) -> dict[str, Any]:
    with served.http() as h:
        r = h.post("/tables", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def get(served, path: str) -> dict[str, Any]:
    with served.http() as h:
        r = h.get(path)
    assert r.status_code == 200, r.text
    return r.json()


def seat(served, t: dict[str, Any], s: int, **kw: Any) -> SyncSeat:
    return SyncSeat(served, t["id"], t["seats"][str(s)], **kw)


def play(c: SyncSeat, me: int, stop: Any, ready: bool = True, act: bool = True
         ) -> dict[str, Any]:
    """Read ``c`` until ``stop(msg)``: answering decisions (:func:`choose`)
    if ``act`` and ready steps if ``ready``."""
    while True:
        m = c.recv()
        if stop(m):
            return m
        step = m.get("ready_step") if m["type"] == "welcome" else (
            m if m["type"] == "ready_step" else None)
        if ready and step and me in step["waiting"]:
            c.send({"type": "ready", "hand": step["hand"]}, paced=True)
        if act and m["type"] == "decide":
            c.send({"type": "act", "hand": m["hand"], "seq": m["seq"],
                    "action": choose(m["legal"])}, paced=True)


def kind(k: str, **fields: Any) -> Any:
    return lambda m: m["type"] == k and all(m.get(f) == v for f, v in fields.items())


def no_early_showdown(received: list[dict[str, Any]]) -> None:
    """The 摊牌 is only in ``hand_ended`` and in a welcome's ``last_result``
    of a hand already over — never in a message of a hand under way."""
    for m in received:
        text = json.dumps(m)
        if m["type"] == "hand_ended":
            assert m["showdown"] is not None
        elif m["type"] == "welcome":
            last = m["last_result"]
            assert last is None or last["hand"] < m["hand"]
            rest = {k: v for k, v in m.items() if k != "last_result"}
            assert "showdown" not in json.dumps(rest)
        else:
            assert "showdown" not in text, m["type"]


@pytest.fixture
def quick(tmp_path):
    s = start_server(sqlite(tmp_path), tmp_path, *SEEDED, "--ready-timeout", "600",
                     "--vote-timeout", "600")
    yield s
    s.stop()


def test_a_four_hand_room_ends_in_its_tally_and_closes(db_url, tmp_path):
    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        t = make(served, bots=[1, 2, 3], hands=4)
        c = seat(served, t, 0)
        welcome = c.until("welcome")
        assert welcome["room"] == {"hands": 4, "hand": 1, "done": 0, "ready": True}
        assert welcome["last_result"] is None and welcome["ready_step"] is None
        assert welcome["presence"] == {"type": "presence", "online": [0], "tuoguan": []}
        tally = play(c, 0, kind("tally"))
        closed = c.until("closed")
        ended = [m for m in c.received if m["type"] == "hand_ended"]
        assert [m["hand"] for m in ended] == [0, 1, 2, 3]
        for m in ended:
            sd = m["showdown"]
            assert [h["seat"] for h in sd["hands"]] == [0, 1, 2, 3]
            assert len(sd["wins"]) == len(m["result"]["winners"])
        steps = [m for m in c.received if m["type"] == "ready_step"]
        assert {m["hand"] for m in steps} == {1, 2, 3}
        welcomes = [m for m in c.received if m["type"] == "welcome"]
        assert [w["room"]["hand"] for w in welcomes] == [1, 2, 3, 4]
        assert tally["ended"] == "finished" and tally["hands_done"] == 4
        assert [s["total"] for s in tally["seats"]] == closed["totals"] == ended[-1]["totals"]
        wins = sum(len(m["result"]["winners"]) for m in ended if m["result"]["end"] == "hu")
        assert sum(s["wins"] for s in tally["seats"]) == wins
        no_early_showdown(c.received)
        c.close()
        info = get(served, f"/tables/{t['id']}")
        assert info["open"] is False and info["ended"] == "finished" and info["hands"] == 4
        assert info["tally"]["seats"] == tally["seats"]
        recs = get(served, f"/tables/{t['id']}/records")
        assert recs["ended"] == "finished" and recs["room_hands"] == 4
        assert recs["tally"] == info["tally"] and len(recs["hands"]) == 4
    finally:
        served.stop()


def test_hands_outside_1_to_64_is_bad_option(quick):
    with quick.http() as h:
        for bad in (0, 65, -1):
            r = h.post("/tables", json={"hands": bad})
            assert r.status_code == 400 and r.json()["error"] == "BadOption", r.text
            assert "hands" in r.json()["message"]
    t = make(quick, bots=[1, 2, 3])   # open-ended: as before
    assert get(quick, f"/tables/{t['id']}")["hands"] is None


def test_a_reconnect_between_hands_gets_the_last_result(quick):
    t = make(quick, bots=[1, 2, 3], hands=2)
    c = seat(quick, t, 0)
    ended = play(c, 0, kind("hand_ended"))
    step = c.until("ready_step")
    assert step["hand"] == 1 and step["waiting"] == [0]
    c.close()
    again = seat(quick, t, 0)
    w = again.until("welcome")
    assert w["hand"] == 1 and w["room"] == {"hands": 2, "hand": 2, "done": 1, "ready": True}
    assert w["last_result"]["hand"] == 0
    assert w["last_result"]["showdown"] == ended["showdown"]
    assert w["last_result"]["result"] == ended["result"]
    assert w["ready_step"]["waiting"] == [0]
    play(again, 0, kind("tally"))
    no_early_showdown(again.received)
    again.close()


@pytest.mark.slow
def test_ready_step_waits_for_humans_and_refuses_out_of_place(quick):
    t = make(quick, bots=[2, 3], hands=2)
    a, b = seat(quick, t, 0), seat(quick, t, 1)
    a.until("welcome"), b.until("welcome")
    # from a spectator: Spectator
    spec = SyncSeat(quick, t["id"], t["spectator_token"], strict=False)
    spec.until("welcome")
    for msg in ({"type": "ready", "hand": 1}, {"type": "dissolve"},
                {"type": "tuoguan", "on": True}):
        spec.send(msg, paced=True)
        assert spec.until("error")["code"] == "Spectator"
    a.strict = b.strict = False
    import threading
    done = {}

    def run(c, me):
        done[me] = play(c, me, kind("hand_ended"), ready=False)

    th = threading.Thread(target=run, args=(b, 1))
    th.start()
    run(a, 0)
    th.join()
    step = a.until("ready_step")
    assert step["hand"] == 1 and step["waiting"] == [0, 1]
    a.send({"type": "ready", "hand": 2})
    assert a.until("error")["code"] == "NotNow"
    a.send({"type": "ready", "hand": 1}, paced=True)
    assert a.until("ready_step")["waiting"] == [1]
    a.send({"type": "ready", "hand": 1}, paced=True)
    assert a.until("error")["code"] == "AlreadyDone"
    assert not any(m["type"] == "decide" and m["hand"] == 1 for m in a.received)
    b.send({"type": "ready", "hand": 1}, paced=True)
    over = a.until("ready_step", lambda m: m["waiting"] == [])
    assert over["ready"] == [0, 1]
    for c in (a, b, spec):
        c.close()


def test_ready_step_ends_at_its_deadline(tmp_path):
    served = start_server(sqlite(tmp_path), tmp_path, *SEEDED, "--ready-timeout", "0.5")
    try:
        t = make(served, bots=[1, 2, 3], hands=2)
        c = seat(served, t, 0)
        play(c, 0, kind("ready_step"), ready=False)
        over = play(c, 0, lambda m: m["type"] == "ready_step" and m["waiting"] == [],
                    ready=False)
        assert over["ready"] == []
        play(c, 0, kind("tally"), ready=False)
        c.close()
    finally:
        served.stop()


def test_dissolve_passes(quick):
    t = make(quick, bots=[2, 3], hands=8)
    a, b = seat(quick, t, 0), seat(quick, t, 1)
    a.until("welcome"), b.until("welcome")
    a.send({"type": "dissolve", "agree": True}, paced=True)
    v = b.until("vote")
    assert v["by"] == 0 and v["agreed"] == [0] and v["waiting"] == [1] and v["outcome"] is None
    a.send({"type": "dissolve", "agree": True}, paced=True)
    assert a.until("error")["code"] == "AlreadyDone"
    b.send({"type": "dissolve", "agree": True}, paced=True)
    assert b.until("vote")["outcome"] == "passed"
    tally = b.until("tally")
    assert tally["ended"] == "dissolved" and tally["hands_done"] == 0
    b.until("closed")
    info = get(quick, f"/tables/{t['id']}")
    assert info["open"] is False and info["ended"] == "dissolved"
    assert info["tally"]["ended"] == "dissolved"
    recs = get(quick, f"/tables/{t['id']}/records")
    assert recs["ended"] == "dissolved"
    assert recs["hands"] == []   # the hand under way: stored unfinished, as a host close does
    a.close(), b.close()


def test_dissolve_fails_on_a_refusal_and_at_its_deadline(tmp_path):
    served = start_server(sqlite(tmp_path), tmp_path, *SEEDED, "--vote-timeout", "0.5")
    try:
        t = make(served, bots=[2, 3], hands=8)
        a, b = seat(served, t, 0), seat(served, t, 1)
        a.until("welcome"), b.until("welcome")
        b.send({"type": "dissolve", "agree": False}, paced=True)
        assert b.until("error")["code"] == "NotNow"     # nothing to refuse
        a.send({"type": "dissolve"}, paced=True)
        b.until("vote")
        b.send({"type": "dissolve", "agree": False}, paced=True)
        v = a.until("vote", lambda m: m["outcome"] is not None)
        assert v["outcome"] == "refused" and v["refused_by"] == 1
        b.send({"type": "dissolve"}, paced=True)   # (seat 0 waits: its vote was refused)
        v = a.until("vote", lambda m: m["outcome"] is not None and m["by"] == 1)
        assert v["outcome"] == "expired"
        assert get(served, f"/tables/{t['id']}")["open"] is True
        open_ended = make(served, bots=[1, 2, 3])
        c = seat(served, open_ended, 0)
        c.until("welcome")
        c.send({"type": "dissolve"}, paced=True)
        assert c.until("error")["code"] == "NotNow"
        c.send({"type": "ready", "hand": 1}, paced=True)   # no ready step: an open table
        assert c.until("error")["code"] == "NotNow"
        for x in (a, b, c):
            x.close()
    finally:
        served.stop()


@pytest.mark.slow
def test_two_timeouts_put_a_seat_in_tuoguan_and_an_act_takes_it_out(tmp_path):
    served = start_server(sqlite(tmp_path), tmp_path, *SEEDED, "--turn-timeout", "0.3",
                          "--bot-delay", "0.1")
    try:
        t = make(served, bots=[0, 2, 3], hands=4)
        b = seat(served, t, 1, strict=False)
        assert b.until("welcome")["presence"] == {"type": "presence", "online": [1],
                                                  "tuoguan": []}
        # seat 1 does not answer: two timeouts, then 托管 (the bot plays for it)
        b.until("presence", lambda m: m["tuoguan"] == [1])
        # it acts again: out of 托管
        while True:
            d = b.until("decide")
            assert d["deadline"] == 0   # 托管: no clock
            b.send({"type": "act", "hand": d["hand"], "seq": d["seq"],
                    "action": choose(d["legal"])}, paced=True)
            answer = b.recv()
            while answer["type"] not in ("ack", "error"):
                answer = b.recv()
            if answer["type"] == "ack":
                break
            assert answer["code"] == "StaleSeq"   # the bot was first: again
        b.until("presence", lambda m: m["tuoguan"] == [])
        # 托管 by hand: twice is NotNow; the bot plays on to the hand's end
        b.send({"type": "tuoguan", "on": False}, paced=True)
        assert b.until("error")["code"] == "NotNow"
        b.send({"type": "tuoguan", "on": True}, paced=True)
        b.until("presence", lambda m: m["tuoguan"] == [1])
        b.send({"type": "tuoguan", "on": True}, paced=True)
        assert b.until("error")["code"] == "NotNow"
        b.until("hand_ended")
        b.send({"type": "tuoguan", "on": False}, paced=True)
        b.until("presence", lambda m: m["tuoguan"] == [])
        b.close()
        rec = get(served, f"/tables/{t['id']}/records")["hands"][0]["record"]
        assert len(rec["timeouts"]) >= 2 and rec["tuoguan"]
        seats = {i: rec["actions"][i]["seat"] for i in rec["tuoguan"] + rec["timeouts"]}
        assert set(seats.values()) == {1}
        from qipai.core.records import decode_record, replay_check
        assert replay_check(decode_record(json.dumps(rec))) is None   # it reads and replays
    finally:
        served.stop()


def test_a_restart_keeps_the_room(tmp_path):
    db = sqlite(tmp_path)
    served = start_server(db, tmp_path, *SEEDED, "--ready-timeout", "600")
    t = make(served, bots=[1, 2, 3], hands=3)
    c = seat(served, t, 0)
    ended = play(c, 0, kind("hand_ended"))
    c.until("ready_step")
    served.kill()
    c.close()
    served = start_server(db, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        again = seat(served, t, 0)
        w = again.until("welcome")
        assert w["room"] == {"hands": 3, "hand": 2, "done": 1, "ready": True}
        assert w["last_result"]["showdown"] == ended["showdown"]
        assert w["ready_step"]["hand"] == 1 and w["ready_step"]["waiting"] == [0]
        tally = play(again, 0, kind("tally"))
        assert tally["hands_done"] == 3 and tally["ended"] == "finished"
        again.close()
    finally:
        served.stop()


def test_qipai_connect_plays_a_room_to_its_tally(quick):
    import io

    from qipai.cli import connect as client

    t = make(quick, bots=[1, 2, 3], hands=2)
    out = io.StringIO()
    url = quick.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    assert client.run(url, auto=True, out=out) == 0
    text = out.getvalue()
    assert "第 1/2 局" in text and "第 2/2 局" in text
    assert "摊牌 you:" in text and "net: " in text
    assert "ready for hand 2 (sent)" in text and "final tally (大结算), room finished" in text
    assert "table closed" in text
    # one ready a hand: the welcome's ready step and its ready_step message are the
    # same step (a second ready was refused: "!! NotNow: hand 1 has no ready step")
    assert "!!" not in text, text


def test_qipai_connect_types_d_and_t(quick):
    import io

    from qipai.cli import connect as client

    t = make(quick, bots=[1, 2, 3], hands=4)
    out = io.StringIO()
    url = quick.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    # t: 托管 on (the bot plays the seat); d: the only human agrees: the room is dissolved
    inp = io.StringIO("t\nd\n")
    assert client.run(url, out=out, inp=inp) == 0
    assert "托管 (played by the bot): you" in out.getvalue()
    info = get(quick, f"/tables/{t['id']}")
    assert info["ended"] == "dissolved" and info["tally"]["ended"] == "dissolved"


@pytest.mark.parametrize("variant,bots", [("guilin-mahjong", [1, 2, 3]),
                                          ("guilin-zipai", [1, 2])])
def test_the_showdown_is_never_in_a_message_of_a_hand_under_way(quick, variant, bots):
    """For each seat kind (a player, a spectator), over a room of 3 hands:
    the 摊牌 is only in hand_ended and in a later hand's welcome."""
    t = make(quick, variant=variant, bots=bots, hands=3)
    spec = SyncSeat(quick, t["id"], t["spectator_token"])
    c = seat(quick, t, 0)
    play(c, 0, kind("closed"))
    spec.until("closed")
    for conn in (c, spec):
        no_early_showdown(conn.received)
        shown = [m["showdown"] for m in conn.received if m["type"] == "hand_ended"]
        assert len(shown) == 3
    # the views of a hand under way are as they were: a spectator's holds no hand
    assert all(m["view"]["hand"] == [] for m in spec.received if m["type"] == "welcome")
    c.close(), spec.close()


def test_a_restart_keeps_tuoguan(tmp_path):
    db = sqlite(tmp_path)
    served = start_server(db, tmp_path, *SEEDED, "--turn-timeout", "0.3",
                          "--bot-delay", "0.5")
    t = make(served, bots=[0, 2, 3], hands=8)
    b = seat(served, t, 1)
    b.until("presence", lambda m: m["tuoguan"] == [1])   # two timeouts
    served.kill()
    b.close()
    served = start_server(db, tmp_path, *SEEDED, "--turn-timeout", "0.3",
                          "--bot-delay", "0.5")
    try:
        again = seat(served, t, 1)
        w = again.until("welcome")
        assert w["presence"]["tuoguan"] == [1] and w["room"]["hands"] == 8
        again.close()
    finally:
        served.stop()


def test_a_host_close_of_a_room_sends_and_stores_its_tally(quick):
    t = make(quick, bots=[1, 2, 3], hands=4)
    c = seat(quick, t, 0)
    c.until("welcome")
    quick.close(t)
    tally = c.until("tally")
    assert tally["ended"] == "closed" and tally["hands_done"] == 0
    assert [s["total"] for s in tally["seats"]] == c.until("closed")["totals"]
    info = get(quick, f"/tables/{t['id']}")
    assert info["ended"] == "closed" and info["tally"] == {k: v for k, v in tally.items()}
    c.close()


@pytest.mark.slow
def test_a_restart_keeps_tuoguan_from_the_hand_before(tmp_path):
    db = sqlite(tmp_path)
    served = start_server(db, tmp_path, *SEEDED, "--ready-timeout", "600")
    t = make(served, bots=[2, 3], hands=4)
    a, b = seat(served, t, 0), seat(served, t, 1, strict=False)
    a.until("welcome")
    b.until("welcome")
    b.send({"type": "tuoguan", "on": True}, paced=True)   # the bot plays seat 1 all hand 0
    b.until("presence", lambda m: m["tuoguan"] == [1])
    play(a, 0, kind("hand_ended"), ready=False)
    step = a.until("ready_step")   # waits for seat 0 alone: hand 1 has no move stored
    assert step["waiting"] == [0]
    served.kill()
    a.close(), b.close()
    served = start_server(db, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        again = seat(served, t, 0)
        w = again.until("welcome")
        assert w["hand"] == 1 and w["presence"]["tuoguan"] == [1]   # from hand 0's record
        assert w["ready_step"]["waiting"] == [0]
        again.close()
    finally:
        served.stop()


# ---------------------------------------------------------------- ready on an open-ended table

def hand_begun(hand: int) -> Any:
    """Hand ``hand`` is played: a decision of it is offered, or it ended."""
    return lambda m: m["type"] in ("decide", "hand_ended") and m.get("hand") == hand


def test_an_open_ended_table_made_with_ready_waits_and_survives_a_restart(db_url, tmp_path):
    import sqlalchemy as sa

    from qipai.host.store import engine_url

    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    t = make(served, bots=[1, 2, 3], ready=True)
    old = make(served, bots=[1, 2, 3])   # made without it: no step
    info = get(served, f"/tables/{t['id']}")
    assert info["hands"] is None and info["ready"] is True
    assert get(served, f"/tables/{old['id']}")["ready"] is False
    c = seat(served, t, 0)
    w = c.until("welcome")
    assert w["room"] == {"hands": None, "hand": 1, "done": 0, "ready": True}
    play(c, 0, kind("hand_ended", hand=0))
    step = c.until("ready_step")
    assert step["hand"] == 1 and step["waiting"] == [0] and step["ready"] == []
    # nothing of hand 1 is offered while its step is under way
    assert not any(hand_begun(1)(m) for m in c.received)
    served.kill()
    c.close()
    # a row made before the choice: a room's yes, an open-ended table's no
    eng = sa.create_engine(engine_url(db_url))
    with eng.begin() as conn:
        conn.execute(sa.text("update qipai_tables set ready = null where id = :i"),
                     {"i": old["id"]})
    eng.dispose()
    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        assert get(served, f"/tables/{t['id']}")["ready"] is True   # kept in the row
        assert get(served, f"/tables/{old['id']}")["ready"] is False
        again = seat(served, t, 0)
        w = again.until("welcome")
        assert w["hand"] == 1 and w["room"]["ready"] is True
        # the restart begins the step again: asked once more
        assert w["ready_step"]["hand"] == 1 and w["ready_step"]["waiting"] == [0]
        assert w["last_result"]["hand"] == 0
        again.send({"type": "ready", "hand": 1}, paced=True)
        over = again.until("ready_step", lambda m: m["waiting"] == [])
        assert over["ready"] == [0]
        play(again, 0, hand_begun(1), ready=False)   # dealt on ready
        # and the next hand waits again
        step = play(again, 0, kind("ready_step", hand=2), ready=False)
        assert step["waiting"] == [0]
        again.close()
    finally:
        served.stop()


def test_an_open_ended_table_made_without_ready_deals_at_once(quick):
    t = make(quick, bots=[1, 2, 3])
    assert get(quick, f"/tables/{t['id']}")["ready"] is False
    c = seat(quick, t, 0, strict=False)
    w = c.until("welcome")
    assert w["room"] == {"hands": None, "hand": 1, "done": 0, "ready": False}
    play(c, 0, kind("hand_ended", hand=0), ready=False)
    w = c.until("welcome")
    assert w["hand"] == 1 and w["ready_step"] is None
    c.send({"type": "ready", "hand": 1}, paced=True)
    refused = c.until("error")
    assert refused["code"] == "NotNow" and "ready step" in refused["message"]
    play(c, 0, hand_begun(1), ready=False)
    assert not any(m["type"] == "ready_step" for m in c.received)
    c.close()


def test_qipai_connect_answers_an_open_ended_tables_ready_steps(quick):
    """``qipai connect --auto`` plays an open-ended table made with ready,
    one ready a hand, until the host closes it (after its third hand began,
    as a spectator sees)."""
    import io
    import threading

    from qipai.cli import connect as client

    t = make(quick, bots=[1, 2, 3], ready=True)
    spec = SyncSeat(quick, t["id"], t["spectator_token"], strict=False)
    spec.until("welcome")
    out, rc = io.StringIO(), []
    url = quick.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    th = threading.Thread(target=lambda: rc.append(client.run(url, auto=True, out=out)))
    th.start()
    try:
        for hand in (1, 2):   # each step ended by its ready (600 s deadline)
            over = spec.until("ready_step", lambda m, h=hand: m["hand"] == h and not m["waiting"])
            assert over["ready"] == [0]
    finally:
        quick.close(t)
        th.join()
        spec.close()
    assert rc == [0]
    text = out.getvalue()
    assert "ready for hand 2 (sent)" in text and "ready for hand 3 (sent)" in text
    # (not asserted: "table closed" — closed mid-hand, an act the client sends may
    # find the socket closed before it read the closed message, and it ends there)
    assert "!!" not in text, text


def test_a_room_made_with_ready_false_deals_at_once(quick):
    t = make(quick, bots=[1, 2, 3], hands=2, ready=False)
    assert get(quick, f"/tables/{t['id']}")["ready"] is False
    c = seat(quick, t, 0)
    assert c.until("welcome")["room"] == {"hands": 2, "hand": 1, "done": 0, "ready": False}
    tally = play(c, 0, kind("tally"), ready=False)
    assert tally["hands_done"] == 2
    assert not any(m["type"] == "ready_step" for m in c.received)
    c.close()


def test_a_bad_ready_is_refused(quick):
    with quick.http() as h:
        for bad in ("yes", 1, 0, [], {}):
            r = h.post("/tables", json={"bots": [1, 2, 3], "ready": bad})
            assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text
            assert "$.ready" in r.json()["message"]
    info = get(quick, f"/tables/{make(quick, hands=2, ready=None)['id']}")
    assert info["ready"] is True   # null: the default, a room's yes
