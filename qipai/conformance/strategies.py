"""Hypothesis strategies for property-testing a variant's rules.

Variant authors import them from :mod:`qipai.conformance` (Hypothesis is
needed only by the tests that use them)::

    from hypothesis import given
    from qipai.conformance import strategies as qst

    @given(qst.winning_hands())
    def test_every_standard_hand_wins(claim):
        assert load("my-variant").win_check(claim, "zimo", dealer=0).wins

Every hand, meld and claim drawn here respects the copy limit of its card
system (never a fifth copy, melds included).  Mahjong strategies use kinds
0–33 (:mod:`qipai.families.mahjong.tiles`); :func:`hands`, :func:`seeds`,
:func:`deals` and :func:`tables` work for any variant.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from qipai.core.model import Deal, Meld, WinClaim
from qipai.core.ruleset import Ruleset
from qipai.families.mahjong.tiles import TILES

__all__ = [
    "MELD_KINDS",
    "deals",
    "hands",
    "melds",
    "seeds",
    "tables",
    "waiting_hands",
    "winning_hands",
]

#: Mahjong meld kinds, as :class:`~qipai.core.model.Meld` names them.
MELD_KINDS = ("chi", "peng", "minggang", "jiagang", "angang")
_HONOR = 27
_N = 34


def seeds() -> st.SearchStrategy[int]:
    """Table seeds (shrink towards 0)."""
    return st.integers(min_value=0, max_value=2**32 - 1)


def hands(cards: Any = TILES, size: int = 13) -> st.SearchStrategy[list[int]]:
    """Sorted hands of ``size`` kinds of the card system ``cards`` (a
    :class:`~qipai.core.cards.CardSystem`, e.g. ``ruleset.cards``), no kind
    more than ``cards.copies`` times."""
    pool = [k for k in range(cards.n_kinds) for _ in range(cards.copies)]
    if not 0 <= size <= len(pool):
        raise ValueError(f"a hand of {size} cards does not fit a deck of {len(pool)}")
    return st.permutations(pool).map(lambda p: sorted(p[:size]))


def _fits(counts: list[int], kinds: Sequence[int]) -> bool:
    need: dict[int, int] = {}
    for k in kinds:
        need[k] = need.get(k, 0) + 1
    return all(counts[k] + n <= 4 for k, n in need.items())


def _set_tiles(kind: str, k: int) -> tuple[int, ...]:
    if kind == "chi":
        return (k, k + 1, k + 2)
    return (k,) * (4 if kind in ("minggang", "jiagang", "angang") else 3)


def _starts(kind: str, counts: list[int]) -> list[int]:
    if kind == "chi":
        return [k for k in range(_HONOR) if k % 9 <= 6 and _fits(counts, _set_tiles(kind, k))]
    return [k for k in range(_N) if _fits(counts, _set_tiles(kind, k))]


@st.composite
def _meld(draw: Any, counts: list[int], kinds: Sequence[str], seat: int) -> Meld:
    kind = draw(st.sampled_from([k for k in kinds if _starts(k, counts)]))
    k = draw(st.sampled_from(_starts(kind, counts)))
    tiles = _set_tiles(kind, k)
    for t in tiles:
        counts[t] += 1
    if kind == "angang":
        return Meld(kind, tiles)
    giver = draw(st.sampled_from([s for s in range(4) if s != seat]))
    if kind == "chi":
        giver = (seat - 1) % 4
        return Meld(kind, tiles, from_seat=giver, claimed=draw(st.sampled_from(tiles)))
    return Meld(kind, tiles, from_seat=giver, claimed=k)


@st.composite
def _fresh_meld(draw: Any, kinds: Sequence[str], seat: int) -> Meld:
    return draw(_meld([0] * _N, kinds, seat))


def melds(kinds: Sequence[str] = MELD_KINDS, seat: int = 0) -> st.SearchStrategy[Meld]:
    """One well-formed mahjong meld of ``seat`` (吃 from the seat before it,
    碰 and 明杠/加杠 from another seat, 暗杠 concealed)."""
    return _fresh_meld(tuple(kinds), seat)


@st.composite
def _winning(draw: Any, max_melds: int, qidui: bool, meld_kinds: Sequence[str]) -> WinClaim:
    counts = [0] * _N
    seat = draw(st.integers(0, 3))
    if qidui and draw(st.booleans()):
        concealed: list[int] = []
        for _ in range(7):
            k = draw(st.sampled_from([k for k in range(_N) if counts[k] <= 2]))
            counts[k] += 2
            concealed += [k, k]
        ms: list[Meld] = []
    else:
        n_melds = draw(st.integers(0, max_melds))
        ms = [draw(_meld(counts, tuple(meld_kinds), seat)) for _ in range(n_melds)]
        pair = draw(st.sampled_from([k for k in range(_N) if counts[k] <= 2]))
        counts[pair] += 2
        concealed = [pair, pair]
        for _ in range(4 - n_melds):
            kind = draw(st.sampled_from([k for k in ("chi", "peng") if _starts(k, counts)]))
            tiles = _set_tiles(kind, draw(st.sampled_from(_starts(kind, counts))))
            for t in tiles:
                counts[t] += 1
            concealed += tiles
    concealed.sort()
    tile = draw(st.sampled_from(sorted(set(concealed))))
    concealed.remove(tile)
    return WinClaim(seat=seat, hand=tuple(concealed), melds=tuple(ms), tile=tile)


def winning_hands(max_melds: int = 4, qidui: bool = False,
                  meld_kinds: Sequence[str] = MELD_KINDS) -> st.SearchStrategy[WinClaim]:
    """Complete mahjong hands as a :class:`~qipai.core.model.WinClaim`:
    four sets (up to ``max_melds`` of them laid as melds of ``meld_kinds``)
    and a pair, or — with ``qidui`` — sometimes seven pairs (a kind held
    four times is two pairs).  ``hand`` is the concealed part before the
    winning ``tile``; ``seat`` is drawn, ``flags`` are empty.  Whether such
    a hand wins, and as what, is the variant's to say."""
    return _winning(max_melds, qidui, tuple(meld_kinds))


def waiting_hands(max_melds: int = 4, qidui: bool = False) -> st.SearchStrategy[WinClaim]:
    """As :func:`winning_hands`: the ``hand`` (13 tiles less 3 per meld) is
    ready, ``tile`` one of its waits."""
    return winning_hands(max_melds, qidui)


def deals(ruleset: Ruleset) -> st.SearchStrategy[Deal]:
    """Deals of ``ruleset`` (its own deck shuffled and dealt by its
    ``qipai_deal``, for a drawn dealer)."""
    def deal(seed: int) -> Deal:
        rng = random.Random(seed)
        deck = ruleset.deck()
        rng.shuffle(deck)
        dealer = rng.randrange(ruleset.manifest.players)
        return ruleset.hook.qipai_deal(deck=deck, dealer=dealer, options=ruleset.options)

    return seeds().map(deal)


def tables(ruleset: Ruleset, max_steps: int = 120) -> st.SearchStrategy[Any]:
    """Tables of ``ruleset`` at a random point of a seeded hand played by
    random legal decisions (wins taken when offered): up to ``max_steps``
    decisions in, possibly over.  Shrinks towards seed 0 and early points."""
    from qipai.conformance.properties import choose

    def play(args: tuple[int, int]) -> Any:
        seed, steps = args
        rng = random.Random(seed)
        table = ruleset.table(seed=seed)
        for _ in range(steps):
            if table.over:
                break
            seat = table.to_decide()[0]
            table.apply(choose(table, seat, rng))
        return table

    return st.tuples(seeds(), st.integers(0, max_steps)).map(play)
