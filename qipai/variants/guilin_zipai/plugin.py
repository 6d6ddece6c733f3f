"""桂林字牌 ``guilin-zipai`` — the variant plugin (docs/variants/guilin-zipai.md,
from 《桂林字牌玩法规则》).

Registered under the entry-point group ``qipai.variants``.  The play (deal,
mandatory 扫/扫穿/开招, claims, 过张, discards) comes from
:class:`qipai.families.zipai.flow.ZipaiFlow` (``QIPAI_BASE_PLUGINS``); this
module answers what is scored: the manifest and options, the win check with
胡数 and the minimum, waits, 醒 and the settlement.
"""

from __future__ import annotations

from collections.abc import Sequence

from qipai.core.cards import counts
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Flip, FlipFn, HandEnd, Meld, Settlement, WinClaim, WinEval, WinReading
from qipai.core.ruleset import Manifest
from qipai.families.zipai import groups
from qipai.families.zipai.cards import CARDS
from qipai.families.zipai.flow import ZipaiFlow, ZipaiState
from qipai.variants.guilin_zipai import scoring
from qipai.variants.guilin_zipai.options import ZipaiOptions, threshold

NAME = "guilin-zipai"
VERSION = "1"

#: Chinese names of the payment breakdown ids (guilin-zipai.md §1, §4–§7).
NAMES = {"zi": "子", "hushu": "胡数", "xing": "醒", "kan": "坎", "bi": "坒", "dui": "对",
         "chi": "吃", "peng": "碰", "sao": "扫", "guosao": "过扫", "saochuan": "扫穿",
         "kaizhao": "开招", "zimo": "自摸", "tianhu": "天胡", "dihu": "地胡",
         "sanlong_wukan": "三笼五坎", "fangpao": "放炮", "pinghu": "平胡", "hu": "胡"}
MANIFEST = Manifest(name=NAME, title="桂林字牌", players=3, cards=CARDS, names=NAMES,
                    options_type=ZipaiOptions, family="zipai", version=VERSION,
                    state_type=ZipaiState, relations=(),
                    face_down_kinds=(("guosao", "sao"),),  # §3.1: 扫/过扫 alike face down
                    owner_claims=("draw",))  # §3.1: the drawer may 吃 or 胡 the card it shows
QIPAI_BASE_PLUGINS = [ZipaiFlow(MANIFEST)]


@hookimpl
def qipai_win_check(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                    options: ZipaiOptions) -> WinEval:
    """§4: all cards in groups and at most one pair, 胡数 ≥ the minimum of
    ``hu_scale``; bonuses 自摸/天胡/地胡/三笼五坎."""
    return scoring.evaluate(claim, how, dealer, from_seat, options)


@hookimpl
def qipai_readings(claim: WinClaim, how: str, dealer: int, from_seat: int | None,
                   options: ZipaiOptions) -> list[WinReading]:
    """Each reading of the claim (the hand, or the 开招/扫穿 its card makes) with
    every split of it; the one with the most 胡数 is paid."""
    return scoring.readings(claim, how, dealer, from_seat, options)


@hookimpl
def qipai_waits(hand: Sequence[int], melds: Sequence[Meld], options: ZipaiOptions) -> list[int]:
    """Cards another player could give that complete the hand with at least
    the minimum 胡数 (a self-drawn card may score more)."""
    return groups.waits(counts(hand, 20), list(melds), min_hu=threshold(options))


@hookimpl
def qipai_bonus_flip(holding: Sequence[int], tile: int | None, stock: Sequence[int],
                     options: ZipaiOptions) -> Flip:
    """醒 §6: ``xing_mode``, 真三醒/假四醒 re-flips, 海底胡."""
    return scoring.flip(list(holding), list(stock), tile, options)


@hookimpl
def qipai_settle(end: HandEnd, options: ZipaiOptions, bonus_flip: FlipFn) -> Settlement:
    """§7: one share = (子 + 中醒数) × 番数 from each loser; 放炮: the discarder
    pays both.  The 醒 through ``bonus_flip`` (the ruleset's ``qipai_bonus_flip``)."""
    return scoring.settle(end, options, bonus_flip)
