"""Options of 桂林麻将 (guilin-mahjong.md §7).

A host's options dict is converted with ``msgspec.convert(d, GuilinOptions)``:
an unknown name, a wrong type, a string choice outside its ``Literal`` or a
number outside its range fails with a message that names the option.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta


class GuilinOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The house-rule switches of 桂林麻将, with the rules file's defaults.

    Attributes:
        hubao: 互包 (mutual liability, §4) on or off.  Off: the ``hubao``
            relations of a hand are ignored.  Default ``True``.
        hubao_dealin: D-GL10, how 互包 case 3 (A 点炮) is read.
            ``"partner_double"`` (default): A dealing in to his partner B
            pays B twice the normal amount; dealing in to an outsider changes
            nothing.  ``"literal"``: the seed's literal reading — whenever A
            deals in to anyone but B, B pays that winner twice the normal
            amount and A pays the normal amount (A dealing in to B as in the
            default).
        max_flips: 翻醒 — bonus flips at most per winner (seed: 最多翻醒次数为2次).
            Default 2; 0 disables 翻醒.
        reflip_at: 翻醒 — the 醒数 of one flip that earns the next flip
            (seed: 翻出4醒以上能得到再翻一次醒的权利).  Default 4.
        zhuipai: 追牌, D-GL11: ``"first_round"`` (default: the dealer's
            opening discard followed by the same kind from the other three),
            ``"any_round"`` (any four consecutive same-kind discards by the four
            seats in turn; the first of the four pays) or ``"off"``.
        zhuipai_amount: 追牌 — 子 paid to each other seat.  Default 1.
        dealer_rotation: 庄家 rotation, D-GL12: ``"winner"`` (default: the
            winner deals; after 一炮多响 the discarder; after 荒庄 the same
            dealer) or ``"next_unless_dealer_wins"`` (the dealer keeps the deal
            by winning or 荒庄, otherwise the next seat deals).
        reserve_tiles: 荒庄 — tiles at the tail of the wall that are never
            drawn (mahjong-common.md; some operators keep 14).  Default 0.
    """

    hubao: bool = True
    hubao_dealin: Literal["partner_double", "literal"] = "partner_double"
    max_flips: Annotated[int, Meta(ge=0)] = 2
    reflip_at: Annotated[int, Meta(ge=1)] = 4
    zhuipai: Literal["first_round", "any_round", "off"] = "first_round"
    zhuipai_amount: Annotated[int, Meta(ge=0)] = 1
    dealer_rotation: Literal["winner", "next_unless_dealer_wins"] = "winner"
    reserve_tiles: Annotated[int, Meta(ge=0, le=83)] = 0
