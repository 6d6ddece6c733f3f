"""Speed of the hot paths: win checks, waits, shanten and whole bot hands.

Run: ``uv run python benchmarks/run.py [--json] [--corpus N] [--bot-hands N] [--seed S]``.

The corpus is fixed by the seed: ``--corpus`` random 14-tile hands, each
drawn from a freshly shuffled 136-tile deck, plus a quarter as many winning
hands (random 4 sets + pair, and some 七对), so both the "no" and the "yes"
paths are timed.  13-tile hands for waits are the 14-tile hands less their
last tile.  Each timing is the best of ``--repeat`` passes over the corpus.
Bot play reports hands per second, decisions (applied actions) per hand and
the share of hands ending in a win.  This is a script, not a test: it
asserts nothing about time.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from qipai.bots import play_hand
from qipai.core.cards import counts
from qipai.core.model import WinClaim
from qipai.core.ruleset import load
from qipai.families.mahjong import shapes

VARIANT = "guilin-mahjong"


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
# timing


def per_call_us(fn: Callable[[Any], Any], items: Sequence[Any], repeat: int) -> float:
    """Best-of-``repeat`` microseconds per ``fn(item)`` over ``items``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - t0)
    return best / len(items) * 1e6


def bot_play(rs: Any, bots: str, hands: int, seed: int) -> dict[str, float]:
    steps = wins = 0
    t0 = time.perf_counter()
    for i in range(hands):
        table = play_hand(rs, seed=seed + i, bots=bots)
        steps += len(table.state.actions)
        wins += table.result.end == "hu"
    elapsed = time.perf_counter() - t0
    return {"hands": hands, "hands_per_s": hands / elapsed,
            "steps_per_hand": steps / hands, "win_rate": wins / hands}


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
    return {
        "variant": VARIANT,
        "seed": seed,
        "corpus": {"hands": len(hands14), "standard_wins": n_std, "guilin_wins": n_win},
        "us_per_call": checks,
        "bots": {
            "random": bot_play(rs, "random", bot_hands, seed),
            "greedy": bot_play(rs, "greedy", bot_hands, seed),
        },
    }


def show(figures: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    c = figures["corpus"]
    t = Table(title=f"hot paths · {figures['variant']} · {c['hands']} hands "
                    f"(standard wins {c['standard_wins']}, Guilin wins {c['guilin_wins']}) "
                    f"· seed {figures['seed']}")
    t.add_column("call")
    t.add_column("µs per call", justify="right")
    t.add_column("calls per s", justify="right")
    for name, us in figures["us_per_call"].items():
        t.add_row(name, f"{us:.1f}", f"{1e6 / us:,.0f}")
    console.print(t)
    b = Table(title="bot play (4 bots, one hand each seed)")
    for col in ("bots", "hands", "hands per s", "decisions per hand", "win rate"):
        b.add_column(col, justify="right" if col != "bots" else "left")
    for name, f in figures["bots"].items():
        b.add_row(name, str(f["hands"]), f"{f['hands_per_s']:.1f}",
                  f"{f['steps_per_hand']:.1f}", f"{f['win_rate']:.0%}")
    console.print(b)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=int, default=2000, help="random 14-tile hands (default 2000)")
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
