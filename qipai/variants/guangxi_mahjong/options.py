"""Options of 广西麻将 (docs/variants/guangxi-mahjong.md, Options).

A host's options dict is converted with ``msgspec.convert(d, GuangxiOptions)``:
an unknown name, a wrong type, a string choice outside its ``Literal``, a
number outside its range or an unknown pattern id in ``values`` fails with a
message that names it.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

__all__ = ["DEFAULT_VALUES", "GuangxiOptions"]

#: The value table (Patterns and values), per paying seat, in 张: pattern id → (dianpao, zimo).
#: ``dianpao`` is what the discarder pays, ``zimo`` what each of the three
#: others pays.  Order = the variant page's table order.
#:
#: 全求人 is won by discard only, so the rules give no zimo value ("—"); the
#: zimo column is used for it only on a 抢杠 win (D-GX6 counts 抢杠 as a
#: discard for 全求人, and §3 prices 抢杠 at the zimo value × 3).  Its default
#: 12 follows the table's own rule for every pattern but 平胡: zimo = ⅔ of
#: the dianpao value (对对胡 9/6, 字一色 18/12, 七小对 12/8 …).
DEFAULT_VALUES: dict[str, tuple[int, int]] = {
    "pinghu": (2, 3),  # 平胡/推倒胡
    "pengpenghu": (9, 6),  # 对对胡/碰碰胡
    "qingyise": (9, 6),  # 清一色
    "ziyise": (18, 12),  # 字一色 (zimo: house default)
    "quanqiuren": (18, 12),  # 全求人 (zimo column: 抢杠 only, see above)
    "qixiaodui": (12, 8),  # 七小对
    "qidadui": (24, 16),  # 七大对
    "chaohaohua_qidui": (48, 32),  # 超豪华七对
    "chaochaohaohua_qidui": (96, 64),  # 超超豪华七对 (zimo: house default)
    "shisanyao": (48, 32),  # 十三幺
}


def _default_values() -> dict[str, tuple[int, int]]:
    return dict(DEFAULT_VALUES)


class GuangxiOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The house-rule switches of 广西麻将, with the rules' defaults.

    Each field's metadata says what it means, what it allows and where the
    rule comes from (the source document or the decision D-GX… of the
    variant page); :func:`qipai.core.options.describe` reads it for
    ``qipai variants guangxi-mahjong`` and the page's options table.
    ``fenghu_count`` is read by the relation tracker, not by scoring, which
    takes the ``fenghu`` relations as given.
    """

    liability: Annotated[Literal["fenghu", "hubao", "both", "off"], Meta(
        description="Which liability scheme settles a win.  `fenghu`: 封胡 only; "
                    "`hubao`: 互包 only; `both`: both, and where A is 封胡 toward B, "
                    "封胡 replaces 互包 between A and B; `off`: neither (a seat that "
                    "gave three pengs may still win).",
        extra={"source": "D-GX8, D-GX13"},
    )] = "fenghu"
    gangkai_liability: Annotated[Literal["first_kong", "any_minggang"], Meta(
        description="Who pays a 连杠的杠开 (zimo on the replacement at the end of a "
                    "kong chain).  `first_kong` (the source read literally): if the "
                    "chain's first kong is a 明杠 (点杠 or 补杠) the seat that fed it "
                    "pays all three shares, if it is an 暗杠 each of the three pays "
                    "his share; `any_minggang`: the feeder of the chain's first 明杠 "
                    "pays whenever the chain holds one.",
        extra={"source": "D-GX7, D-GX16 (source document: 先暗杠，再杠开，根据胡牌牌型"
                         "三家给付 / 先明杠，再杠开，则由第一次给碰玩家给付)"},
    )] = "first_kong"
    fenghu_count: Annotated[int, Meta(
        ge=1,
        description="封胡: how many 碰 (a 明杠 from a discard counting as one) B must "
                    "claim from A's discards for A to be 封胡 toward B.",
        extra={"source": "source document: A玩家被B玩家碰足3次就不能再胡牌; D-GX2"},
    )] = 3
    values: Annotated[dict[str, tuple[int, int]], Meta(
        description="牌型分: per-pattern `[dianpao, zimo]` values in 张, per paying "
                    "seat; a pattern not given keeps its default, so "
                    "`{\"ziyise\": [24, 16]}` changes 字一色 alone.  Values >= 0.",
        extra={"source": "source document's values; the zimo values of 字一色 and "
                         "超超豪华七对 and the 全求人 zimo column (抢杠 only) are house "
                         "defaults; D-GX15",
               "allowed": "pattern ids of the value table → two integers >= 0",
               "default_text": "the value table (Patterns and values)"},
    )] = msgspec.field(default_factory=_default_values)
    menqing_on_dianpao: Annotated[bool, Meta(
        description="吃炮带门清: apply 门清 (×4/3, rounded down) to wins by discard "
                    "too.  Off: 门清 counts on zimo, on 抢杠 and on the 平胡 base of "
                    "杠冲/全求人反冲 only.",
        extra={"source": "D-GX5"},
    )] = False
    reserve_tiles: Annotated[int, Meta(
        ge=0, le=83,
        description="荒庄: tiles at the tail of the wall that are never drawn.",
        extra={"source": "D-M3 (mahjong common rules)"},
    )] = 0

    def __post_init__(self) -> None:
        # msgspec turns these into a ValidationError naming the bad entry when
        # converting a host's dict; direct construction raises them as they are.
        if self.fenghu_count < 1:
            raise ValueError(f"fenghu_count must be >= 1, got {self.fenghu_count}")
        if not 0 <= self.reserve_tiles <= 83:
            raise ValueError(f"reserve_tiles must be 0..83, got {self.reserve_tiles}")
        for pid, pair in self.values.items():
            if pid not in DEFAULT_VALUES:
                raise ValueError(
                    f"values: unknown pattern id {pid!r}; the valued patterns are "
                    f"{', '.join(DEFAULT_VALUES)}"
                )
            if (
                not isinstance(pair, (tuple, list))
                or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            ):
                raise TypeError(f"values[{pid!r}] must be two integers [dianpao, zimo]")
            if min(pair) < 0:
                raise ValueError(f"values[{pid!r}] must not be negative, got {list(pair)}")

    def value(self, pattern: str, zimo: bool) -> int:
        """The value (张, per paying seat) of ``pattern``: its zimo column when
        ``zimo`` (also used for 抢杠), else its dianpao column."""
        pair = self.values.get(pattern, DEFAULT_VALUES[pattern])
        return pair[1 if zimo else 0]
