"""``qipai connect``'s terminal printer: every event kind the server sends
is a readable line (Chinese and pinyin, cards in notation), never raw JSON."""

from __future__ import annotations

import io
import json
import random

import msgspec
import pytest

from qipai.bots import GreedyBot
from qipai.core.ruleset import load
from qipai.core.table import Table
from qipai.text.wire import Printer


def printer(variant: str) -> Printer:
    p = Printer(io.StringIO())
    p.cards = load(variant).cards
    return p


def test_a_flip_is_printed_as_fanxing_with_its_cards_and_xing():
    p = printer("guilin-zipai")
    # zipai kinds 0, 10: 一 (x1) and 壹 (d1); seat 2 counts 3 醒
    line = p.event({"type": "flipped", "cards": [0, 10], "xing": {"2": 3}})
    assert line == "翻醒 fanxing: flipped x1(一) d1(壹) — 醒 xing seat 2: 3"
    assert p.event({"type": "flipped", "cards": [], "xing": {}}) == \
        "翻醒 fanxing: flipped nothing — 醒 xing none"


def test_marks_wins_and_ends_are_named():
    p = printer("guilin-mahjong")
    assert p.event({"type": "marked", "what": "jiagang", "seats": [1], "card": 0}).startswith(
        "seat 1 adds 1m(一万) to a peng (蓄杠 jiagang)")
    assert p.event({"type": "won", "seat": 0, "how": "zimo", "card": 0, "from_seat": None,
                    "patterns": ["qingyise"]}) == "seat 0 wins: 自摸 zimo on 1m(一万) — qingyise"
    assert p.event({"type": "ended", "end": "huangzhuang", "winners": [], "net": [0, 0, 0, 0],
                    "next_dealer": 1}).startswith("hand over: 荒庄 huangzhuang")


@pytest.mark.parametrize("variant", ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"])
def test_no_event_of_real_hands_is_printed_as_json(variant):
    rs = load(variant)
    p = printer(variant)
    kinds: set[str] = set()
    for seed in range(12):
        table = Table(rs, seed=seed, ask_all=True)
        bots = [GreedyBot(random.Random(s)) for s in range(rs.manifest.players)]
        while not table.over:
            seat = table.to_decide()[0]
            table.apply(bots[seat].choose(table, seat))
        # as the wire carries them (JSON: a dict's int keys are strings)
        for e in json.loads(msgspec.json.encode(table.state.events)):
            kinds.add(e["type"])
            line = p.event(e)
            assert "{" not in line and '"' not in line, line
    if variant == "guilin-zipai":
        assert "flipped" in kinds


def _connect_to(handler, hands: int | None = None) -> str:
    """What ``qipai connect --auto`` (``client.run``) prints against a
    WebSocket server on 127.0.0.1 whose connections ``handler`` serves;
    asserts it ends with status 0."""
    import io
    import threading

    from websockets.sync.server import serve

    from qipai.cli import connect as client

    with serve(handler, "127.0.0.1", 0) as server:
        port = server.socket.getsockname()[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        out = io.StringIO()
        assert client.run(f"ws://127.0.0.1:{port}/tables/t/ws?token=x", auto=True, hands=hands,
                          out=out) == 0
        server.shutdown()
    return out.getvalue()


def test_a_throttled_act_is_sent_again(monkeypatch):
    """An act the server dropped unread (Throttled, naming its seq) is sent
    again, rather than waiting until the seat's timeout plays its default
    action instead."""
    from qipai.cli import connect as client

    monkeypatch.setattr(client, "RESEND_S", 0.0)
    got: list[dict] = []
    decide = {"type": "decide", "hand": 0, "seq": 7, "deadline": None,
              "legal": [{"type": "discard", "seat": 0, "card": 5}]}

    def handler(ws):
        ws.send(json.dumps(decide))
        for text in ws:
            got.append(json.loads(text))
            if len(got) == 1:
                ws.send(json.dumps({"type": "error", "code": "Throttled", "seq": 7,
                                    "message": "act seq 7 dropped, not applied; send it again"}))
            else:
                ws.send(json.dumps({"type": "ack", "hand": 0, "seq": 7}))
                ws.send(json.dumps({"type": "hand_ended", "hand": 0, "totals": [0, 0, 0, 0]}))

    out = _connect_to(handler, hands=1)
    assert [m["seq"] for m in got] == [7, 7] and got[0] == got[1]
    assert "Throttled" not in out


def test_more_than_one_connection_on_the_seat_is_warned():
    """``seat_conns``: a count over 1 is a warning line (someone else may hold
    the seat's link), the count back at 1 says so once; 1 alone says nothing."""
    def handler(ws):
        for count in (1, 2, 3, 1):
            ws.send(json.dumps({"type": "seat_conns", "count": count}))
        ws.send(json.dumps({"type": "closed", "totals": [0, 0, 0, 0]}))
        for _ in ws:
            pass

    lines = _connect_to(handler).splitlines()
    assert lines == [
        "!! this seat has 2 connections open at the table; if you did not open the others, "
        "someone else has your link",
        "!! this seat has 3 connections open at the table; if you did not open the others, "
        "someone else has your link",
        "== this seat has 1 connection open again (this one)",
        "== table closed · totals [0, 0, 0, 0]",
    ], lines


def test_hands_are_counted_from_one_as_play_counts_them():
    """The protocol's ``hand`` is 0-based; ``qipai connect`` prints the first
    hand as hand 1 (welcome and end), as ``play``, ``replay`` and ``verify``
    do."""
    table = load("guilin-mahjong").table(seed=1)
    view = json.loads(msgspec.json.encode(table.view(0)))
    welcome = {"type": "welcome", "table": "t", "spec": "guilin-mahjong", "hand": 0, "seat": 0,
               "seeded": True, "totals": [0, 0, 0, 0], "view": view}

    def handler(ws):
        ws.send(json.dumps(welcome))
        ws.send(json.dumps({"type": "hand_ended", "hand": 0, "totals": [0, 0, 0, 0]}))
        for _ in ws:
            pass

    lines = _connect_to(handler, hands=1).splitlines()
    assert " · hand 1 · seat 0 · " in lines[0], lines
    assert "== hand 1 over · totals [0, 0, 0, 0]" in lines, lines


def test_a_decide_with_no_legal_action_is_one_line(tmp_path):
    """A (hostile or broken) server's ``decide`` with an empty ``legal``:
    ``qipai connect --auto`` exits 2 with one ``error:`` line naming it, and
    so does the interactive client (not an IndexError traceback from
    ``auto_choice``'s ``legal[0]``, nor an endless "a number 0..-1")."""
    import subprocess
    import sys
    import threading

    import pytest
    from websockets.sync.server import serve

    from qipai.cli.connect import BadServerMessage, auto_choice

    with pytest.raises(BadServerMessage, match="no legal action"):
        auto_choice([])

    def handler(ws):
        ws.send(json.dumps({"type": "decide", "hand": 0, "seq": 7, "deadline": 0,
                            "timeout": 30, "seeded": True, "legal": []}))
        for _ in ws:
            pass

    with serve(handler, "127.0.0.1", 0) as server:
        port = server.socket.getsockname()[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"ws://127.0.0.1:{port}/tables/t/ws?token=x"
        for extra in (["--auto"], []):
            p = subprocess.run([sys.executable, "-m", "qipai", "connect", *extra, url],
                               capture_output=True, text=True, timeout=120, input="0\n")
            assert p.returncode == 2, (extra, p.stdout, p.stderr)
            assert p.stderr.splitlines() == [
                "error: the server sent a decide (hand 0, seq 7) with no legal action: there "
                "is nothing to answer it with (a server's decide always offers at least one)"
            ], (extra, p.stderr)
        server.shutdown()


def test_a_moved_is_followed_and_an_act_not_applied_is_sent_again():
    """A cluster's ``moved`` (the table handed to another node mid-hand): an
    act refused ``Moving`` is not shown as a failure, the client says in one
    line where the table went, connects there (its ``address``, http → ws)
    with the same path and token, and sends the act again when its decision
    is offered again (it was not applied); the hand goes on there."""
    import io
    import threading

    from websockets.sync.server import serve

    from qipai.cli import connect as client

    decide = {"type": "decide", "hand": 0, "seq": 7, "deadline": None,
              "legal": [{"type": "discard", "seat": 0, "card": 5}]}
    got: dict[str, list] = {"a": [], "b": []}
    paths: dict[str, list] = {"a": [], "b": []}

    def node(name, then):
        def handler(ws):
            paths[name].append(ws.request.path)
            ws.send(json.dumps(decide))
            for text in ws:
                got[name].append(json.loads(text))
                then(ws)
        return handler

    def a_moves(ws):
        ws.send(json.dumps({"type": "batch", "messages": [
            {"type": "error", "code": "Moving", "seq": 7,
             "message": "table t is moving to node b; a moved message follows"},
            {"type": "moved", "table": "t", "node": "b", "address": b_address}]}))
        ws.close(4307)

    def b_plays(ws):
        ws.send(json.dumps({"type": "ack", "hand": 0, "seq": 7}))
        ws.send(json.dumps({"type": "hand_ended", "hand": 0, "totals": [0, 0, 0, 0]}))

    with serve(node("a", a_moves), "127.0.0.1", 0) as a, \
            serve(node("b", b_plays), "127.0.0.1", 0) as b:
        b_address = f"http://127.0.0.1:{b.socket.getsockname()[1]}"
        for s in (a, b):
            threading.Thread(target=s.serve_forever, daemon=True).start()
        out = io.StringIO()
        url = f"ws://127.0.0.1:{a.socket.getsockname()[1]}/tables/t/ws?token=x"
        assert client.run(url, auto=True, hands=1, out=out) == 0
        a.shutdown()
        b.shutdown()
    assert paths == {"a": ["/tables/t/ws?token=x"], "b": ["/tables/t/ws?token=x"]}
    assert got["a"] == got["b"] and [m["seq"] for m in got["b"]] == [7]
    lines = out.getvalue().splitlines()
    assert f"== the table moved to node b ({b_address}): reconnecting" in lines, lines
    assert not [x for x in lines if "Moving" in x or x.startswith("!!")], lines


def test_a_moved_with_no_address_tries_the_same_node_again(monkeypatch):
    """``moved`` with ``address`` null (no live node serves the table yet: a
    takeover under way): the same node again after a moment."""
    import io
    import threading

    from websockets.sync.server import serve

    from qipai.cli import connect as client

    monkeypatch.setattr(client, "MOVED_WAIT_S", 0.0)
    conns = []

    def handler(ws):
        conns.append(ws.request.path)
        if len(conns) == 1:
            ws.send(json.dumps({"type": "moved", "table": "t", "node": None, "address": None}))
            ws.close(4307)
            return
        ws.send(json.dumps({"type": "closed", "totals": [0, 0, 0, 0]}))
        for _ in ws:
            pass

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        out = io.StringIO()
        url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/tables/t/ws?token=x"
        assert client.run(url, auto=True, out=out) == 0
        server.shutdown()
    assert conns == ["/tables/t/ws?token=x"] * 2
    assert out.getvalue().splitlines() == [
        "== the table's node stopped; another is taking it over: reconnecting in a moment",
        "== table closed · totals [0, 0, 0, 0]"]


def test_a_dropped_connection_is_opened_again_and_resynced(monkeypatch):
    """A connection that drops (its node killed: no close frame) is opened
    again; the welcome there prints only what was not printed yet, and an
    act sent before the drop and offered again is sent again."""
    import io
    import socket
    import threading

    from websockets.sync.server import serve

    from qipai.cli import connect as client

    monkeypatch.setattr(client, "RECONNECT_BASE_S", 0.0)
    table = load("guilin-mahjong").table(seed=1)
    view = json.loads(msgspec.json.encode(table.view(0)))
    welcome = {"type": "welcome", "table": "t", "spec": "guilin-mahjong", "hand": 0, "seat": 0,
               "seeded": True, "totals": [0, 0, 0, 0], "view": view}
    legal = [{"type": "discard", "seat": 0, "card": view["hand"][0]}]
    decide = {"type": "decide", "hand": 0, "seq": 3, "deadline": None, "legal": legal}
    got: list[list] = []

    def handler(ws):
        got.append([])
        ws.send(json.dumps({"type": "batch", "messages": [welcome, decide]}))
        for text in ws:
            got[-1].append(json.loads(text))
            if len(got) == 1:   # the first connection drops, the act unanswered
                ws.socket.shutdown(socket.SHUT_RDWR)
                return
            ws.send(json.dumps({"type": "ack", "hand": 0, "seq": 3}))
            ws.send(json.dumps({"type": "hand_ended", "hand": 0, "totals": [0, 0, 0, 0]}))

    with serve(handler, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        out = io.StringIO()
        url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/tables/t/ws?token=x"
        assert client.run(url, auto=True, hands=1, out=out) == 0
        server.shutdown()
    assert len(got) == 2 and got[0] == got[1] and [m["seq"] for m in got[1]] == [3]
    lines = out.getvalue().splitlines()
    assert "!! the connection dropped: reconnecting" in lines, lines
    assert sum(1 for x in lines if x.startswith("== table t ·")) == 1, lines   # not printed twice
    assert sum(1 for x in lines if x.startswith("   your hand:")) == 2, lines


def test_a_table_not_reached_again_is_given_up_with_status_1(monkeypatch):
    """A dropped connection whose server refuses every new one: after
    ``RECONNECT_S`` seconds the client says so and ends with status 1."""
    import io
    import socket
    import threading

    from websockets.sync.server import serve

    from qipai.cli import connect as client

    monkeypatch.setattr(client, "RECONNECT_BASE_S", 0.0)
    monkeypatch.setattr(client, "RECONNECT_S", 0.0)
    came: list[str] = []

    def refuse_again(conn, request):
        came.append(request.path)
        return conn.respond(503, "down\n") if len(came) > 1 else None

    def handler(ws):
        ws.socket.shutdown(socket.SHUT_RDWR)

    with serve(handler, "127.0.0.1", 0, process_request=refuse_again) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        out = io.StringIO()
        url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/tables/t/ws?token=x"
        assert client.run(url, auto=True, out=out) == 1
        server.shutdown()
    assert len(came) == 2
    assert out.getvalue().splitlines() == [
        "!! the connection dropped: reconnecting",
        "!! the connection is lost: no server answered in 0 s (InvalidStatus); the table "
        "goes on without you"]


def test_a_joint_deal_says_whom_its_first_hand_waits_for():
    """``seat_values`` with ``unseated`` (the first hand's commit phase, no
    clock): one line naming the players not sat down yet, once, and one
    when they all have; the seat commits its value meanwhile."""
    got = []

    def step(**kw):
        return json.dumps({"type": "seat_values", "table": "t", "hand": 0, "seat": 0,
                           "phase": "commit", "server_commitment": "ab" * 32,
                           "revealed": [], **kw})

    def handler(ws):
        ws.send(step(deadline=None, commitments={}, waiting=[0, 1], unseated=[1]))
        got.append(json.loads(ws.recv()))
        c = {"0": got[0]["commitment"]}
        ws.send(step(deadline=None, commitments=c, waiting=[1], unseated=[1]))
        ws.send(step(deadline=1e10, commitments=c, waiting=[1], unseated=[]))
        ws.send(json.dumps({"type": "closed", "totals": [0, 0, 0, 0]}))
        for _ in ws:
            pass

    lines = [x for x in _connect_to(handler).splitlines() if "waiting" in x or "sat" in x]
    assert got[0]["type"] == "seat_commit", got
    assert lines == [
        "== waiting for seat 1 to sit down: hand 1's deal waits for every player",
        "== every player has sat down: hand 1's values are exchanged",
    ], lines
