"""广西麻将 ``guangxi-mahjong`` — the variant plugin (docs/variants/guangxi-mahjong.md,
from 《广西麻将游戏》).

Registered under the entry-point group ``qipai.variants``.  The common flow
is :class:`qipai.families.mahjong.flow.MahjongFlow` (暗杠 fully face down,
D-GX10; a 吃 does not void 地胡); this module answers what 广西 decides: the
win check and values (§2–§3), 封胡 (§4) and 互包 (§5) as relations, the seat
under 封胡 never offered a win, kong fees with 连杠 liability (§6, D-GX7),
暗杠 fees returned at 荒庄, and the settlement.  No bonus flip.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Action, Flip, HandEnd, Hu, Marked, Melded, Payment, Settlement, Window, Zimo,
)
from qipai.core.ruleset import Manifest
from qipai.families.mahjong import scoring_kit
from qipai.families.mahjong.flow import MahjongFlow, MahjongState, merged_pairs, pairs_reaching
from qipai.families.mahjong.tiles import TILES
from qipai.variants.guangxi_mahjong import patterns, scoring
from qipai.variants.guangxi_mahjong.options import GuangxiOptions

NAME = "guangxi-mahjong"
VERSION = "1"

#: Chinese names of the payment breakdown ids (guangxi-mahjong.md §2–§6).
NAMES = {**scoring_kit.NAMES, "pengpenghu": "对对胡", "qixiaodui": "七小对", "qidadui": "七大对",
         "chaohaohua_qidui": "超豪华七对", "chaochaohaohua_qidui": "超超豪华七对",
         "shisanyao": "十三幺", "haidi": "海底", "haidipao": "海底炮", "gangshanghua": "杠开",
         "gangshangpao": "杠冲", "quanqiupao": "全求人反冲", "renhu": "人胡",
         "fenghu": "封胡", "liangang": "连杠", "jiagang": "补杠", "angang_refund": "暗杠退还"}
MANIFEST = Manifest(name=NAME, title="广西麻将", players=4, cards=TILES,
                    options_type=GuangxiOptions, family="mahjong", version=VERSION,
                    state_type=MahjongState, relations=("fenghu", "hubao"), names=NAMES)
QIPAI_BASE_PLUGINS = [MahjongFlow(MANIFEST, patterns=patterns, angang_hidden=4,
                                  dihu_voided_by_chi=False)]


@hookimpl
def qipai_bonus_flip(holding: Sequence[int], tile: int | None, stock: Sequence[int],
                     options: GuangxiOptions) -> Flip:
    """广西麻将 has no bonus flip."""
    return Flip(flipped=(), xing=0)


@hookimpl
def qipai_settle(end: HandEnd, options: GuangxiOptions) -> Settlement:
    """§3–§6: values per payer, 封胡 / 互包 liability, 抢杠, 杠开 chains."""
    return scoring.settle(end, options)


# ---------------------------------------------------------------- 封胡 and 互包


@hookimpl
def qipai_relations(table: Any) -> dict[str, list[list[int]]]:
    """封胡 (§4): ``[a, b]`` once b made ``fenghu_count`` 碰 (a 明杠 counts,
    D-GX2) of a's discards; 互包 (§5): b laid down three sets (吃, 碰, 明杠)
    of a's discards, mutual.  Kept only as option ``liability`` selects."""
    opts = table.options
    rel = {k: [list(g) for g in v] for k, v in table.relations.items()}
    st = table.extra
    if opts.liability in ("fenghu", "both"):
        fenghu = rel.get("fenghu", []) + pairs_reaching(st.pengs, opts.fenghu_count)
        rel["fenghu"] = [list(p) for p in sorted({tuple(p) for p in fenghu})]
    if opts.liability in ("hubao", "both"):
        rel["hubao"] = merged_pairs(rel.get("hubao", []), pairs_reaching(st.claims, 3))
    return {k: v for k, v in rel.items() if v}


def fenghu_seats(table: Any) -> set[int]:
    """Seats under 封胡 (they may not win this hand, §4 effect 1)."""
    if table.options.liability not in ("fenghu", "both"):
        return set()
    return {a for a, _ in qipai_relations(table).get("fenghu", [])}


@hookimpl(wrapper=True)
def qipai_turn_actions(table: Any, seat: int) -> Generator[None, list[Action], list[Action]]:
    """A seat under 封胡 is not offered 自摸."""
    actions = yield
    if seat in fenghu_seats(table):
        actions = [a for a in actions if not isinstance(a, Zimo)]
    return actions


@hookimpl(wrapper=True)
def qipai_claim_actions(table: Any, seat: int,
                        window: Window) -> Generator[None, list[Action], list[Action]]:
    """A seat under 封胡 (``fenghu_count`` 碰 fed to one seat) is not offered
    胡 (by discard or 抢杠)."""
    actions = yield
    if actions and seat in fenghu_seats(table):
        actions = [a for a in actions if not isinstance(a, Hu)]
        if len(actions) == 1:  # only the pass is left: nothing to ask
            actions = []
    return actions


@hookimpl
def qipai_explain_illegal(table: Any, action: Action) -> str | None:
    """Say so when a seat under 封胡 asks to win."""
    if isinstance(action, (Hu, Zimo)) and action.seat in fenghu_seats(table):
        takers = [b for a, b in qipai_relations(table).get("fenghu", []) if a == action.seat]
        return (f"seat {action.seat} is under 封胡 (fed {table.options.fenghu_count} 碰 to seat "
                f"{', '.join(map(str, takers))}) and may not win this hand")
    return None


# ---------------------------------------------------------------- kong fees


@hookimpl
def qipai_instant_payments(table: Any, event: Any) -> list[Payment]:
    """Kong fees as the kong completes (§6, 连杠 liability D-GX7 — a robbed
    补杠 never completes, so it is never paid); at 荒庄 every 暗杠 fee is
    returned."""
    if isinstance(event, Melded) and event.meld.kind in ("minggang", "jiagang", "angang"):
        return scoring.kong_fees(event.seat, table.extra.chain)
    if isinstance(event, Marked) and event.what == "huangzhuang":
        return scoring.huangzhuang_refunds(table.state.instant)
    return []
