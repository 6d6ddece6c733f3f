"""Cards in general: kinds, decks, count vectors, notation.

A *kind* is an int ``0 .. n_kinds-1`` in the canonical order of the card
system (mahjong: index 0–33, zipai: 0–19; docs/variants/index.md, Notation).
A card in a hand, wall or meld is just its kind: copies of one kind are interchangeable,
so conservation is checked on count vectors.

Concrete notations live with their family (``qipai.families.mahjong.tiles``,
``qipai.families.zipai.cards``); the engine only knows this interface.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from qipai.core.errors import BadCards


class CardSystem(Protocol):
    """A notation and a set of kinds.

    Attributes:
        name: short id (``"mahjong"``, ``"zipai"``).
        n_kinds: number of distinct kinds (34 for mahjong, 20 for zipai).
        copies: copies of each kind in a full deck (4 for both).
    """

    name: str
    n_kinds: int
    copies: int

    def parse(self, text: str | Sequence[str] | Sequence[int]) -> list[int]:
        """Parse a card string (or list of tokens, or kinds) into kinds.

        Raises:
            BadNotation: naming the first token that is not a card.
        """
        ...

    def format(self, cards: Iterable[int]) -> str:
        """Format kinds in the canonical text form (the rules' notation)."""
        ...

    def token(self, kind: int) -> str:
        """The text of one kind (``"1m"``, ``"E"``, ``"x10"``)."""
        ...

    def chinese(self, kind: int) -> str:
        """The Chinese name of one kind (``"一万"``, ``"东"``, ``"拾"``)."""
        ...


def counts(cards: Iterable[int], n_kinds: int) -> list[int]:
    """Count vector of ``cards``: ``n_kinds`` ints, one per kind."""
    out = [0] * n_kinds
    for c in cards:
        out[c] += 1
    return out


def check_copies(cards: Iterable[int], system: CardSystem, what: str = "cards") -> None:
    """Raise :class:`BadCards` if any kind appears more than ``system.copies`` times.

    Args:
        cards: kinds, e.g. a hand with its melds.
        what: how to call them in the message ("the hand", "seat 2's cards").
    """
    c = counts(cards, system.n_kinds)
    for kind, n in enumerate(c):
        if n > system.copies:
            raise BadCards(
                f"{what} hold {n} copies of {system.token(kind)}; "
                f"there are only {system.copies}"
            )


def full_deck(system: CardSystem) -> list[int]:
    """Every card of the system once per copy, in canonical order."""
    return [k for k in range(system.n_kinds) for _ in range(system.copies)]


def shuffle(rng: random.Random, deck: list[Any]) -> None:
    """Shuffle ``deck`` in place with ``rng``'s own public ``shuffle``: the
    same permutation for the same RNG state (a seeded ``random.Random``
    deals the same hands on every CPython that keeps ``random``'s
    documented reproducibility; ``tests/core/test_engine.py`` pins a digest).
    """
    rng.shuffle(deck)
