"""Speed of the hot paths: win checks, waits, shanten, 胡数 splits and whole bot hands.

Run: ``uv run python benchmarks/run.py [--json] [--corpus N] [--bot-hands N] [--seed S]``.

The corpora are fixed by the seed.  Mahjong: ``--corpus`` random 14-tile
hands, each drawn from a freshly shuffled 136-tile deck, plus a quarter as
many winning hands (random 4 sets + pair, and some 七对), so both the "no"
and the "yes" paths are timed.  13-tile hands for waits are the 14-tile
hands less their last tile.  Zipai (桂林字牌): ``--corpus`` random 21-card
holdings (20 in hand + the card in play, from a freshly shuffled 80-card
deck) plus a quarter as many made of 7 random valid groups, each searched
for its best split (胡数): ``groups.best_split`` with its memo warm (the
way play uses it) and with the memo emptied before each pass, and the
variant's win check (``rs.win_check``, 胡数 minimum included).  Each timing
is the best of ``--repeat`` passes over the corpus.  Bot play (mahjong
and zipai, random and greedy) reports hands per second, decisions (applied
actions) per hand, the share of hands ending in a win and the hands that
stopped on an engine error.  This is a script, not a test: it asserts
nothing about time.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from qipai.bots import play_hand, zipai_splits
from qipai.core.cards import counts
from qipai.core.errors import QipaiError
from qipai.core.model import WinClaim
from qipai.core.ruleset import load
from qipai.families.mahjong import shapes
from qipai.families.zipai import groups as zipai_groups

VARIANT = "guilin-mahjong"
ZIPAI_VARIANT = "guilin-zipai"


# --------------------------------------------------------------------------
# corpus


def random_hands(rng: random.Random, n: int, size: int = 14) -> list[list[int]]:
    """``n`` hands of ``size`` tiles, each from a freshly shuffled deck."""
    deck = [k for k in range(34) for _ in range(4)]
    out = []
    for _ in range(n):
        rng.shuffle(deck)
        out.append(deck[:size])
    return out


def winning_hand(rng: random.Random) -> list[int]:
    """A random complete 14-tile hand: 4 sets + pair, or (1 in 5) seven pairs."""
    while True:
        c = [0] * 34
        if rng.random() < 0.2:
            for k in rng.sample(range(34), 7):
                c[k] += 2
        else:
            c[rng.randrange(34)] += 2
            for _ in range(4):
                if rng.random() < 0.6:
                    suit, start = rng.randrange(3), rng.randrange(7)
                    for k in range(suit * 9 + start, suit * 9 + start + 3):
                        c[k] += 1
                else:
                    c[rng.randrange(34)] += 3
        if max(c) <= 4:
            hand = [k for k in range(34) for _ in range(c[k])]
            rng.shuffle(hand)
            return hand


def corpus(seed: int, n: int) -> list[list[int]]:
    rng = random.Random(seed)
    hands = random_hands(rng, n) + [winning_hand(rng) for _ in range(max(1, n // 4))]
    rng.shuffle(hands)
    return hands


# --------------------------------------------------------------------------
# zipai corpus: 21-card holdings, a hand of 20 and the card in play

ZipaiHolding = tuple[tuple[int, ...], int]


def zipai_random_holdings(rng: random.Random, n: int) -> list[ZipaiHolding]:
    """``n`` holdings of 21 cards from freshly shuffled decks (never four of
    a kind among the 20: those would lie on the table as 扫穿)."""
    deck = [k for k in range(20) for _ in range(4)]
    out: list[ZipaiHolding] = []
    while len(out) < n:
        rng.shuffle(deck)
        if max(counts(deck[:20], 20)) < 4:
            out.append((tuple(sorted(deck[:20])), deck[20]))
    return out


def zipai_winning_holding(rng: random.Random, valid: Sequence[tuple[int, ...]]) -> ZipaiHolding:
    """7 random valid 3-card groups (21 cards, no fifth copy), one card of
    them in play, that still split (three identical cards in the hand are a
    坎 that may not be split, so some mixes do not)."""
    while True:
        cards = [k for _ in range(7) for k in rng.choice(valid)]
        rng.shuffle(cards)
        hand, card = counts(cards[:20], 20), cards[20]
        if max(counts(cards, 20)) <= 4 and max(hand) < 4 and \
                zipai_groups.best_split(hand, card, self_drawn=False) is not None:
            return tuple(sorted(cards[:20])), card


def zipai_corpus(seed: int, n: int) -> list[ZipaiHolding]:
    rng = random.Random(f"zipai:{seed}")
    valid = [g for g in ((a, b, c) for a in range(20) for b in range(a, 20) for c in range(b, 20))
             if zipai_groups.valid_group(g)]
    items = zipai_random_holdings(rng, n) + [zipai_winning_holding(rng, valid)
                                             for _ in range(max(1, n // 4))]
    rng.shuffle(items)
    return items


# --------------------------------------------------------------------------
# timing


def per_call_us(fn: Callable[[Any], Any], items: Sequence[Any], repeat: int,
                before: Callable[[], Any] | None = None) -> float:
    """Best-of-``repeat`` microseconds per ``fn(item)`` over ``items``
    (``before()``, untimed, runs ahead of each pass)."""
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - t0)
    return best / len(items) * 1e6


def bot_play(rs: Any, bots: str, hands: int, seed: int) -> dict[str, Any]:
    """Play ``hands`` hands (seeds ``seed``, ``seed + 1`` …) with ``bots``.

    A hand the engine stops with an error (a :class:`QipaiError`) counts in
    ``errors`` and the hands per second, not in the other figures;
    ``error_seeds`` lists the first few.
    """
    steps = wins = done = 0
    errors: list[int] = []
    t0 = time.perf_counter()
    for i in range(hands):
        try:
            table = play_hand(rs, seed=seed + i, bots=bots)
        except QipaiError:
            errors.append(seed + i)
            continue
        done += 1
        steps += len(table.state.actions)
        wins += table.result.end == "hu"
    elapsed = time.perf_counter() - t0
    return {"hands": hands, "hands_per_s": hands / elapsed,
            "steps_per_hand": steps / max(done, 1), "win_rate": wins / max(done, 1),
            "errors": len(errors), "error_seeds": errors[:10]}


def measure(seed: int, n: int, bot_hands: int, repeat: int) -> dict[str, Any]:
    rs = load(VARIANT)
    hands14 = corpus(seed, n)
    counts14 = [counts(h, 34) for h in hands14]
    counts13 = [counts(h[:13], 34) for h in hands14]
    claims = [WinClaim(seat=0, hand=tuple(sorted(h[:13])), tile=h[13]) for h in hands14]
    hands13 = [sorted(h[:13]) for h in hands14]
    n_std = sum(shapes.is_standard(c) for c in counts14)
    n_win = sum(rs.win_check(c, "zimo", 0).wins for c in claims)

    def guilin_win(claim: WinClaim) -> Any:
        return rs.win_check(claim, "zimo", 0)

    checks = {
        "shapes.is_standard (14)": per_call_us(shapes.is_standard, counts14, repeat),
        "guilin qipai_win_check (rs.win_check, 14)": per_call_us(guilin_win, claims, repeat),
        "shapes.waits (13)": per_call_us(shapes.waits, counts13, repeat),
        "guilin qipai_waits (rs.waits, 13)": per_call_us(rs.waits, hands13, repeat),
        "shapes.shanten (13)": per_call_us(shapes.shanten, counts13, repeat),
    }

    zs = load(ZIPAI_VARIANT)
    holdings = zipai_corpus(seed, n)
    zcounts = [(counts(hand, 20), card) for hand, card in holdings]
    zclaims = [WinClaim(seat=0, hand=hand, tile=card) for hand, card in holdings]
    hands20 = [c for c, _ in zcounts]

    def best_split(item: tuple[list[int], int]) -> Any:
        return zipai_groups.best_split(item[0], item[1], self_drawn=False)

    def zipai_win(claim: WinClaim) -> Any:  # a card another seat drew: 平胡
        return zs.win_check(claim, "pinghu", 0, 1)

    n_split = sum(best_split(item) is not None for item in zcounts)
    n_zwin = sum(zipai_win(c).wins for c in zclaims)
    checks["zipai groups.best_split (20 + 1, memo warm)"] = per_call_us(best_split, zcounts, repeat)
    checks["zipai groups.best_split (20 + 1, memo emptied each pass)"] = per_call_us(
        best_split, zcounts, repeat, before=zipai_groups._MEMO.clear)
    checks["guilin-zipai qipai_win_check (rs.win_check, 21)"] = per_call_us(
        zipai_win, zclaims, repeat)
    checks["bots.zipai_splits (greedy estimate, 20; memo capped)"] = per_call_us(
        zipai_splits, hands20, repeat)
    return {
        "variant": VARIANT,
        "zipai_variant": ZIPAI_VARIANT,
        "seed": seed,
        "corpus": {"hands": len(hands14), "standard_wins": n_std, "guilin_wins": n_win,
                   "zipai_holdings": len(holdings), "zipai_splits": n_split,
                   "zipai_wins": n_zwin},
        "us_per_call": checks,
        "bots": {
            "random": bot_play(rs, "random", bot_hands, seed),
            "greedy": bot_play(rs, "greedy", bot_hands, seed),
            "zipai random": bot_play(zs, "random", bot_hands, seed),
            "zipai greedy": bot_play(zs, "greedy", bot_hands, seed),
        },
    }


def show(figures: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    c = figures["corpus"]
    t = Table(title=f"hot paths · {figures['variant']} · {c['hands']} hands "
                    f"(standard wins {c['standard_wins']}, Guilin wins {c['guilin_wins']}) "
                    f"· {figures['zipai_variant']} · {c['zipai_holdings']} holdings "
                    f"(splits {c['zipai_splits']}, wins {c['zipai_wins']}) "
                    f"· seed {figures['seed']}")
    t.add_column("call")
    t.add_column("µs per call", justify="right")
    t.add_column("calls per s", justify="right")
    for name, us in figures["us_per_call"].items():
        t.add_row(name, f"{us:.1f}", f"{1e6 / us:,.0f}")
    console.print(t)
    b = Table(title=f"bot play (a bot per seat, one hand each seed; mahjong {figures['variant']}, "
                    f"zipai {figures['zipai_variant']})")
    for col in ("bots", "hands", "hands per s", "decisions per hand", "win rate",
                "engine errors"):
        b.add_column(col, justify="right" if col != "bots" else "left")
    for name, f in figures["bots"].items():
        errs = str(f["errors"])
        if f["errors"]:
            errs += " (seeds " + ", ".join(map(str, f["error_seeds"])) + ")"
        b.add_row(name, str(f["hands"]), f"{f['hands_per_s']:.1f}",
                  f"{f['steps_per_hand']:.1f}", f"{f['win_rate']:.0%}", errs)
    console.print(b)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=int, default=2000,
                   help="random 14-tile hands and 21-card zipai holdings (default 2000 each)")
    p.add_argument("--bot-hands", type=int, default=40, help="hands per bot kind (default 40)")
    p.add_argument("--repeat", type=int, default=3, help="passes per timing, best kept")
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    a = p.parse_args(argv)
    if a.corpus < 1 or a.bot_hands < 1 or a.repeat < 1:
        p.error("--corpus, --bot-hands and --repeat must be at least 1")
    figures = measure(a.seed, a.corpus, a.bot_hands, a.repeat)
    if a.json:
        print(msgspec.json.encode(figures).decode())
    else:
        show(figures)


if __name__ == "__main__":
    main()
