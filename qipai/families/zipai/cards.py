"""Zipai card notation (docs/variants/index.md, "Notation": zipai cards).

Kinds 0–19: ``x1``–``x10`` small (小写) 一 … 十 (0–9), ``d1``–``d10`` big
(大写) 壹 … 拾 (10–19).  So ``kind = 10 * big + number - 1``.

Input accepted by :meth:`ZipaiCards.parse`:

* tokens ``x1`` … ``x10``, ``d1`` … ``d10`` (the letter in either case:
  ``X3``, ``D10``), separated by spaces or commas (``,`` ``，`` ``、``);
* Chinese numerals: small 一二三四五六七八九十, big 壹贰叁肆伍陆柒捌玖拾
  (traditional 貳 參 叄 陸 too), each optionally prefixed by 小 or 大
  (``小三`` = x3, ``大三`` = d3; ``小叁`` contradicts itself and is refused).
  One Chinese numeral is one card, so a Chinese chunk may run its cards
  together: ``"二七十"`` is x2 x7 x10.

Output is the token form, ``"x1 x2 x3 d10"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from qipai.core.errors import BadNotation

N_KINDS = 20
COPIES = 4
BIG = 10  # first big kind (d1)

_SMALL_ZH = "一二三四五六七八九十"
_BIG_ZH = "壹贰叁肆伍陆柒捌玖拾"
# Chinese numeral -> (number 1..10, big)
_ZH_NUM: dict[str, tuple[int, bool]] = {}
for _i, _ch in enumerate(_SMALL_ZH):
    _ZH_NUM[_ch] = (_i + 1, False)
for _i, _ch in enumerate(_BIG_ZH):
    _ZH_NUM[_ch] = (_i + 1, True)
_ZH_NUM.update({"貳": (2, True), "參": (3, True), "叄": (3, True), "陸": (6, True)})

_CHUNK = re.compile(r"[^\s,，、]+")  # a card or a run of them: spaces and commas separate
_FORMS = ("a card is x1–x10 (小写) or d1–d10 (大写), or Chinese numerals 一…十 / 壹…拾 "
          "(大 or 小 before one may say its case), cards separated by spaces or commas")
_LATIN = re.compile(r"([xXdD])(10|[1-9])")
_ZH_CARD = re.compile("([小大]?)([" + "".join(_ZH_NUM) + "])")

_TOKENS = [f"x{n}" for n in range(1, 11)] + [f"d{n}" for n in range(1, 11)]
_CHINESE = list(_SMALL_ZH) + list(_BIG_ZH)


def is_big(kind: int) -> bool:
    """True for a big (大写) card ``d1``–``d10``."""
    return kind >= BIG


def number(kind: int) -> int:
    """The card's number, 1–10 (x7 and d7 are both 7)."""
    return kind % 10 + 1


def kind_of(num: int, big: bool) -> int:
    """The kind of number ``num`` (1–10), big or small."""
    return num - 1 + (BIG if big else 0)


class ZipaiCards:
    """The 80-card zipai card system: 20 kinds × 4 copies."""

    name = "zipai"
    n_kinds = N_KINDS
    copies = COPIES

    def parse(self, text: str | Sequence[str] | Sequence[int]) -> list[int]:
        """Parse cards into kinds (see the module doc for the accepted forms).

        Args:
            text: a string, a list of strings (each parsed, results joined),
                or a list of kinds (returned as a list after range checking).

        Raises:
            BadNotation: naming the first token that is not a card.
        """
        if not isinstance(text, str):
            out: list[int] = []
            for item in text:
                if isinstance(item, int) and not isinstance(item, bool):
                    if not 0 <= item < N_KINDS:
                        raise BadNotation(f"card kind {item} is out of range 0..19")
                    out.append(item)
                elif isinstance(item, str):
                    out.extend(self.parse(item))
                else:
                    raise BadNotation(f"not a card: {item!r}")
            return out
        out = []
        for m in _CHUNK.finditer(text):
            self._chunk(m.group(0), m.start(), text, out)
        return out

    @staticmethod
    def _chunk(chunk: str, start: int, text: str, out: list[int]) -> None:
        """Append the cards of ``chunk`` (at 0-based ``start`` of ``text``):
        one latin card, or a run of Chinese numerals.  A chunk that is
        neither is named with its 1-based position in ``text``."""
        m = _LATIN.fullmatch(chunk)
        if m is not None:
            out.append(kind_of(int(m.group(2)), m.group(1) in "dD"))
            return
        pos = 0
        found: list[int] = []
        while pos < len(chunk):
            z = _ZH_CARD.match(chunk, pos)
            if z is None:
                break
            num, big = _ZH_NUM[z.group(2)]
            prefix = z.group(1)
            if prefix == "小" and big:
                raise BadNotation(f"bad card {z.group(0)!r} at position {start + pos + 1} of "
                                  f"{text!r}: 小 with a big numeral")
            found.append(kind_of(num, big or prefix == "大"))
            pos = z.end()
        if pos < len(chunk) or not found:
            lead = _LATIN.match(chunk)
            if lead is not None and not found and _LATIN.match(chunk, lead.end()):
                raise BadNotation(f"bad card {chunk!r} at position {start + 1} of {text!r}: "
                                  f"latin cards are separated by spaces ({_FORMS})")
            bad = chunk[pos:] if found else chunk  # after the numerals read, or all of it
            raise BadNotation(f"bad card {bad!r} at position {start + (pos if found else 0) + 1}"
                              f" of {text!r}: {_FORMS}")
        out.extend(found)

    def token(self, kind: int) -> str:
        """``"x1"`` … ``"x10"``, ``"d1"`` … ``"d10"``; ``"?"`` face down (None, or -1)."""
        return "?" if kind is None or kind == -1 else _TOKENS[_checked(kind)]

    def format(self, cards: Iterable[int]) -> str:
        """Tokens in canonical order, joined by spaces: ``"x1 x2 x3 d10"``."""
        return " ".join("?" if c is None or c == -1 else _TOKENS[_checked(c)]
                        for c in sorted(cards, key=lambda c: -1 if c is None else c))

    def format_seq(self, cards: Iterable[int]) -> str:
        """Tokens in the given order (for stocks and decks)."""
        return " ".join("?" if c is None or c == -1 else _TOKENS[_checked(c)] for c in cards)

    def chinese(self, kind: int) -> str:
        """``"一"`` … ``"十"``, ``"壹"`` … ``"拾"``; ``"?"`` face down (None, or -1)."""
        return "?" if kind is None or kind == -1 else _CHINESE[_checked(kind)]


def _checked(kind: int) -> int:
    if not 0 <= kind < N_KINDS:
        raise BadNotation(f"card kind {kind} is out of range 0..19")
    return kind


CARDS = ZipaiCards()
