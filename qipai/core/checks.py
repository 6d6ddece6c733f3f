"""Input checks every variant's scoring and flow share (family-neutral).

Each raises :class:`~qipai.core.errors.BadCards` (or returns a message) with
a one-line reason, so a host's bad input never reaches a rule as a silent
wrong answer.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from qipai.core.errors import BadCards
from qipai.core.model import Deal, Flip, WinClaim


def check_win_context(claim: WinClaim, how: str, hows: Collection[str], dealer: int,
                      from_seat: int | None, n_players: int,
                      known_flags: Collection[str]) -> None:
    """Check who won how: ``how`` is one of ``hows``; the winner and dealer
    are seats; a ``zimo`` has no other ``from_seat``, any other win has
    another seat as ``from_seat``; every flag is one of ``known_flags``.

    Raises:
        BadCards: naming the first thing that is wrong.
    """
    if how not in hows:
        raise BadCards(f"how must be one of {', '.join(hows)}, got {how!r}")
    for name, s in (("seat", claim.seat), ("dealer", dealer)):
        if not 0 <= s < n_players:
            raise BadCards(f"{name} {s} is not a seat of {n_players}")
    if how == "zimo":
        if from_seat not in (None, claim.seat):
            raise BadCards(f"a zimo is the winner's own draw, not seat {from_seat}'s")
    elif from_seat is None or not 0 <= from_seat < n_players or from_seat == claim.seat:
        raise BadCards(f"a {how} win needs another seat as from_seat, got {from_seat}")
    unknown = set(claim.flags) - set(known_flags)
    if unknown:
        raise BadCards(f"unknown flag(s) {', '.join(sorted(unknown))}")


def checked_relations(relations: Any, n_players: int,
                      known: Collection[str] | None = None) -> dict[str, list[list[int]]]:
    """Relations (``{"hubao": [[0, 1]]}``) as named lists of seat pairs.

    Args:
        known: the relation names the variant keeps (``Manifest.relations``);
            None accepts any name.

    Raises:
        BadCards: an unknown name, or a group that is not two different seats.
    """
    out: dict[str, list[list[int]]] = {}
    for name, groups in (relations or {}).items():
        if known is not None and name not in known:
            names = ", ".join(known) or "none"
            raise BadCards(f"unknown relation {name!r}; this variant keeps: {names}")
        checked = []
        for g in groups:
            g = list(g)
            if len(g) != 2 or len(set(g)) != 2 or any(
                    type(s) is not int or not 0 <= s < n_players for s in g):
                raise BadCards(f"relation {name} {g!r}: expected two different seats "
                               f"(0..{n_players - 1})")
            checked.append(g)
        out[str(name)] = checked
    return out


def deal_size_problem(deal: Deal, dealer_size: int, other_size: int, unit: str) -> str | None:
    """A one-line problem if the dealer's hand is not ``dealer_size`` cards
    or another's not ``other_size`` (``unit``: 张 word for the message), else None."""
    for seat, hand in enumerate(deal.hands):
        want = dealer_size if seat == deal.dealer else other_size
        if len(hand) != want:
            role = "the dealer" if seat == deal.dealer else "a non-dealer"
            return f"seat {seat} ({role}) is dealt {len(hand)} {unit}; it must hold {want}"
    return None


#: The largest amount (子) a payment or a 醒数 may be: 2**53 - 1, the
#: largest integer every JSON reader (a browser's included) holds exactly.
MAX_AMOUNT = 2**53 - 1


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
