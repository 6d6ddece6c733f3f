"""Options of 桂林字牌 (docs/variants/guilin-zipai.md, Options).

A host's options dict is converted with ``msgspec.convert(d, ZipaiOptions)``:
an unknown name, a wrong type, a string choice outside its ``Literal`` or a
number outside its range fails with a message that names the option.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

__all__ = ["ZipaiOptions", "HU_SCALES", "threshold", "step"]

#: 胡数 → 子 settings (§7): ``hu_scale`` → (threshold 起胡, step 几胡一子).
HU_SCALES: dict[str, tuple[int, int]] = {
    "10/3": (10, 3),
    "10/5": (10, 5),
    "15/3": (15, 3),
    "15/5": (15, 5),
}


class ZipaiOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The house-rule switches of 桂林字牌, with the rules' defaults.

    Each field's metadata says what it means, what it allows and where the
    rule comes from (the source document or the decision D-ZP… of the
    variant page); :func:`qipai.core.options.describe` reads it for
    ``qipai variants guilin-zipai`` and the page's options table.
    """

    hu_scale: Annotated[Literal["10/3", "10/5", "15/3", "15/5"], Meta(
        description="胡数 → 子: `threshold/step`.  The threshold is also the minimum "
                    "胡数 of a win (起胡); 子 = 1 + ⌊(胡数 − threshold) / step⌋.",
        extra={"source": "source document, 结算方法: 10胡起胡，3胡1子 … (four settings)"},
    )] = "10/3"
    bonus_mode: Annotated[Literal["fan", "zi"], Meta(
        description="名堂 bonuses (自摸, 天胡, 地胡, 三笼五坎).  `fan`: each bonus "
                    "doubles (番数 = 2^k); `zi`: each bonus adds 1 子.",
        extra={"source": "source document: 2番或加1子"},
    )] = "fan"
    xing_mode: Annotated[Literal["shang", "ben", "xia"], Meta(
        description="Which card is the 醒 of a flipped card.  `shang` 上醒: the next "
                    "number of the same case (翻小三 → 小四); `ben` 本醒: the flipped "
                    "card itself; `xia` 下醒: the previous number (翻小四 → 小三).  "
                    "Numbers wrap within their case (x10's next is x1).",
        extra={"source": "source document: 上醒/本醒/下醒（可选）; D-ZP7"},
    )] = "shang"
    max_flips: Annotated[Annotated[int, Meta(ge=0)] | None, Meta(
        description="连翻: at most this many 醒 flips per win; none = no limit but "
                    "the stock; 0 switches 醒 off entirely (海底胡 included).",
        extra={"source": "D-ZP8"},
    )] = None
    first_dealer: Annotated[int, Meta(
        ge=0, le=2,
        description="The first hand's dealer: the room creator's seat.",
        extra={"source": "source document: 第一局开房玩家为庄家"},
    )] = 0
    fangpao_bihu: Annotated[bool, Meta(
        description="放炮必胡: a player who can win on a discard must win.",
        extra={"source": "source document: 放炮（放炮必胡）"},
    )] = True
    xiahuo: Annotated[bool, Meta(
        description="下伙: a 吃 must also lay down the further copies of the eaten "
                    "kind in valid groups.",
        extra={"source": "D-ZP10"},
    )] = True
    guozhang: Annotated[Literal["joint", "separate"], Meta(
        description="过张.  `joint`: a passed 吃 or 碰 bars both 吃 and 碰 of that "
                    "kind; `separate`: a passed 吃 bars only 吃, a passed 碰 only 碰.",
        extra={"source": "D-ZP11 (source document: 过张后的牌不可再吃或者碰)"},
    )] = "joint"
    own_discard_bars_chi: Annotated[bool, Meta(
        description="A player may not 吃 a kind he has discarded himself.",
        extra={"source": "D-ZP11"},
    )] = False
    two_saochuan: Annotated[Literal["skip_discard", "extra_card"], Meta(
        description="A player dealt two 扫穿.  `skip_discard`: he skips the first "
                    "discard otherwise due; `extra_card`: he receives the next stock "
                    "card at the deal (several such players: in turn order from the "
                    "dealer, D-ZP21).",
        extra={"source": "D-ZP13, D-ZP21"},
    )] = "skip_discard"


def threshold(options: ZipaiOptions | None = None) -> int:
    """The 起胡 threshold of ``options.hu_scale`` (10 or 15): the minimum
    胡数 of a win and the 胡数 worth 1 子 (§7)."""
    return HU_SCALES[(options or ZipaiOptions()).hu_scale][0]


def step(options: ZipaiOptions | None = None) -> int:
    """The 胡数 per further 子 of ``options.hu_scale`` (3 or 5, §7)."""
    return HU_SCALES[(options or ZipaiOptions()).hu_scale][1]
