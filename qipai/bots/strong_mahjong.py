"""The strong bot's mahjong play: the greedy strategy's game, changed only
where the seat's view says a discard is dangerous (docs/concepts/bots.md).

:class:`StrongMahjong` asks the greedy :class:`~qipai.bots.mahjong.MahjongStrategy`
first, then weighs each discard's **danger**: per opponent, the chance he is
ready (:data:`P_READY`, by his melds and discards), times the chance the
tile is one he waits on (its class: a tile he discarded himself (现物), one
discarded after his last discard and not won on, suji, an honor others show,
…: :data:`P_WAIT`; a seat with four melds waits to pair his one tile),
times what a deal-in to him costs (:class:`Profile`: the mean by his melds,
raised by the liability rules — a Guilin 互包 partner, a Guangxi seat one is
封胡 toward, the discard right after one's own kong (杠上炮 / 杠冲) or while
in 全求人 (反冲)).

* The greedy discard stands unless another is as near ready (the same
  shanten, at least as many live useful tiles) and safer.
* Three or more tiles from ready against an opponent whose P(ready) × cost
  reaches a standard win, or barred from winning (封胡): the safest tile.
* Claims and kongs: the greedy strategy's (none when barred from winning).

The tables were measured on greedy self-play hands, not set by hand.  (A
weighing of the patterns — 七对, 碰碰胡, 清一色 — by measured win chances,
for discards and claims, lost to the greedy bot in duplicate matches in
both variants and was taken out: see the history of this file.)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from qipai.bots.base import seen_kinds
from qipai.bots.mahjong import MahjongStrategy
from qipai.core.model import Action, Angang, Discard, Hu, Minggang, Pass, Zimo
from qipai.core.views import SeatView
from qipai.families.mahjong.shanten import shanten_standard

__all__ = ["P_READY", "P_WAIT", "Profile", "StrongMahjong", "danger_class"]

#: P(an opponent is ready) by his melds (row, 0..4) and his discards // 2
#: (column, 0..6, 6 = 12 or more): measured on 300 greedy self-play hands.
P_READY: tuple[tuple[float, ...], ...] = (
    (0.001, 0.012, 0.04, 0.11, 0.21, 0.22, 0.25),
    (0.03, 0.05, 0.09, 0.18, 0.22, 0.30, 0.35),
    (0.19, 0.19, 0.25, 0.33, 0.41, 0.50, 0.56),
    (0.60, 0.60, 0.60, 0.72, 0.74, 0.75, 0.84),
    (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
)

#: P(a tile is a winning tile of a ready opponent) by its class
#: (:func:`danger_class`): measured on the same hands.
P_WAIT: dict[str, float] = {
    "genbutsu": 0.003, "passed": 0.005,
    "honor1": 0.008, "honor2": 0.001, "honor3": 0.0,
    "sujiT": 0.028, "sujiE": 0.067, "sujiM": 0.087,
    "halfsujiT": 0.045, "halfsujiE": 0.09, "halfsujiM": 0.086,
    "numTs1": 0.058, "numTs2": 0.036, "numTs3": 0.037,
    "numEs1": 0.126, "numEs2": 0.072, "numEs3": 0.041,
    "numMs1": 0.111, "numMs2": 0.098, "numMs3": 0.058,
}

def _near(c: Sequence[int], t: int) -> bool:
    """Whether a tile ``t`` could join a block of ``c`` (held, or a suit
    tile within two ranks of one held): others never lower the shanten."""
    if c[t]:
        return True
    if t >= 27:
        return False
    r = t % 9
    base = t - r
    return any(c[base + j] for j in range(max(0, r - 2), min(9, r + 3)))


def _useful(c: list[int], n: int, sh: int, live: Sequence[int]) -> int:
    """Live copies of the tiles that lower the standard shanten ``sh`` of
    ``c`` (beside ``n`` melds)."""
    u = 0
    for t in range(34):
        if live[t] > 0 and c[t] < 4 and _near(c, t):
            c[t] += 1
            if shanten_standard(c, n) < sh:
                u += live[t]
            c[t] -= 1
    return u


_KONGS = frozenset({"minggang", "angang", "jiagang", "gang"})


def danger_class(view: SeatView, opponent: int, k: int, seen: Sequence[int],
                 passed: set[int]) -> str:
    """The class of tile kind ``k`` as a discard against ``opponent`` (a key
    of :data:`P_WAIT`): ``genbutsu`` (in his discards), ``passed`` (discarded
    since his last discard and not won on: ``passed``), ``honor<n>`` (an
    honor the viewer sees ``n`` copies of, 3 = 3 or 4), ``suji``/``halfsuji``
    (both / one of the ranks three away in his discards) or ``num``,
    each ``T`` (1, 9), ``E`` (2, 8) or ``M`` (3–7), ``num`` with the
    copies seen (``s1``..``s3``)."""
    d = view.discards[opponent]
    if k in d:
        return "genbutsu"
    if k in passed:
        return "passed"
    if k >= 27:
        return f"honor{min(seen[k], 3)}"
    r = k % 9
    edge = "T" if r in (0, 8) else ("E" if r in (1, 7) else "M")
    suji = [k + dr for dr in (-3, 3) if 0 <= r + dr <= 8]
    hit = sum(1 for s in suji if s in d)
    if hit == len(suji):
        return f"suji{edge}"
    if hit:
        return f"halfsuji{edge}"
    return f"num{edge}s{min(max(seen[k], 1), 3)}"


def passed_tiles(view: SeatView, opponent: int) -> set[int]:
    """Tiles discarded after ``opponent``'s last discard (the last discard
    of each seat after him in turn order, up to the viewer), which he did
    not win on: a greedy player always takes a win, so none is a wait of
    his hand as it is (claims between can make this approximate)."""
    n = len(view.discards)
    out: set[int] = set()
    s = (opponent + 1) % n
    while s != view.seat:
        if view.discards[s]:
            out.add(view.discards[s][-1])
        s = (s + 1) % n
    return out


class Profile:
    """What wins and deal-ins are worth in one variant (子 or 张, the
    variant's unit), read from its name and options.

    Attributes:
        std_open: a standard-shape win with melds (the unit of the
            thresholds below).
        dealin: a deal-in's mean cost by the winner's melds (0..4): measured
            on 1,000 greedy self-play hands (a Guilin 全求人 pays 35 and more,
            a 门清 平胡 double).
        kong_after: the cost factor of the discard right after one's kong.
        quanqiu: the cost factor while in 全求人 (4 melds).
        partner_double: a Guilin 互包 partner's deal-in pays twice.
        fenghu: Guangxi 封胡 is on (``fenghu_count`` pengs bar a win).

    Claims are the greedy strategy's: duplicate matches against the greedy
    bot (800 deals each) found no better rule — the greedy's claims keep
    the hand fast.
    """

    def __init__(self, ruleset: Any) -> None:
        name = ruleset.manifest.name if ruleset is not None else ""
        opts = ruleset.options if ruleset is not None else None
        self.fenghu_count = int(getattr(opts, "fenghu_count", 3))
        self.hubao_count = 3
        if name == "guangxi-mahjong":
            self.std_open = 3.6
            self.dealin = (4.4, 2.1, 2.2, 2.3, 2.9)
            self.kong_after, self.quanqiu = 3.0, 3.0
            liability = getattr(opts, "liability", "fenghu")
            self.fenghu = liability in ("fenghu", "both")
            self.hubao3 = liability in ("hubao", "both")
            self.partner_double = False
        else:  # guilin-mahjong and mahjong variants like it
            self.std_open = 10.0
            self.dealin = (20.4, 10.3, 10.1, 16.3, 81.8)
            self.kong_after, self.quanqiu = 2.0, 1.0
            self.fenghu = False
            self.hubao3 = False
            self.partner_double = bool(getattr(opts, "hubao", name == "guilin-mahjong"))


class StrongMahjong:
    """Strong mahjong play (see the module doc).

    Args:
        rng: ties.
        ruleset: the table's rules (the variant's :class:`Profile`).
        budget: 0 plays as the greedy strategy; 1 or more weighs danger.
    """

    #: A discard replaces the greedy one
    #: when it is as near ready, keeps this share of its live useful tiles
    #: and is safer by more than :attr:`SAFER` of a standard win.
    KEEP_USEFUL = 1.0
    SAFER = 0.01
    #: Fold (the safest discard) this far from ready against an opponent
    #: whose P(ready) × deal-in cost reaches FOLD_THREAT standard wins.
    FOLD_SHANTEN = 3
    FOLD_THREAT = 1.0
    #: ... and FOLD_BIG_SHANTEN from ready against one whose threat reaches
    #: FOLD_BIG standard wins (a Guilin seat with four melds: 全求人).
    FOLD_BIG = 4.0
    FOLD_BIG_SHANTEN = 1
    #: Declare every 暗杠 and 点杠 offered: its fee is paid at once and
    #: stands whatever the hand does (worth more than the shanten it may cost).
    ALWAYS_KONG = True

    def __init__(self, rng: random.Random, ruleset: Any = None, budget: int = 1) -> None:
        self.rng = rng
        self.greedy = MahjongStrategy(rng, ruleset)
        self.profile = Profile(ruleset)
        self.budget = budget
        self._kongs_at = (-1, 0)  # (own discards, own kongs) at the last own discard

    # -- shared reads -----------------------------------------------------------
    def _relations(self, view: SeatView) -> tuple[set[int], set[int], bool]:
        """(互包 partners of the viewer, seats the viewer is 封胡 toward,
        whether the viewer is 封胡 toward anyone), from the melds' sources."""
        n = len(view.melds)
        me = view.seat
        claims = [[0] * n for _ in range(n)]  # claims[giver][taker]
        pengs = [[0] * n for _ in range(n)]
        for taker, melds in enumerate(view.melds):
            for m in melds:
                g = m.from_seat
                if g is None or g == taker:
                    continue
                claims[g][taker] += 1
                if m.kind in ("peng", "minggang", "jiagang"):
                    pengs[g][taker] += 1
        p = self.profile
        partners = {o for o in range(n) if o != me and
                    (claims[me][o] >= p.hubao_count or claims[o][me] >= p.hubao_count)}
        feng = {o for o in range(n) if o != me and pengs[me][o] >= p.fenghu_count} \
            if p.fenghu else set()
        return partners, feng, bool(feng)

    def _threats(self, view: SeatView, just_konged: bool) -> list[tuple[int, float, float]]:
        """Per opponent: (seat, P(ready), cost of a deal-in to him)."""
        p = self.profile
        partners, feng, _ = self._relations(view)
        me = view.seat
        own = len(view.melds[me])
        out = []
        for o in range(len(view.melds)):
            if o == me:
                continue
            melds = view.melds[o]
            nm = min(len(melds), 4)
            pr = P_READY[nm][min(len(view.discards[o]) // 2, 6)]
            cost = p.dealin[nm]
            if o in partners and (p.partner_double or p.hubao3):
                cost *= 3.0 if p.hubao3 else 2.0
            if o in feng:
                cost *= 2.0
            if just_konged:
                cost *= p.kong_after
            elif own == 4:
                cost *= p.quanqiu
            out.append((o, pr, cost))
        return out

    def _danger(self, view: SeatView, threats: list[tuple[int, float, float]],
                seen: Sequence[int]) -> dict[int, float]:
        """Expected deal-in cost of discarding each kind held."""
        kinds = set(view.hand)
        out = dict.fromkeys(kinds, 0.0)
        for o, pr, cost in threats:
            if pr < 0.01:
                continue
            passed = passed_tiles(view, o)
            w = pr * cost
            if len(view.melds[o]) >= 4:
                # one tile in hand, waiting to pair it: any kind with a copy
                # unseen, likelier the more copies are unseen (the greedy
                # keeps the tile with more live copies)
                live = sum(4 - x for x in seen if x < 4)
                for k in kinds:
                    if k in passed:
                        continue
                    f = 0.3 if k in view.discards[o] else 1.0
                    out[k] += w * f * max(4 - seen[k], 0) / max(live, 1)
                continue
            for k in kinds:
                out[k] += w * P_WAIT[danger_class(view, o, k, seen, passed)]
        return out

    # -- decisions --------------------------------------------------------------
    def act(self, view: SeatView, legal: Sequence[Action]) -> Action:
        """The decision for the viewer (see the module doc)."""
        actions = legal if type(legal) is list else list(legal)
        for a in actions:
            if type(a) is Hu or type(a) is Zimo:
                return a
        if self.budget <= 0:
            return self.greedy.act(view, actions)
        if any(type(a) is Discard for a in actions):
            return self._turn(view, actions)
        passes = [a for a in actions if type(a) is Pass]
        if passes and self._relations(view)[2]:
            return passes[0]  # barred from winning (封胡): feed nobody, build nothing
        if self.ALWAYS_KONG:
            for a in actions:
                if type(a) is Minggang:
                    return a  # the discarder pays it at once
        return self.greedy.act(view, actions)

    @staticmethod
    def _counts(view: SeatView) -> list[int]:
        c = [0] * 34
        for k in view.hand:
            c[k] += 1
        return c

    def _just_konged(self, view: SeatView) -> bool:
        me = view.seat
        nd = len(view.discards[me])
        kongs = sum(1 for m in view.melds[me] if m.kind in _KONGS or len(m.cards) == 4)
        last_nd, last_k = self._kongs_at
        return nd == last_nd and kongs > last_k

    def _note_discard(self, view: SeatView) -> None:
        me = view.seat
        kongs = sum(1 for m in view.melds[me] if m.kind in _KONGS or len(m.cards) == 4)
        self._kongs_at = (len(view.discards[me]) + 1, kongs)

    def _turn(self, view: SeatView, actions: list[Action]) -> Action:
        g = self.greedy.act(view, actions)
        if type(g) is not Discard:
            return g  # a kong the greedy strategy takes
        if self.ALWAYS_KONG:
            for a in actions:
                if type(a) is Angang:
                    return a  # paid at once by each other seat, whatever the hand does
        c, melds = self._counts(view), view.melds[view.seat]
        seen = seen_kinds(view, 34)
        just = self._just_konged(view)
        _, _, barred = self._relations(view)
        threats = self._threats(view, just)
        danger = self._danger(view, threats, seen)
        kinds = {a.card for a in actions if type(a) is Discard}
        self._note_discard(view)
        if barred or self._fold(c, len(melds), g.card, threats):
            best = min(kinds, key=lambda k: (danger[k], k != g.card))  # the safest tile
        else:
            best = self._safer_equal(c, len(melds), g.card, kinds, danger, seen)
        if best == g.card:
            return g
        return next(a for a in actions if type(a) is Discard and a.card == best)

    def _fold(self, c: list[int], n: int, pick: int,
              threats: list[tuple[int, float, float]]) -> bool:
        """Whether to play safe: the hand after the greedy discard is
        :attr:`FOLD_SHANTEN` or more from ready while some opponent's
        P(ready) × deal-in cost reaches :attr:`FOLD_THREAT` standard wins."""
        t = max(pr * cost for _, pr, cost in threats) / self.profile.std_open
        if t < self.FOLD_THREAT:
            return False
        c[pick] -= 1
        sh = shanten_standard(c, n)
        c[pick] += 1
        return sh >= self.FOLD_SHANTEN or (t >= self.FOLD_BIG and sh >= self.FOLD_BIG_SHANTEN)

    def _safer_equal(self, c: list[int], n: int, pick: int, kinds: set[int],
                     danger: dict[int, float], seen: Sequence[int]) -> int:
        """``pick`` (the greedy discard), or a discard as near ready (same
        shanten, at least :attr:`KEEP_USEFUL` of its live useful tiles)
        whose danger is lower by more than :attr:`SAFER` of a standard
        win."""
        gain = self.SAFER * self.profile.std_open
        safer = [k for k in kinds if danger[pick] - danger[k] > gain]
        if not safer:
            return pick
        live = [4 - x if x < 4 else 0 for x in seen]
        c[pick] -= 1
        sh = shanten_standard(c, n)
        u0 = _useful(c, n, sh, live)
        c[pick] += 1
        best, low = pick, danger[pick]
        for k in sorted(safer, key=danger.__getitem__):
            c[k] -= 1
            ok = shanten_standard(c, n) <= sh and _useful(c, n, sh, live) >= self.KEEP_USEFUL * u0
            c[k] += 1
            if ok and danger[k] < low:
                best, low = k, danger[k]
                break
        return best
