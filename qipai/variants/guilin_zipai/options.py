"""Options of 桂林字牌 (guilin-zipai.md §8).

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
    """The house-rule switches of 桂林字牌, with the rules file's defaults (§8).

    Attributes:
        hu_scale: 胡数 → 子 (§7, seed 结算方法): ``"10/3"`` (default: 10胡起胡,
            3胡1子), ``"10/5"``, ``"15/3"``, ``"15/5"``.  The first number is
            the threshold — also the minimum 胡数 of a win (起胡) — the second
            the step: 子 = 1 + ⌊(胡数 − threshold) / step⌋.
        bonus_mode: 名堂 bonuses (自摸, 天胡, 地胡, 三笼五坎; seed "2番或加1子"):
            ``"fan"`` (default: each bonus doubles, 番数 = 2^k) or ``"zi"``
            (each bonus adds 1 子).
        xing_mode: which card is the 醒 of a flipped card (§6): ``"shang"``
            上醒 (default: the next number of the same case, 翻小三 → 小四),
            ``"ben"`` 本醒 (the flipped card itself), ``"xia"`` 下醒 (the
            previous number, 翻小四 → 小三).  Numbers wrap within their case
            (D-ZP7: x10's next is x1).
        max_flips: 连翻 (§6, D-ZP8): at most this many 醒 flips per win; None
            (default) = no limit but the stock.  0 switches 醒 off entirely
            (海底胡 included).
        first_dealer: the first hand's dealer (§2: the room creator, 开房玩家).
            Seat 0–2, default 0.
        fangpao_bihu: 放炮必胡 (§4): a player who can win on a discard must
            win.  Default True.
        xiahuo: 下伙 (§3.1, D-ZP10): a 吃 must also lay down the further
            copies of the eaten kind in valid groups.  Default True.
        guozhang: 过张 (§3.1, D-ZP11): ``"joint"`` (default: a passed 吃 or 碰
            bars both 吃 and 碰 of that kind) or ``"separate"`` (a passed 吃
            bars only 吃, a passed 碰 only 碰).
        own_discard_bars_chi: D-ZP11: a player may not 吃 a kind he has
            discarded himself.  Default False.
        two_saochuan: a player dealt two 扫穿 (§3.2): ``"skip_discard"``
            (default, D-ZP13: he skips the first discard otherwise due) or
            ``"extra_card"`` (he receives the next stock card at the deal).
    """

    hu_scale: Literal["10/3", "10/5", "15/3", "15/5"] = "10/3"
    bonus_mode: Literal["fan", "zi"] = "fan"
    xing_mode: Literal["shang", "ben", "xia"] = "shang"
    max_flips: Annotated[int, Meta(ge=0)] | None = None
    first_dealer: Annotated[int, Meta(ge=0, le=2)] = 0
    fangpao_bihu: bool = True
    xiahuo: bool = True
    guozhang: Literal["joint", "separate"] = "joint"
    own_discard_bars_chi: bool = False
    two_saochuan: Literal["skip_discard", "extra_card"] = "skip_discard"


def threshold(options: ZipaiOptions | None = None) -> int:
    """The 起胡 threshold of ``options.hu_scale`` (10 or 15): the minimum
    胡数 of a win and the 胡数 worth 1 子 (§7)."""
    return HU_SCALES[(options or ZipaiOptions()).hu_scale][0]


def step(options: ZipaiOptions | None = None) -> int:
    """The 胡数 per further 子 of ``options.hu_scale`` (3 or 5, §7)."""
    return HU_SCALES[(options or ZipaiOptions()).hu_scale][1]
