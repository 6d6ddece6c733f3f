"""A hostile reviewer's look at rooms (issue 35), against a real server:
what a player may do out of place in a ready step, a dissolve vote or
托管, and that it changes nothing."""

from __future__ import annotations

import json

import pytest

from hostile import db_rows
from hostkit import SyncSeat, choose, start_server
from test_rooms import get, kind, make, play, quick, seat, sqlite  # noqa: F401 - a fixture

#: seeded deals, and 托管 answered at once (the server's default waits a player's
#: pace, --tuoguan-delay 1)
SEEDED = ("--seed", "5", "--tuoguan-delay", "0")


def test_an_act_during_the_ready_step_is_not_now(quick):
    """The dealer's first decision exists while the ready step waits (the
    hand is dealt, its ``legal`` in the welcome's view): an ``act`` answering
    it is refused ``NotNow`` and nothing is applied — the ready step is not
    skipped by guessing ``seq`` 0."""
    t = make(quick, bots=[1, 2], hands=2)
    # seat 3 in 托管 plays hand 0 as a bot would: it deals hand 1 (seed 5)
    d = seat(quick, t, 3, strict=False)
    d.until("welcome")
    d.send({"type": "tuoguan", "on": True}, paced=True)
    d.until("presence", lambda m: m["tuoguan"] == [3])
    c = seat(quick, t, 0)
    play(c, 0, kind("hand_ended"))
    assert c.until("ready_step")["waiting"] == [0]
    w = d.until("welcome", lambda m: m["hand"] == 1)
    assert w["view"]["dealer"] == 3 and w["view"]["legal"] and w["ready_step"]
    d.send({"type": "act", "hand": 1, "seq": 0, "action": w["view"]["legal"][0]}, paced=True)
    err = d.until("error")
    assert err["code"] == "NotNow" and err["seq"] == 0
    assert not any(m["type"] in ("ack", "events") and m.get("hand") == 1
                   for m in d.received)
    # the ready step goes on: seat 0 ready, the hand begins, the dealer is offered its turn
    c.send({"type": "ready", "hand": 1}, paced=True)
    d.until("ready_step", lambda m: m["waiting"] == [])
    assert d.until("decide")["seq"] == 0
    c.close(), d.close()


def test_acting_out_of_tuoguan_offers_no_stale_decision(tmp_path):
    """A player in 托管 answers a decision offered to him there (no clock):
    he is out of 托管 and his clock runs again — but the decision he has
    just answered is not offered to him once more (it was: a ``decide``
    with the acked ``seq``, which a client answers only to be told
    ``StaleSeq``)."""
    served = start_server(sqlite(tmp_path), tmp_path, *SEEDED, "--bot-delay", "0.5",
                          "--ready-timeout", "600")
    try:
        t = make(served, bots=[1, 2, 3], hands=2)
        c = seat(served, t, 0, strict=False)
        c.until("welcome")
        c.send({"type": "tuoguan", "on": True}, paced=True)
        c.until("presence", lambda m: m["tuoguan"] == [0])
        while True:   # a decision offered in 托管 (no clock), answered before the bot
            d = c.until("decide", lambda m: m["deadline"] == 0)
            c.send({"type": "act", "hand": d["hand"], "seq": d["seq"],
                    "action": choose(d["legal"])}, paced=True)
            a = c.recv()
            while a["type"] not in ("ack", "error"):
                a = c.recv()
            if a["type"] == "ack":
                break
            assert a["code"] == "StaleSeq", a   # the bot was first: the next one
        c.until("presence", lambda m: m["tuoguan"] == [])
        after = c.received[c.received.index(a) + 1:]
        assert not [m for m in after if m["type"] == "decide" and m["seq"] == a["seq"]
                    and m["hand"] == a["hand"]], after
        c.close()
    finally:
        served.stop()


def test_a_refused_proposer_cannot_propose_again_at_once(quick):
    """Propose, be refused, propose again, for ever: every proposal is a
    prompt on every other player's screen and a log line.  A seat whose
    vote was refused may propose again only after that vote's deadline
    (``NotNow``, nothing sent to the others); another seat may propose."""
    t = make(quick, bots=[2, 3], hands=8)
    a, b = seat(quick, t, 0, strict=False), seat(quick, t, 1, strict=False)
    a.until("welcome"), b.until("welcome")
    a.send({"type": "dissolve"}, paced=True)
    b.until("vote", lambda m: m["outcome"] is None)
    b.send({"type": "dissolve", "agree": False}, paced=True)
    a.until("vote", lambda m: m["outcome"] == "refused")
    for _ in range(3):
        a.send({"type": "dissolve"}, paced=True)
        err = a.until("error")
        assert err["code"] == "NotNow" and "refused" in err["message"], err
    b.send({"type": "dissolve"}, paced=True)   # seat 1's own proposal: under way
    v = a.until("vote", lambda m: m["outcome"] is None)
    assert v["by"] == 1
    b.until("vote", lambda m: m["by"] == 1)
    votes = [m for m in b.received if m["type"] == "vote"]
    assert [(m["by"], m["outcome"]) for m in votes] == [(0, None), (0, "refused"), (1, None)]
    a.close(), b.close()


def _money(served, tid: str) -> dict:
    """The stored room: every finished record replays, the nets sum to zero
    hand by hand, and the tally, the records' total and the table's totals
    are their sums."""
    from qipai.core.records import decode_record, replay_check

    info = get(served, f"/tables/{tid}")
    recs = get(served, f"/tables/{tid}/records")
    nets = []
    for h in recs["hands"]:
        rec = h["record"]
        assert replay_check(decode_record(json.dumps(rec))) is None
        net = rec["result"]["net"]
        assert sum(net) == 0
        nets.append(net)
    total = [sum(n[s] for n in nets) for s in range(info["players"])]
    tally = info["tally"]
    assert recs["tally"] == tally and recs["ended"] == info["ended"]
    assert tally["hands_done"] == len(nets) == info["hands_done"]
    assert [s["total"] for s in tally["seats"]] == total == info["totals"]
    assert (recs["total"] or [0] * info["players"]) == total
    wins = sum(len(h["record"]["result"]["winners"]) for h in recs["hands"]
               if h["record"]["result"]["end"] == "hu")
    assert sum(s["wins"] for s in tally["seats"]) == wins
    won = [e for h in recs["hands"] for e in h["record"]["events"] if e["type"] == "won"]
    for s in tally["seats"]:   # 点炮: a discard (or added kong) won on; 字牌's pinghu is not
        assert s["zimo"] == sum(1 for e in won if e["seat"] == s["seat"] and e["how"] == "zimo")
        assert s["dianpao"] == sum(1 for e in won if e["from_seat"] == s["seat"] != e["seat"]
                                   and e["how"] not in ("zimo", "pinghu"))
    return recs


def test_a_room_in_tuoguan_sums_and_replays(db_url, tmp_path):
    """Seat 1 turns 托管 on and leaves: the room plays on (seat 0 online),
    to its tally; every move made for seat 1 is listed as 托管's, and the
    money adds up."""
    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        t = make(served, bots=[2, 3], hands=3)
        b = seat(served, t, 1)
        b.until("welcome")
        b.send({"type": "tuoguan", "on": True}, paced=True)
        b.until("presence", lambda m: m["tuoguan"] == [1])
        b.close()
        c = seat(served, t, 0)
        tally = play(c, 0, kind("tally"))
        c.until("closed")
        c.close()
        assert tally["ended"] == "finished" and tally["hands_done"] == 3
        recs = _money(served, t["id"])
        for h in recs["hands"]:
            rec = h["record"]
            mine = {i for i, a in enumerate(rec["actions"]) if a["seat"] == 1}
            assert set(rec.get("tuoguan", [])) == mine and not set(rec["timeouts"]) & mine
    finally:
        served.stop()


def test_a_room_dissolved_mid_hand_pays_the_finished_hands_only(db_url, tmp_path):
    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        t = make(served, bots=[1, 2, 3], hands=4)
        c = seat(served, t, 0)
        play(c, 0, kind("hand_ended"))
        # hand 1 under way: a few actions in, then the only human dissolves it
        play(c, 0, lambda m: m["type"] == "events" and m["hand"] == 1 and m["first"] >= 6)
        c.send({"type": "dissolve"}, paced=True)
        tally = c.until("tally")
        c.until("closed")
        c.close()
        assert tally["ended"] == "dissolved" and tally["hands_done"] == 1
        recs = _money(served, t["id"])
        assert len(recs["hands"]) == 1
        rows = db_rows(db_url)["qipai_hands"]
        assert len(rows) == 2   # hand 1 kept, unfinished (no net)
    finally:
        served.stop()


def test_qipai_connect_d_no_asks_the_decision_again(quick):
    """``d no`` (or ``d``) typed at a prompt sends the vote's answer and asks
    the decision again — it used to leave the decision unanswered, the
    player's clock running down to a timeout (two of them: 托管)."""
    import io

    from qipai.cli import connect as client

    t = make(quick, bots=[1, 2, 3], hands=2)
    out = io.StringIO()
    url = quick.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    assert client.run(url, out=out, inp=io.StringIO("d no\n1\n")) == 0
    text = out.getvalue()
    first = text.index("you discard")
    assert text[:first].count("your choice") == 2, text   # asked again after d no
    assert "NotNow" in text   # no vote to refuse: the server said so


def test_qipai_connect_in_tuoguan_does_not_auto_pass(tmp_path):
    """In 托管 the client does not answer a pass-only window itself (its
    auto-pass would be the player's own act, taking the seat out of 托管
    whenever it beats the bot, which ``--bot-delay`` makes it do); the
    prompt says there is no clock."""
    import io

    from qipai.cli import connect as client

    served = start_server(sqlite(tmp_path), tmp_path, *SEEDED, "--bot-delay", "0.2",
                          "--ready-timeout", "600")
    try:
        t = make(served, bots=[1, 2, 3], hands=2)
        out = io.StringIO()
        url = served.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
        # t: 托管 on; then the input ends at the next prompt (the client leaves)
        assert client.run(url, out=out, inp=io.StringIO("t\n")) == 0
        text = out.getvalue()
        on = text.index("托管 (played by the bot): you")
        assert "only move" not in text[on:], text[on:]
        assert "== online: you\n" not in text[on:], text[on:]   # never out of 托管
        assert "no clock" in text[on:] and "0 s left" not in text[on:]
    finally:
        served.stop()


def test_tuoguan_switched_on_and_off_as_fast_as_allowed_is_not_now(quick):
    """Switching 托管 on, off, on … at the message rate would send every
    connection at the table a ``presence`` each time (and start the bot,
    or offer the decision again): a seat's second switch within
    ``TUOGUAN_SWITCH_S`` is ``NotNow`` and changes nothing."""
    t = make(quick, bots=[2, 3], hands=2)
    a, b = seat(quick, t, 0, strict=False), seat(quick, t, 1, strict=False)
    a.until("welcome"), b.until("welcome")
    a.until("presence", lambda m: m["online"] == [0, 1])
    a.send({"type": "tuoguan", "on": True}, paced=True)
    b.until("presence", lambda m: m["tuoguan"] == [0])
    for on in (False, True, False):
        a.send({"type": "tuoguan", "on": on}, paced=True)
    errs = [a.until("error") for _ in range(2)]   # (the True: already on, NotNow too)
    assert {e["code"] for e in errs} == {"NotNow"}
    a.send({"type": "ping"}, paced=True)
    a.until("pong")
    b.send({"type": "ping"}, paced=True)
    b.until("pong")
    told = [m for m in b.received if m["type"] == "presence"]
    assert told[-1]["tuoguan"] == [0], told   # still in 托管: nothing changed
    a.close(), b.close()


@pytest.mark.slow
def test_sigkill_after_the_last_hand_and_during_a_vote(db_url, tmp_path):
    """SIGKILL once the room's tally is out (the last action and the close
    are one write): after a restart the room is closed once — not restored,
    its tally and totals as sent, its records summing to it.  SIGKILL
    during a dissolve vote: the room is restored, the vote gone (nothing
    was decided), and it can be proposed again."""
    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    t = make(served, bots=[1, 2, 3], hands=2)
    v = make(served, bots=[2, 3], hands=4)
    c = seat(served, t, 0)
    tally = play(c, 0, kind("tally"))
    a, b = seat(served, v, 0, strict=False), seat(served, v, 1, strict=False)
    a.until("welcome"), b.until("welcome")
    a.send({"type": "dissolve"}, paced=True)
    b.until("vote", lambda m: m["outcome"] is None)
    served.kill()
    for x in (a, b, c):
        x.close()
    served = start_server(db_url, tmp_path, *SEEDED, "--ready-timeout", "600")
    try:
        with served.http() as h:
            assert h.get("/health").json()["tables"] == 1   # the voting room only
        info = get(served, f"/tables/{t['id']}")
        assert info["open"] is False and info["ended"] == "finished"
        assert info["tally"] == {k: v for k, v in tally.items()}
        _money(served, t["id"])
        a, b = seat(served, v, 0, strict=False), seat(served, v, 1, strict=False)
        w = a.until("welcome")
        assert w["vote"] is None and w["room"] == {"hands": 4, "hand": 1, "done": 0, "ready": True}
        b.until("welcome")
        b.send({"type": "dissolve"}, paced=True)
        a.until("vote", lambda m: m["outcome"] is None and m["by"] == 1)
        a.send({"type": "dissolve", "agree": True}, paced=True)
        assert a.until("tally")["ended"] == "dissolved"
        a.close(), b.close()
        assert get(served, f"/tables/{v['id']}")["ended"] == "dissolved"
    finally:
        served.stop()


@pytest.mark.parametrize("variant,bots", [("guilin-zipai", [0, 1, 2]),
                                          ("guilin-mahjong", [0, 1, 2, 3])])
def test_an_all_bot_room_watched_to_its_tally_adds_up(quick, variant, bots):
    t = make(quick, variant=variant, bots=bots, hands=6)
    spec = SyncSeat(quick, t["id"], t["spectator_token"])
    tally = spec.until("tally")
    spec.until("closed")
    spec.close()
    assert tally["hands_done"] == 6
    _money(quick, t["id"])


def test_qipai_connect_prints_a_hand_s_end_once(quick):
    """The 摊牌 and payments of a hand are printed at its ``hand_ended``; the
    next hand's welcome (its ready step) carries them again as
    ``last_result`` for a player who rejoins — not printed a second time
    to one who saw them (a client joining in a ready step still shows them)."""
    import io

    from qipai.cli import connect as client

    t = make(quick, bots=[1, 2, 3], hands=3)
    out = io.StringIO()
    url = quick.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    assert client.run(url, auto=True, out=out) == 0
    text = out.getvalue()
    assert text.count("摊牌 you:") == 3 and "== the last hand" not in text, text
