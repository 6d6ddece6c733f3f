"""The common mahjong flow (docs/variants/mahjong-common.md), as a default plugin.

:class:`MahjongFlow` implements the turn-protocol and claim hooks every
mahjong variant shares — D-M1 dealing, draws from the head, the three kongs
with replacements from the tail, robbing a 蓄杠, chi/peng/gang/hu claims with
胡 > 碰/杠 > 吃, 一炮多响, 荒庄 and the last-discard rule (D-M5) — all
``trylast``, so a variant overrides any of them by implementing the hook.
The variant supplies what differs: ``qipai_win_check``, ``qipai_settle``,
``qipai_bonus_flip``, ``qipai_instant_payments`` and, if it has any,
``qipai_relations``.

A variant lists an instance in its module's ``QIPAI_BASE_PLUGINS``.

A card in an open claim window (a discard, a 蓄杠 tile that may be robbed)
is in no hand and no discard pile until the window resolves: unclaimed
discards then join their owner's discards.
"""

from __future__ import annotations

import random
from bisect import insort
from typing import Any

import msgspec

from qipai.core.answers import conserves_cards
from qipai.core.cards import full_deck
from qipai.core.checks import deal_size_problem
from qipai.core.dispatch import implemented_only_by
from qipai.core.hookspecs import hookimpl
from qipai.core.model import (
    Action, Angang, Chi, Deal, Discard, Discarded, Drew, HandEnd, Hu, Jiagang, Marked, Meld,
    Melded,
    Minggang, Pass, Peng, WinClaim, Window, Won, Zimo,
)
from qipai.core.table import Table
from qipai.families.mahjong.hand_checks import COUNTS_0_TO_4, check_meld_once
from qipai.families.mahjong.scoring_kit import as_wineval
from qipai.families.mahjong.tiles import TILES
from qipai.families.mahjong import suit_tables
from qipai.families.mahjong.suit_tables import FIELD, NOT_COMPLETE, STD_MASK
from qipai.families.mahjong.win_shapes import (
    _NO_WAITS, _PARITY, HONORS_SHIFT, segment_codes, shape_waits_bytes,
)

#: each segment's code look-up (the dicts keep their identity: suit_tables)
_SEGMENT_GETS = (suit_tables.SEGMENT.get,) * 3 + (suit_tables.HONORS_SEGMENT.get,)

HU, PENG_GANG, CHI = 3, 2, 1
_DECK = tuple(full_deck(TILES))
_NONE: frozenset[int] = frozenset()
_PRIORITY = {Hu: HU, Peng: PENG_GANG, Minggang: PENG_GANG, Chi: CHI}


class MahjongState(msgspec.Struct):
    """The family's per-hand bookkeeping (``TableState.extra``).

    Attributes:
        drawn: the tile the turn holder just drew (None after a chi/peng).
        after_kong: the turn holder's tile is a kong replacement (杠上花).
        kong_discard: the seat whose current discard follows its own kong (杠上炮).
        claims: ``claims[a][b]`` = discards of seat a claimed by seat b
            (吃/碰/点杠), for 互包 and 封胡.
        any_claim: a claim has been made this hand (地胡, D-GL5).
        draws: draws per seat (地胡: the first).
        discards_made: discards made this hand (天胡: none yet).
        kongs: kongs made per seat this hand.
        pengs: ``pengs[a][b]`` = 碰 and 点杠 seat b made of seat a's discards (封胡).
        any_peng: a 碰 or 点杠 has been made this hand (广西 地胡).
        chain: the kongs the turn holder has declared this turn, in order
            (连杠; reset by a discard or a new draw).
        announced: relations already announced, as ``[name, *seats]``.
    """

    drawn: int | None = None
    after_kong: bool = False
    kong_discard: int | None = None
    claims: list[list[int]] = msgspec.field(default_factory=lambda: [[0] * 4 for _ in range(4)])
    any_claim: bool = False
    draws: list[int] = msgspec.field(default_factory=lambda: [0, 0, 0, 0])
    discards_made: int = 0
    kongs: list[int] = msgspec.field(default_factory=lambda: [0, 0, 0, 0])
    pengs: list[list[int]] = msgspec.field(default_factory=lambda: [[0] * 4 for _ in range(4)])
    any_peng: bool = False
    chain: list[Meld] = msgspec.field(default_factory=list)
    announced: list[list[Any]] = msgspec.field(default_factory=list)


def pairs_reaching(counts: list[list[int]], threshold: int) -> list[list[int]]:
    """Seat pairs ``[a, b]`` where ``counts[a][b]`` (claims by b of a's
    discards) reached ``threshold`` — directional, giver first."""
    return [[a, b] for a in range(len(counts)) for b in range(len(counts))
            if a != b and counts[a][b] >= threshold]


def merged_pairs(*groups: list[list[int]]) -> list[list[int]]:
    """Unordered union of seat pairs, sorted (for mutual relations like 互包)."""
    return [list(p) for p in sorted({tuple(sorted(g)) for gs in groups for g in gs})]


def remove(hand: list[int], card: int, n: int = 1) -> None:
    """Remove ``n`` copies of ``card`` from a hand (caller checked they are there)."""
    for _ in range(n):
        hand.remove(card)


def chi_runs(hand: list[int], card: int) -> list[tuple[int, int, int]]:
    """Every same-suit run of three containing ``card`` whose other two tiles
    are in ``hand`` (honors never form runs), lowest first."""
    if card >= 27:
        return []
    rank = card % 9
    runs = []
    if rank >= 2 and card - 2 in hand and card - 1 in hand:
        runs.append((card - 2, card - 1, card))
    if 1 <= rank <= 7 and card - 1 in hand and card + 1 in hand:
        runs.append((card - 1, card, card + 1))
    if rank <= 6 and card + 1 in hand and card + 2 in hand:
        runs.append((card, card + 1, card + 2))
    return runs


class MahjongFlow:
    """Default hook implementations of the common mahjong flow.

    Args:
        manifest: the variant's manifest (its ``state_type`` a subclass of
            :class:`MahjongState`, or None for the family's own).
        patterns: optionally, the variant's pattern module —
            ``evaluate(claim, how, dealer, from_seat, options)`` → an
            evaluation or None, and ``waits(hand, melds)`` → kinds — which
            then answers ``qipai_win_check`` and ``qipai_waits``; without it
            the variant implements those hooks itself.  If it also gives
            ``SHAPE_SHIFT`` (its special shape's segment-code field, see
            :mod:`~qipai.families.mahjong.win_shapes`), every ``evaluate``
            must find no win without a winning shape: the flow then keeps
            each seat's shape waits and skips the checks that cannot win
            (:meth:`hand_entry`).
        angang_hidden: how many tiles of a 暗杠 lie face down (Guilin 3: the
            top one shown; 广西 4).
        dihu_voided_by_chi: whether a 吃 voids 地胡 (Guilin D-GL5: any claim
            does; 广西: only a 碰 or 明杠 does).
    """

    def __init__(self, manifest: Any, patterns: Any = None, angang_hidden: int = 3,
                 dihu_voided_by_chi: bool = True) -> None:
        self.manifest = manifest
        self.patterns = patterns
        self.angang_hidden = angang_hidden
        self.state_type = manifest.state_type or MahjongState
        self.dihu_voided_by_chi = dihu_voided_by_chi
        self._discards: dict[int, list[Discard]] = {}
        #: the patterns' special shape field (``SHAPE_SHIFT``): shape waits
        #: are kept only when the variant gives it (see :meth:`hand_entry`)
        self.shape_shift: int | None = getattr(patterns, "SHAPE_SHIFT", None)

    @hookimpl(trylast=True)
    def qipai_win_check(self, claim: WinClaim, how: str, dealer: int,
                        from_seat: int | None, options: Any) -> Any:
        """The variant's ``patterns.evaluate`` as a :class:`~qipai.core.model.WinEval`."""
        if self.patterns is None:
            return None
        return as_wineval(self.patterns.evaluate(claim, how, dealer, from_seat, options))

    @hookimpl(trylast=True)
    def qipai_readings(self, claim: WinClaim, how: str, dealer: int,
                       from_seat: int | None, options: Any) -> Any:
        """The variant's ``patterns.readings`` (every reading, the paid one marked), if any."""
        readings = getattr(self.patterns, "readings", None)
        return None if readings is None else readings(claim, how, dealer, from_seat, options)

    @hookimpl(trylast=True)
    def qipai_waits(self, hand: Any, melds: Any, options: Any) -> list[int]:
        """The variant's ``patterns.waits``."""
        return None if self.patterns is None else self.patterns.waits(hand, melds)

    @hookimpl(trylast=True)
    def qipai_manifest(self) -> Any:
        """The variant's :class:`~qipai.core.ruleset.Manifest`, given at construction."""
        return self.manifest

    # ------------------------------------------------------------- set-up
    @hookimpl(trylast=True)
    def qipai_deck(self, options: Any) -> list[int]:
        """136 tiles, 34 kinds × 4 (docs/variants/mahjong-common.md, Components)."""
        return list(_DECK)

    @hookimpl(trylast=True)
    def qipai_first_dealer(self, options: Any, rng: random.Random) -> int:
        """Random first dealer (docs/variants/mahjong-common.md: a dice roll picks the dealer)."""
        return rng.randrange(4)

    @hookimpl(trylast=True)
    @conserves_cards
    def qipai_deal(self, deck: list[int], dealer: int, options: Any) -> Deal:
        """D-M1: seat dealer+k gets w[13k:13k+13], the dealer also w[52];
        the stock is w[53:] (head first, replacements from its end)."""
        hands: list[tuple[int, ...]] = [()] * 4
        for k in range(4):
            seat = (dealer + k) % 4
            hands[seat] = tuple(deck[13 * k: 13 * k + 13])
        hands[dealer] = hands[dealer] + (deck[52],)
        return Deal(dealer=dealer, hands=tuple(hands), wall=tuple(deck[53:]))

    @hookimpl(trylast=True)
    def qipai_check_deal(self, deal: Deal, options: Any) -> str | None:
        """The dealer holds 14 tiles, the others 13 (D-M1)."""
        return deal_size_problem(deal, 14, 13, "tiles")

    @hookimpl(trylast=True)
    def qipai_new_state(self, options: Any) -> Any:
        return self.state_type()

    @hookimpl(trylast=True)
    def qipai_setup_position(self, table: Any, context: dict[str, Any]) -> bool:
        """A position is mid-hand once discards or melds are given: no 天胡
        or 地胡 then.  The dealer (to act) holding 3k+2 tiles counts his last
        dealt tile as just drawn."""
        st = table.extra
        seats = table.seats
        st.discards_made = sum(len(s.discards) for s in seats)
        if st.discards_made or any(s.melds for s in seats):
            st.draws = [1, 1, 1, 1]
            st.discards_made = max(st.discards_made, 1)
        st.any_claim = any(m.from_seat is not None for s in seats for m in s.melds)
        dealt = table.state.deal.hands[table.state.dealer]
        st.drawn = dealt[-1] if len(dealt) % 3 == 2 else None
        return True

    @hookimpl(trylast=True)
    def qipai_start(self, table: Any) -> bool:
        """The dealer holds 14 and acts first; his 14th dealt tile counts as
        his drawn tile (天胡)."""
        st = table.extra
        dealt = table.state.deal.hands[table.state.dealer]
        st.drawn = dealt[-1] if len(dealt) % 3 == 2 else None
        table.give_turn(table.state.dealer)
        return True

    # ------------------------------------------------------------- helpers
    @staticmethod
    def reserve(table: Any) -> int:
        return getattr(table.options, "reserve_tiles", 0)

    def drawable(self, table: Any) -> int:
        """Tiles that may still be drawn (the stock less the reserve)."""
        left = len(table.state.wall) - self.reserve(table)
        return left if left > 0 else 0

    def can_draw(self, table: Any) -> bool:
        """``drawable(table) > 0``, the check of every turn and claim window:
        with the family's own ``reserve`` and ``drawable`` the reserve is
        read once per table; an override of either is asked each time."""
        r = table.scratch.get("mahjong.reserve")
        if r is None:
            plain = "reserve" not in vars(self) and "drawable" not in vars(self) \
                and type(self).reserve is MahjongFlow.reserve \
                and type(self).drawable is MahjongFlow.drawable
            r = table.scratch["mahjong.reserve"] = self.reserve(table) if plain else -1
        if r < 0:
            return self.drawable(table) > 0
        return len(table.state.wall) > r

    def win_flags(self, table: Any, seat: int, how: str, owner: int | None) -> tuple[str, ...]:
        st = table.extra
        flags = []
        empty = self.drawable(table) == 0
        if how == "zimo":
            if st.after_kong:
                flags.append("gangshanghua")
            if empty:
                flags.append("haidi")
            if seat == table.state.dealer and st.discards_made == 0 and st.kongs[seat] == 0 \
                    and st.draws[seat] == 0:
                flags.append("tianhu")
            elif seat != table.state.dealer and st.draws[seat] == 1 and st.kongs[seat] == 0 \
                    and not any(row[seat] for row in st.claims) \
                    and not (st.any_claim if self.dihu_voided_by_chi else st.any_peng):
                # his first turn: no draw before, no claim of his own (which
                # would have been a turn), no kong (广西 D-GX12: a win on a
                # kong's replacement is 杠开, not 地胡); voided by others' claims
                flags.append("dihu")
        elif how == "dianpao":
            if owner is not None and st.kong_discard == owner:
                flags.append("gangshangpao")
            if empty:
                flags.append("haidipao")
            # 全求人反冲 needs a discard: robbing a 全求人 补杠 is 抢杠 only (D-GX14)
            if owner is not None and self.in_quanqiuren(table, owner):
                flags.append("quanqiupao")
            if owner == table.state.dealer and seat != owner and st.discards_made == 1:
                flags.append("renhu")
        return tuple(flags)

    @staticmethod
    def in_quanqiuren(table: Any, seat: int) -> bool:
        """``seat`` has four claimed sets (碰, 明杠, 补杠) and at most one
        concealed tile (its discard may be in play): 全求人 for 反冲."""
        s = table.seats[seat]
        return len(s.melds) == 4 and len(s.hand) <= 1 and \
            all(m.kind in ("peng", "minggang", "jiagang") for m in s.melds)

    def claim_for(self, table: Any, seat: int, tile: int, how: str,
                  owner: int | None, hand: list[int] | None = None) -> WinClaim:
        s = table.seats[seat]
        h = list(s.hand if hand is None else hand)
        flags = self.win_flags(table, seat, how, owner)
        chain = tuple(table.extra.chain) if "gangshanghua" in flags else ()
        return WinClaim(seat=seat, hand=tuple(sorted(h)), melds=tuple(s.melds), tile=tile,
                        flags=flags, kong_chain=chain)

    def answers(self, table: Any, hook: str) -> bool:
        """Whether this flow alone implements ``hook`` on ``table``'s ruleset
        with this class's own method (no variant or house plugin answers it,
        no subclass overrides it): only then may the flow take the
        shortcuts that assume its own answer.  Read once per table, from the
        plugins registered then."""
        sc = table.scratch
        key = "mahjong.answers." + hook
        own = sc.get(key)
        if own is None:
            own = sc[key] = implemented_only_by(table.ruleset.hook, hook, self) and \
                getattr(type(self), hook) is getattr(MahjongFlow, hook)  # not a subclass's
        return own

    def hand_entry(self, table: Any, seat: int, hand: list[int]) -> tuple | None:
        """What the flow knows of ``seat``'s concealed ``hand`` one tile short
        of a win: ``(hand, melds, counts, waits, codes, kinds, held)`` —
        copies of the hand and melds it was computed from, ``bytes`` of the
        34 counts, the *shape waits* (the kinds that could complete it into a
        winning shape), the counts' ``win_shapes.segment_codes``, the hand's
        distinct kinds in order (a list never changed in place) and the
        kinds held four times among hand and melds (a fifth copy of them is
        impossible).  None when the flow cannot tell
        (the hand is not one tile short, or the win check is not this
        flow's).  A tile is skipped (:meth:`may_win`) only when it is not a
        shape wait and not one of those four-times-held kinds: a fifth copy
        goes to the full check, which refuses it.

        Known only when this flow answers the table's ``qipai_win_check``
        from a patterns module that gives ``SHAPE_SHIFT``, its special
        shape's field for :func:`~qipai.families.mahjong.win_shapes.shape_waits_bytes`
        (a house plugin's win check is always asked): ``evaluate`` finds no
        win on a tile outside the waits, so that check is skipped.  Each seat's entry
        is kept in ``table.scratch["mahjong.waits"]`` (a list by seat) and reused while the
        seat's hand and melds equal its copies: computed once per hand change.
        """
        cache = table.scratch.get("mahjong.waits")
        if cache is None:
            if self.shape_shift is None or not self.answers(table, "qipai_win_check") \
                    or type(self).wins is not MahjongFlow.wins:
                table.scratch["mahjong.waits"] = False
                return None
            cache = table.scratch["mahjong.waits"] = [None] * table.n
        elif cache is False:
            return None
        melds = table.state.seats[seat].melds
        entry = cache[seat]
        if entry is not None and entry[0] == hand and entry[1] == melds:
            return entry
        if len(hand) != 13 - 3 * len(melds):
            return None  # not one tile short: the full check decides
        b = bytearray(34)
        try:
            for k in hand:
                b[k] += 1
            held = bytearray(b)
            for m in melds:
                check_meld_once(m)  # a malformed meld raises, as the full check would
                for k in m.cards:
                    held[k] += 1
        except (IndexError, TypeError, ValueError):
            return None
        if held.translate(None, COUNTS_0_TO_4):  # a fifth copy: the full check raises
            return None
        counts = bytes(b)
        codes = segment_codes(counts)
        four = frozenset(k for k in range(34) if held[k] == 4) if 4 in held else _NONE
        entry = cache[seat] = (list(hand), list(melds), counts,
                               shape_waits_bytes(counts, melds, self.shape_shift, codes), codes,
                               sorted(set(hand)), four)
        return entry

    def entry_after_discard(self, table: Any, seat: int, drawn: int, card: int) -> None:
        """Keep ``seat``'s hand entry (:meth:`hand_entry`) current through a
        draw and a discard: from the entry of its hand before it drew
        ``drawn``, derive the entry of that hand plus ``drawn`` less
        ``card`` — two counts changed, the codes of at most two segments
        looked up again, no count of the hand.  The derived entry is
        self-consistent by construction and, like any entry, used only while
        the seat's hand and melds equal its copies."""
        cache = table.scratch.get("mahjong.waits")
        if not cache or card == drawn:
            return  # nothing kept, or the same hand again
        entry = cache[seat]
        if entry is None:
            return
        # win_shapes.step_waits, inlined (this runs at every discard): the
        # new counts, the codes of at most two segments looked up again.
        counts = entry[2]
        n_drawn = counts[drawn] + 1
        n_card = counts[card]
        if n_drawn > 4 or not n_card:
            return  # the entry is not of the hand the draw went to
        b = bytearray(counts)
        b[drawn] = n_drawn
        b[card] = n_card - 1
        new = bytes(b)
        c = list(entry[4])
        sg = drawn // 9  # 3: the honors (new[27:36] is their 7 counts)
        c[sg] = _SEGMENT_GETS[sg](new[9 * sg:9 * sg + 9], NOT_COMPLETE)
        if card // 9 != sg:
            sg = card // 9
            c[sg] = _SEGMENT_GETS[sg](new[9 * sg:9 * sg + 9], NOT_COMPLETE)
        c0, c1, c2, c3 = c
        codes = (c0, c1, c2, c3)
        melds = entry[1]
        # shape_waits_bytes' common case, tested first: far from any shape
        v = c0 + c1 + c2 + c3
        if (v & STD_MASK) // NOT_COMPLETE > 1 and v >> HONORS_SHIFT & FIELD != 3 and (
                melds or (v >> self.shape_shift & FIELD < 3
                          and new.translate(_PARITY).count(1) != 1)):
            waits = _NO_WAITS
        else:
            waits = shape_waits_bytes(new, melds, self.shape_shift, codes)
        held = n_drawn
        for m in melds:
            held += m.cards.count(drawn)
        if held > 4:
            return  # a fifth copy: no entry, the full check refuses it
        hand = list(entry[0])
        hand.remove(card)
        insort(hand, drawn)
        kinds = entry[5]
        if n_drawn == 1 or n_card == 1:  # a kind comes or goes
            kinds = list(kinds)
            if n_drawn == 1:
                insort(kinds, drawn)
            if n_card == 1:
                kinds.remove(card)
        four = entry[6]  # the kinds held four times, hand and melds
        if held == 4 or card in four:
            four = (four - {card}) | ({drawn} if held == 4 else _NONE)
        cache[seat] = (hand, melds, new, waits, codes, kinds, four)

    def may_win(self, table: Any, seat: int, hand: list[int], card: int) -> bool:
        """False when ``card`` certainly cannot complete ``seat``'s ``hand``
        into a win (see :meth:`hand_entry`), so the win check is skipped."""
        entry = self.hand_entry(table, seat, hand)
        return entry is None or card in entry[3] or card in entry[6]

    def wins(self, table: Any, claim: WinClaim, how: str, owner: int | None) -> bool:
        ev = table.win_eval(claim, how, owner)  # checked: a WinEval or None
        return bool(ev and ev.wins)

    # ------------------------------------------------------------- turn
    @hookimpl(trylast=True)
    def qipai_after_draw(self, table: Any, seat: int, card: int, tail: bool) -> bool:
        st = table.state.extra
        hand = table.state.seats[seat].hand
        hand.append(card)
        hand.sort()
        st.drawn = card
        st.after_kong = tail
        if not tail:
            if st.chain:
                st.chain = []
            st.draws[seat] += 1
        table.emit(Drew(seat, card, tail))
        table.give_turn(seat)
        return True

    def own_turns(self, table: Any) -> bool:
        """Whether this flow alone answers ``qipai_after_draw`` and
        ``qipai_turn_actions`` on ``table`` (see :meth:`answers`) and the
        table's ``draw`` and ``give_turn`` are the engine's own: then a draw
        from the head of the stock is :meth:`draw_own`.  Read once per table."""
        own = table.scratch.get("mahjong.own_turns")
        if own is None:
            cls = type(table)
            own = table.scratch["mahjong.own_turns"] = (
                self.answers(table, "qipai_after_draw") and self.answers(table, "qipai_turn_actions")
                and cls.draw is Table.draw and cls.give_turn is Table.give_turn
                and "qipai_after_draw" not in vars(self) and "qipai_turn_actions" not in vars(self))
        return own

    def draw_own(self, table: Any, seat: int) -> None:
        """``table.draw(seat)`` from a non-empty stock's head, done here:
        what the engine's ``draw`` and ``give_turn`` do around this flow's
        ``qipai_after_draw`` and ``qipai_turn_actions`` (only when
        :meth:`own_turns`), less the calls between them — the path of every
        turn that follows an unclaimed discard."""
        state = table.state
        card = state.wall.pop(0)
        st = state.extra
        s = state.seats[seat]
        hand = s.hand
        cache = table.scratch.get("mahjong.waits")  # see hand_entry
        entry = cache[seat] if cache else None
        if entry is not None and (entry[0] != hand or entry[1] != s.melds):
            entry = None  # not of this hand: turn_actions makes it
        hand.append(card)
        hand.sort()
        st.drawn = card
        st.after_kong = False
        if st.chain:
            st.chain = []
        st.draws[seat] += 1
        table.emit(Drew(seat, card, False))
        # a fresh, non-empty list: the hand holds a tile
        acts = self.turn_actions(table, seat, entry) if entry is not None \
            else self.qipai_turn_actions(table, seat)
        state.turn = seat
        state.window = None
        state.pending = {seat: acts}

    @hookimpl(trylast=True)
    def qipai_turn_actions(self, table: Any, seat: int) -> list[Action]:
        return self.turn_actions(table, seat, None)

    def turn_actions(self, table: Any, seat: int, entry: tuple | None) -> list[Action]:
        """:meth:`qipai_turn_actions`; ``entry``: the seat's current hand
        entry (:meth:`hand_entry`) of its hand less the drawn tile, when the
        caller knows it (:meth:`draw_own`), else None (looked up here)."""
        state = table.state
        st = state.extra
        s = state.seats[seat]
        hand = s.hand
        made = self._discards.get(seat)
        if made is None:
            made = self._discards[seat] = [Discard(seat, k) for k in range(TILES.n_kinds)]
        drawn = st.drawn
        if drawn is None:  # after a 吃 or 碰: discard only
            return list(map(made.__getitem__, sorted(set(hand))))
        acts: list[Action] = []
        rest = None  # the hand less the drawn tile, when it holds it
        if entry is not None:
            rest = entry[0]  # a copy the entry keeps
        elif drawn in hand:
            rest = list(hand)
            rest.remove(drawn)
            cache = table.scratch.get("mahjong.waits")  # see hand_entry
            entry = cache[seat] if cache else None
            if entry is None or entry[0] != rest or entry[1] != s.melds:
                entry = self.hand_entry(table, seat, rest)
        if rest is not None and (entry is None or drawn in entry[3] or drawn in entry[6]) and \
                self.wins(table, self.claim_for(table, seat, drawn, "zimo", None, rest),
                          "zimo", None):
            acts.append(Zimo(seat))
        if entry is None:
            kinds = sorted(set(hand))
        elif entry[2][drawn]:
            kinds = entry[5]  # the rest's kinds: the drawn kind among them
        else:
            kinds = list(entry[5])
            insort(kinds, drawn)
        r = table.scratch.get("mahjong.reserve")  # can_draw, read inline
        if (len(state.wall) > r if r is not None and r >= 0 else self.can_draw(table)):  # kongs
            if entry is not None:  # four of a kind: from the counts of the rest
                counts = entry[2]
                if counts[drawn] == 3 or counts.find(4) >= 0:
                    acts.extend(Angang(seat, k) for k in kinds
                                if counts[k] + (k == drawn) == 4)
            elif len(hand) - len(kinds) >= 3:  # else no kind is held four times
                acts.extend(Angang(seat, k) for k in kinds if hand.count(k) == 4)
            for m in s.melds:
                if m.kind == "peng" and m.cards[0] in hand:
                    acts.append(Jiagang(seat, m.cards[0]))
        acts.extend(map(made.__getitem__, kinds))  # the Discard instances, made once
        return acts

    @hookimpl(trylast=True)
    def qipai_apply_turn(self, table: Any, action: Action) -> bool:
        st = table.state.extra
        seat = action.seat
        s = table.state.seats[seat]
        kind = type(action)  # the action classes are final: a type test is exact
        if kind is Zimo:
            rest = list(s.hand)
            rest.remove(st.drawn)
            claim = self.claim_for(table, seat, st.drawn, "zimo", None, rest)
            self.finish_win(table, "zimo", None, [claim])
        elif kind is Discard:
            if st.drawn is not None:
                self.entry_after_discard(table, seat, st.drawn, action.card)
            s.hand.remove(action.card)
            st.kong_discard = seat if st.after_kong else None
            st.drawn = None
            st.after_kong = False
            if st.chain:
                st.chain = []
            st.discards_made += 1
            table.emit(Discarded(seat, action.card))
            if self.own_windows(table):
                self.open_own_window(table, action.card, seat)
            else:
                table.open_window(action.card, seat, "discard")
        elif kind is Angang:
            remove(s.hand, action.card, 4)
            meld = Meld("angang", (action.card,) * 4, hidden=self.angang_hidden)
            s.melds.append(meld)
            self.after_kong(table, seat, meld)
        elif kind is Jiagang:
            remove(s.hand, action.card)
            st.drawn = None
            table.emit(Marked("jiagang", (seat,), action.card))
            table.open_window(action.card, seat, "jiagang")
        else:  # pragma: no cover - legal lists hold nothing else
            raise AssertionError(f"unexpected turn action {action!r}")
        return True

    def after_kong(self, table: Any, seat: int, meld: Meld) -> None:
        """Record the kong (and its place in the turn's 连杠 chain), then draw
        its replacement from the tail."""
        st = table.extra
        st.kongs[seat] += 1
        if meld.kind == "minggang":
            st.chain = []
        st.chain.append(meld)
        table.emit(Melded(seat, meld))
        if meld.kind == "minggang":
            self.mark_relations(table, meld.from_seat, seat)
        self.draw_replacement(table, seat)

    def draw_replacement(self, table: Any, seat: int) -> None:
        wall = table.state.wall
        r = self.reserve(table)
        if len(wall) - r <= 0:  # pragma: no cover - kongs need a tile left
            self.huangzhuang(table)
            return
        card = wall.pop(len(wall) - 1 - r)
        table.hook.qipai_after_draw(table=table, seat=seat, card=card, tail=True)

    # ------------------------------------------------------------- claims
    @hookimpl(trylast=True)
    def qipai_window_actions(self, table: Any, window: Window) -> dict[int, list[Action]] | None:
        """Every seat's :meth:`qipai_claim_actions` at once, skipping seats
        that certainly have none (the card outside their shape waits, no
        pair of it, not the next seat for a 吃).  None (ask seat by seat)
        when another plugin answers ``qipai_claim_actions``."""
        pre = table.scratch.pop("mahjong.window", None)  # see open_own_window
        if pre is not None and pre[0] == window.card and pre[1] == window.owner \
                and window.source == "discard" and pre[2] == len(table.state.events):
            return pre[3]
        own = table.scratch.get("mahjong.answers.qipai_claim_actions")
        if own is None:
            own = self.answers(table, "qipai_claim_actions")
        if not own:
            return None
        return self.window_claims(table, window)

    def window_claims(self, table: Any, window: Window) -> dict[int, list[Action]]:
        """:meth:`qipai_window_actions` when this flow answers
        ``qipai_claim_actions`` alone: the seats that have a claim, each
        with its :meth:`claims`."""
        return self.claims_on(table, window.owner, window.card, window.source, window)

    def claims_on(self, table: Any, owner: int, card: int, source: str,
                  window: Window | None = None) -> dict[int, list[Action]]:
        """:meth:`window_claims` of ``card`` entering play from ``owner`` by
        ``source``; ``window``: its window, or None when none is made yet
        (a discard, :meth:`open_own_window`: one is made only for a seat
        that may claim, most discards needing none)."""
        state = table.state
        seats = state.seats
        scratch = table.scratch
        r = scratch.get("mahjong.reserve")  # can_draw, read inline
        melds_too = source == "discard" and (
            len(state.wall) > r if r is not None and r >= 0 else self.can_draw(table))
        n = table.n
        nxt = (owner + 1) % n
        cache = scratch.get("mahjong.waits") or None  # see hand_entry
        # a run through the card needs a neighbour of it (honors: never)
        lo = card - 1 if card < 27 and card % 9 else -1
        hi = card + 1 if card < 27 and card % 9 < 8 else -1
        out: dict[int, list[Action]] = {}
        for seat in range(n):
            if seat == owner:
                continue
            s = seats[seat]
            entry = cache[seat] if cache is not None else None
            if entry is not None and entry[0] == s.hand and entry[1] == s.melds:
                hu = card in entry[3] or card in entry[6]  # see hand_entry
                if not hu:
                    if not melds_too:
                        continue
                    counts = entry[2]  # a 碰 needs a pair; a run through the card a neighbour
                    if counts[card] < 2 and (seat != nxt or not (
                            (lo >= 0 and counts[lo]) or (hi >= 0 and counts[hi]))):
                        continue
            else:
                hand = s.hand
                hu = self.may_win(table, seat, hand, card)
                if not hu:
                    if not melds_too:
                        continue
                    # a run through the card needs a neighbour of it (honors: never)
                    rank = card % 9 if card < 27 else -1
                    if hand.count(card) < 2 and not (seat == nxt and rank >= 0 and (
                            (rank > 0 and card - 1 in hand) or (rank < 8 and card + 1 in hand))):
                        continue
            if window is None:
                window = Window(card, owner, source, {})
            acts = self.claims(table, seat, window, hu)
            if acts:
                out[seat] = acts
        return out

    def own_windows(self, table: Any) -> bool:
        """Whether this flow alone answers the hooks of a discard's claim
        window on ``table`` (``qipai_window_actions``,
        ``qipai_claim_actions``, ``qipai_apply_claims``; see
        :meth:`answers`), the table does not ask every seat (``ask_all``)
        and its ``open_window`` is the engine's own: then a discard's
        window is :meth:`open_own_window`.  Read once per table."""
        own = table.scratch.get("mahjong.own_windows")
        if own is None:
            cls = type(table)
            own = table.scratch["mahjong.own_windows"] = (
                not table.state.ask_all
                and self.answers(table, "qipai_window_actions")
                and self.answers(table, "qipai_claim_actions")
                and self.answers(table, "qipai_apply_claims")
                and cls.open_window is Table.open_window
                and cls._resolve_window is Table._resolve_window
                and not {"qipai_window_actions", "qipai_apply_claims"} & vars(self).keys())
        return own

    def open_own_window(self, table: Any, card: int, owner: int) -> None:
        """``table.open_window(card, owner, "discard")`` (only when
        :meth:`own_windows`): when no seat has a claim — most discards —
        what the engine would do, done here: nobody is asked and the window
        resolves with nothing taken (:meth:`pass_on`, what
        :meth:`qipai_apply_claims` does then), no window object made.
        Otherwise the engine opens it, with the claims found here (they
        are not looked for twice)."""
        state = table.state
        by_seat = self.claims_on(table, owner, card, "discard")
        if not by_seat:
            self.pass_on(table, owner, card)
            return
        table.scratch["mahjong.window"] = (card, owner, len(state.events), by_seat)
        table.open_window(card, owner, "discard")

    def pass_on(self, table: Any, owner: int, card: int) -> None:
        """A discard nobody took: it joins ``owner``'s discards and the next
        seat draws (荒庄 when the stock is spent, D-M5)."""
        state = table.state
        state.seats[owner].discards.append(card)
        state.extra.kong_discard = None
        nxt = (owner + 1) % table.n
        r = table.scratch.get("mahjong.reserve")  # can_draw, read inline
        if not (len(state.wall) > r if r is not None and r >= 0 else self.can_draw(table)):
            self.huangzhuang(table)
        elif self.own_turns(table):
            self.draw_own(table, nxt)
        else:
            table.draw(nxt)

    @hookimpl(trylast=True)
    def qipai_claim_actions(self, table: Any, seat: int, window: Window) -> list[Action]:
        if seat == window.owner:
            return []
        return self.claims(table, seat, window,
                           self.may_win(table, seat, table.state.seats[seat].hand, window.card))

    def claims(self, table: Any, seat: int, window: Window, may_win: bool) -> list[Action]:
        """``seat``'s claim actions on the window's card (not its owner);
        ``may_win`` False skips the win check (see :meth:`may_win`)."""
        card = window.card
        acts: list[Action] = []
        if may_win:
            how = "qianggang" if window.source == "jiagang" else "dianpao"
            claim = self.claim_for(table, seat, card, how, window.owner)
            if self.wins(table, claim, how, window.owner):
                acts.append(Hu(seat))
        if window.source == "discard" and self.can_draw(table):
            hand = table.state.seats[seat].hand
            n = hand.count(card)
            if n >= 2:
                acts.append(Peng(seat))
            if n == 3:
                acts.append(Minggang(seat))
            if seat == (window.owner + 1) % table.n:
                acts.extend(Chi(seat, run) for run in chi_runs(hand, card))
        if acts:
            acts.append(Pass(seat))
        return acts

    @hookimpl(trylast=True)
    def qipai_claim_priority(self, table: Any, window: Window, action: Action) -> int:
        """胡 > 碰/杠 > 吃 (《桂林麻将游戏规则介绍》 动作术语: 胡>(碰|杠)>吃)."""
        return _PRIORITY.get(type(action), 0)

    @hookimpl(trylast=True)
    def qipai_resolve_claims(self, table: Any, window: Window,
                             declared: dict[int, Action]) -> list[Action]:
        """The highest claim takes effect; every 胡 at once (一炮多响)."""
        ranked = [(table.hook.qipai_claim_priority(table=table, window=window, action=a), a)
                  for a in declared.values() if type(a) is not Pass]
        if not ranked:
            return []
        top = max(r for r, _ in ranked)
        best = [a for r, a in ranked if r == top]
        if top == HU:
            return sorted(best, key=lambda a: (a.seat - window.owner) % table.n)
        return best[:1]

    @hookimpl(trylast=True)
    def qipai_apply_claims(self, table: Any, window: Window, taken: list[Action]) -> bool:
        st = table.state.extra
        owner, card = window.owner, window.card
        if taken and type(taken[0]) is Hu:
            how = "qianggang" if window.source == "jiagang" else "dianpao"
            claims = [self.claim_for(table, a.seat, card, how, owner) for a in taken]
            self.finish_win(table, how, owner, claims, card=card)
            return True
        if window.source == "jiagang":
            self.complete_jiagang(table, owner, card)
            return True
        if not taken:
            self.pass_on(table, owner, card)
            return True
        action = taken[0]
        seat = action.seat
        s = table.seats[seat]
        st.claims[owner][seat] += 1
        st.any_claim = True
        kind = type(action)
        if kind is Peng or kind is Minggang:
            st.pengs[owner][seat] += 1
            st.any_peng = True
        st.kong_discard = None
        if kind is Peng:
            remove(s.hand, card, 2)
            meld = Meld("peng", (card,) * 3, from_seat=owner, claimed=card)
        elif kind is Minggang:
            remove(s.hand, card, 3)
            meld = Meld("minggang", (card,) * 4, from_seat=owner, claimed=card)
        else:
            assert kind is Chi, f"unexpected claim {action!r}"
            for c in action.cards:
                if c != card:
                    remove(s.hand, c)
            meld = Meld("chi", tuple(action.cards), from_seat=owner, claimed=card)
        s.melds.append(meld)
        if kind is Minggang:
            self.after_kong(table, seat, meld)
        else:
            table.emit(Melded(seat, meld))
            self.mark_relations(table, owner, seat)
            st.drawn = None
            st.after_kong = False
            st.chain = []
            table.give_turn(seat)
        return True

    @staticmethod
    def mark_relations(table: Any, owner: int, seat: int) -> None:
        """Announce a relation the claim just formed (互包, 封胡 …) with a
        ``marked`` event, once."""
        st = table.extra
        rel = table.hook.qipai_relations(table=table) or {}
        for name, groups in rel.items():
            for g in groups:
                key = [name, *sorted(g)]
                if owner in g and seat in g and key not in st.announced:
                    st.announced.append(key)
                    table.emit(Marked(name, tuple(sorted(g))))

    def complete_jiagang(self, table: Any, seat: int, card: int) -> None:
        s = table.seats[seat]
        for i, m in enumerate(s.melds):
            if m.kind == "peng" and m.cards[0] == card:
                meld = Meld("jiagang", (card,) * 4, from_seat=m.from_seat, claimed=m.claimed)
                s.melds[i] = meld
                break
        else:  # pragma: no cover
            raise AssertionError("jiagang without a peng")
        self.after_kong(table, seat, meld)

    @hookimpl(trylast=True)
    def qipai_explain_illegal(self, table: Any, action: Action) -> str | None:
        st = table.state
        seat = action.seat
        fmt = TILES.token
        w = st.window
        if w is None:
            if st.turn is not None and seat != st.turn:
                return f"it is seat {st.turn}'s turn, not seat {seat}'s"
            hand = st.seats[seat].hand
            if isinstance(action, Discard) and action.card not in hand:
                return f"seat {seat} does not hold {fmt(action.card)}"
            if isinstance(action, Angang) and hand.count(action.card) != 4:
                return f"seat {seat} does not hold four {fmt(action.card)} for an angang"
            if isinstance(action, (Hu, Peng, Minggang, Chi, Pass)):
                return f"no card is in play to claim; it is seat {st.turn}'s turn to act"
            if isinstance(action, Zimo):
                return f"seat {seat}'s hand does not win by zimo now"
            return None
        if isinstance(action, Chi) and w.source == "discard" and seat != (w.owner + 1) % st.n_players:
            return (f"chi only from the previous seat: {fmt(w.card)} was discarded by seat "
                    f"{w.owner}, and seat {seat} is not its next seat")
        if isinstance(action, (Discard, Angang, Jiagang, Zimo)):
            return f"seat {seat} cannot {type(action).__struct_config__.tag} now: " \
                   f"{fmt(w.card)} from seat {w.owner} is open to claims"
        hand = st.seats[seat].hand
        if isinstance(action, Peng) and hand.count(w.card) < 2:
            return f"seat {seat} holds no pair of {fmt(w.card)} to peng"
        if isinstance(action, Minggang) and hand.count(w.card) < 3:
            return f"seat {seat} does not hold three {fmt(w.card)} for a minggang"
        if isinstance(action, Chi):
            return f"seat {seat} cannot chi {' '.join(fmt(c) for c in action.cards)} " \
                   f"with {fmt(w.card)}"
        if isinstance(action, Hu):
            return f"seat {seat}'s hand does not win on {fmt(w.card)}"
        if seat not in st.pending:
            return f"seat {seat} has no claim on {fmt(w.card)}"
        return None

    # ------------------------------------------------------------- endings
    def finish_win(self, table: Any, how: str, from_seat: int | None,
                   claims: list[WinClaim], card: int | None = None) -> None:
        """Settle and end the hand.  ``card``: the card won on (another's
        discard, or a 抢杠 card), which is in no zone until then: after
        settlement it joins the hand of the first winner in ``claims``, so the final
        state holds every card of the deal once."""
        end = HandEnd(dealer=table.state.dealer, how=how, from_seat=from_seat,
                      winners=tuple(claims), stock=tuple(table.state.wall),
                      relations=table.hook.qipai_relations(table=table) or {},
                      n_players=table.n)
        settlement = table.settle(end)
        for c in claims:
            table.state.events.append(Won(c.seat, how, c.tile, from_seat,
                                          tuple(settlement.patterns.get(c.seat, ()))))
        if card is not None and claims:
            table.seats[claims[0].seat].hand.append(card)
        table.end_hand("hu", [c.seat for c in claims], settlement, from_seat)

    def huangzhuang(self, table: Any) -> None:
        """荒庄: a ``marked`` notice (a variant may refund fees on it), then the end."""
        table.emit(Marked("huangzhuang"))
        table.end_hand("huangzhuang")

    @hookimpl(trylast=True)
    def qipai_relations(self, table: Any) -> dict[str, list[list[int]]]:
        return table.relations

    @hookimpl(trylast=True)
    def qipai_next_dealer(self, table: Any, end: str, winners: Any, from_seat: int | None) -> int:
        """Winner deals; several winners → the discarder (D-M8: the robbed
        kong maker); 荒庄 → the dealer again (《广西麻将游戏》, Guilin D-GL12)."""
        if end != "hu":
            return table.state.dealer
        if len(winners) == 1:
            return winners[0]
        return from_seat if from_seat is not None else table.state.dealer

