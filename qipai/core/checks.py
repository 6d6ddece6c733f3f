"""Input checks every variant's scoring and flow share (family-neutral).

Each raises :class:`~qipai.core.errors.BadCards` (or returns a message) with
a one-line reason, so a host's bad input never reaches a rule as a silent
wrong answer.  The checks of what a plugin answers (deals, payments,
flips, …) are :mod:`qipai.core.answers`.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Collection
from typing import Any

from qipai.core.errors import BadCards
from qipai.core.model import Deal, WinClaim


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


#: Names that moved to :mod:`qipai.core.answers`, still read here (with a
#: DeprecationWarning) for one release.
_MOVED = ("MAX_AMOUNT", "conserves_cards", "flip_problem")


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        warnings.warn(f"qipai.core.checks.{name} is now qipai.core.answers.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("qipai.core.answers"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
