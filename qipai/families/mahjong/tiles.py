"""Mahjong tile notation (docs/variants/index.md, "Notation": mahjong tiles).

Kinds 0–33: ``1m``–``9m`` (0–8), ``1p``–``9p`` (9–17), ``1s``–``9s`` (18–26),
``E S W N`` (27–30), ``C F P`` 中 发 白 (31–33).

Input accepted by :meth:`MahjongTiles.parse`:

* compact strings, digits before their suit letter: ``"123m45p EEC"``;
* honor letters ``E S W N C F P``;
* tenhou ``1z``–``7z`` = E S W N **P F C** (5z 白, 6z 发, 7z 中);
* Chinese names: ``一万`` … ``九万``, ``一筒``/``一饼``, ``一条``/``一索``,
  ``东 南 西 北 中 发 白`` (traditional forms and ``红中 发财 白板`` too).

Spaces and commas are ignored.  Output is the letter form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from qipai.core.errors import BadNotation

SUITS = "mps"
HONORS = "ESWNCFP"
N_KINDS = 34
COPIES = 4

# tenhou honor digit -> our kind (1z..7z = E S W N P F C)
_TENHOU_Z = {1: 27, 2: 28, 3: 29, 4: 30, 5: 33, 6: 32, 7: 31}
_NUM_ZH = "一二三四五六七八九"
_SUIT_ZH = {"万": 0, "萬": 0, "筒": 1, "饼": 1, "餅": 1, "条": 2, "條": 2, "索": 2}
_HONOR_ZH = {
    "东": 27, "東": 27, "南": 28, "西": 29, "北": 30,
    "中": 31, "红中": 31, "紅中": 31, "发": 32, "發": 32, "发财": 32, "發財": 32,
    "白": 33, "白板": 33,
}
_ZH_NAMES = [f"{_NUM_ZH[r]}{s}" for s in "万筒条" for r in range(9)] + list("东南西北中发白")
_GLYPHS = [chr(0x1F007 + r) for r in range(9)] + [chr(0x1F019 + r) for r in range(9)] + [
    chr(0x1F010 + r) for r in range(9)
] + [chr(c) for c in (0x1F000, 0x1F001, 0x1F002, 0x1F003, 0x1F004, 0x1F005, 0x1F006)]

_TOKEN = re.compile(
    r"(?P<num>[0-9]+)(?P<suit>[mpsz])"
    r"|(?P<honor>[ESWNCFP])"
    r"|(?P<zhnum>[一二三四五六七八九])(?P<zhsuit>[万萬筒饼餅条條索])"
    r"|(?P<zhhonor>红中|紅中|发财|發財|白板|[东東南西北中发發白])"
    r"|(?P<sep>[\s,，]+)"
)


def _bad_at(text: str, pos: int) -> BadNotation:
    """The error for ``text``, no tile starting at ``text[pos]``: it names the
    offending character and its position (1-based) — after digits, the one
    that should be their suit letter."""
    digits = re.match(r"[0-9]+", text[pos:])
    if digits is None:
        return BadNotation(f"bad tile {text[pos]!r} at position {pos + 1} of {text!r}: not a tile "
                           f"(tiles are 123m 456p 789s, honors E S W N C F P or 1z..7z, "
                           f"or Chinese names such as 一万 东)")
    after = pos + digits.end()
    if after < len(text) and not _SEP.match(text, after):
        return BadNotation(f"bad tile {text[after]!r} at position {after + 1} of {text!r}: "
                           f"digits are followed by their suit, m p s or z")
    return BadNotation(f"bad tile {digits.group(0)!r} at position {pos + 1} of {text!r}: "
                       f"no suit after the digits (m p s or z)")


_SEP = re.compile(r"[\s,，]")


class MahjongTiles:
    """The 136-tile mahjong card system: 34 kinds × 4 copies."""

    name = "mahjong"
    n_kinds = N_KINDS
    copies = COPIES

    def parse(self, text: str | Sequence[str] | Sequence[int]) -> list[int]:
        """Parse tiles into kinds (see module doc for the accepted forms).

        Args:
            text: a string, a list of strings (each parsed and joined), or a
                list of kinds (returned as a list after range checking).

        Raises:
            BadNotation: naming the first token that is not a tile.
        """
        if not isinstance(text, str):
            out: list[int] = []
            for item in text:
                if isinstance(item, int) and not isinstance(item, bool):
                    if not 0 <= item < N_KINDS:
                        raise BadNotation(f"tile kind {item} is out of range 0..33")
                    out.append(item)
                elif isinstance(item, str):
                    out.extend(self.parse(item))
                else:
                    raise BadNotation(f"not a tile: {item!r}")
            return out
        out = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise _bad_at(text, pos)
            start, pos = pos, m.end()
            if m.group("num"):
                out.extend(self._digits(m.group("num"), m.group("suit"), text, start))
            elif m.group("honor"):
                out.append(27 + HONORS.index(m.group("honor")))
            elif m.group("zhnum"):
                out.append(_SUIT_ZH[m.group("zhsuit")] * 9 + _NUM_ZH.index(m.group("zhnum")))
            elif m.group("zhhonor"):
                out.append(_HONOR_ZH[m.group("zhhonor")])
        return out

    @staticmethod
    def _digits(digits: str, suit: str, text: str, start: int) -> list[int]:
        """The tiles of ``digits`` + ``suit``, found at ``text[start]``."""
        out = []
        for i, d in enumerate(digits):
            r = int(d)
            where = f"at position {start + i + 1} of {text!r}"
            if suit == "z":
                if r not in _TENHOU_Z:
                    raise BadNotation(f"bad tile '{d}z' {where}: honors are 1z..7z")
                out.append(_TENHOU_Z[r])
            else:
                if r == 0:
                    raise BadNotation(f"bad tile '0{suit}' {where}: ranks are 1..9")
                out.append(SUITS.index(suit) * 9 + r - 1)
        return out

    def token(self, kind: int) -> str:
        """``"1m"`` … ``"9s"``, ``"E"`` … ``"P"``; ``"?"`` for a face-down card
        (None in a seat's view; -1 is read the same).

        Raises:
            BadNotation: any other kind outside 0..33.
        """
        kind = _checked(kind)
        if kind == HIDDEN:
            return "?"
        if kind >= 27:
            return HONORS[kind - 27]
        return f"{kind % 9 + 1}{SUITS[kind // 9]}"

    def format(self, cards: Iterable[int]) -> str:
        """Compact form, sorted, suits grouped: ``"123m45p EEC"``; face-down
        cards (None, or -1) last, as ``?``."""
        tiles = sorted(_checked(c) for c in cards)
        hidden = tiles.count(HIDDEN)
        tiles = tiles[hidden:]
        parts = []
        for s, suit in enumerate(SUITS):
            ranks = "".join(str(t % 9 + 1) for t in tiles if t // 9 == s and t < 27)
            if ranks:
                parts.append(ranks + suit)
        honors = "".join(HONORS[t - 27] for t in tiles if t >= 27)
        if honors:
            parts.append(honors)
        parts.extend("?" * hidden)
        return " ".join(parts)

    def format_seq(self, cards: Iterable[int]) -> str:
        """One token per tile, in the given order (for walls): ``"N N 3p 4s"``."""
        return " ".join(self.token(c) for c in cards)

    def chinese(self, kind: int) -> str:
        """``"一万"`` … ``"九条"``, ``"东"`` … ``"白"``; ``"?"`` face down."""
        kind = _checked(kind)
        return "?" if kind == HIDDEN else _ZH_NAMES[kind]

    def glyph(self, kind: int) -> str:
        """The Unicode mahjong tile glyph (U+1F000 block); the tile back face down."""
        kind = _checked(kind)
        return "\U0001F02B" if kind == HIDDEN else _GLYPHS[kind]


HIDDEN = -1  # a face-down card in a seat's view of the events


def _checked(kind: int | None) -> int:
    if kind is None:  # a face-down card as views and redacted events spell it
        return HIDDEN
    if type(kind) is not int or not HIDDEN <= kind < N_KINDS:
        raise BadNotation(f"tile kind {kind!r} is out of range 0..33")
    return kind


TILES = MahjongTiles()


def suit_of(kind: int) -> int:
    """0 万, 1 筒, 2 条, 3 honors."""
    return kind // 9 if kind < 27 else 3


def rank_of(kind: int) -> int:
    """Rank 1–9 of a suited tile; 1–7 for honors in the order E S W N C F P."""
    return kind % 9 + 1 if kind < 27 else kind - 26
