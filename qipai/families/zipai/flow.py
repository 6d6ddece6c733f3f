"""The zipai flow (docs/variants/guilin-zipai.md: Dealing, Play), as a default plugin.

:class:`ZipaiFlow` implements the turn-protocol and claim hooks of the
桂林字牌 family on the generic engine, all ``trylast``:

* the deal (D-ZP1: 21/20/20, the dealer's 亮张 shown, 19 in the stock) and
  the opening (initial 扫穿, then D-ZP6: 天胡, then 三笼五坎);
* a drawn card first meets the drawer's own hand: a 扫 / 过扫 / 扫穿 takes it
  face down, unseen by the others, and the drawer may then win (D-ZP4);
  otherwise it is shown and offered (a claim window with source ``draw``);
* claims on a card: 胡 (D-ZP3: the nearest seat from the card's owner,
  the drawer first; D-ZP9) > the mandatory 开招 / 碰 > 吃 (the drawer first,
  then his next seat; with 下伙, D-ZP10); 放炮必胡;
* 过张 bookkeeping (D-ZP11), the discard after a take and its exceptions
  (§3.2, D-ZP13), the dead card, 荒庄.

Mandatory moves (扫, 过扫, 扫穿, 开招) are made by the flow, never asked
for; they appear as ``melded`` events.  The variant supplies the win check
(``qipai_win_check``, with 胡数), ``qipai_settle``, ``qipai_bonus_flip`` and
the options (``xiahuo``, ``guozhang``, ``own_discard_bars_chi``,
``fangpao_bihu``, ``two_saochuan``, ``first_dealer``).

Conventions: a card in an open window is in no hand; a card nobody takes
is *dead* and joins its owner's ``discards``.

Decisions applied here: a 碰 that would leave no card to discard is not
offered (D-ZP14, the §3.1 rule for 吃 applied to 碰); when a discard is due
and only 坎 remain, a 坎 card is discarded (D-ZP17: the discard rule of §3.2
outranks 坎 不能拆散); when a mandatory 扫 empties the hand there is nothing
to discard and the seat plays on one card over (D-ZP18), and one more when its
first 开招 or 扫穿 then comes with a discard due (D-ZP20).  Face-down melds (扫, 过扫,
扫穿) have ``hidden`` = their size.
"""

from __future__ import annotations

import random
from itertools import combinations_with_replacement
from typing import Any

import msgspec

from qipai.core.answers import conserves_cards
from qipai.core.cards import full_deck
from qipai.core.checks import deal_size_problem
from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Action, Chi, Deal, Discard, Discarded, Drew, HandEnd, Hu, Meld, Melded, Pass, Peng,
    WinClaim, Window, Won, Zimo,
)
from qipai.families.zipai.cards import CARDS
from qipai.families.zipai.groups import valid_group

N = 3
HIDDEN_KINDS = ("sao", "guosao", "saochuan")


class ZipaiState(msgspec.Struct):
    """The family's per-hand bookkeeping (``TableState.extra``).

    Attributes:
        passed_peng: per seat, kinds offered for 碰 and let go (过张; a later
            扫 of them is a 过扫).
        passed_chi: per seat, kinds offered for 吃 with a 吃 possible, let go.
        no_chi: per seat, kinds offered for 吃 when no 吃 was possible (the
            seed's 二三四五 note: they may not be eaten later).
        takes: per seat, 开招 and 扫穿 made this hand (initial 扫穿 count).
        skip_discard: per seat, a discard to skip (D-ZP13).
        dealer_discards: discards the dealer has made (地胡).
        discarded: per seat, every kind it has discarded (taken or dead), for
            ``own_discard_bars_chi``.
        after_sao: the turn holder just made a mandatory 扫/扫穿 (D-ZP4).
        sao_card: the card that 扫/扫穿 took (the winning card of a D-ZP4 win).
        discard_due: the turn holder must discard.
    """

    passed_peng: list[list[int]] = msgspec.field(default_factory=lambda: [[], [], []])
    passed_chi: list[list[int]] = msgspec.field(default_factory=lambda: [[], [], []])
    no_chi: list[list[int]] = msgspec.field(default_factory=lambda: [[], [], []])
    takes: list[int] = msgspec.field(default_factory=lambda: [0, 0, 0])
    skip_discard: list[bool] = msgspec.field(default_factory=lambda: [False, False, False])
    dealer_discards: int = 0
    discarded: list[list[int]] = msgspec.field(default_factory=lambda: [[], [], []])
    after_sao: bool = False
    sao_card: int | None = None
    discard_due: bool = False


def kan_kinds(hand: list[int]) -> set[int]:
    """Kinds of which the hand holds a 坎 (three identical; 坎 不能拆散)."""
    return {k for k in set(hand) if hand.count(k) == 3}


def free_cards(hand: list[int]) -> list[int]:
    """The hand's cards outside its 坎 (those that may be discarded or eaten with)."""
    kans = kan_kinds(hand)
    return [c for c in hand if c not in kans]


def _groups_with(card: int) -> list[tuple[int, int]]:
    """Pairs (a, b), a <= b, that form a valid group with ``card`` that is not
    three identical cards."""
    out = []
    for a, b in combinations_with_replacement(range(CARDS.n_kinds), 2):
        if a == b == card:
            continue
        if valid_group((card, a, b)):
            out.append((a, b))
    return out


_PARTNERS = [_groups_with(k) for k in range(20)]


def _take(pool: dict[int, int], cards: tuple[int, ...]) -> bool:
    need: dict[int, int] = {}
    for c in cards:
        need[c] = need.get(c, 0) + 1
    if any(pool.get(c, 0) < n for c, n in need.items()):
        return False
    for c, n in need.items():
        pool[c] -= n
    return True


def chi_options(hand: list[int], card: int, xiahuo: bool = True) -> list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]]:
    """Every legal 吃 of ``card`` with ``hand`` (D-ZP10).

    Returns: (group, 下伙 groups) pairs — the group is the 3 cards (the card
    included), sorted; each 下伙 group holds one more copy of the card and
    two other non-坎 cards.  A 吃 that leaves no card to discard is left out.
    """
    kans = kan_kinds(hand)
    pool: dict[int, int] = {}
    for c in hand:
        if c not in kans:
            pool[c] = pool.get(c, 0) + 1
    out = set()
    for a, b in _PARTNERS[card]:
        p = dict(pool)
        if not _take(p, (a, b)):
            continue
        group = tuple(sorted((card, a, b)))
        left = p.get(card, 0)
        if not xiahuo or left == 0:
            combos: list[tuple[tuple[int, ...], ...]] = [()]
        else:
            combos = _xiahuo(p, card, left)
        for extra in combos:
            q = dict(p)
            for g in extra:
                _take(q, tuple(c for c in g))
            rest = sum(q.values())
            if rest > 0:  # a card he may discard remains
                out.add((group, tuple(sorted(extra))))
    return sorted(out)


def _xiahuo(pool: dict[int, int], card: int, n: int) -> list[tuple[tuple[int, ...], ...]]:
    if n == 0:
        return [()]
    out = []
    for a, b in _PARTNERS[card]:
        if card in (a, b):
            continue
        p = dict(pool)
        if not _take(p, (card, a, b)):
            continue
        for rest in _xiahuo(p, card, n - 1):
            out.append(tuple(sorted((tuple(sorted((card, a, b))),) + rest)))
    return sorted(set(out))


class ZipaiFlow:
    """Default hook implementations of the zipai flow (see the module doc).

    Args:
        manifest: the variant's :class:`~qipai.core.ruleset.Manifest`.
    """

    def __init__(self, manifest: Any) -> None:
        self.manifest = manifest

    @hookimpl(trylast=True)
    def qipai_manifest(self) -> Any:
        return self.manifest

    # ------------------------------------------------------------- set-up
    @hookimpl(trylast=True)
    def qipai_deck(self, options: Any) -> list[int]:
        """80 cards, 20 kinds × 4 (docs/variants/guilin-zipai.md: Cards and groups)."""
        return full_deck(CARDS)

    @hookimpl(trylast=True)
    def qipai_first_dealer(self, options: Any, rng: random.Random) -> int:
        """The room creator's seat, option ``first_dealer`` (§2)."""
        return getattr(options, "first_dealer", 0)

    @hookimpl(trylast=True)
    @conserves_cards
    def qipai_deal(self, deck: list[int], dealer: int, options: Any) -> Deal:
        """D-ZP1: seat dealer+k gets c[20k:20k+20], the dealer then c[60] (the
        亮张, shown to all); the stock is c[61:]."""
        hands: list[tuple[int, ...]] = [()] * N
        for k in range(N):
            hands[(dealer + k) % N] = tuple(deck[20 * k: 20 * k + 20])
        hands[dealer] = hands[dealer] + (deck[60],)
        return Deal(dealer=dealer, hands=tuple(hands), wall=tuple(deck[61:]), shown=(deck[60],))

    @hookimpl(trylast=True)
    def qipai_check_deal(self, deal: Deal, options: Any) -> str | None:
        """The dealer holds 21 cards, the others 20 (§2); a shown 亮张 is his."""
        if deal.shown and (len(deal.shown) != 1 or deal.shown[0] not in deal.hands[deal.dealer]):
            return "the shown card (亮张) must be one card of the dealer's hand"
        return deal_size_problem(deal, 21, 20, "cards")

    @hookimpl(trylast=True)
    def qipai_new_state(self, options: Any) -> Any:
        return (self.manifest.state_type or ZipaiState)()

    @hookimpl(trylast=True)
    def qipai_setup_position(self, table: Any, context: dict[str, Any]) -> bool:
        """过张 context: ``passed`` = [{seat, card, action}] — an earlier
        offer of ``card`` for ``action`` (吃 or 碰) that the seat let go."""
        st = table.extra
        st.dealer_discards = 1 if any(s.discards or s.melds for s in table.seats) else 0
        st.discarded = [sorted(set(s.discards)) for s in table.seats]
        st.discard_due = True
        for p in context.get("passed", ()):
            seat, card, action = p["seat"], p["card"], p.get("action", "peng")
            target = st.passed_peng if action == "peng" else st.passed_chi
            if card not in target[seat]:
                target[seat].append(card)
        return True

    @hookimpl(trylast=True)
    def qipai_start(self, table: Any) -> bool:
        """§3.3 step 1: initial 扫穿, then D-ZP6 (a) 天胡, (b) 三笼五坎; then
        the dealer discards (unless D-ZP13)."""
        st = table.extra
        dealer = table.state.dealer
        for seat in range(N):
            self.lay_fours(table, seat)
        # D-ZP13: exactly two 扫穿; a seat dealt three wins 三笼五坎 (or 天胡)
        # with the cards dealt: no extra card, no skip.  Extra cards go in
        # turn order from the dealer, as cards are dealt (D-ZP21).
        extra = getattr(table.options, "two_saochuan", "skip_discard") == "extra_card"
        for k in range(N):
            seat = (dealer + k) % N
            if st.takes[seat] != 2:
                continue
            if not extra:
                st.skip_discard[seat] = True
            elif table.state.wall:
                card = table.state.wall.pop(0)
                hand = table.seats[seat].hand
                hand.append(card)
                hand.sort()
                table.emit(Drew(seat=seat, card=card))
                self.lay_fours(table, seat)  # the extra card may make a third
        deal = table.state.deal
        # the 亮张: the dealer's last dealt card (D-ZP1), shown to all
        liang = deal.shown[0] if deal.shown else (deal.hands[dealer][-1]
                                                  if deal.hands[dealer] else None)
        hand = table.seats[dealer].hand
        if liang is not None:
            rest = list(hand)
            if liang in rest:
                rest.remove(liang)
                tile = liang
            else:  # the 亮张 went into an initial 扫穿: the hand is split alone (D-ZP16)
                tile = None
            claim = WinClaim(dealer, tuple(rest), tuple(table.seats[dealer].melds), tile,
                             ("tianhu",))
            if self.wins(table, claim, "zimo", None):
                self.finish_win(table, "zimo", None, claim)
                return True
        for k in range(N):
            seat = (dealer + k) % N
            claim = WinClaim(seat, tuple(table.seats[seat].hand),
                             tuple(table.seats[seat].melds), None, ("sanlong_wukan",))
            if self.sanlong_wukan(table, seat) and self.wins(table, claim, "zimo", None):
                self.finish_win(table, "zimo", None, claim)
                return True
        self.begin_turn(table, dealer, discard_due=True)
        return True

    def lay_fours(self, table: Any, seat: int) -> None:
        """Initial 扫穿: four identical in a dealt hand go face down (§3.1)."""
        hand = table.seats[seat].hand
        for kind in sorted(set(hand)):
            if hand.count(kind) == 4:
                for _ in range(4):
                    hand.remove(kind)
                self.lay(table, seat, Meld("saochuan", (kind,) * 4, hidden=4))
                table.extra.takes[seat] += 1

    @staticmethod
    def sanlong_wukan(table: Any, seat: int) -> bool:
        """Three 扫穿, or five sets of three or four identical (§4, D-ZP6)."""
        s = table.seats[seat]
        chuan = sum(1 for m in s.melds if m.kind == "saochuan")
        kan = len(kan_kinds(s.hand))
        return chuan >= 3 or chuan + kan >= 5

    # ------------------------------------------------------------- helpers
    def lay(self, table: Any, seat: int, meld: Meld) -> None:
        table.seats[seat].melds.append(meld)
        table.emit(Melded(seat, meld))

    def wins(self, table: Any, claim: WinClaim, how: str, owner: int | None) -> bool:
        ev = table.win_eval(claim, how, owner)  # checked: a WinEval or None
        return bool(ev and ev.wins)

    def finish_win(self, table: Any, how: str, from_seat: int | None, claim: WinClaim,
                   card: int | None = None) -> None:
        """Settle and end the hand on ``claim``'s win.  ``card``: the window's
        card won on (another's discard or a shown draw), which is in no zone
        until then: it joins the winner's hand after settlement, so the final
        state holds every card of the deal."""
        end = HandEnd(dealer=table.state.dealer, how=how, from_seat=from_seat,
                      winners=(claim,), stock=tuple(table.state.wall),
                      relations=table.hook.qipai_relations(table=table) or {}, n_players=N)
        settlement = table.settle(end)
        table.state.events.append(Won(claim.seat, how, claim.tile, from_seat,
                                      tuple(settlement.patterns.get(claim.seat, ()))))
        if card is not None:
            table.seats[claim.seat].hand.append(card)
        table.end_hand("hu", [claim.seat], settlement, from_seat)

    def begin_turn(self, table: Any, seat: int, discard_due: bool, after_sao: bool = False) -> None:
        """Give ``seat`` the turn after a take; or, if it has nothing to decide
        (no discard due, no win), move on to the next draw (§3.2)."""
        st = table.extra
        if discard_due and st.skip_discard[seat]:
            st.skip_discard[seat] = False
            discard_due = False
        st.discard_due = discard_due
        st.after_sao = after_sao
        if not discard_due and not (after_sao and self.zimo_after_sao(table, seat)):
            st.after_sao = False
            self.next_draw(table, seat)
            return
        table.give_turn(seat)

    @staticmethod
    def after_sao_claim(table: Any, seat: int) -> WinClaim:
        """D-ZP4: the hand alone, the 扫 already on the table; the card the
        扫 took is named (flag ``after_sao``) so that 海底胡 can flip it."""
        s = table.seats[seat]
        return WinClaim(seat, tuple(s.hand), tuple(s.melds), table.extra.sao_card,
                        ("after_sao",))

    def zimo_after_sao(self, table: Any, seat: int) -> bool:
        return self.wins(table, self.after_sao_claim(table, seat), "zimo", None)

    def next_draw(self, table: Any, last: int) -> None:
        """The next seat of the player who last acted draws; 荒庄 if none left."""
        if not table.state.wall:
            table.end_hand("huangzhuang")
            return
        table.draw((last + 1) % N)

    def barred_chi(self, table: Any, seat: int, kind: int) -> bool:
        st, opts = table.extra, table.options
        if kind in st.passed_chi[seat] or kind in st.no_chi[seat]:
            return True
        if getattr(opts, "guozhang", "joint") == "joint" and kind in st.passed_peng[seat]:
            return True
        return bool(getattr(opts, "own_discard_bars_chi", False)
                    and kind in st.discarded[seat])

    def barred_peng(self, table: Any, seat: int, kind: int) -> bool:
        st = table.extra
        if kind in st.passed_peng[seat]:
            return True
        return getattr(table.options, "guozhang", "joint") == "joint" and \
            kind in st.passed_chi[seat]

    # ------------------------------------------------------------- turn
    @hookimpl(trylast=True)
    def qipai_turn_actions(self, table: Any, seat: int) -> list[Action]:
        st = table.extra
        acts: list[Action] = []
        if st.after_sao and self.zimo_after_sao(table, seat):
            acts.append(Zimo(seat))
        if st.discard_due:
            hand = table.seats[seat].hand
            # A 坎 is not discarded while another card can be; when only 坎
            # are left, the discard rule (§3.2) wins and a 坎 card goes
            # (D-ZP17).  An empty hand (a 扫 took the last pair) has nothing
            # to discard (D-ZP18; after a first 开招 or 扫穿 too, D-ZP20).
            free = sorted(set(free_cards(hand))) or sorted(set(hand))
            acts.extend(Discard(seat, k) for k in free)
            if not free:
                acts.append(Pass(seat))
        else:
            acts.append(Pass(seat))
        return acts

    @hookimpl(trylast=True)
    def qipai_apply_turn(self, table: Any, action: Action) -> bool:
        st = table.extra
        seat = action.seat
        st.after_sao = False
        if isinstance(action, Zimo):
            self.finish_win(table, "zimo", None, self.after_sao_claim(table, seat))
        elif isinstance(action, Discard):
            st.discard_due = False
            table.seats[seat].hand.remove(action.card)
            if action.card not in st.discarded[seat]:
                st.discarded[seat].append(action.card)
            first = seat == table.state.dealer and st.dealer_discards == 0
            if seat == table.state.dealer:
                st.dealer_discards += 1
            table.emit(Discarded(seat, action.card))
            table.open_window(action.card, seat, "dihu" if first else "discard")
        else:  # Pass: no discard due
            st.discard_due = False
            self.next_draw(table, seat)
        return True

    @hookimpl(trylast=True)
    def qipai_after_draw(self, table: Any, seat: int, card: int, tail: bool) -> bool:
        """§3.3 step 3: a 扫 / 过扫 / 扫穿 takes the card face down, unseen;
        otherwise it is shown and offered."""
        st = table.extra
        s = table.seats[seat]
        hand = s.hand
        n = hand.count(card)
        chuan_from = next((i for i, m in enumerate(s.melds)
                           if m.kind in ("sao", "guosao") and m.cards[0] == card), None)
        if n == 3 or chuan_from is not None:
            st.sao_card = card
            table.emit(Drew(seat=seat, card=card))
            if n == 3:
                for _ in range(3):
                    hand.remove(card)
                self.lay(table, seat, Meld("saochuan", (card,) * 4, hidden=4))
            else:
                s.melds[chuan_from] = meld = Meld("saochuan", (card,) * 4, hidden=4)
                table.emit(Melded(seat, meld))
            st.takes[seat] += 1
            self.begin_turn(table, seat, discard_due=st.takes[seat] < 2, after_sao=True)
            return True
        if n == 2:
            st.sao_card = card
            table.emit(Drew(seat=seat, card=card))
            hand.remove(card)
            hand.remove(card)
            kind = "guosao" if card in st.passed_peng[seat] else "sao"
            self.lay(table, seat, Meld(kind, (card,) * 3, hidden=3))
            self.begin_turn(table, seat, discard_due=True, after_sao=True)
            return True
        table.emit(Drew(seat=seat, card=card, shown=True))
        table.open_window(card, seat, "draw")
        return True

    # ------------------------------------------------------------- claims
    def how_for(self, window: Window, seat: int) -> str:
        if window.source == "draw":
            return "zimo" if seat == window.owner else "pinghu"
        return "fangpao"

    def win_claim(self, table: Any, seat: int, window: Window) -> WinClaim:
        s = table.seats[seat]
        flags = ("dihu",) if window.source == "dihu" else ()
        return WinClaim(seat, tuple(s.hand), tuple(s.melds), window.card, flags)

    def can_win(self, table: Any, seat: int, window: Window) -> bool:
        if window.source != "draw" and seat == window.owner:
            return False
        return self.wins(table, self.win_claim(table, seat, window), self.how_for(window, seat),
                         window.owner)

    def chi_seats(self, window: Window) -> tuple[int, ...]:
        """Who may 吃: on a draw the drawer, then his next seat; on a discard
        the discarder's next seat."""
        nxt = (window.owner + 1) % N
        return (window.owner, nxt) if window.source == "draw" else (nxt,)

    def kaizhao_seat(self, table: Any, window: Window) -> int | None:
        """The seat whose 开招 the card makes, if any (§3.1)."""
        card = window.card
        for seat in range(N):
            s = table.seats[seat]
            own = seat == window.owner
            if not own and s.hand.count(card) == 3:
                return seat
            for m in s.melds:
                if m.cards and m.cards[0] == card and len(m.cards) == 3:
                    if m.kind in ("sao", "guosao") and not own:
                        return seat
                    if m.kind == "peng" and window.source == "draw":
                        return seat
        return None

    def can_peng(self, table: Any, seat: int, window: Window) -> bool:
        """A 碰 of a card from another player with a pair in hand, not barred
        by 过张, that leaves a card he may discard (the §3.1 rule for 吃
        applied to 碰 too, D-ZP14: a take must be followed by a discard)."""
        hand = table.seats[seat].hand
        if seat == window.owner or hand.count(window.card) != 2 or \
                self.barred_peng(table, seat, window.card):
            return False
        rest = [c for c in hand if c != window.card]
        return bool(free_cards(rest))

    def chis(self, table: Any, seat: int, window: Window) -> list[Chi]:
        if seat not in self.chi_seats(window) or self.barred_chi(table, seat, window.card):
            return []
        xiahuo = getattr(table.options, "xiahuo", True)
        return [Chi(seat, g, extra)
                for g, extra in chi_options(table.seats[seat].hand, window.card, xiahuo)]

    @hookimpl(trylast=True)
    def qipai_claim_actions(self, table: Any, seat: int, window: Window) -> list[Action]:
        """What ``seat`` may do with the window's card (§3.1).  A seat whose
        开招 the card makes (another's card matching its 坎 or 扫, its own
        draw of the 4th card of its 碰) must lay it unless it wins at 胡
        priority: it is offered only the win and Pass (Pass = the 开招), or
        nothing — never 吃/碰, whose answer the 开招 would override."""
        acts: list[Action] = []
        if self.can_win(table, seat, window):
            win = Zimo(seat) if self.how_for(window, seat) == "zimo" else Hu(seat)
            if window.source != "draw" and getattr(table.options, "fangpao_bihu", True):
                return [win]  # 放炮必胡: compulsory
            acts.append(win)
        if self.kaizhao_seat(table, window) == seat:
            return acts + [Pass(seat)] if acts else []  # 开招 is mandatory
        # D-ZP19: 碰/吃 are offered even when another seat's 开招 will take the
        # card: its 坎 or face-down 扫 is hidden, and asking reveals nothing
        # (the answer has no effect and creates no 过张 bar).
        if self.can_peng(table, seat, window):
            acts.append(Peng(seat))
        acts.extend(self.chis(table, seat, window))
        if acts:
            acts.append(Pass(seat))
        return acts

    @hookimpl(trylast=True)
    def qipai_claim_priority(self, table: Any, window: Window, action: Action) -> int:
        """扫穿/扫 (before the window) > 胡 > 开招/碰 > 吃 (《桂林字牌玩法规则》 组牌优先顺序)."""
        if isinstance(action, (Hu, Zimo)):
            return 3
        if isinstance(action, Peng):
            return 2
        if isinstance(action, Chi):
            return 1
        return 0

    @hookimpl(trylast=True)
    def qipai_resolve_claims(self, table: Any, window: Window,
                             declared: dict[int, Action]) -> list[Action]:
        """Only one claim takes effect: the highest; among wins the nearest
        seat from the card's owner, the drawer first (D-ZP3); among 吃 the
        drawer's before his next seat's."""
        order = [(window.owner + k) % N for k in range(N)]
        best: Action | None = None
        best_rank = 0
        for seat in order:
            a = declared.get(seat)
            if a is None or isinstance(a, Pass):
                continue
            rank = table.hook.qipai_claim_priority(table=table, window=window, action=a)
            if rank > best_rank:
                best, best_rank = a, rank
        return [best] if best is not None else []

    @hookimpl(trylast=True)
    def qipai_apply_claims(self, table: Any, window: Window, taken: list[Action]) -> bool:
        card, owner = window.card, window.owner
        action = taken[0] if taken else None
        if isinstance(action, (Hu, Zimo)):
            claim = self.win_claim(table, action.seat, window)
            self.finish_win(table, self.how_for(window, action.seat), owner if
                            isinstance(action, Hu) else None, claim, card=card)
            return True
        kz = self.kaizhao_seat(table, window)
        self.mark_passes(table, window, action, kz)
        if kz is not None:
            self.kaizhao(table, kz, window)
            return True
        if isinstance(action, Peng):
            s = table.seats[action.seat]
            s.hand.remove(card)
            s.hand.remove(card)
            self.lay(table, action.seat, Meld("peng", (card,) * 3, from_seat=owner, claimed=card))
            self.begin_turn(table, action.seat, discard_due=True)
            return True
        if isinstance(action, Chi):
            s = table.seats[action.seat]
            rest = list(action.cards)
            rest.remove(card)
            for c in rest:
                s.hand.remove(c)
            self.lay(table, action.seat, Meld("chi", tuple(action.cards), from_seat=owner,
                                              claimed=card))
            for g in action.extra:
                for c in g:
                    s.hand.remove(c)
                self.lay(table, action.seat, Meld("chi", tuple(g)))
            self.begin_turn(table, action.seat, discard_due=True)
            return True
        table.seats[owner].discards.append(card)  # a dead card, in front of its owner
        self.next_draw(table, owner)
        return True

    def kaizhao(self, table: Any, seat: int, window: Window) -> None:
        """The mandatory 开招: the four go face up (§3.1)."""
        st = table.extra
        s = table.seats[seat]
        card = window.card
        if s.hand.count(card) == 3:
            for _ in range(3):
                s.hand.remove(card)
            self.lay(table, seat, Meld("kaizhao", (card,) * 4, from_seat=window.owner,
                                       claimed=card))
        else:
            i = next(i for i, m in enumerate(s.melds) if m.cards and m.cards[0] == card)
            s.melds[i] = meld = Meld("kaizhao", (card,) * 4, from_seat=window.owner,
                                     claimed=card)
            table.emit(Melded(seat, meld))
        st.takes[seat] += 1
        self.begin_turn(table, seat, discard_due=st.takes[seat] < 2)

    def mark_passes(self, table: Any, window: Window, taken: Action | None,
                    kz: int | None) -> None:
        """D-ZP11 过张: every seat the card was offered to for 碰 or 吃 that let
        it go (and no higher claim took it first) is barred from that kind.
        D-ZP19: when a 开招 takes the card, no answer creates a bar."""
        st = table.extra
        card = window.card
        if kz is not None:
            return  # a 开招 outranks every 碰 and 吃 offer
        taken_rank = 0 if taken is None else 2 if isinstance(taken, Peng) else 1
        for seat in range(N):
            if taken is not None and taken.seat == seat:
                continue
            if taken_rank < 2 and self.can_peng(table, seat, window):
                if card not in st.passed_peng[seat]:
                    st.passed_peng[seat].append(card)
            chi_seats = self.chi_seats(window)
            if seat in chi_seats and not self.barred_chi(table, seat, card):
                if taken_rank == 2:
                    continue
                if taken_rank == 1 and chi_seats.index(taken.seat) < chi_seats.index(seat):
                    continue
                target = st.passed_chi if self.chis(table, seat, window) else st.no_chi
                target[seat].append(card)

    @hookimpl(trylast=True)
    def qipai_explain_illegal(self, table: Any, action: Action) -> str | None:
        st = table.state
        seat = action.seat
        w = st.window
        tok = CARDS.token
        if w is None:
            if st.turn is not None and seat != st.turn:
                return f"it is seat {st.turn}'s turn, not seat {seat}'s"
            hand = st.seats[seat].hand
            if isinstance(action, Discard):
                if action.card not in hand:
                    return f"seat {seat} does not hold {tok(action.card)}"
                if hand.count(action.card) == 3:
                    return f"{tok(action.card)} is part of seat {seat}'s 坎, which may not be split"
            if isinstance(action, (Hu, Peng, Chi)):
                return f"no card is in play to claim; it is seat {st.turn}'s turn"
            return None
        if isinstance(action, (Chi, Peng)) and self.kaizhao_seat(table, w) == seat:
            return (f"seat {seat} must 开招 (kaizhao) {tok(w.card)}: it makes four with "
                    f"his 坎, 扫 or 碰, so he may not {type(action).__name__.lower()} it")
        if isinstance(action, Chi) and seat not in self.chi_seats(w):
            return (f"seat {seat} may not chi {tok(w.card)}: only "
                    f"{' then '.join(f'seat {s}' for s in self.chi_seats(w))} may")
        if isinstance(action, Chi) and self.barred_chi(table, seat, w.card):
            return f"seat {seat} let {tok(w.card)} go earlier (过张) and may not chi it"
        if isinstance(action, Peng) and self.barred_peng(table, seat, w.card):
            return f"seat {seat} let {tok(w.card)} go earlier (过张) and may not peng it"
        if isinstance(action, Pass) and seat in st.pending and \
                not any(isinstance(a, Pass) for a in st.pending[seat]):
            return f"seat {seat} must win on {tok(w.card)} (放炮必胡)"
        if isinstance(action, Discard):
            return f"seat {seat} cannot discard now: {tok(w.card)} is open to claims"
        return None

    @hookimpl(trylast=True)
    def qipai_relations(self, table: Any) -> dict[str, list[list[int]]]:
        return table.relations

    @hookimpl(trylast=True)
    def qipai_next_dealer(self, table: Any, end: str, winners: Any, from_seat: int | None) -> int:
        """D-ZP2: the winner deals; after 荒庄 the next seat (荒庄庄家轮庄)."""
        if end == "hu" and winners:
            return winners[0]
        return (table.state.dealer + 1) % N

    @hookimpl(trylast=True)
    def qipai_instant_payments(self, table: Any, event: Any) -> list:
        return []
