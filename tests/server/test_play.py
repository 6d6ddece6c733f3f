"""A real server, real WebSockets: full hands, views without leaks, records that replay."""

from __future__ import annotations

import asyncio
import json

import msgspec
import pytest

from hostkit import Client, choose, create, start_server
from qipai.core.model import Event
from qipai.core.records import decode_record, replay_check
from qipai.core.ruleset import load
from qipai.core.views import redact

EVENTS = msgspec.json.Decoder(list[Event])


@pytest.fixture
def served(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--seed", "11")
    yield s
    s.stop()


async def play_seat(served, table: str, token: str, hands: int = 1) -> Client:
    """Connect, answer every decision with :func:`choose`, stop after ``hands`` hands."""
    c = await Client.connect(served, table, token)
    done = 0
    while done < hands:
        msg = await c.recv()
        if msg["type"] == "decide":
            await c.send({"type": "act", "hand": msg["hand"], "seq": msg["seq"],
                          "action": choose(msg["legal"])})
        elif msg["type"] == "error":
            raise AssertionError(f"refused: {msg}")
        elif msg["type"] == "hand_ended":
            done += 1
    await c.close()
    return c


def streams(client: Client, hand: int) -> list[dict]:
    """The events of ``hand`` a client was sent (the Welcome view's, then the deltas)."""
    out: list[dict] = []
    for m in client.received:
        if m["type"] == "welcome" and m["hand"] == hand:
            out = list(m["view"]["events"])
        elif m["type"] == "events" and m["hand"] == hand:
            assert m["first"] == len(out), "a delta starts where the client is"
            out.extend(m["events"])
    return out


def test_four_websocket_clients_play_a_hand(served):
    t = create(served, "guilin-mahjong", bots=[])
    assert sorted(t["seats"]) == ["0", "1", "2", "3"]

    async def main():
        return await asyncio.gather(*(play_seat(served, t["id"], t["seats"][str(s)])
                                      for s in range(4)))

    clients = asyncio.run(main())
    with served.http() as http:
        out = http.get(f"/tables/{t['id']}/records").json()
    assert len(out["hands"]) >= 1
    rec = decode_record(out["hands"][0]["record"])
    assert rec.ask_all and rec.rng == "seeded"
    assert replay_check(rec) is None
    assert sum(rec.result.net) == 0
    # every Welcome said the table is seeded, and carried the commitment
    for c in clients:
        welcomes = [m for m in c.received if m["type"] == "welcome"]
        assert welcomes and all(w["seeded"] and w["rng"] == "seeded" for w in welcomes)
        assert welcomes[0]["commitment"] == out["hands"][0]["record"]["commitment"]
    # each seat was sent exactly its redaction of the record's events, no more
    rs = load(rec.variant, rec.options)
    fdk = dict(rs.manifest.face_down_kinds)
    for seat, c in enumerate(clients):
        got = streams(c, 0)
        want = json.loads(msgspec.json.encode([redact(e, seat, fdk) for e in rec.events]))
        assert got == want
    # the record has the actions the clients sent and acknowledged
    acks = sum(1 for c in clients for m in c.received if m["type"] == "ack" and m["hand"] == 0)
    assert acks == len(rec.actions)
    assert rec.timeouts == [] if hasattr(rec, "timeouts") else True


def test_bots_play_hand_after_hand_with_totals(served):
    t = create(served, "guilin-zipai", bots=[0, 1, 2])
    assert t["seats"] == {}

    async def watch():
        c = await Client.connect(served, t["id"], t["spectator_token"])
        ended = [await c.until("hand_ended") for _ in range(2)]
        await c.close()
        return c, ended

    c, ended = asyncio.run(watch())
    with served.http() as http:
        out = http.get(f"/tables/{t['id']}/records").json()
        info = http.get(f"/tables/{t['id']}").json()
    recs = [decode_record(h["record"]) for h in out["hands"]]
    assert len(recs) >= 2
    for a, b in zip(recs, recs[1:]):
        assert b.deal.dealer == a.result.next_dealer
    assert ended[1]["totals"] == [x + y for x, y in zip(recs[0].result.net, recs[1].result.net)]
    assert info["hands_done"] >= 2 and sum(info["totals"]) == 0
    # the spectator never got a concealed card: its view has no hand, and
    # every draw it saw that was not shown to all has card null
    for m in c.received:
        if m["type"] == "welcome":
            assert m["seat"] is None and m["view"]["hand"] == [] and m["view"]["legal"] == []
        evs = m["view"]["events"] if m["type"] == "welcome" else m.get("events", [])
        for e in evs:
            if e["type"] == "drew" and not e["shown"]:
                assert e["card"] is None


def test_served_records_verify_and_a_tampered_one_fails(served, tmp_path):
    from click.testing import CliRunner

    from qipai.cli import cli

    t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])

    async def watch():
        c = await Client.connect(served, t["id"], t["spectator_token"])
        await c.until("hand_ended")
        await c.close()

    asyncio.run(watch())
    with served.http() as http:
        rec = http.get(f"/tables/{t['id']}/records").json()["hands"][0]["record"]
    good = tmp_path / "good.json"
    good.write_text(json.dumps(rec))
    assert CliRunner().invoke(cli, ["verify", str(good)]).exit_code == 0
    wall = list(rec["deal"]["wall"])
    i = next(j for j in range(1, len(wall)) if wall[j] != wall[0])
    wall[0], wall[i] = wall[i], wall[0]  # the stock reordered after the commitment
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**rec, "deal": {**rec["deal"], "wall": wall}}))
    assert CliRunner().invoke(cli, ["verify", str(bad)]).exit_code == 1


def test_served_hands_verify_as_a_session_and_a_dropped_one_fails(served, tmp_path):
    # GET /tables/{id}/records is a file of hands, each with its index: verify
    # checks the indices and that each dealer is the previous hand's next dealer
    from click.testing import CliRunner

    from qipai.cli import cli

    t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])

    async def watch():
        c = await Client.connect(served, t["id"], t["spectator_token"])
        for _ in range(3):
            await c.until("hand_ended")
        await c.close()

    asyncio.run(watch())
    with served.http() as http:
        out = http.get(f"/tables/{t['id']}/records").json()
    assert len(out["hands"]) >= 3
    n = len(out["hands"])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(out))
    res = CliRunner().invoke(cli, ["verify", str(good)])
    assert res.exit_code == 0, res.output
    assert (f"ok   session: order: the hands are the table's hands 0–{n - 1} in order; each next "
            f"hand's dealer is the previous hand's next dealer") in res.output.splitlines()
    hands = [out["hands"][0]] + out["hands"][2:]  # hand 1 (index 1) dropped
    total = [sum(x) for x in zip(*(decode_record(h["record"]).result.net for h in hands))]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**out, "hands": hands, "total": total}))
    res = CliRunner().invoke(cli, ["verify", str(bad)])
    assert res.exit_code == 1
    assert ("FAIL session: order: hand 2's index is 2, but the one after hand 1's 0 is 1: a hand "
            "of the table is missing, repeated or out of order") in res.output
