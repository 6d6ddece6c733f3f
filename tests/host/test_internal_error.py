"""A plugin (or the server) that fails while an action is played halts the
table, and no action is lost or half-written.

A house plugin on a real ``qipai serve`` raises in ``qipai_after_draw``
while ``HOUSE_BUG`` is set (the next seat's draw after the first discard's
claim window): the seat whose answer closes the window is refused
``InternalError`` with its ``seq``, every connection is told, ``/health``
answers 503 ``halted`` and nothing of the failed action is written; the
plugin's words reach the server's log only.  Restarted without the bug, the
server replays what was committed and offers that seat its decision again.
The exception does not escape the WebSocket handler, where the seat would
be told nothing, the connection dropped, and the table go on refusing
nothing.

In process (the store's queue stood in for): a failure after the action is
applied but before its write is submitted — the next hand's deal raising —
is refused ``InternalError`` and halts the table, so the action never
stays applied in memory, unwritten, with the table playing on from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import httpx
import pytest
from hostile import db_rows
from hostkit import PATIENCE, SyncSeat, create, start_server
from test_stalled_database import writes_by_hand

BUG = "house rule bug: seat 2 holds 5m"

PLUGIN = f'''
import os

from qipai.core.hookspecs import hookimpl


@hookimpl(tryfirst=True)
def qipai_after_draw(table, seat, card, tail):
    if os.environ.get("HOUSE_BUG") and table.state.actions:
        raise RuntimeError({BUG!r})
    return None
'''


def actions_of(db_url: str, tid: str) -> list[tuple]:
    return [r for r in db_rows(db_url)["qipai_actions"] if r[0] == tid]


def said_to(c) -> list[dict]:
    from qipai.host import protocol as P

    return [m for f in c.outbox if f is not None for m in P.messages(json.loads(f))]


def answer(decide: dict) -> dict:
    """A pass where there is one (a claim window), else the first legal action."""
    legal = decide["legal"]
    return next((a for a in legal if a["type"] == "pass"), legal[0])


@pytest.mark.slow   # two server starts per database
def test_a_plugin_that_raises_halts_the_table_and_loses_no_action(db_url, tmp_path,
                                                                  monkeypatch):
    plugin = tmp_path / "house_bug.py"
    plugin.write_text(PLUGIN)
    monkeypatch.setenv("HOUSE_BUG", "1")
    served = start_server(db_url, tmp_path, "--seed", "5", "--plugin", str(plugin))
    try:
        t = create(served, "guilin-mahjong", bots=[])
        seats = {int(s): SyncSeat(served, t["id"], tok, strict=False)
                 for s, tok in t["seats"].items()}
        for c in seats.values():
            c.until("welcome")
        committed = 0
        failed = None
        end = time.monotonic() + PATIENCE
        while failed is None and time.monotonic() < end:
            for c in seats.values():   # what each was sent so far
                with contextlib.suppress(TimeoutError):
                    while True:
                        c.recv(timeout=0.05)
            for seat, c in seats.items():   # the dealer's discard, then the window's answers
                d = c.decide
                if d is None or d["seq"] in c.answered:
                    continue
                c.answered.add(d["seq"])
                got = c.ask({"type": "act", "hand": d["hand"], "seq": d["seq"],
                             "action": answer(d)})
                if got["type"] == "ack":
                    committed += 1
                else:   # the halt is told to all first, then the act's refusal
                    failed = (seat, d, got if got.get("seq") is not None else
                              c.until("error", lambda m, d=d: m.get("seq") == d["seq"]))
                    break
        assert failed is not None, "the plugin's draw never ran"
        seat, d, got = failed
        assert got["code"] == "InternalError" and got["seq"] == d["seq"], got
        assert "not applied" in got["message"]
        assert committed >= 1
        for c in seats.values():   # every connection is told, once, without a seq
            with contextlib.suppress(TimeoutError):
                while True:
                    c.recv(timeout=0.2)
            told = [m for m in c.received if m["type"] == "error" and m.get("seq") is None]
            assert [m["code"] for m in told] == ["InternalError"], told
            assert "restarted" in told[0]["message"]
        with served.http() as h:
            health = h.get("/health")
            assert health.status_code == 503 and health.json()["status"] == "halted"
            assert "internal error" in health.json()["message"]
            assert t["id"] not in [x["id"] for x in h.get("/tables").json()]
            info = h.get(f"/tables/{t['id']}").json()
            assert info["halted"] == "InternalError"
        # a later act is refused too, before anything is applied
        again = seats[seat].ask({"type": "act", "hand": d["hand"], "seq": d["seq"],
                                 "action": answer(d)})
        assert again["code"] == "InternalError", again
        # the plugin's words go to the log (its traceback), never to a client
        said = "".join("".join(c.raw) for c in seats.values())
        assert BUG not in said and "RuntimeError" not in said
        for c in seats.values():
            c.close()
    finally:
        served.stop()
    log = served.log_path.read_text()
    assert BUG in log and "Traceback" in log and "halted" in log, log[-2000:]
    assert len(actions_of(db_url, t["id"])) == committed, "nothing of the failed action written"

    # restarted without the bug: what was committed is replayed, the failed
    # seat's decision is offered again and the hand plays on
    monkeypatch.delenv("HOUSE_BUG")
    again = start_server(db_url, tmp_path, "--seed", "5", "--plugin", str(plugin))
    try:
        c = SyncSeat(again, t["id"], t["seats"][str(seat)])
        welcome = c.until("welcome")
        actions = welcome["view"]["events"]
        assert welcome["hand"] == d["hand"]
        decide = c.next_decision()
        assert (decide["seq"], decide["legal"]) == (d["seq"], d["legal"]), (decide, d)
        others = [SyncSeat(again, t["id"], tok) for s, tok in t["seats"].items()
                  if int(s) != seat]
        got = c.ask({"type": "act", "hand": d["hand"], "seq": d["seq"], "action": answer(d)})
        assert got["type"] == "ack", got
        assert actions, "the welcome shows the hand so far"
        for o in others:
            o.close()
        c.close()
        with httpx.Client(base_url=again.url) as h:
            assert h.get("/health").status_code == 200
        assert len(actions_of(db_url, t["id"])) == committed + 1
    finally:
        again.stop()


def test_a_failure_before_the_write_is_submitted_halts_the_table_unwritten(tmp_path):
    """The hand's last action is applied, then the next hand's deal raises:
    the action is refused ``InternalError``, no write is submitted for it,
    the table is halted (every connection told at once) and refuses what
    comes next."""
    from qipai.host.errors import Refused
    from qipai.host.outbox import Conn

    async def main() -> None:
        async with writes_by_hand(tmp_path) as (t, writes):
            logs: list[str] = []
            t.server.log = logs.append
            conns = {s: Conn(seat=s) for s in range(4)}
            for c in conns.values():
                t.attach(c)

            def broken_deal(index, dealer):
                raise RuntimeError("the deal plugin broke")

            t.new_hand = broken_deal
            refused = None
            for _ in range(400):   # every decision: its first legal action (a hand ends)
                seat = min(t.decisions)
                d = t.decisions[seat]
                n = len(writes)
                try:
                    t.play(seat, d.legal[0], conn=conns[seat], seq=d.seq)
                except Refused as exc:
                    refused = exc
                    break
                assert len(writes) == n + 1
            assert refused is not None and refused.code == "InternalError", refused
            assert len(writes) == n, "nothing of the failed action is submitted"
            assert t.halted is not None and t.halted[0] == "InternalError"
            assert t.table.over   # in memory the hand ended: it is never served
            for w in writes:
                w.done(None)
            for c in conns.values():
                told = [m for m in said_to(c) if m["type"] == "error"]
                assert [m["code"] for m in told] == ["InternalError"], told
                assert "deal plugin broke" not in json.dumps(said_to(c))
            assert t.info().hands_done == 0 and t.info().hand == 0
            assert any("the deal plugin broke" in x and "Traceback" in x for x in logs), logs
            with pytest.raises(Refused) as later:
                t.play(seat, d.legal[0])
            assert later.value.code == "InternalError"

    asyncio.run(main())


#: House plugins for the in-process tests below, each misbehaving once the
#: hand has an action: a hook that raises the engine's own ``IllegalAction``
#: (its words name a concealed card), and an event that does not encode.
ILLEGAL_PLUGIN = '''
from qipai.core.errors import IllegalAction
from qipai.core.hookspecs import hookimpl


@hookimpl(tryfirst=True)
def qipai_after_draw(table, seat, card, tail):
    if table.state.actions:
        raise IllegalAction("house check: seat 2 holds 5m")
    return None
'''

BAD_EVENT_PLUGIN = '''
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Drew, Marked


class Note:   # a plugin's own object, put in an event by mistake
    pass


@hookimpl
def qipai_instant_payments(table, event):
    if type(event) is Drew and table.state.actions:
        table.state.events.append(Marked("house-note", card=Note()))
    return []
'''


def play_until_refused(t, conns, writes):
    """Every decision (a pass where there is one) until one is refused:
    ``(refusal, writes submitted before it)``; each write commits at once."""
    from qipai.host.errors import Refused

    for _ in range(400):
        seat = min(t.decisions)
        d = t.decisions[seat]
        a = next((x for x in d.legal if type(x).__name__ == "Pass"), d.legal[0])
        n = len(writes)
        try:
            t.play(seat, a, conn=conns[seat], seq=d.seq)
        except Refused as exc:
            return exc, n
        writes[-1].done(None)
    raise AssertionError("nothing was refused")


def test_a_legal_action_a_hook_refuses_halts_the_table_without_its_words(tmp_path):
    """A house hook raises ``IllegalAction`` while a *listed* action is
    applied (the engine lets a ``QipaiError`` through unwrapped): that is
    the plugin's fault, not the player's — ``InternalError``, the table
    halted, the hook's words (a concealed card) in the log only — never
    told to the seat as the refusal's reason ("house check: seat 2 holds
    5m"), and no timeout re-fires at once for ever."""
    plugin = tmp_path / "illegal_house.py"
    plugin.write_text(ILLEGAL_PLUGIN)

    async def main() -> None:
        from qipai.host.outbox import Conn

        async with writes_by_hand(tmp_path, plugins=(str(plugin),)) as (t, writes):
            logs: list[str] = []
            t.server.log = logs.append
            conns = {s: Conn(seat=s) for s in range(4)}
            for c in conns.values():
                t.attach(c)
            refused, n = play_until_refused(t, conns, writes)
            assert refused.code == "InternalError", (refused.code, refused.message)
            assert "5m" not in refused.message
            assert len(writes) == n and t.halted[0] == "InternalError"
            assert not any("5m" in json.dumps(said_to(c)) for c in conns.values())
            assert any("house check: seat 2 holds 5m" in x for x in logs), logs
            t._expire()   # a timeout now plays nothing and is not re-armed
            assert len(writes) == n and t._timer is None

    asyncio.run(main())


def test_an_event_that_does_not_encode_is_refused_before_its_write(tmp_path):
    """A house plugin puts an object of its own into an event: what the
    action caused could never be sent, so the action is refused
    ``InternalError`` before its write is submitted (nothing of it is
    written) and the table halts.  Submitted, the write would fail to
    encode at its commit, inside the store's writer, killing the writer
    task and with it every table's writes while ``/health`` said ``ok``."""
    plugin = tmp_path / "bad_event_house.py"
    plugin.write_text(BAD_EVENT_PLUGIN)

    async def main() -> None:
        from qipai.host.outbox import Conn

        async with writes_by_hand(tmp_path, plugins=(str(plugin),)) as (t, writes):
            t.server.log = lambda line: None
            conns = {s: Conn(seat=s) for s in range(4)}
            for c in conns.values():
                t.attach(c)
            refused, n = play_until_refused(t, conns, writes)
            assert refused.code == "InternalError", (refused.code, refused.message)
            assert len(writes) == n and t.halted[0] == "InternalError"
            for c in conns.values():
                assert [m["code"] for m in said_to(c) if m["type"] == "error"] == \
                    ["InternalError"]

    asyncio.run(main())


def test_a_timeouts_default_action_or_a_bot_that_raises_halts_the_table(tmp_path):
    """The default action of a timed-out seat, and a bot's decision, are
    made outside ``play``: either raising halts the table (every
    connection told), instead of ending the timer callback or the bots'
    task silently with the table stuck and ``/health`` saying ``ok``.  (A
    bot seat's own bot that raises is answered for by greedy —
    tests/host/test_bot_levels_inprocess.py —; here greedy raises too.)"""
    from qipai.host import clock, room
    from qipai.host.outbox import Conn

    async def main(where: str) -> None:
        async with writes_by_hand(tmp_path / where) as (t, writes):
            t.server.log = lambda line: None
            c = Conn(seat=0)
            t.attach(c)
            seat = min(t.decisions)
            if where == "timeout":
                t.decisions[seat].deadline = time.time() - 1   # its time is up
                t._expire()
            else:
                t.bots = [seat]
                t._started = True
                await t._run_bots()
            assert t.halted is not None and t.halted[0] == "InternalError", where
            assert [m["code"] for m in said_to(c) if m["type"] == "error"] == ["InternalError"]
            assert writes == []

    def broken(*args, **kw):
        raise RuntimeError("a bug: seat 2 holds 5m")

    class Broken:
        def __init__(self, *args, **kw):
            pass

        def act(self, view, legal):
            broken()

    # each patched where the table calls it
    for where, module, name, bad in (("timeout", clock, "default_action", broken),
                                     ("bot", room, "GreedyBot", Broken)):
        (tmp_path / where).mkdir()
        saved = getattr(module, name)
        setattr(module, name, bad)
        try:
            asyncio.run(main(where))
        finally:
            setattr(module, name, saved)


def test_a_welcome_that_fails_halts_the_table_and_tells_the_connection(tmp_path):
    """A new connection whose view cannot be built halts the table and is
    told so: the error does not escape the WebSocket handler with the
    connection still attached (the table would never pause again)."""

    async def main() -> None:
        from qipai.host.outbox import Conn

        async with writes_by_hand(tmp_path) as (t, writes):
            t.server.log = lambda line: None

            def broken(seat):
                raise RuntimeError("a bug: seat 2 holds 5m")

            t.view_of = broken
            c = Conn(seat=1)
            t.attach(c)
            assert t.halted is not None and t.halted[0] == "InternalError"
            assert [m["type"] for m in said_to(c)] == ["error"]
            assert writes == []

    asyncio.run(main())
