"""A served table's bot seats by level (:mod:`qipai.host.levels`), in
process: the levels offered (the defaults, the operator's ``--bot``), the
level kept in the table's row, another's bot asked off the event loop, and
a bot that fails a decision logged and answered for by greedy."""

from __future__ import annotations

import asyncio
import threading

import msgspec
import plugbot
import pytest

from qipai.bots import registry
from qipai.host import protocol as P
from qipai.host.levels import BadLevel, BotLevels, parse_bot_options


def test_the_default_levels_and_the_operators():
    levels = BotLevels()
    assert levels.names[:2] == ["easy", "normal"]
    assert levels.bot_names["normal"] == "greedy" and levels.bot_names["easy"] == "random"
    mine = BotLevels(parse_bot_options(["pro=plugbot:FirstBot", "normal=random"]))
    assert mine.check("pro") == "pro" and mine.bot_names["normal"] == "random"
    with pytest.raises(BadLevel, match="levels are: easy, normal"):
        mine.check("plugbot:FirstBot")   # a client names a level, never a module


def test_hard_is_the_strong_bot_once_there_is_one(monkeypatch):
    monkeypatch.setitem(registry.BUILTIN, "strong", plugbot.FirstBot)   # its stand-in
    levels = BotLevels()
    assert levels.check("hard") == "hard" and not levels.missing
    assert isinstance(levels.make("hard", __import__("random").Random(1), None, 2),
                      plugbot.FirstBot)


def test_a_default_level_whose_bot_is_not_installed_says_so(monkeypatch):
    monkeypatch.setitem(registry.LEVELS, "expert", "nosuchstrongbot")
    levels = BotLevels()
    with pytest.raises(BadLevel, match="level 'expert' is played by the bot 'nosuchstrongbot', "
                                       "which is not installed"):
        levels.check("expert")


def test_a_bot_whose_sit_raises_is_a_bad_bot_not_a_crash():
    # (HostedTable seats greedy instead of a BadBot: a table was refused with a 500)
    levels = BotLevels(parse_bot_options(["pro=plugbot:SitRaisingBot"]))
    with pytest.raises(registry.BadBot, match="could not sit at seat 2 .RuntimeError: plugbot"):
        levels.make("pro", __import__("random").Random(1), None, 2)


@pytest.mark.parametrize("options, words", [
    (["pro=nosuch:Bot"], ["--bot pro=nosuch:Bot", "does not import"]),
    (["hard=plugbot:NoAct"], ["--bot hard=plugbot:NoAct", "no act(view, legal)"]),
    (["Pro Level=greedy"], ["a level's name is"]),
    (["pro"], ["write NAME=BOT"]),
    (["pro=greedy", "pro=random"], ["given twice"]),
])
def test_a_bad_operator_bot_is_refused(options, words):
    with pytest.raises(BadLevel) as info:
        BotLevels(parse_bot_options(options))
    for w in words:
        assert w in str(info.value)


def _watched_server(tmp_path, bot_options):
    """A server offering ``bot_options`` (``--bot`` values), its events
    noted in ``seen`` and ``ended`` set at the first ``hand_ended``.  Made
    inside the test's event loop."""
    from qipai.server.state import Server

    server = Server(f"sqlite:///{tmp_path}/q.db", seed=5, quiet=True,
                    bot_levels=BotLevels(parse_bot_options(bot_options)))
    seen: list[tuple[str, dict]] = []
    ended = asyncio.Event()
    emit = server.events.emit

    def watch(event: str, **fields) -> None:
        seen.append((event, fields))
        if event == "hand_ended":
            ended.set()
        emit(event, **fields)

    server.events.emit = watch
    return server, seen, ended


def test_levels_are_kept_a_failing_bot_is_answered_by_greedy_off_the_loop(tmp_path):
    """An all-bot table: seat 0's bot raises at every decision (logged
    ``bot_fault``, greedy plays for it), seat 3's is asked in a thread; the
    hand ends; the row keeps each seat's level, and a row without levels
    (made before them) is normal at every bot seat."""
    from qipai.host.outbox import Conn
    from qipai.server.state import BadBots

    async def main() -> None:
        server, seen, ended = _watched_server(
            tmp_path, ["weird=plugbot:RaisingBot", "slow=plugbot:ThreadBot"])
        try:
            with pytest.raises(BadBots, match="level 'plugbot:FirstBot' is not offered"):
                await server.create(P.CreateTable(bots=[P.BotSeat(seat=1,
                                                                  level="plugbot:FirstBot")]))
            t, _ = await server.create(P.CreateTable(bots=[
                P.BotSeat(seat=0, level="weird"), 1, 2, P.BotSeat(seat=3, level="slow")]))
            assert t.info().levels == {"0": "weird", "1": "normal", "2": "normal", "3": "slow"}
            plugbot.THREADS.clear()
            t.attach(Conn(seat=None))   # a spectator: the bots play
            await asyncio.wait_for(ended.wait(), 60)
            assert t.halted is None and t.hands_done >= 1
            faults = [f for e, f in seen if e == "bot_fault"]
            assert faults and {f["seat"] for f in faults} == {0}
            assert faults[0]["bot"] == "plugbot:RaisingBot" and faults[0]["bot_level"] == "weird"
            assert "plugbot gave up" in faults[0]["error"]
            assert plugbot.THREADS and threading.main_thread().name not in plugbot.THREADS
            stored = msgspec.json.decode(server.store.table(t.id)["bot_levels"])
            assert stored == {"0": "weird", "1": "normal", "2": "normal", "3": "slow"}
        finally:
            server.store.close()

    asyncio.run(main())


def test_a_bot_that_hangs_is_answered_by_greedy_and_holds_one_thread(tmp_path, monkeypatch):
    """Seat 0's bot never answers: after BOT_THINK_S greedy answers for it
    (one ``bot_fault`` a hand, "no answer within"), and while its thread is
    stuck the seat's next decisions go to greedy at once — the hand ends."""
    from qipai.host import seats as seats_mod
    from qipai.host.outbox import Conn

    monkeypatch.setattr(seats_mod, "BOT_THINK_S", 0.2)
    plugbot.RELEASE.clear()

    async def main() -> None:
        server, seen, ended = _watched_server(tmp_path, ["stuck=plugbot:HangingBot"])
        try:
            t, _ = await server.create(P.CreateTable(bots=[P.BotSeat(seat=0, level="stuck"),
                                                           1, 2, 3]))
            t.attach(Conn(seat=None))
            await asyncio.wait_for(ended.wait(), 60)
            faults = [f for e, f in seen if e == "bot_fault"]
            assert len({(f["hand"], f["seat"]) for f in faults}) == len(faults) >= 1
            assert "no answer within 0.2 s" in faults[0]["error"]
            assert list(t.thinking) == [0] and not t.thinking[0].done()
        finally:
            plugbot.RELEASE.set()
            server.store.close()

    asyncio.run(main())
