"""Options of 桂林麻将 (docs/variants/guilin-mahjong.md, Options).

A host's options dict is converted with ``msgspec.convert(d, GuilinOptions)``:
an unknown name, a wrong type, a string choice outside its ``Literal`` or a
number outside its range fails with a message that names the option.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta


class GuilinOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The house-rule switches of 桂林麻将, with the rules' defaults.

    Each field's metadata says what it means, what it allows and where the
    rule comes from (the source document or the decision D-GL… of the
    variant page); :func:`qipai.core.options.describe` reads it for
    ``qipai variants guilin-mahjong`` and the page's options table.
    """

    hubao: Annotated[bool, Meta(
        description="互包 (mutual liability) on or off.  Off: the hand's `hubao` "
                    "relations are ignored and every seat pays for itself.",
        extra={"source": "互包 is the source document's (特殊规则 互包); "
                         "switching it off is a house rule"},
    )] = True
    hubao_dealin: Annotated[Literal["partner_double", "literal"], Meta(
        description="How 互包 case 3 (A 点炮) is read.  `partner_double`: A dealing in "
                    "to his partner B pays B twice the normal amount; dealing in to an "
                    "outsider changes nothing.  `literal`: the source's literal "
                    "reading — whenever A deals in to anyone but B, B pays that winner "
                    "twice the normal amount and A pays the normal amount.",
        extra={"source": "D-GL10, D-GL14"},
    )] = "partner_double"
    max_flips: Annotated[int, Meta(
        ge=0,
        description="翻醒: bonus flips at most per winner; 0 disables 翻醒.",
        extra={"source": "source document: 最多翻醒次数为2次"},
    )] = 2
    reflip_at: Annotated[int, Meta(
        ge=1,
        description="翻醒: the 醒数 of one flip that earns the next flip.",
        extra={"source": "source document: 翻出4醒以上能得到再翻一次醒的权利"},
    )] = 4
    zhuipai: Annotated[Literal["first_round", "any_round", "off"], Meta(
        description="追牌.  `first_round`: the dealer's opening discard followed by the "
                    "same kind from the other three, and the dealer pays; `any_round`: "
                    "any four consecutive same-kind discards by the four seats in "
                    "turn, and the first of the four pays; `off`: no 追牌.",
        extra={"source": "D-GL11"},
    )] = "first_round"
    zhuipai_amount: Annotated[int, Meta(
        ge=0,
        description="追牌: 子 paid to each other seat.",
        extra={"source": "D-GL11"},
    )] = 1
    dealer_rotation: Annotated[Literal["winner", "next_unless_dealer_wins"], Meta(
        description="Who deals the next hand.  `winner`: the winner (after 一炮多响 the "
                    "discarder; after 荒庄 the same dealer); `next_unless_dealer_wins`: "
                    "the dealer keeps the deal by winning or 荒庄, otherwise the next "
                    "seat deals.",
        extra={"source": "D-GL12"},
    )] = "winner"
    reserve_tiles: Annotated[int, Meta(
        ge=0, le=83,
        description="荒庄: tiles at the tail of the wall that are never drawn (some "
                    "operators keep 14).",
        extra={"source": "D-M3 (mahjong common rules)"},
    )] = 0
