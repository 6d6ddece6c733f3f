"""Random and greedy players, and helpers that play whole hands with them.

A bot is anything with ``choose(table, seat) -> Action`` returning one of
``table.legal_actions(seat)``.  Bots are hosts of the table, like the CLI:
they read only what the seat may know — its own hand and the public part
of the table (melds shown, discards) — and decide with their own seeded
RNG, so a seed fixes a whole hand (the shuffle and every decision).

* :class:`RandomBot` picks uniformly among the legal actions (but takes a
  win when one is offered, unless told not to).
* :class:`GreedyBot` plays toward a win: per family, a strategy reads the
  hand and picks the action that keeps it closest to ready.  Mahjong uses
  向听 (:func:`qipai.families.mahjong.shapes.shanten`); zipai has no
  strategy yet and plays as a random bot.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from qipai.core.model import Action, Angang, Chi, Discard, Hu, Jiagang, Minggang, Pass, Peng, Zimo
from qipai.families.mahjong import shapes

__all__ = [
    "Bot",
    "RandomBot",
    "GreedyBot",
    "BOT_KINDS",
    "make_bots",
    "hand_seed",
    "play_hand",
    "play_hands",
    "run_to_end",
]

#: A hand that takes more decisions than this is an engine bug, not a long hand.
MAX_STEPS = 5000


class Bot(Protocol):
    """A player: picks one of ``table.legal_actions(seat)``."""

    def choose(self, table: Any, seat: int) -> Action: ...


def _wins(actions: Sequence[Action]) -> list[Action]:
    return [a for a in actions if isinstance(a, (Hu, Zimo))]


class RandomBot:
    """Uniformly random among the legal actions.

    Args:
        rng: the bot's RNG (default: a fresh unseeded ``random.Random``).
        always_win: take a 胡/自摸 whenever one is offered; without it hands
            rarely end in a win.
    """

    def __init__(self, rng: random.Random | None = None, *, always_win: bool = True) -> None:
        self.rng = rng or random.Random()
        self.always_win = always_win

    def choose(self, table: Any, seat: int) -> Action:
        actions = table.legal_actions(seat)
        if not actions:
            raise ValueError(f"seat {seat} has nothing to decide")
        if self.always_win:
            wins = _wins(actions)
            if wins:
                return wins[0]
        return self.rng.choice(actions)


# --------------------------------------------------------------------------
# Greedy mahjong: stay as close to ready as possible.


def _seen_kinds(table: Any, seat: int, n_kinds: int) -> list[int]:
    """Copies of each kind ``seat`` can see: its hand, every shown meld
    card (a Guilin 暗杠 shows its kind) and every discard."""
    seen = [0] * n_kinds
    for k in table.seats[seat].hand:
        seen[k] += 1
    for i, s in enumerate(table.seats):
        for m in s.melds:
            if i != seat and m.hidden >= len(m.cards):
                continue  # wholly face down: unknown kind
            for k in m.cards:
                seen[k] += 1
        for k in s.discards:
            seen[k] += 1
    return seen


def _near(c: Sequence[int], t: int) -> bool:
    """Whether adding kind ``t`` can join a block of ``c`` (same kind, or a
    suited tile within two ranks): otherwise it cannot lower the 向听."""
    if c[t]:
        return True
    if t >= 27:
        return False
    base = t - t % 9
    return any(c[k] for k in range(max(base, t - 2), min(base + 9, t + 3)))


def _isolation(c: Sequence[int], k: int) -> int:
    """How gladly to let a lone tile go: 2 an isolated honor, 1 an isolated
    terminal, 0 otherwise (a discard tie-break)."""
    if c[k] != 1:
        return 0
    if k >= 27:
        return 2
    rank = k % 9
    if rank not in (0, 8):
        return 0
    base = k - rank
    lone = all(c[j] == 0 for j in range(max(base, k - 2), min(base + 9, k + 3)) if j != k)
    return 1 if lone else 0


_SEGMENTS = ((0, 9, True), (9, 18, True), (18, 27, True), (27, 34, False))


def _shanten_of_table(tb: Sequence[int], s: int) -> int:
    """Standard shanten from a joined block table (``tb[p * 5 + m]`` = most
    partial sets with ``m`` sets and ``p`` eyes, -1 if none) with ``s`` sets
    to make — the formula of :func:`~qipai.families.mahjong.shapes.shanten_standard`."""
    best = 2 * s
    for p in range(2):
        for m in range(s + 1):
            t = tb[p * 5 + m]
            if t >= 0:
                v = 2 * s - 2 * m - min(t, s - m) - p
                if v < best:
                    best = v
    return best


class MahjongStrategy:
    """Greedy mahjong play on 向听 (shanten), generic over mahjong variants.

    * always 胡/自摸;
    * discard the tile leaving the lowest shanten; ties go to the discard
      keeping the most live useful tiles (有效牌, counted against the tiles
      this seat can see), then to an isolated honor, then an isolated
      terminal, then the RNG;
    * 暗杠/蓄杠 when the hand after the kong is no further from ready than
      after the best discard (a 蓄杠 with the fourth copy of one's own 碰 is
      a free exchange);
    * on a discard, 杠 > 碰 > 吃 when the hand after the claim (and its best
      discard) is no further from ready than now; else pass.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.shanten = shapes.shanten

    def choose(self, table: Any, seat: int, actions: list[Action]) -> Action:
        wins = _wins(actions)
        if wins:
            return wins[0]
        if any(isinstance(a, Discard) for a in actions):
            return self._turn(table, seat, actions)
        return self._claim(table, seat, actions)

    # -- turn: kong or discard -------------------------------------------------
    def _turn(self, table: Any, seat: int, actions: list[Action]) -> Action:
        s = table.seats[seat]
        c = self._counts(s.hand, table)
        n = len(s.melds)
        discards = [a for a in actions if isinstance(a, Discard)]
        after = {}
        for a in discards:
            c[a.card] -= 1
            after[a.card] = self.shanten(c, n)
            c[a.card] += 1
        best = min(after.values())
        for a in actions:
            if isinstance(a, Angang):
                c[a.card] -= 4
                ok = self.shanten(c, n + 1) <= best
                c[a.card] += 4
                if ok:
                    return a
            elif isinstance(a, Jiagang) and after.get(a.card, best + 1) <= best:
                return a
        tied = [a for a in discards if after[a.card] == best]
        if len(tied) == 1:
            return tied[0]
        seen = _seen_kinds(table, seat, len(c))
        scored = []
        for a in tied:
            c[a.card] -= 1
            useful = self._useful(c, n, best, seen)
            c[a.card] += 1
            scored.append(((useful, _isolation(c, a.card)), a))
        top = max(key for key, _ in scored)
        return self.rng.choice([a for key, a in scored if key == top])

    def _useful(self, c: list[int], n: int, sh: int, seen: Sequence[int]) -> int:
        """Live copies of the kinds that lower the shanten ``sh`` of ``c``."""
        total = 0
        for t in self._improving(c, n, sh):
            live = 4 - seen[t]
            if live > 0:
                total += live
        return total

    def _improving(self, c: list[int], n: int, sh: int) -> list[int]:
        """The kinds ``t`` with ``shanten(c + t) < sh`` (有效牌).

        The hot loop of the bot.  Adding a tile changes one segment (a suit
        or the honors), so the block tables of the other three are joined
        once per segment instead of once per kind; this leans on the block
        tables of :mod:`~qipai.families.mahjong.shapes` (``_block_table``,
        ``_join``), which have no public form yet.
        """
        s = 4 - n
        tabs = [shapes._block_table(tuple(c[a:b]), runs) for a, b, runs in _SEGMENTS]
        pairs = sum(x >> 1 for x in c)
        out = []
        for g, (a, b, runs) in enumerate(_SEGMENTS):
            others = None
            for t in range(a, b):
                if c[t] >= 4 or not _near(c, t):
                    continue
                if n == 0 and c[t] & 1 and 6 - min(pairs + 1, 7) < sh:
                    out.append(t)  # seven pairs one step closer
                    continue
                if others is None:
                    rest = [tabs[j] for j in range(4) if j != g]
                    others = shapes._join(shapes._join(rest[0], rest[1]), rest[2])
                c[t] += 1
                tb = shapes._join(others, shapes._block_table(tuple(c[a:b]), runs))
                c[t] -= 1
                if _shanten_of_table(tb, s) < sh:
                    out.append(t)
        return out

    # -- claims ----------------------------------------------------------------
    def _claim(self, table: Any, seat: int, actions: list[Action]) -> Action:
        window = table.state.window
        s = table.seats[seat]
        c = self._counts(s.hand, table)
        n = len(s.melds)
        now = self.shanten(c, n)
        best: tuple[int, int, Action] | None = None  # (shanten, preference, action)
        for a in actions:
            if isinstance(a, Minggang):
                c[window.card] -= 3
                sh, pref = self.shanten(c, n + 1), 0
                c[window.card] += 3
            elif isinstance(a, Peng):
                c[window.card] -= 2
                sh, pref = self._best_discard(c, n + 1), 1
                c[window.card] += 2
            elif isinstance(a, Chi):
                used = list(a.cards)
                used.remove(window.card)
                for k in used:
                    c[k] -= 1
                sh, pref = self._best_discard(c, n + 1), 2
                for k in used:
                    c[k] += 1
            else:
                continue
            if sh <= now and (best is None or (sh, pref) < best[:2]):
                best = (sh, pref, a)
        if best is not None:
            return best[2]
        passes = [a for a in actions if isinstance(a, Pass)]
        return passes[0] if passes else actions[0]

    def _best_discard(self, c: list[int], n: int) -> int:
        out = 99
        for k in range(len(c)):
            if c[k]:
                c[k] -= 1
                out = min(out, self.shanten(c, n))
                c[k] += 1
        return out

    @staticmethod
    def _counts(hand: Sequence[int], table: Any) -> list[int]:
        c = [0] * table.cards.n_kinds
        for k in hand:
            c[k] += 1
        return c


class GreedyBot:
    """Plays toward a win with the strategy of the table's family.

    Families without a strategy (zipai, for now) play as :class:`RandomBot`.

    Args:
        rng: the bot's RNG, for ties (default: a fresh unseeded one).
    """

    #: family name → strategy class (``choose(table, seat, actions)``).
    #: Zipai's strategy (胡数-driven group search) is still to come.
    STRATEGIES: dict[str, type] = {"mahjong": MahjongStrategy}

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()
        self._fallback = RandomBot(self.rng, always_win=True)
        self._strategies: dict[str, Any] = {}

    def choose(self, table: Any, seat: int) -> Action:
        actions = table.legal_actions(seat)
        if not actions:
            raise ValueError(f"seat {seat} has nothing to decide")
        family = table.ruleset.manifest.family
        strategy = self._strategies.get(family)
        if strategy is None:
            cls = self.STRATEGIES.get(family)
            if cls is None:
                return self._fallback.choose(table, seat)
            strategy = self._strategies[family] = cls(self.rng)
        return strategy.choose(table, seat, actions)


# --------------------------------------------------------------------------
# Playing hands

#: Bot names accepted by :func:`make_bots` (and ``qipai play --bots``).
BOT_KINDS: dict[str, Callable[[random.Random], Bot]] = {
    "greedy": GreedyBot,
    "random": RandomBot,
}


def make_bots(bots: str | Sequence[str | Bot], n: int, seed: int | None) -> list[Bot]:
    """One bot per seat.

    Args:
        bots: a bot name for every seat (``"greedy"``, ``"random"``), or one
            name or bot object per seat.
        n: seats at the table.
        seed: seeds each named bot's RNG (seat by seat); None: unseeded.

    Raises:
        ValueError: an unknown bot name or the wrong number of bots.
    """
    specs = [bots] * n if isinstance(bots, str) else list(bots)
    if len(specs) != n:
        raise ValueError(f"{n} seats need {n} bots, got {len(specs)}")
    out: list[Bot] = []
    for seat, spec in enumerate(specs):
        if not isinstance(spec, str):
            out.append(spec)
            continue
        if spec not in BOT_KINDS:
            raise ValueError(f"unknown bot {spec!r}; bots are: {', '.join(BOT_KINDS)}")
        rng = random.Random(f"qipai-bot:{seed}:{seat}") if seed is not None else random.Random()
        out.append(BOT_KINDS[spec](rng))
    return out


def hand_seed(seed: int, index: int) -> int:
    """The seed of hand ``index`` (0-based) in a session seeded ``seed``:
    hand 0 uses ``seed`` itself, later hands a value derived from both."""
    if index == 0:
        return seed
    return random.Random(f"qipai-hand:{seed}:{index}").getrandbits(48)


def run_to_end(table: Any, bots: Sequence[Bot], max_steps: int = MAX_STEPS) -> int:
    """Let ``bots`` (one per seat) decide until the hand is over.

    Returns: the number of decisions applied.

    Raises:
        RuntimeError: nobody has a decision though the hand is not over, or
            the hand takes more than ``max_steps`` decisions (engine bugs).
    """
    steps = 0
    while not table.over:
        seats = table.to_decide()
        if not seats:
            raise RuntimeError("the hand is not over but no seat has a decision")
        seat = seats[0]
        table.apply(bots[seat].choose(table, seat))
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"the hand did not end within {max_steps} decisions")
    return steps


def play_hand(ruleset: Any, *, seed: int | None = None, dealer: int | None = None,
              bots: str | Sequence[str | Bot] = "greedy", deal: Any = None) -> Any:
    """Play one hand to the end with bots; return the finished table.

    Args:
        ruleset: a loaded :class:`~qipai.core.ruleset.Ruleset`.
        seed: seeds the shuffle and the bots: the same seed gives the same
            record.  None picks a random seed (kept as ``table.seed``).
        dealer: the dealer's seat (default: the variant's first dealer).
        bots: see :func:`make_bots`.
        deal: an explicit :class:`~qipai.core.model.Deal` instead of a shuffle.
    """
    if seed is None:
        seed = secrets.randbits(32)
    table = ruleset.table(seed=seed, deal=deal, dealer=dealer)
    run_to_end(table, make_bots(bots, table.n, seed))
    return table


def play_hands(ruleset: Any, hands: int = 1, *, seed: int | None = None,
               bots: str | Sequence[str | Bot] = "greedy",
               dealer: int | None = None) -> Iterator[Any]:
    """Play ``hands`` hands at one table and yield each finished table.

    Each hand's dealer is the previous hand's ``result.next_dealer`` (the
    first: ``dealer``, or the variant's first dealer); hand ``i`` is seeded
    with :func:`hand_seed` ``(seed, i)``.
    """
    if seed is None:
        seed = secrets.randbits(32)
    for i in range(hands):
        table = play_hand(ruleset, seed=hand_seed(seed, i), dealer=dealer, bots=bots)
        dealer = table.result.next_dealer
        yield table
