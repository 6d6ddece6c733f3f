"""Every hook a variant plugin may implement, grouped by stage.

A variant is a pluggy plugin (a module or object with ``@hookimpl``
functions) registered under the entry-point group ``qipai.variants``.  Each
:class:`~qipai.core.ruleset.Ruleset` has its own ``PluginManager`` holding
the variant, the shared family defaults it names (``QIPAI_BASE_PLUGINS``,
registered first, usually ``trylast``) and any house-rule plugins layered
over it, so two variants never answer the same call.

Stages: variant manifest · table setup · turn protocol · claims · winning ·
bonus flip · settlement · hosting.

The turn protocol the engine runs (:class:`qipai.core.table.Table`):

1. ``qipai_deck`` → the cards; the table shuffles them with its RNG (or takes
   an explicit deal); ``qipai_first_dealer`` picks the dealer if none given;
   ``qipai_deal`` splits the deck into hands and the stock.
2. ``qipai_start`` — the variant's opening (initial mandatory moves, 天胡 …);
   it ends by giving a seat the turn or opening a claim window.
3. A seat with the turn is asked ``qipai_turn_actions``; the action it
   chooses goes to ``qipai_apply_turn``.
4. A drawn card goes to ``qipai_after_draw``: into the hand (mahjong) or
   revealed and offered (zipai), with mandatory moves applied there.
5. A card entering play (a discard, a shown draw, a kong tile that may be
   robbed) opens a window: each seat is asked ``qipai_claim_actions``
   (``qipai_window_actions`` may answer for all seats at once); when
   all have answered, ``qipai_resolve_claims`` (using
   ``qipai_claim_priority``; not asked when all passed) picks what takes effect and
   ``qipai_apply_claims`` applies it (an empty list: nobody took the card).
6. Every event the engine records is shown to ``qipai_instant_payments``.
7. A win: ``qipai_win_check`` (legality), ``qipai_relations`` (standing
   relations), ``qipai_bonus_flip`` and ``qipai_settle`` (who pays whom),
   ``qipai_next_dealer``; the table ends with a :class:`~qipai.core.model.Result`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    import random

    from qipai.core.model import (
        Action, Deal, Event, Flip, FlipFn, HandEnd, Meld, Payment, Settlement, WinClaim, WinEval,
        WinReading, Window,
    )
    from qipai.core.ruleset import Manifest
    from qipai.core.table import Table

PROJECT = "qipai"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# ---------------------------------------------------------------- manifest


@hookspec(firstresult=True)
def qipai_manifest() -> Manifest:
    """The variant's identity: name, title, players, card system, options Struct.

    Returns:
        a :class:`~qipai.core.ruleset.Manifest`.  ``firstresult``.

    Use in variant plugins: exactly one plugin of a ruleset answers it.
    """


# ---------------------------------------------------------------- table setup


@hookspec(firstresult=True)
def qipai_deck(options: Any) -> list[int]:
    """The full deck in canonical order (kinds; mahjong 136, zipai 80).

    Args:
        options: the ruleset's options Struct.

    Returns: list of kinds.  ``firstresult``.  A table checks the answer
    (cards of the game, none beyond its copies, not empty) the first time
    the ruleset deals such a deck; else :class:`~qipai.core.errors.PluginError`.
    """


@hookspec(firstresult=True)
def qipai_first_dealer(options: Any, rng: random.Random) -> int:
    """The first hand's dealer (seat), drawn with the table's RNG if random.

    Returns: a seat.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_deal(deck: list[int], dealer: int, options: Any) -> Deal:
    """Split a shuffled deck into hands and the stock (mahjong D-M1, zipai D-ZP1).

    Args:
        deck: every card, shuffled (kinds).
        dealer: the dealer's seat.

    Returns: a :class:`~qipai.core.model.Deal`.  ``firstresult``.  The
    table checks it: for ``dealer``, one hand per seat, the hands and wall
    exactly ``deck`` (each card once), shown cards from the dealer's hand,
    and ``qipai_check_deal`` content; else
    :class:`~qipai.core.errors.PluginError` naming the plugin.  The family
    flows' own deals are marked :func:`~qipai.core.answers.conserves_cards`
    and not checked again.
    """


@hookspec(firstresult=True)
def qipai_check_deal(deal: Deal, options: Any) -> str | None:
    """Check an explicit deal given by a host, or a ``qipai_deal`` answer
    (hand sizes, stock size).

    Returns: a one-line description of what is wrong, or None if the deal
    is fine.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_new_state(options: Any) -> Any:
    """A fresh instance of the variant's own table state (``TableState.extra``).

    Returns: a msgspec Struct (its type is ``Manifest.state_type``), or None.
    ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_setup_position(table: Table, context: dict[str, Any]) -> bool:
    """Set the variant's bookkeeping for a table set up mid-hand
    (:meth:`~qipai.core.table.Table.from_position`; ``qipai_start`` is not
    called for it) from ``context``, e.g.
    zipai 过张 ``{"passed": [{"seat": 1, "card": 7, "action": "peng"}]}``
    (cards as kinds).

    Returns: True when handled.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_start(table: Table) -> bool:
    """Open the hand after the deal: initial mandatory moves, 天胡 …, then
    give the first seat its turn (``table.give_turn``) or end the hand.

    Returns: True when handled.  ``firstresult``.
    """


# ---------------------------------------------------------------- turn protocol


@hookspec(firstresult=True)
def qipai_after_draw(table: Table, seat: int, card: int, tail: bool) -> bool:
    """What happens to a card ``seat`` just drew (already off the stock).

    Mahjong: it joins the hand and the seat gets the turn.  Zipai: a 扫 is
    laid face down unseen, or the card is shown and a window opens.

    Args:
        tail: drawn from the tail (a kong replacement).

    Returns: True when handled.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_turn_actions(table: Table, seat: int) -> list[Action]:
    """The actions of the seat holding the turn (discard X, angang X, zimo …).

    Returns: every legal action (the engine accepts only these).  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_apply_turn(table: Table, action: Action) -> bool:
    """Apply the turn action ``action`` (already checked legal).

    Returns: True when handled.  ``firstresult``.
    """


# ---------------------------------------------------------------- claims


@hookspec(firstresult=True)
def qipai_claim_actions(table: Table, seat: int, window: Window) -> list[Action]:
    """What ``seat`` may do with the card in ``window``.

    Returns: the legal actions, ``Pass`` included when passing is allowed.  An
    empty list or ``[Pass]`` means the seat is not asked; a list without
    ``Pass`` is compulsory, and a single compulsory action is applied by the
    engine itself (放炮必胡).  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_window_actions(table: Table, window: Window) -> dict[int, list[Action]] | None:
    """Every seat's claim actions on the card in ``window`` at once — a
    shortcut a family may give for speed.

    Returns: seat → exactly what ``qipai_claim_actions`` would return for
    that seat (seats it would give ``[]`` may be left out), or None to let
    the engine ask ``qipai_claim_actions`` seat by seat.  An implementation
    must return None whenever another plugin implements
    ``qipai_claim_actions`` (the mahjong flow checks this per table).
    ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_claim_priority(table: Table, window: Window, action: Action) -> int:
    """Rank of a claim: higher wins (mahjong 胡 3 > 碰/杠 2 > 吃 1).

    Returns: an int.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_resolve_claims(
    table: Table, window: Window, declared: dict[int, Action]
) -> list[Action]:
    """Which declared claims take effect (several 胡 in mahjong 一炮多响;
    the nearest winner in zipai D-ZP3).

    Args:
        declared: every asked seat's answer, ``Pass`` included.

    Returns: the claims that take effect; [] when the card goes unclaimed.
    Not asked when every answer is a ``Pass`` (or nobody was asked): then
    nothing takes effect.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_apply_claims(table: Table, window: Window, taken: list[Action]) -> bool:
    """Apply the resolved claims, or (``taken == []``) let the card go.

    Returns: True when handled.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_explain_illegal(table: Table, action: Action) -> str | None:
    """A one-line reason why ``action`` is not legal now (e.g. "chi only from
    the previous seat"), or None to let the engine give a generic one.
    ``firstresult``.
    """


# ---------------------------------------------------------------- winning


@hookspec(firstresult=True)
def qipai_win_check(
    claim: WinClaim, how: str, dealer: int, from_seat: int | None, options: Any
) -> WinEval:
    """Is ``claim`` a win, and as what.

    Args:
        claim: the hand before the winning card, melds, the card, flags.
        how: the variant's word (mahjong ``zimo dianpao qianggang``; zipai
            ``zimo fangpao pinghu``).
        dealer: the dealer's seat.  from_seat: whose card it is.

    Returns: a :class:`~qipai.core.model.WinEval`.  ``firstresult``.

    Raises:
        BadCards: impossible input (a fifth copy, a wrong size).

    Use in variant plugins: the engine offers 胡/自摸 from this answer, and the
    variant's ``qipai_settle`` values the same hand again; a house plugin that
    changes what wins must change the settlement to match.
    """


@hookspec(firstresult=True)
def qipai_readings(
    claim: WinClaim, how: str, dealer: int, from_seat: int | None, options: Any
) -> list[WinReading]:
    """Every reading of a win that ``qipai_win_check`` considers, the one
    it pays marked ``paid`` (D-M4) — for explanations (``qipai score``),
    never called in play.  Optional: without it a hand calculator shows only
    the reading paid.

    Args: as ``qipai_win_check``.

    Returns: a list of :class:`~qipai.core.model.WinReading` (empty when the
    hand does not win).  ``firstresult``.

    Raises:
        BadCards: impossible input, as ``qipai_win_check``.
    """


@hookspec(firstresult=True)
def qipai_waits(hand: Sequence[int], melds: Sequence[Meld], options: Any) -> list[int]:
    """The kinds that complete ``hand`` (13 tiles for mahjong with no melds),
    leaving out kinds whose every copy is already in the hand and melds.

    Returns: sorted kinds.  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_relations(table: Table) -> dict[str, list[list[int]]]:
    """The standing relations between seats now (``{"hubao": [[0, 1]]}``).

    Returns: relation name → seat groups.  ``firstresult``.
    """


# ---------------------------------------------------------------- bonus flip


@hookspec(firstresult=True)
def qipai_bonus_flip(
    holding: Sequence[int], tile: int | None, stock: Sequence[int], options: Any
) -> Flip:
    """One winner's bonus flip (桂林 翻醒, zipai 醒).

    Args:
        holding: every card of the winning hand, melds included.
        tile: the winning card.
        stock: what is left to flip, head first.

    Returns: a :class:`~qipai.core.model.Flip` (cards used, 醒数).  ``firstresult``.
    """


# ---------------------------------------------------------------- settlement


@hookspec(firstresult=True)
def qipai_settle(end: HandEnd, options: Any, bonus_flip: FlipFn) -> Settlement:
    """Who pays whom (子) for the hand's wins; must sum to zero.

    Args:
        end: the hand's end.
        options: the ruleset's options.
        bonus_flip: ``bonus_flip(holding, tile, stock) -> Flip``: the
            ruleset's ``qipai_bonus_flip`` (a house plugin's override
            included), its answer checked.  A settlement with a bonus flip
            flips through it, not through its own function, so that an
            override is what the hand is paid by (桂林麻将 and 桂林字牌 do;
            广西麻将 has no flip).  An implementation may leave the argument
            out; a caller of the hook itself (``ruleset.hook.qipai_settle``
            — :meth:`Ruleset.settle <qipai.core.ruleset.Ruleset.settle>` and
            ``Table.settle`` pass it) must give it, e.g.
            ``bonus_flip=ruleset.bonus_flip``.

    Returns: a :class:`~qipai.core.model.Settlement`.  ``firstresult``.
    """


@hookspec
def qipai_instant_payments(table: Table, event: Event) -> list[Payment]:
    """Payments due at once because of ``event`` (kong fees, 追牌).

    Not ``firstresult``: every plugin's payments are made (a house-rule
    plugin can add its own).  Returns: a list of payments, [] if none.
    """


@hookspec(firstresult=True)
def qipai_next_dealer(
    table: Table, end: str, winners: Sequence[int], from_seat: int | None
) -> int:
    """Who deals the next hand.

    Args:
        end: ``"hu"`` or ``"huangzhuang"``.  from_seat: the discarder (or
            robbed kong maker, D-M8) of a win by discard, else None.

    Returns: a seat.  ``firstresult``.
    """



# ---------------------------------------------------------------- hosting


@hookspec(firstresult=True)
def qipai_default_action(table: Table, seat: int) -> Action | None:
    """The action a host plays for ``seat`` when it does not decide in time
    (``qipai serve``'s turn timeout).

    Returns: one of ``table.legal_actions(seat)``, or None to leave it to
    the generic default (:func:`qipai.core.timeouts.default_action`: pass
    a claim; on a turn, discard the card just drawn if it may be
    discarded, else the hand's last card in sort order that may be, else
    the first legal action).  ``firstresult``.
    """


@hookspec(firstresult=True)
def qipai_rake(result: Any, stake: int, rake: Any, gains: list[int],
               options: Any) -> list[Any] | None:
    """A house plugin's rake for one hand of a table with a stake (``qipai
    serve``, ``POST /tables`` ``stake``), in place of the table's rule.

    Args:
        result: the hand's :class:`~qipai.core.model.Result` (子).
        stake: minor units per 子.
        rake: the table's rule (:class:`~qipai.core.money.Rake`), or None.
        gains: per seat, its net of the hand in money (``net × stake``).

    Returns: the rake lines, a list of :class:`~qipai.core.money.RakeLine`
    (or ``{"payer": seat, "amount": minor_units}`` dicts), each paid to the
    house; or None for the table's rule (:func:`qipai.core.money.rule_rake`).
    ``firstresult``.  The answer is checked: each amount an int ≥ 0 from a
    seat at the table, a seat's lines together no more than its gain; else
    :class:`~qipai.core.errors.PluginError` naming what is wrong.
    """
