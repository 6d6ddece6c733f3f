"""Is a plugin's answer acceptable: the engine's checks of what hooks answer.

A hook's answer is input the engine does not trust: before a deal, a
payment, a settlement, a list of actions or a bonus flip is used, one of
these functions says why it is refused (a one-line reason), or None.  The
caller raises :class:`~qipai.core.errors.PluginError` naming the plugin
(:func:`qipai.core.dispatch.culprit`).  :func:`conserves_cards` marks the
family flows' deals, whose answer the table does not check again.
"""

from __future__ import annotations

from typing import Any

from qipai.core.cards import CardSystem, check_copies
from qipai.core.errors import BadCards
from qipai.core.model import ACTION_TYPES, Deal, Flip, Payment, Settlement, why_total

#: Every action class (a seat's action is one of these, never a subclass).
_ACTIONS = frozenset(ACTION_TYPES.values())


def deck_problem(deck: Any, cards: CardSystem) -> str | None:
    """Why ``deck`` (a ``qipai_deck`` answer) is not a list (or tuple) of
    the cards of ``cards``, not empty, with no fifth copy, or None."""
    if not isinstance(deck, (list, tuple)):
        return f"answered {deck!r}, not a list of cards"
    if not deck:
        return "answered an empty deck"
    kinds = cards.n_kinds
    bad = next((c for c in deck if type(c) is not int or not 0 <= c < kinds), None)
    if bad is not None:
        return f"the deck holds {bad!r}, not a card of this game (kinds 0..{kinds - 1})"
    try:
        check_copies(deck, cards, "the deck")
    except BadCards as exc:
        return str(exc)
    return None


def deal_problem(deal: Any, dealer: int, n: int, deck: list[int]) -> str | None:
    """Why ``deal`` (a ``qipai_deal`` answer for ``dealer``) is not a
    :class:`Deal` of ``n`` hands for that dealer whose hands and wall are
    exactly ``deck`` (sorted) and whose shown cards are the dealer's, or None."""
    if not isinstance(deal, Deal):
        return f"answered {deal!r}, not a Deal"
    if type(deal.dealer) is not int:
        return f"answered a dealer {deal.dealer!r}, not an int"
    if deal.dealer != dealer:
        return f"dealt for dealer {deal.dealer}, not for the dealer {dealer}"
    hands = deal.hands
    if type(hands) is not tuple or type(deal.wall) is not tuple or type(deal.shown) is not tuple \
            or any(type(h) is not tuple for h in hands):
        return "answered a Deal whose hands, wall or shown cards are not tuples"
    try:
        if len(hands) != n:
            return f"dealt {len(hands)} hands for {n} seats"
        cards = list(deal.wall)
        for h in hands:
            cards += h
        cards.sort()
        same = cards == deck and set(map(type, cards)) == {int}
        held = list(hands[dealer])
        for c in deal.shown:
            held.remove(c)
    except (TypeError, ValueError):
        same = False
    if not same:
        return (f"the hands, wall and shown cards are not the deck it was given "
                f"({len(deck)} cards), each card once, the shown ones in the dealer's hand")
    return None


def conserves_cards(deal_impl: Any) -> Any:
    """Mark a ``qipai_deal`` implementation whose answer is, by its
    construction and its own tests, a deal of exactly the deck it is given,
    for the dealer asked, in the hand sizes ``qipai_check_deal`` wants (the
    family flows' deals: slices of the shuffled deck).  A table whose only
    ``qipai_deal`` is a marked one does not check its answer again; any
    other deal — a variant's own, a house plugin's over it, a wrapper — is
    checked when the table is made (:class:`~qipai.core.table.Table`).  An
    override of a marked method in a subclass is not marked."""
    deal_impl.qipai_conserves_cards = True
    return deal_impl


#: The largest amount (子) a payment or a 醒数 may be: 2**53 - 1, the
#: largest integer every JSON reader (a browser's included) holds exactly.
MAX_AMOUNT = 2**53 - 1


def payment_problem(p: Any, n: int) -> str | None:
    """Why ``p`` is not a payment at an ``n``-seat table, or None: seats are
    ints ``0..n-1`` (never bool), payer ≠ payee, the amount an int ≥ 0."""
    if type(p) is not Payment:
        return f"{p!r} is not a Payment"
    for role, seat in (("payer", p.payer), ("payee", p.payee)):
        if type(seat) is not int or not 0 <= seat < n:
            return f"{p!r}: {role} {seat!r} is not a seat (0..{n - 1})"
    if p.payer == p.payee:
        return f"{p!r}: the payer pays itself"
    if type(p.amount) is not int or not 0 <= p.amount <= MAX_AMOUNT:
        return f"{p!r}: the amount {p.amount!r} is not an int from 0 to {MAX_AMOUNT}"
    if type(p.reason) is not str:
        return f"{p!r}: the reason {p.reason!r} is not a str"
    if p.why:
        try:
            total = why_total(p.why)
        except (ValueError, TypeError, AttributeError) as exc:
            return f"{p!r}: its why is not a breakdown ({exc})"
        if total != p.amount:
            return f"{p!r}: its why totals {total}, not the amount {p.amount}"
    return None


def payments_problem(payments: Any, n: int) -> str | None:
    """Why ``payments`` is not a sequence of valid payments, or None."""
    if not isinstance(payments, (list, tuple)):
        return f"{payments!r} is not a list of payments"
    for p in payments:
        problem = payment_problem(p, n)
        if problem:
            return problem
    return None


def settlement_answer_problem(settlement: Any, n: int) -> str | None:
    """Why ``settlement`` is not a :class:`Settlement` of valid payments, or None."""
    if not isinstance(settlement, Settlement):
        return f"{settlement!r} is not a Settlement"
    return payments_problem(settlement.payments, n)


def actions_problem(acts: Any, seat: int, empty_ok: bool) -> str | None:
    """Why ``acts`` is not a list of ``seat``'s actions, or None."""
    if not isinstance(acts, (list, tuple)):
        return f"{acts!r} is not a list of actions"
    if not acts and not empty_ok:
        return f"no legal action for seat {seat}: the hand could not go on"
    for a in acts:
        if type(a) not in _ACTIONS or a.seat != seat:
            return f"{a!r} is not an action of seat {seat}"
    return None


def flip_problem(flip: Any, n_kinds: int) -> str | None:
    """Why ``flip`` (a ``qipai_bonus_flip`` answer) is not a
    :class:`~qipai.core.model.Flip` whose ``flipped`` is a tuple of cards
    ``0..n_kinds - 1``, whose 醒数 is an int ``0..MAX_AMOUNT``, and whose
    ``each`` is empty or a tuple of one int >= 0 per flipped card summing
    to the 醒数, or None."""
    if not isinstance(flip, Flip):
        return f"answered {flip!r}, not a Flip"
    if type(flip.xing) is not int or not 0 <= flip.xing <= MAX_AMOUNT:
        return f"answered a 醒数 of {flip.xing!r}, not an int from 0 to {MAX_AMOUNT}"
    if type(flip.flipped) is not tuple:
        return f"answered flipped={flip.flipped!r}, not a tuple of cards"
    for c in flip.flipped:
        if type(c) is not int or not 0 <= c < n_kinds:
            return f"flipped {c!r}, not a card of this game (kinds 0..{n_kinds - 1})"
    each = flip.each
    if each != ():
        if (type(each) is not tuple or len(each) != len(flip.flipped)
                or any(type(x) is not int or x < 0 for x in each) or sum(each) != flip.xing):
            return (f"answered per-card 醒数 {each!r}, not one int >= 0 per flipped card "
                    f"({len(flip.flipped)}) adding up to its 醒数 {flip.xing}")
    return None
