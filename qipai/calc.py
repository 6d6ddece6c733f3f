"""A hand calculator: is this hand a win, read how, worth what, paid by whom.

:func:`score` takes a hand in the variant's notation and the win's context
(how it was won, the seats, the melds, the cards to flip) and answers in one
:class:`Score`: whether it wins, every reading the win check considers with
the one paid marked (mahjong-common.md D-M4: the reading that pays the
winner most; 桂林字牌: the split with the most 胡数), the patterns, the
value, the bonus flip and the payments.  ``qipai score`` prints it.

Nothing is scored here: the answer comes from the variant's own hooks —
``qipai_win_check`` (wins, patterns, 胡数), ``qipai_readings`` (the readings)
and ``qipai_settle`` with a :class:`~qipai.core.model.HandEnd` (the flip and
the payments), exactly as the table settles a hand in play and as the
conformance runner checks ``settle`` cases.

How the input is read (choices of this calculator, not of the rules):

- ``hand`` is the concealed hand **with** the winning card; ``tile`` names
  the winning card, which must be in it (default: the last card written).
  ``tile="none"`` means a win without a winning card (zipai 三笼五坎, or a
  win right after one's own 扫, D-ZP4): the whole hand is concealed.
- ``how`` defaults to ``"zimo"``; any other win comes from ``from_seat``,
  by default the seat before the winner (the one whose discard a 吃 takes).
- A meld is ``"KIND CARDS [from SEAT]"``: ``"peng 555p"``, ``"chi 123s"``,
  ``"angang E"`` (one card of a kong, 碰 or 扫 stands for all of them, as in
  the conformance cases), ``"peng x10 from 2"``.  吃, 碰, 明杠, 蓄杠 and 开招
  are claimed, by default from the seat before the winner; 暗杠, 扫, 过扫
  and 扫穿 are the winner's own.
- ``flip`` is the stock the bonus flip takes its cards from, head first.
  Without it nothing is flipped (no 醒): the calculator switches the
  variant's ``max_flips`` option to 0, so that 桂林字牌 does not read the
  empty stock as 海底胡.  ``flip=""`` is an empty stock, as the rules read
  it (桂林字牌: 海底胡 flips the winning card; 桂林麻将: no 醒, D-GL8).

Raises (every function here): :class:`~qipai.core.errors.BadNotation` for a
card that is not a card, :class:`~qipai.core.errors.BadCards` for an
impossible hand (a fifth copy, a wrong number of cards, a bad meld, a
context that contradicts itself), :class:`~qipai.core.errors.UnknownVariant`
and :class:`~qipai.core.errors.BadOption` for the variant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from qipai.core.cards import check_copies
from qipai.core.errors import BadCards, BadNotation
from qipai.core.model import HandEnd, Meld, Payment, WinClaim, WinReading, net_of
from qipai.core.ruleset import Ruleset, load

__all__ = ["Score", "parse_melds", "score", "score_ruleset"]

#: Meld kinds a seat claims from another's card (the others are its own).
CLAIMED = ("chi", "peng", "minggang", "jiagang", "kaizhao")
#: Meld kinds whose cards are all one kind: one card may stand for the meld.
_SIZES = {"peng": 3, "sao": 3, "guosao": 3, "minggang": 4, "jiagang": 4, "angang": 4,
          "saochuan": 4, "kaizhao": 4}
_MELD = re.compile(r"^\s*([a-z]+)\s+(.*?)(?:\s+from\s+(\d+))?\s*$")


class Score(msgspec.Struct, frozen=True):
    """The answer of :func:`score`.

    Attributes:
        variant: the ruleset spec (name and options that differ from the defaults).
        hand: the concealed hand with the winning card, in notation.
        tile: the winning card (None: a win without one).
        melds: the melds, as ``"kind cards from seat"``.
        how, seat, dealer, from_seat, flags: the win's context.
        wins: whether the hand wins (hook ``qipai_win_check``).
        readings: every reading considered, the one paid marked ``paid``
            (hook ``qipai_readings``; empty when the hand does not win, or
            the variant does not list them).
        patterns: the pattern ids paid (values, multipliers, 名堂).
        hu: zipai 胡数 of the reading paid (None for mahjong).
        value: what the reading paid is worth to the winner before the bonus
            flip and liabilities (None when the variant lists no readings).
        flipped: the cards the bonus flip turned over, in notation.
        xing: 醒数 counted (None when the variant has no bonus flip).
        flip: whether a bonus flip was asked for (``flip`` given).
        payments: the settlement (:class:`~qipai.core.model.Payment`: ``payer``,
            ``payee``, ``amount``, ``reason`` and ``why``, the breakdown as a
            list of terms); empty when the hand does not win.
        net: gain per seat (sums to zero).
        note: why the hand does not win, or an empty string.
    """

    variant: str
    hand: str
    tile: str | None
    melds: list[str]
    how: str
    seat: int
    dealer: int
    from_seat: int | None
    flags: list[str]
    wins: bool
    readings: list[WinReading]
    patterns: list[str]
    hu: int | None
    value: int | None
    flipped: list[str]
    xing: int | None
    flip: bool
    payments: list[Payment]
    net: list[int]
    note: str = ""


def parse_melds(rs: Ruleset, texts: Iterable[str], seat: int) -> tuple[Meld, ...]:
    """Melds from ``"KIND CARDS [from SEAT]"`` texts (several per text,
    separated by ``;``), as the module doc says.

    Raises:
        BadNotation: a meld that is not of that form, or bad cards.
        BadCards: a seat that is not at the table.
    """
    n = rs.manifest.players
    out = []
    for text in texts:
        for part in filter(str.strip, text.split(";")):
            m = _MELD.match(part)
            if m is None:
                raise BadNotation(f"bad meld {part.strip()!r}: write KIND CARDS [from SEAT], "
                                  f"e.g. 'peng 555p' or 'chi x1 x2 x3 from 2'")
            kind, cards_text, src = m.group(1), m.group(2), m.group(3)
            cards = rs.parse(cards_text)
            if not cards:
                raise BadNotation(f"meld {part.strip()!r} has no cards")
            size = _SIZES.get(kind)
            if size is not None and len(cards) == 1:
                cards = cards * size
            if src is not None:
                from_seat: int | None = int(src)
                if not 0 <= from_seat < n or from_seat == seat:
                    raise BadCards(f"meld {part.strip()!r}: seat {from_seat} is not another "
                                   f"seat of the {n} at the table")
                if kind not in CLAIMED:
                    raise BadCards(f"a {kind} is the seat's own, not claimed from seat {src}")
            else:
                from_seat = (seat - 1) % n if kind in CLAIMED else None
            claimed = cards[0] if from_seat is not None and kind != "chi" else None
            out.append(Meld(kind=kind, cards=tuple(cards), from_seat=from_seat,
                            claimed=claimed))
    return tuple(out)


def score(variant: str, hand: str | Sequence[int], *, tile: str | int | None = None,
          how: str = "zimo", melds: Iterable[str] = (), seat: int = 0, dealer: int = 0,
          from_seat: int | None = None, flags: Iterable[str] = (),
          flip: str | Sequence[int] | None = None,
          relations: Mapping[str, list[list[int]]] | None = None,
          options: dict[str, Any] | None = None, plugins: Sequence[Any] = ()) -> Score:
    """Score one hand of ``variant`` (a name, with options if wanted:
    ``"guilin-mahjong(max_flips=1)"``).

    Args:
        hand: the concealed hand **with** the winning card, in the variant's
            notation (``"11223344556677m"``, ``"x1 x2 x3 …"``) or as kinds.
        tile: the winning card (one of ``hand``; default its last card;
            ``"none"``: a win without a winning card).
        how: the variant's word (mahjong ``zimo dianpao qianggang``; zipai
            ``zimo fangpao pinghu``).
        melds: ``"KIND CARDS [from SEAT]"`` texts (module doc).
        seat: the winner.  dealer: the dealer's seat.
        from_seat: the seat that gave the card (default: the seat before
            the winner; None for a zimo).
        flags: context flags (``gangshangpao``, ``haidi``, ``tianhu`` …).
        flip: the stock to flip from, head first; None: no bonus flip.
        relations: standing relations (``{"hubao": [[0, 1]]}``).
        options: more options for the variant.
        plugins: house-rule plugins layered over the variant (modules or
            objects with ``@hookimpl`` functions), as ``load`` takes them:
            a house 翻醒 is the flip the hand is paid by.

    Returns:
        A :class:`Score`.

    Raises:
        As the module doc says.
    """
    rs = load(variant, options, plugins=list(plugins))
    return score_ruleset(rs, hand, tile=tile, how=how, melds=melds, seat=seat, dealer=dealer,
                         from_seat=from_seat, flags=flags, flip=flip, relations=relations)


def score_ruleset(rs: Ruleset, hand: str | Sequence[int], *, tile: str | int | None = None,
                  how: str = "zimo", melds: Iterable[str] = (), seat: int = 0,
                  dealer: int = 0, from_seat: int | None = None, flags: Iterable[str] = (),
                  flip: str | Sequence[int] | None = None,
                  relations: Mapping[str, list[list[int]]] | None = None) -> Score:
    """:func:`score` with a loaded ruleset (house-rule plugins included)."""
    n = rs.manifest.players
    for name, s in (("seat", seat), ("dealer", dealer)):
        if type(s) is not int or not 0 <= s < n:
            raise BadCards(f"{name} {s!r} is not a seat of the {n} at the table (0–{n - 1})")
    cards = rs.parse(hand)
    if not cards:
        raise BadNotation("the hand is empty")
    win_tile: int | None
    concealed = list(cards)
    if isinstance(tile, str) and tile.strip().lower() == "none":
        win_tile = None
    else:
        if tile is None:
            win_tile = cards[-1]
        else:
            got = rs.parse([tile] if isinstance(tile, int) else tile)
            if len(got) != 1:
                raise BadNotation(f"the winning tile is one card, got {tile!r}")
            win_tile = got[0]
        if win_tile not in concealed:
            raise BadCards(f"the winning card {rs.cards.token(win_tile)} is not in the hand "
                           f"{rs.cards.format(cards)} (give the hand with it)")
        concealed.remove(win_tile)
    if how != "zimo" and from_seat is None:
        from_seat = (seat - 1) % n
    ms = parse_melds(rs, melds, seat)
    stock = [] if flip is None else rs.parse(flip)
    held = list(cards) + [c for m in ms for c in m.cards]
    check_copies(held + stock, rs.cards, "the hand, its melds and the cards to flip")
    spec = rs.spec
    if flip is None and "max_flips" in rs.options_dict():
        rs = rs.with_options(max_flips=0)  # no --flip: no 醒 (module doc)
    claim = WinClaim(seat=seat, hand=tuple(concealed), melds=ms, tile=win_tile,
                     flags=tuple(flags))
    ev = rs.win_check(claim, how, dealer, from_seat)
    readings = rs.readings(claim, how, dealer, from_seat) if ev.wins else []
    paid = next((r for r in readings if r.paid), None)
    payments: tuple[Payment, ...] = ()
    patterns = list(ev.patterns)
    flipped: list[str] = []
    xing: int | None = None
    note = ""
    if ev.wins:
        end = HandEnd(dealer=dealer, how=how, from_seat=from_seat, winners=(claim,),
                      stock=tuple(stock), relations={k: [list(g) for g in v]
                                                     for k, v in (relations or {}).items()},
                      n_players=n)
        s = rs.settle(end)
        payments = s.payments
        patterns = list(s.patterns.get(seat, ev.patterns))
        flipped = [rs.cards.token(c) for c in s.flipped]
        xing = s.xing.get(seat)
    elif ev.hu is not None:
        note = f"the cards split for {ev.hu} 胡数, below the minimum of this variant"
    else:
        note = "the cards do not form a winning hand"
    return Score(
        variant=spec, hand=rs.cards.format(cards),
        tile=None if win_tile is None else rs.cards.token(win_tile),
        melds=[_meld_text(rs, m) for m in ms], how=how, seat=seat, dealer=dealer,
        from_seat=from_seat if how != "zimo" else None, flags=list(flags), wins=ev.wins,
        readings=readings, patterns=patterns, hu=ev.hu,
        value=paid.value if paid is not None else None, flipped=flipped, xing=xing,
        flip=flip is not None, payments=list(payments),
        net=net_of(payments, n), note=note)


def _meld_text(rs: Ruleset, m: Meld) -> str:
    src = f" from {m.from_seat}" if m.from_seat is not None else ""
    return f"{m.kind} {rs.cards.format(m.cards)}{src}"
