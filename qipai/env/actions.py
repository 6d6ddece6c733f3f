"""Fixed-size discrete action spaces: every legal :data:`~qipai.core.model.Action`
of a family as one index, and back (docs: reference/env).

A codec is per card family, so every variant of the family shares its
action space (``K`` = the family's card kinds: 34 mahjong tiles, 20 zipai
cards):

* **mahjong** (``3K + 8`` = 110 indices): ``0 … K-1`` 打 discard of kind
  ``k``; ``K … 2K-1`` 暗杠 angang of ``k``; ``2K … 3K-1`` 蓄杠 jiagang of
  ``k``; then 吃 chi with the claimed card lowest / middle / highest of the
  run (3), 碰 peng, 点杠 minggang, 胡 hu, 自摸 zimo, 过 pass.
* **zipai** (``K + 111 + 4`` = 135 indices): ``0 … 19`` discard of kind
  ``k``; then 111 吃 chi slots; then 碰 peng, 胡 hu, 自摸 zimo, 过 pass.
  A zipai 吃 is a group holding the claimed card plus its 下伙 xiahuo
  groups (each one more copy of the card and two other cards,
  :class:`~qipai.core.model.Chi` ``extra``).  For each claimed kind ``c``
  the slots list, in a fixed order, every structurally possible
  (group, 下伙 groups) pair: each valid group with ``c`` that is not three
  ``c`` (at most 6), with no 下伙, one, or (if the group itself holds only
  the claimed ``c``) two of the groups holding exactly one ``c``; 111 for
  the kinds with most (x7, d7), fewer for others (the rest of the slots is
  never legal for that card).

A 吃's index depends on the card in play (the claimed card), which every
seat sees (``SeatView.window``): :meth:`Codec.index` and :meth:`Codec.action`
take it.  Every legal action maps to exactly one index, two different legal
actions of one decision to different indices, and ``action(index(a)) == a``
(tests/env/test_env.py checks it over random play).
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Any

from qipai.core.errors import QipaiError, UnknownVariant
from qipai.core.model import (
    Action, Angang, Chi, Discard, Hu, Jiagang, Minggang, Pass, Peng, Zimo,
)

__all__ = ["Codec", "MahjongCodec", "NotEncodable", "ZipaiCodec", "codec_for"]


class NotEncodable(QipaiError, ValueError):
    """An action (or index) the family's action space has no place for: a
    variant offered an action of a shape the codec does not know, or an
    index outside the space.  The message names it."""


class Codec:
    """The action space of one family.

    Attributes:
        n: the number of indices (``Discrete(n)``).
        labels: one label per index, ``"discard 5p"``, ``"chi c+mid"`` …
            (``docs/reference/env.md`` lists them).
    """

    n: int
    labels: list[str]

    def index(self, action: Action, card: int | None) -> int:  # pragma: no cover
        """The index of ``action``; ``card`` is the card in play (the
        window's), needed for 吃.  Raises :class:`NotEncodable`."""
        raise NotImplementedError

    def action(self, index: int, seat: int, card: int | None) -> Action:  # pragma: no cover
        """The action of ``seat`` at ``index`` with ``card`` in play.
        Raises :class:`NotEncodable`."""
        raise NotImplementedError

    def _bad(self, action: Any) -> NotEncodable:
        return NotEncodable(f"{type(self).__name__} has no index for {action!r}")


class MahjongCodec(Codec):
    """Mahjong family: see the module doc for the layout."""

    def __init__(self, kinds: int = 34, tokens: list[str] | None = None) -> None:
        K = self.K = kinds
        self._kinds = range(K)  # the card kinds (`k in` is exact for ints, False for others)
        self.ANGANG, self.JIAGANG, self.CHI = K, 2 * K, 3 * K
        self.PENG, self.MINGGANG = 3 * K + 3, 3 * K + 4
        self.HU, self.ZIMO, self.PASS = 3 * K + 5, 3 * K + 6, 3 * K + 7
        self.n = 3 * K + 8
        tok = tokens or [str(k) for k in range(K)]
        self.labels = ([f"discard {t}" for t in tok] + [f"angang {t}" for t in tok]
                       + [f"jiagang {t}" for t in tok]
                       + ["chi c+low", "chi c+mid", "chi c+high", "peng", "minggang", "hu",
                          "zimo", "pass"])
        self._fixed = {Peng: self.PENG, Minggang: self.MINGGANG, Hu: self.HU,
                       Zimo: self.ZIMO, Pass: self.PASS}

    def index(self, action: Action, card: int | None) -> int:
        t = type(action)
        if t is Discard:
            k = action.card
            off = 0
        elif t is Angang:
            k, off = action.card, self.ANGANG
        elif t is Jiagang:
            k, off = action.card, self.JIAGANG
        elif t is Chi:
            c = action.cards
            try:
                ok = (card in self._kinds and not action.extra and len(c) == 3
                      and c[0] in self._kinds and c[1] == c[0] + 1 and c[2] == c[0] + 2
                      and 0 <= card - c[0] <= 2)
            except TypeError:  # cards that are not a sequence
                ok = False
            if not ok:
                raise self._bad(action)
            return self.CHI + card - c[0]
        else:
            i = self._fixed.get(t)
            if i is None:
                raise self._bad(action)
            return i
        if k not in self._kinds:  # not a kind (out of range, or not an int)
            raise self._bad(action)
        return off + k

    def action(self, index: int, seat: int, card: int | None) -> Action:
        i = index
        if not 0 <= i < self.n:
            raise NotEncodable(f"action index {i!r} is not in 0..{self.n - 1}")
        K = self.K
        if i < K:
            return Discard(seat, i)
        if i < 2 * K:
            return Angang(seat, i - K)
        if i < 3 * K:
            return Jiagang(seat, i - 2 * K)
        if i < self.PENG:
            if card is None:
                raise NotEncodable(f"index {i} ({self.labels[i]}) needs a card in play")
            low = card - (i - self.CHI)
            return Chi(seat, (low, low + 1, low + 2))
        return (Peng, Minggang, Hu, Zimo, Pass)[i - self.PENG](seat)


def _zipai_chi_slots(kinds: int, valid: Any) -> list[list[tuple[tuple[int, ...],
                                                               tuple[tuple[int, ...], ...]]]]:
    """Per claimed kind ``c``: every (group, 下伙 groups) a 吃 of ``c`` can
    be, in a fixed order (see the module doc)."""
    out = []
    for c in range(kinds):
        groups = [tuple(sorted((c, a, b)))
                  for a, b in combinations_with_replacement(range(kinds), 2)
                  if not a == b == c and valid((c, a, b))]
        once = [g for g in groups if g.count(c) == 1]  # a 下伙 group: one more c
        slots = []
        for g in groups:
            room = 3 - g.count(c)  # copies of c the hand may still hold (a 坎 is never eaten)
            slots.append((g, ()))
            if room >= 1:
                slots.extend((g, (e,)) for e in once)
            if room >= 2:
                slots.extend((g, pair) for pair in combinations_with_replacement(once, 2))
        out.append(slots)
    return out


class ZipaiCodec(Codec):
    """Zipai family: see the module doc for the layout."""

    def __init__(self, kinds: int = 20, tokens: list[str] | None = None) -> None:
        from qipai.families.zipai.groups import valid_group

        K = self.K = kinds
        self._kinds = range(K)  # the card kinds (`k in` is exact for ints, False for others)
        self.slots = _zipai_chi_slots(K, valid_group)
        self.n_chi = max(len(s) for s in self.slots)
        self.CHI = K
        self.PENG = K + self.n_chi
        self.HU, self.ZIMO, self.PASS = self.PENG + 1, self.PENG + 2, self.PENG + 3
        self.n = self.PENG + 4
        self._slot_of = [{s: i for i, s in enumerate(slots)} for slots in self.slots]
        tok = tokens or [str(k) for k in range(K)]
        self.labels = ([f"discard {t}" for t in tok]
                       + [f"chi slot {j}" for j in range(self.n_chi)]
                       + ["peng", "hu", "zimo", "pass"])
        self._fixed = {Peng: self.PENG, Hu: self.HU, Zimo: self.ZIMO, Pass: self.PASS}

    def index(self, action: Action, card: int | None) -> int:
        t = type(action)
        if t is Discard:
            if action.card not in self._kinds:  # not a kind (out of range, or not an int)
                raise self._bad(action)
            return action.card
        if t is Chi:
            if card not in self._kinds:
                raise self._bad(action)
            key = (tuple(sorted(action.cards)), tuple(sorted(tuple(sorted(g))
                                                             for g in action.extra)))
            j = self._slot_of[card].get(key)
            if j is None:
                raise self._bad(action)
            return self.CHI + j
        i = self._fixed.get(t)
        if i is None:
            raise self._bad(action)
        return i

    def action(self, index: int, seat: int, card: int | None) -> Action:
        i = index
        if not 0 <= i < self.n:
            raise NotEncodable(f"action index {i!r} is not in 0..{self.n - 1}")
        if i < self.K:
            return Discard(seat, i)
        if i < self.PENG:
            if card is None:
                raise NotEncodable(f"index {i} ({self.labels[i]}) needs a card in play")
            slots = self.slots[card]
            j = i - self.CHI
            if j >= len(slots):
                raise NotEncodable(f"chi slot {j} does not exist for the claimed card {card}")
            g, extra = slots[j]
            return Chi(seat, g, extra)
        return (Peng, Hu, Zimo, Pass)[i - self.PENG](seat)


_CODECS: dict[tuple[str, int], Codec] = {}


def codec_for(ruleset: Any) -> Codec:
    """The action codec of ``ruleset``'s family (shared, built once).

    Raises:
        UnknownVariant: a family with no action space here (the families
            are ``mahjong`` and ``zipai``).
    """
    family = ruleset.manifest.family
    kinds = ruleset.cards.n_kinds
    got = _CODECS.get((family, kinds))
    if got is None:
        tokens = [ruleset.cards.token(k) for k in range(kinds)]
        if family == "mahjong":
            got = MahjongCodec(kinds, tokens)
        elif family == "zipai":
            got = ZipaiCodec(kinds, tokens)
        else:
            raise UnknownVariant(f"qipai.env has no action space for the family {family!r} of "
                                 f"{ruleset.manifest.name!r}; families: mahjong, zipai")
        _CODECS[(family, kinds)] = got
    return got
