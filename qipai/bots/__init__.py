"""Random and greedy players, and helpers that play whole hands with them.

A bot (:class:`Bot`) is anything with ``act(view, legal) -> Action``: given
a seat's view (:class:`~qipai.core.views.SeatView`, what
:meth:`Table.view(seat) <qipai.core.table.Table.view>` gives — the same
redacted view a server client gets, docs/concepts/views) and the seat's
legal actions, it returns one of them.  A bot never sees the table itself,
so it cannot read another seat's concealed cards or the stock: the same
bot sits behind the server (:mod:`qipai.host`), the simulator
(:mod:`qipai.sim`) and an environment.  It decides with its own seeded RNG,
so a seed fixes a whole hand (the shuffle and every decision).
:func:`decide` asks a bot for a seat's decision at a table (what
:func:`run_to_end` does each turn).

* :class:`RandomBot` picks uniformly among the legal actions (but takes a
  win when one is offered, unless told not to).
* :class:`StrongBot` (``strong``, the ``hard`` level) plays as the greedy
  bot but weighs what a discard may cost: it keeps the greedy discard unless
  one as near ready is safer, and plays safe when far from ready against a
  seat that looks ready (docs/concepts/bots.md).
* :class:`GreedyBot` plays toward a win: per family, a strategy reads the
  hand and picks the action that keeps it closest to ready.  Mahjong uses
  向听 (:func:`qipai.families.mahjong.shanten.shanten`); zipai
  (:class:`ZipaiStrategy`) counts the cards still missing from a split into
  groups and the 胡数 that split would reach (:mod:`qipai.families.zipai.groups`).

The rooms: :mod:`qipai.bots.base` (the protocol, :func:`decide`, the random
bot), :mod:`qipai.bots.mahjong` and :mod:`qipai.bots.zipai` (each family's
search and strategy), :mod:`qipai.bots.greedy` (the greedy bot), :mod:`qipai.bots.strong`
(the strong bot, with :mod:`~qipai.bots.strong_mahjong` and
:mod:`~qipai.bots.strong_zipai`) and
:mod:`qipai.bots.play` (playing whole hands), :mod:`qipai.bots.registry`
(bots by name: built-in, ``module:Class``, ``qipai.bots`` entry points).
"""

from qipai.bots.base import Bot, RandomBot, decide, seat_bots
from qipai.bots.greedy import GreedyBot
from qipai.bots.mahjong import MahjongStrategy
from qipai.bots.play import BOT_KINDS, make_bots, play_hand, play_hands, run_to_end
from qipai.bots.strong import StrongBot
from qipai.bots.registry import BadBot, BotFault, bot_factory, bot_label, checked_act, known_bots
from qipai.bots.zipai import ZipaiStrategy, zipai_splits
from qipai.core.sessions import hand_seed  # the seeds play_hands deals from, where users found it

__all__ = [
    "Bot",
    "decide",
    "seat_bots",
    "RandomBot",
    "GreedyBot",
    "StrongBot",
    "MahjongStrategy",
    "ZipaiStrategy",
    "zipai_splits",
    "BOT_KINDS",
    "make_bots",
    "hand_seed",
    "play_hand",
    "play_hands",
    "run_to_end",
    "BadBot",
    "BotFault",
    "bot_factory",
    "bot_label",
    "checked_act",
    "known_bots",
]
