"""What a bot is and how it is asked: the :class:`Bot` protocol,
:func:`decide`, :func:`seat_bots`, the :class:`RandomBot`, and
:func:`seen_kinds` (what a seat's view shows of each kind), which the
strategies of every family read.

A bot (:class:`Bot`) is anything with ``act(view, legal) -> Action``: given
a seat's view (:class:`~qipai.core.views.SeatView`, what
:meth:`Table.view(seat) <qipai.core.table.Table.view>` gives — the same
redacted view a server client gets, docs/concepts/views) and the seat's
legal actions, it returns one of them.  A bot never sees the table itself,
so it cannot read another seat's concealed cards or the stock: the same
bot sits behind the server (:mod:`qipai.host`), the simulator
(:mod:`qipai.sim`) and an environment.  It decides with its own seeded RNG,
so a seed fixes a whole hand (the shuffle and every decision).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from qipai.bots.registry import BotFault, bot_label
from qipai.core.model import Action, Hu, Zimo
from qipai.core.views import SeatView

__all__ = ["Bot", "RandomBot", "decide", "seat_bots", "seen_kinds"]


class Bot(Protocol):
    """A player: picks one of a seat's legal actions from the seat's view.

    ``act(view, legal) -> Action``:

    * ``view`` — the seat's :class:`~qipai.core.views.SeatView`
      (``table.view(seat)``; its ``events`` may be left out,
      ``table.view(seat, events=False)``, as :func:`decide` does).  It
      holds no other seat's concealed cards, no face-down meld card and not
      the stock's order (docs/concepts/views), so a bot cannot peek.
    * ``legal`` — the seat's legal actions (``table.legal_actions(seat)``,
      the same as ``view.legal``); the bot returns one of them.

    Optional parts a host uses when the bot has them:

    * ``sit(ruleset, seat)`` — called once when the bot takes a seat, before
      its first ``act``: the rules of the table (public: every player knows
      the house rules) and its seat.  :class:`~qipai.bots.GreedyBot` needs it (its
      strategy follows the ruleset's family and options).
    * ``blind = True`` (a class attribute) — the bot decides on ``legal``
      alone; a host may pass ``view=None`` and save building the view
      (:class:`RandomBot`).

    The same bot object serves the server (:mod:`qipai.host` bot seats), the
    simulator (:mod:`qipai.sim`, through :func:`~qipai.bots.run_to_end`) and an
    environment.  ``choose(table, seat)`` on the bots here is a shortcut for
    :func:`decide` ``(bot, table, seat)``, kept for tests and scripts.
    """

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action: ...


def seat_bots(ruleset: Any, bots: Sequence[Any]) -> None:
    """Tell each bot (one per seat, in seat order) its table's ruleset and
    its seat: ``bot.sit(ruleset, seat)`` for the bots that have ``sit``.

    Raises:
        BotFault: a bot's ``sit`` raised (naming the bot and its seat).
    """
    for seat, bot in enumerate(bots):
        sit = getattr(bot, "sit", None)
        if sit is not None:
            try:
                sit(ruleset, seat)
            except (Exception, SystemExit) as exc:
                raise BotFault(bot_label(bot), seat, -1, cause=exc) from exc


def decide(bot: Any, table: Any, seat: int) -> Action:
    """``bot``'s decision for ``seat`` at ``table``: ``bot.act(view, legal)``
    with the seat's view (events left out; None for a ``blind`` bot) and
    legal actions.  The bot must have been seated (:func:`seat_bots`) if
    it needs the rules.

    Raises:
        ValueError: the seat has nothing to decide.
    """
    legal = table.legal_actions(seat)
    if not legal:
        raise ValueError(f"seat {seat} has nothing to decide")
    view = None if getattr(bot, "blind", False) else table.view(seat, events=False)
    return bot.act(view, legal)


_WIN_TYPES = frozenset({Hu, Zimo})


class RandomBot:
    """Uniformly random among the legal actions.

    Args:
        rng: the bot's RNG (default: a fresh unseeded ``random.Random``).
        always_win: take a 胡/自摸 whenever one is offered; without it hands
            rarely end in a win.
    """

    #: Decides on the legal actions alone: hosts may pass ``view=None``.
    blind = True

    def __init__(self, rng: random.Random | None = None, *, always_win: bool = True) -> None:
        self.rng = rng or random.Random()
        self.always_win = always_win

    def sit(self, ruleset: Any, seat: int) -> None:
        """Nothing to learn: any rules, any seat."""

    def act(self, view: SeatView | None, legal: Sequence[Action]) -> Action:
        """One of ``legal``: a win if offered (``always_win``), else uniform.

        Raises:
            ValueError: ``legal`` is empty.
        """
        if not legal:
            raise ValueError("nothing to decide: no legal action")
        if self.always_win and not _WIN_TYPES.isdisjoint(map(type, legal)):
            return next(a for a in legal if type(a) in _WIN_TYPES)
        return self.rng.choice(legal)

    def choose(self, table: Any, seat: int) -> Action:
        """:func:`decide` ``(self, table, seat)`` (a shortcut for tests and scripts)."""
        return decide(self, table, seat)


def seen_kinds(view: SeatView, n_kinds: int) -> list[int]:
    """Copies of each kind the viewer can see: its hand, every shown meld
    card and every discard.  A meld partly face down whose shown cards are
    all one kind (a Guilin 暗杠 shows its top tile) counts every card as
    that kind; a meld wholly face down (a 广西 暗杠, a zipai 扫) counts none."""
    seen = [0] * n_kinds
    for k in view.hand:
        seen[k] += 1
    for melds in view.melds:
        for m in melds:
            cards = m.cards
            if None in cards:
                shown = [k for k in cards if k is not None]
                if not shown or any(k != shown[0] for k in shown):
                    cards = shown  # unknown kinds: only the shown ones count
                else:
                    cards = [shown[0]] * len(cards)
            for k in cards:
                seen[k] += 1
    for ds in view.discards:
        for k in ds:
            seen[k] += 1
    return seen
