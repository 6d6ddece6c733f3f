"""Speed of the hot paths: win checks, waits, shanten, 胡数 splits and whole bot hands.

Run: ``uv run --group bench python benchmarks/run.py [--json] [--corpus N] [--bot-hands N]
[--seed S] [--only-bots | --only-decisions | --only-env | --only-simulate]``.  With the
``bench`` group installed the anchors run in the same process on the same
corpus: ``mahjong`` (``Agari().is_agari``, a 34-call waits loop, ``Shanten().calculate_shanten``), RLCard's mahjong with random
agents and riichienv's single-hand mode with random play (full hands per
second).  The summary table shows ours, each anchor and the ratio; ``--json``
prints one object with the ``summary`` keys named in issue 5 plus the
detailed figures.  What each row times is said in :data:`ROWS`.

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
is the median of ``--repeat`` passes over the corpus.  Bot play (mahjong
and zipai, random and greedy; one pass of ``--bot-hands`` seeds; the summary's
random-bot figure is the median of ``--rounds`` rounds played in turn with
RLCard's and riichienv's) reports hands per second, decisions (applied
actions) per hand, the share of hands ending in a win and the hands that
stopped on an engine error.  The issue-14 greedy figure
(``greedy_hands_per_s``) is sustained, as a long simulation runs: after
``--greedy-warmup`` untimed greedy hands on other seeds (the engine's tables
and the bot's caches fill), ``--greedy-hands`` 桂林麻将 hands on seeds not
played before are timed, wall clock and per CPU second, one process;
``greedy_cold_hands_per_s`` beside it times the first ``--bot-hands`` greedy
hands of a fresh interpreter, with everything built on first use inside the
timing.  The decision-time rows (issue 38; ``--decision-hands`` hands per
variant and bot, ``--only-decisions`` for them alone) time one bot's
``act`` calls — the strong bot's, and the greedy bot's for reference —
sitting in turn at each seat among greedy bots: decisions per second of
``act`` time and the p50 / p99 / max decision time.  This is a script, not
a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import envbench  # benchmarks/envbench.py: environment steps/s (qipai.env vs RLCard's env)
import msgspec

from qipai.bots import make_bots, play_hand, zipai_splits
from qipai.core.cards import counts
from qipai.core.errors import QipaiError
from qipai.core.model import WinClaim
from qipai.core.ruleset import load
from qipai.families.mahjong import shapes
from qipai.families.mahjong.shanten import shanten
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


def near_miss(rng: random.Random) -> list[int]:
    """A winning hand with one tile swapped for another kind (no fifth copy)."""
    hand = winning_hand(rng)
    while True:
        new = rng.randrange(34)
        if new != hand[0] and hand.count(new) < 4:
            return [new] + hand[1:]


def categories(seed: int, n: int) -> dict[str, list[list[int]]]:
    """The three hand categories of the win-check target, ``n`` hands each."""
    rng = random.Random(f"categories:{seed}")
    return {"wins": [winning_hand(rng) for _ in range(n)],
            "near misses": [near_miss(rng) for _ in range(n)],
            "random": random_hands(rng, n)}


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
    """Median over ``repeat`` passes of the microseconds per ``fn(item)``
    over ``items`` (``before()``, untimed, runs ahead of each pass)."""
    passes = []
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        for item in items:
            fn(item)
        passes.append(time.perf_counter() - t0)
    return statistics.median(passes) / len(items) * 1e6


def paired_us(ours: Callable[[Any], Any], our_items: Sequence[Any],
              theirs: Callable[[Any], Any] | None, their_items: Sequence[Any],
              repeat: int) -> tuple[float, float | None]:
    """Median µs per call of ``ours`` and of the anchor ``theirs`` (None: not
    installed), their passes interleaved so that both see the same machine
    load (the machine is shared: a burst of load hits both, not one)."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        a.append(per_call_us(ours, our_items, 1))
        if theirs is not None:
            b.append(per_call_us(theirs, their_items, 1))
    return statistics.median(a), (statistics.median(b) if b else None)


def greedy_quality(rs: Any, hands: int, seed: int) -> dict[str, Any]:
    """How well the greedy bot plays ``rs`` (issue 14: "no worse play").

    ``greedy_vs_random_win_rate``: one greedy bot against random ones — in
    hand ``i`` (seed ``seed + i``) the greedy bot sits at seat ``i mod n``
    — the share of hands it wins; ``random_seat_win_rate`` the mean share a
    random seat wins in those hands, for scale.  ``greedy_huangzhuang_rate``:
    greedy bots at every seat, the share of hands ending in 荒庄 (draw).
    ``hands`` hands each; decisions are seeded, so the figures are exact
    for a given code and seed.
    """
    n = rs.manifest.players
    greedy_wins = random_wins = draws = 0
    for i in range(hands):
        bots = ["random"] * n
        bots[i % n] = "greedy"
        r = play_hand(rs, seed=seed + i, bots=bots).result
        greedy_wins += (i % n) in r.winners
        random_wins += sum(w != i % n for w in r.winners)
        draws += play_hand(rs, seed=seed + i, bots="greedy").result.end != "hu"
    return {"hands": hands, "greedy_vs_random_win_rate": greedy_wins / hands,
            "random_seat_win_rate": random_wins / hands / (n - 1),
            "greedy_huangzhuang_rate": draws / hands}


def bot_play(rs: Any, bots: str, hands: int, seed: int) -> dict[str, Any]:
    """Play ``hands`` hands (seeds ``seed``, ``seed + 1`` …) with ``bots``.

    A hand the engine stops with an error (a :class:`QipaiError`) counts in
    ``errors`` and the hands per second, not in the other figures;
    ``error_seeds`` lists the first few.
    """
    steps = wins = done = 0
    errors: list[int] = []
    t0, c0 = time.perf_counter(), time.process_time()
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
    cpu = time.process_time() - c0
    return {"hands": hands, "hands_per_s": hands / elapsed,
            "cpu_hands_per_s": hands / cpu if cpu > 0 else None,
            "steps_per_hand": steps / max(done, 1), "win_rate": wins / max(done, 1),
            "errors": len(errors), "error_seeds": errors[:10]}


DECISION_VARIANTS = ("guilin-mahjong", "guangxi-mahjong", "guilin-zipai")


def decision_times(variant: str, kind: str, hands: int, seed: int) -> dict[str, Any]:
    """The time one bot of ``kind`` takes per decision: in hand ``i`` (seed
    ``seed + i``, dealer ``i mod n``) it sits at seat ``i mod n`` among
    greedy bots, and each of its ``act`` calls is timed (``perf_counter``,
    the view built outside the timing).  Returns the decisions, decisions
    per second of ``act`` time, and the p50 / p99 / max decision time in ms."""
    rs = load(variant)
    n = rs.table(seed=0).n
    times: list[float] = []
    for i in range(hands):
        names = ["greedy"] * n
        names[i % n] = kind
        table = rs.table(seed=seed + i, dealer=i % n)
        bots = make_bots(names, n, seed + i, rs)
        me = i % n
        while table.result is None:
            seat = min(table.pending)
            legal = list(table.pending[seat])
            view = table.view(seat, events=False)
            if seat == me:
                t0 = time.perf_counter()
                a = bots[seat].act(view, legal)
                times.append(time.perf_counter() - t0)
            else:
                a = bots[seat].act(view, legal)
            table.apply(a)
    times.sort()
    total = sum(times)

    def q(p: float) -> float:
        return 1000 * times[min(len(times) - 1, int(p * len(times)))]

    return {"variant": variant, "bot": kind, "hands": hands, "decisions": len(times),
            "decisions_per_s": len(times) / total if total > 0 else None,
            "mean_ms": 1000 * total / max(len(times), 1),
            "p50_ms": q(0.50), "p99_ms": q(0.99), "max_ms": 1000 * times[-1]}


def decision_figures(hands: int, seed: int) -> list[dict[str, Any]]:
    """:func:`decision_times` of the strong bot and, for reference, the
    greedy bot, in each variant of :data:`DECISION_VARIANTS`."""
    return [decision_times(v, kind, hands, seed)
            for v in DECISION_VARIANTS for kind in ("greedy", "strong")]


def show_decisions(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="decision time (one bot among greedy bots, its act() calls timed)")
    for col in ("variant", "bot", "hands", "decisions", "decisions per s", "mean ms",
                "p50 ms", "p99 ms", "max ms"):
        t.add_column(col, justify="left" if col in ("variant", "bot") else "right")
    for r in rows:
        t.add_row(r["variant"], r["bot"], str(r["hands"]), str(r["decisions"]),
                  f"{r['decisions_per_s']:,.0f}", f"{r['mean_ms']:.2f}", f"{r['p50_ms']:.2f}",
                  f"{r['p99_ms']:.2f}", f"{r['max_ms']:.1f}")
    Console().print(t)


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
        "shapes.shanten (13)": per_call_us(shanten, counts13, repeat),
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
            "guangxi random": bot_play(load("guangxi-mahjong"), "random", bot_hands, seed),
            "guangxi greedy": bot_play(load("guangxi-mahjong"), "greedy", bot_hands, seed),
            "zipai random": bot_play(zs, "random", bot_hands, seed),
            "zipai greedy": bot_play(zs, "greedy", bot_hands, seed),
        },
    }


# --------------------------------------------------------------------------
# anchors and the issue-5 summary (ours beside each anchor, same corpus)


def mahjong_waits(agari: Any) -> Callable[[list[int]], list[int]]:
    """The anchor's waits: 34 ``is_agari`` calls on a 13-tile count vector."""
    def waits(c: list[int]) -> list[int]:
        out = []
        for k in range(34):
            if c[k] < 4:
                c[k] += 1
                if agari.is_agari(c):
                    out.append(k)
                c[k] -= 1
        return out
    return waits


class _RandomRLCardAgent:
    """A uniform random RLCard agent (``rlcard.agents`` shells out to
    ``pip freeze`` at import, which a uv venv has no pip for)."""

    use_raw = False

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def step(self, state: dict[str, Any]) -> Any:
        return self.rng.choice(list(state["legal_actions"]))

    def eval_step(self, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return self.step(state), {}


def qipai_hands_per_s(rs: Any, seconds: float, seed: int) -> float:
    """Full hands with random bots (seeds ``seed``, ``seed + 1`` … — every
    round replays the same hands from the start) for ``seconds``."""
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        play_hand(rs, seed=seed + n, bots="random")
        n += 1
    return n / (time.perf_counter() - t0)


def paired_hands_per_s(rs: Any, seed: int, rounds: int,
                       seconds: float) -> dict[str, list[float | None]]:
    """Hands (games) per second of qipai's random bots, RLCard and riichienv
    in ``rounds`` interleaved rounds of ``seconds`` each, so a burst of load
    on the shared machine hits all three, not one."""
    play_hand(rs, seed=seed, bots="random")  # tables built outside the timings
    out: dict[str, list[float | None]] = {"qipai": [], "rlcard": [], "riichienv": []}
    for _ in range(rounds):
        out["qipai"].append(qipai_hands_per_s(rs, seconds, seed))
        out["rlcard"].append(rlcard_games_per_s(seconds, seed))
        out["riichienv"].append(riichienv_games_per_s(seconds, seed))
    return out


def _median(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.median(vals) if vals else None


def _paired_ratio(ours: Sequence[float | None], theirs: Sequence[float | None]) -> float | None:
    """Median over rounds of ours ÷ theirs in the same round (each pair saw
    the same machine load)."""
    return _median([a / b if a is not None and b else None for a, b in zip(ours, theirs)])


def rlcard_games_per_s(seconds: float, seed: int) -> float | None:
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("mahjong", config={"seed": seed})
    env.set_agents([_RandomRLCardAgent(seed + i) for i in range(env.num_players)])
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.run(is_training=False)
        n += 1
    return n / (time.perf_counter() - t0)


def riichienv_games_per_s(seconds: float, seed: int) -> float | None:
    try:
        from riichienv import RiichiEnv
    except ImportError:
        return None
    rng = random.Random(seed)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env = RiichiEnv(game_mode="4p-red-single", skip_mjai_logging=True, seed=seed + n)
        obs = env.reset()
        while not env.done():
            obs = env.step({p: rng.choice(o.legal_actions()) for p, o in obs.items()})
        n += 1
    return n / (time.perf_counter() - t0)


def _help_runs(repeat: int, env: dict[str, str]) -> tuple[float, float]:
    """Median (cumulative import ms of ``qipai.cli``, wall ms) of ``repeat``
    fresh interpreters printing ``qipai --help`` under ``env``."""
    walls, imports = [], []
    code = "import sys; from qipai.cli import main; sys.argv = ['qipai', '--help']; main()"
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                           capture_output=True, text=True, check=False, env=env)
        walls.append((time.perf_counter() - t0) * 1e3)
        cli = [line for line in r.stderr.splitlines() if line.rstrip().endswith("| qipai.cli")]
        if cli:
            imports.append(int(cli[-1].split("|")[1]) / 1e3)
    return (statistics.median(imports) if imports else float("nan")), statistics.median(walls)


def import_ms(repeat: int = 5) -> dict[str, float]:
    """``qipai --help`` start-up: ``import_ms``, the cumulative import time of
    ``qipai.cli`` as ``python -X importtime`` reports it, and ``help_wall_ms``,
    the wall time of a fresh interpreter printing the help (interpreter
    start-up included); medians of ``repeat`` runs.

    Timed as an installed program starts: with compiled bytecode (a first,
    untimed run fills a private ``PYTHONPYCACHEPREFIX``; ``pip install``
    compiles dependencies' bytecode at install time).  ``env_import_ms`` /
    ``env_help_wall_ms`` time it as the calling environment runs it — the
    same, unless that environment forbids writing ``.pyc`` files
    (``PYTHONDONTWRITEBYTECODE``), when every module without bytecode on disk
    is compiled from source at each start."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as warm_dir:
        warm = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        warm["PYTHONPYCACHEPREFIX"] = warm_dir
        _help_runs(1, warm)  # compile once
        imp, wall = _help_runs(repeat, warm)
    env_imp, env_wall = _help_runs(repeat, dict(os.environ))
    return {"import_ms": imp, "help_wall_ms": wall,
            "env_import_ms": env_imp, "env_help_wall_ms": env_wall}


_TABLES_CODE = """
import tracemalloc
tracemalloc.start()
from qipai.families.mahjong import suit_tables
from qipai.families.zipai import groups
suit_tables.build_segments()
groups._build_chunks()
print(tracemalloc.get_traced_memory()[0])
"""


def tables_mb() -> float:
    """Memory held by the lookup tables once built (win/waits segment tables,
    zipai chunks), by ``tracemalloc`` in a fresh interpreter, in MB.  The
    shanten entry caches fill as hands are seen and are bounded separately."""
    r = subprocess.run([sys.executable, "-c", _TABLES_CODE], capture_output=True, text=True,
                       check=True)
    return int(r.stdout.split()[-1]) / 1e6


def summary(seed: int, n: int, repeat: int, bots: dict[str, Any],
            anchor_seconds: float, rounds: int = 9,
            greedy: dict[str, Any] | None = None) -> dict[str, Any]:
    """The issue-5 figures: ours and the anchors on one seeded corpus.
    ``greedy``: :func:`greedy_speed`, whose sustained and cold figures the
    summary shows (else the ``bots`` greedy row's)."""
    from qipai.variants.guilin_mahjong import patterns

    try:
        from mahjong.agari import Agari
        from mahjong.shanten import Shanten
    except ImportError:
        Agari = Shanten = None
    hands14 = corpus(seed, n)
    counts14 = [counts(h, 34) for h in hands14]
    keys14 = [bytes(c) for c in counts14]
    counts13 = [counts(h[:13], 34) for h in hands14]

    def ratio(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a / b

    agari = Agari() if Agari else None
    is_agari = agari.is_agari if agari else None
    patterns.is_win_shape_bytes(keys14[0])  # build the tables outside the timings
    win_key, mj_win = paired_us(patterns.is_win_shape_bytes, keys14, is_agari, counts14, repeat)
    win_counts, mj_win2 = paired_us(patterns.is_win_shape, counts14, is_agari, counts14, repeat)
    by_cat = {}
    for name, hands in categories(seed, max(1, n // 2)).items():
        cs = [counts(h, 34) for h in hands]
        ks = [bytes(c) for c in cs]
        ours, theirs = paired_us(patterns.is_win_shape_bytes, ks, is_agari, cs, repeat)
        ours_c, theirs2 = paired_us(patterns.is_win_shape, cs, is_agari, cs, repeat)
        by_cat[name] = {"qipai_us": ours, "qipai_counts_us": ours_c, "mahjong_us": theirs,
                        "mahjong_us_counts_pass": theirs2, "ratio": ratio(ours, theirs),
                        "ratio_counts": ratio(ours_c, theirs2)}
    our_waits, mj_waits = paired_us(shapes.waits, counts13,
                                    mahjong_waits(agari) if agari else None, counts13, repeat)
    our_shanten, mj_shanten = paired_us(shanten, counts13,
                                        Shanten().calculate_shanten if Shanten else None,
                                        counts13, repeat)
    zcounts = [(counts(hand, 20), card) for hand, card in zipai_corpus(seed, n)]
    split_us, win_beside = paired_us(
        lambda item: zipai_groups.best_split(item[0], item[1], self_drawn=False), zcounts,
        patterns.is_win_shape_bytes, keys14, repeat)
    rates = paired_hands_per_s(load(VARIANT), seed, rounds, anchor_seconds / rounds)
    ours_random, rl, rie = (_median(rates[k]) for k in ("qipai", "rlcard", "riichienv"))
    return {
        "win_check": {"qipai_us": win_key, "mahjong_us": mj_win, "ratio": ratio(win_key, mj_win),
                      "qipai_counts_us": win_counts, "mahjong_us_counts_pass": mj_win2,
                      "ratio_counts": ratio(win_counts, mj_win2), "by_category": by_cat},
        "waits": {"qipai_us": our_waits, "mahjong_us": mj_waits,
                  "ratio": ratio(our_waits, mj_waits)},
        "shanten": {"qipai_us": our_shanten, "mahjong_us": mj_shanten,
                    "ratio": ratio(our_shanten, mj_shanten)},
        "hands_per_s": {"qipai_random": ours_random,
                        "qipai_greedy": (greedy["sustained"]["hands_per_s"] if greedy
                                         else bots["greedy"]["hands_per_s"]),
                        "qipai_greedy_cold": greedy["cold"]["hands_per_s"] if greedy else None,
                        "steps_per_hand_random": bots["random"]["steps_per_hand"],
                        "steps_per_hand_greedy": bots["greedy"]["steps_per_hand"],
                        "rlcard_random": rl, "riichienv_random": rie,
                        "ratio_vs_rlcard": _paired_ratio(rates["qipai"], rates["rlcard"]),
                        "ratio_vs_riichienv": _paired_ratio(rates["qipai"], rates["riichienv"]),
                        "ratio_of_medians_vs_rlcard": ratio(ours_random, rl),
                        "rounds": rates},
        "zipai_split_us": split_us,
        "zipai_split_vs_win_check": split_us / win_beside,
        **import_ms(),
        "tables_mb": tables_mb(),
    }


ROWS = """\
win check: patterns.is_win_shape_bytes — 桂林 shape decision (standard, 七对/豪华七对, 烂牌/七星烂,
  字一色) of 14 concealed tiles given as bytes of the counts (a simulator's hand state);
  'from a count list' = the public patterns.is_win_shape, which also builds the bytes and checks
  the input.  Anchor: mahjong Agari().is_agari on the same count vectors.
waits: shapes.waits (standard shape) of the 13-tile hands; anchor: 34 is_agari calls.
shanten: shanten.shanten (standard and 七对); anchor: Shanten().calculate_shanten (all shapes).
hands/s: full 桂林麻将 hands (deal to settlement) with random bots; RLCard mahjong and
  riichienv single-hand games with random agents; medians of interleaved rounds (--rounds),
  the ratio the median of the rounds' ratios (each round's engines saw the same load).
  hands/s greedy, sustained (greedy_hands_per_s): --greedy-warmup greedy hands on other seeds
  first (untimed: the engine's tables and the bot's caches fill, as in a long simulation), then
  --greedy-hands hands on seeds not played before, wall clock (and per CPU s), one process.
  Cold (greedy_cold_hands_per_s): the first --bot-hands greedy hands of a fresh interpreter,
  everything built on first use inside the timing.  zipai split: groups.best_split of 20 + 1 cards
  (memo warm, as in play), its passes interleaved with the bytes win check's."""


def show_summary(s: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    def f(x: float | None, fmt: str = "{:.2f}") -> str:
        return "—" if x is None else fmt.format(x)

    t = Table(title="qipai beside the anchors (one run, one seeded corpus, medians)")
    for col in ("figure", "qipai", "anchor", "anchor value", "ratio"):
        t.add_column(col, justify="left" if col in ("figure", "anchor") else "right")
    w = s["win_check"]
    t.add_row("win check µs (bytes hand state)", f(w["qipai_us"]), "mahjong is_agari",
              f(w["mahjong_us"]), f(w["ratio"]))
    t.add_row("win check µs (from a count list)", f(w["qipai_counts_us"]), "mahjong is_agari",
              f(w["mahjong_us_counts_pass"]), f(w["ratio_counts"]))
    for name, c in w["by_category"].items():
        t.add_row(f"  {name}: bytes / count list", f"{f(c['qipai_us'])} / {f(c['qipai_counts_us'])}",
                  "mahjong is_agari", f"{f(c['mahjong_us'])} / {f(c['mahjong_us_counts_pass'])}",
                  f"{f(c['ratio'])} / {f(c['ratio_counts'])}")
    t.add_row("waits µs (13 tiles)", f(s["waits"]["qipai_us"]), "34 × is_agari",
              f(s["waits"]["mahjong_us"]), f(s["waits"]["ratio"]))
    t.add_row("shanten µs (13 tiles)", f(s["shanten"]["qipai_us"]), "calculate_shanten",
              f(s["shanten"]["mahjong_us"]), f(s["shanten"]["ratio"]))
    h = s["hands_per_s"]
    t.add_row("hands/s random (full rules)", f(h["qipai_random"], "{:.0f}"), "RLCard mahjong",
              f(h["rlcard_random"], "{:.1f}"), f(h["ratio_vs_rlcard"], "{:.1f}×"))
    t.add_row("", "", "riichienv (Rust)", f(h["riichienv_random"], "{:.0f}"),
              f(h["ratio_vs_riichienv"], "{:.2f}×"))
    t.add_row("hands/s greedy (sustained: warm process, fresh seeds)",
              f(h["qipai_greedy"], "{:.0f}"), "target", "300", "")
    t.add_row("hands/s greedy (cold: first hands of a process)",
              f(h.get("qipai_greedy_cold"), "{:.0f}"), "", "", "")
    t.add_row("steps per hand random / greedy",
              f"{h['steps_per_hand_random']:.0f} / {h['steps_per_hand_greedy']:.0f}", "", "", "")
    t.add_row("zipai best split µs (21 cards)", f(s["zipai_split_us"]), "our win check",
              "(≤ 10×)", f(s["zipai_split_vs_win_check"], "{:.1f}×"))
    t.add_row("qipai --help ms (wall / cli import)",
              f"{s['help_wall_ms']:.0f} / {s['import_ms']:.0f}", "target", "100", "")
    t.add_row("  … as this environment runs it",
              f"{s['env_help_wall_ms']:.0f} / {s['env_import_ms']:.0f}", "", "", "")
    t.add_row("lookup tables MB (tracemalloc)", f(s["tables_mb"], "{:.1f}"), "target", "30", "")
    Console().print(t)
    print(ROWS)


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
    show_bots(figures["bots"], f"; mahjong {figures['variant']}, zipai {figures['zipai_variant']}")


def show_bots(bots: dict[str, Any], where: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    b = Table(title=f"bot play (a bot per seat, one hand each seed{where})")
    for col in ("bots", "hands", "hands per s", "per CPU s", "decisions per hand", "win rate",
                "engine errors"):
        b.add_column(col, justify="right" if col != "bots" else "left")
    for name, f in bots.items():
        errs = str(f["errors"])
        if f["errors"]:
            errs += " (seeds " + ", ".join(map(str, f["error_seeds"])) + ")"
        cpu = f.get("cpu_hands_per_s")
        b.add_row(name, str(f["hands"]), f"{f['hands_per_s']:.1f}",
                  "—" if cpu is None else f"{cpu:.1f}", f"{f['steps_per_hand']:.1f}", f"{f['win_rate']:.0%}", errs)
    console.print(b)


# --------------------------------------------------------------------------
# qipai simulate: K=1 against K=2 worker processes and the Ray backend (issue 14)

SIM_RULESETS = ["guilin-mahjong", "guilin-mahjong(hubao=false)"]


_SIM_CODE = """
import hashlib, json, os, sys, time
from qipai.sim.run import parse_rulesets, simulate, start_ray
specs, hands, seed, workers, out, ray = json.loads(sys.argv[1])
specs = parse_rulesets(specs)
init_s = None
if ray:
    # The instance and its worker processes, up before the run is timed (as a
    # cluster is up before a job); the run then builds the rulesets on them,
    # as the pool's parent does before it forks.  qipai's start: Ray's uv
    # hook off for a local instance, a bounded wait for the workers.
    t0 = time.perf_counter()
    start_ray("", workers)
    init_s = time.perf_counter() - t0
def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
c0, t0 = cpu(), time.perf_counter()
o = simulate(specs, hands, bots="greedy", seed=seed, workers=workers, out=out,
             ray_address="" if ray else None)
wall, used = time.perf_counter() - t0, cpu() - c0
digest = hashlib.blake2b(open(out, "rb").read(), digest_size=8).hexdigest()
print(json.dumps({"hands": o.written, "wall_s": wall, "cpu_s": None if ray else used,
                  "hands_per_s": o.written / wall, "file": digest, "init_s": init_s}))
"""


def _sim_once(hands: int, seed: int, workers: int, out: str, ray: bool = False
              ) -> dict[str, Any]:
    """One ``simulate`` call in a fresh interpreter (as ``qipai simulate`` runs:
    cold memos, workers forked from it), timed inside it around the call:
    building the rulesets, playing, collecting and writing the file.  For
    Ray, the local instance and its worker processes are started before
    (:func:`qipai.sim.run.start_ray`, timed apart as ``init_s``); the call
    then builds the rulesets on those workers and plays."""
    import json

    r = subprocess.run([sys.executable, "-c", _SIM_CODE,
                        json.dumps([SIM_RULESETS, hands, seed, workers, out, ray])],
                       capture_output=True, text=True)
    if r.returncode != 0:
        lines = (r.stderr.strip() or "no output").splitlines()
        return {"error": " ".join(lines[-1].split())[:160]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def simulate_speed(seed: int, hands: int, rounds: int = 2) -> dict[str, Any]:
    """``qipai simulate`` of ``hands`` greedy hands of each of :data:`SIM_RULESETS`
    (seed ``seed``) on one process, on two worker processes and, when Ray is
    installed (``--extra ray``), as Ray tasks on a local instance with 2 CPUs.
    Each run is a fresh interpreter timed around the ``simulate`` call
    (building the rulesets, playing, collecting, writing the file), so each
    rate carries the run's fixed start-up, about 0.4 s of building the
    rulesets and 0.6 s of importing pyarrow, paid by every run whatever the
    backend; more hands make it smaller.  What is left out: for Ray, starting
    the instance and its worker processes (``ray_init_s``, as a cluster is up
    before a job); for the pool, nothing (forking its workers is part of the
    call).

    Rounds alternate K=1, K=2 (and Ray) ``rounds`` times; each figure is the
    best round (the least disturbed by other jobs on the host).  Besides wall
    time, the CPU seconds of the run's process and its workers give
    ``k2_cpu_ratio`` = 2 × (CPU per hand at K=1) / (CPU per hand at K=2, all
    processes): the speed-up two idle cores would give if the work spreads
    evenly — the parallel overhead (worker start, transfer, the parent's
    collecting) without the host's load.  Ray's workers are not the run's
    children: no CPU figure for Ray.  The files of all runs must be
    byte-identical (``same_file``)."""
    import tempfile

    try:
        import ray  # noqa: F401
        has_ray = True
    except ImportError:
        has_ray = False
    runs: dict[str, list[dict[str, Any]]] = {"k1": [], "k2": [], "ray": []}
    ray_error = None if has_ray else "ray not installed (uv run --extra ray …)"
    with tempfile.TemporaryDirectory() as d:
        for _ in range(rounds):
            runs["k1"].append(_sim_once(hands, seed, 1, f"{d}/k1.parquet"))
            runs["k2"].append(_sim_once(hands, seed, 2, f"{d}/k2.parquet"))
            if has_ray:
                r = _sim_once(hands, seed, 2, f"{d}/ray.parquet", ray=True)
                if "error" in r:
                    ray_error = f"Ray did not run: {r['error']}"
                else:
                    runs["ray"].append(r)
    errors = [r["error"] for k in ("k1", "k2") for r in runs[k] if "error" in r]
    if errors:
        raise RuntimeError(f"qipai simulate failed in the benchmark: {errors[0]}")
    best = {k: max(v, key=lambda r: r["hands_per_s"]) if v else None for k, v in runs.items()}
    k1, k2, rr = best["k1"], best["k2"], best["ray"]
    cpu1 = min(r["cpu_s"] / r["hands"] for r in runs["k1"])
    cpu2 = min(r["cpu_s"] / r["hands"] for r in runs["k2"])
    files = {r["file"] for v in runs.values() for r in v}
    return {
        "rulesets": SIM_RULESETS, "hands": 2 * hands, "bots": "greedy", "rounds": rounds,
        "k1_hands_per_s": k1["hands_per_s"], "k2_hands_per_s": k2["hands_per_s"],
        "ray_hands_per_s": rr["hands_per_s"] if rr else None,
        "ratio_k2": k2["hands_per_s"] / k1["hands_per_s"],
        "ratio_ray": rr["hands_per_s"] / k2["hands_per_s"] if rr else None,
        "k1_cpu_ms_per_hand": 1000 * cpu1, "k2_cpu_ms_per_hand": 1000 * cpu2,
        "k2_cpu_ratio": 2 * cpu1 / cpu2,
        "ray_init_s": min(r["init_s"] for r in runs["ray"]) if rr else None,
        "ray_error": ray_error if not rr else None, "same_file": len(files) == 1,
        "load_average": os.getloadavg(), "runs": runs,
    }


def show_simulate(s: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"qipai simulate · {s['hands']} greedy hands ({' + '.join(s['rulesets'])}) "
                    f"· best of {s['rounds']} rounds · load average "
                    f"{' '.join(f'{x:.1f}' for x in s['load_average'])}")
    for col in ("backend", "hands/s (wall)", "× K=1", "CPU ms per hand", "target"):
        t.add_column(col, justify="left" if col in ("backend", "target") else "right")
    t.add_row("K=1 (in process)", f"{s['k1_hands_per_s']:.1f}", "1.00",
              f"{s['k1_cpu_ms_per_hand']:.1f}", "")
    t.add_row("K=2 worker processes", f"{s['k2_hands_per_s']:.1f}", f"{s['ratio_k2']:.2f}",
              f"{s['k2_cpu_ms_per_hand']:.1f}", "≥ 1.7× K=1")
    t.add_row("  K=2 on CPU time (2 × CPU/hand K=1 ÷ CPU/hand K=2)", "",
              f"{s['k2_cpu_ratio']:.2f}", "", "≥ 1.7×")
    if s["ray_hands_per_s"] is None:
        t.add_row("Ray (local, 2 CPUs)", "—", "", "", s["ray_error"] or "")
    else:
        t.add_row(f"Ray (local, 2 CPUs; starting it and its workers, {s['ray_init_s']:.1f} s, "
                  "apart)",
                  f"{s['ray_hands_per_s']:.1f}",
                  f"{s['ray_hands_per_s'] / s['k1_hands_per_s']:.2f}", "",
                  f"within 20 % of K=2: {s['ratio_ray']:.2f}")
    t.add_row("files byte-identical", "yes" if s["same_file"] else "NO", "", "", "")
    Console().print(t)


QUALITY_VARIANTS = ("guilin-mahjong", "guangxi-mahjong", "guilin-zipai")

#: Seed offsets of the sustained greedy figure: its warm-up hands and its
#: timed hands are seeded apart from each other and from the other rows.
GREEDY_WARM_SEEDS = 1_000_000
GREEDY_TIMED_SEEDS = 2_000_000

_COLD_CODE = """
import json, sys, time
from qipai.bots import play_hand
from qipai.core.ruleset import load
variant, hands, seed = json.loads(sys.argv[1])
rs = load(variant)
t0, c0 = time.perf_counter(), time.process_time()
for i in range(hands):
    play_hand(rs, seed=seed + i, bots="greedy")
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"hands": hands, "hands_per_s": hands / wall, "cpu_hands_per_s": hands / cpu}))
"""


def greedy_cold(variant: str, hands: int, seed: int) -> dict[str, Any]:
    """The first ``hands`` greedy hands of a process (seeds ``seed``,
    ``seed + 1`` …): a fresh interpreter loads the ruleset, then the hands
    are timed with everything built on first use inside the timing — the
    engine's segment tables and the bot's shanten caches.  Wall and CPU."""
    import json

    r = subprocess.run([sys.executable, "-c", _COLD_CODE, json.dumps([variant, hands, seed])],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def greedy_sustained(rs: Any, seed: int, warm_hands: int, hands: int) -> dict[str, Any]:
    """Greedy hands per second once the process is warm, the way a long
    simulation runs: ``warm_hands`` greedy hands (seeds ``seed +``
    :data:`GREEDY_WARM_SEEDS` ``+ i``) fill the tables and caches untimed,
    then ``hands`` hands on fresh seeds (``seed +`` :data:`GREEDY_TIMED_SEEDS`
    ``+ i``, none played before in the process) are timed, wall and CPU."""
    for i in range(warm_hands):
        play_hand(rs, seed=seed + GREEDY_WARM_SEEDS + i, bots="greedy")
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(hands):
        play_hand(rs, seed=seed + GREEDY_TIMED_SEEDS + i, bots="greedy")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"warm_hands": warm_hands, "hands": hands, "hands_per_s": hands / wall,
            "cpu_hands_per_s": hands / cpu if cpu > 0 else None}


def greedy_speed(seed: int, cold_hands: int, warm_hands: int, hands: int) -> dict[str, Any]:
    """The issue-14 greedy figure of 桂林麻将 (:data:`VARIANT`): sustained
    (:func:`greedy_sustained`) and cold (:func:`greedy_cold`)."""
    return {"variant": VARIANT,
            "sustained": greedy_sustained(load(VARIANT), seed, warm_hands, hands),
            "cold": greedy_cold(VARIANT, cold_hands, seed)}


def bot_figures(speed: dict[str, Any], seed: int, hands: int) -> dict[str, Any]:
    """The issue-14 bot figures: ``greedy_hands_per_s`` — 桂林麻将, sustained
    (:func:`greedy_sustained`), wall clock, one process — and its CPU-time
    figure; ``greedy_cold_hands_per_s`` (and CPU) — the first hands of a
    fresh process (:func:`greedy_cold`); and :func:`greedy_quality` per
    variant (``hands`` hands)."""
    w, c = speed["sustained"], speed["cold"]
    return {"greedy_hands_per_s": w["hands_per_s"],
            "greedy_cpu_hands_per_s": w["cpu_hands_per_s"],
            "greedy_cold_hands_per_s": c["hands_per_s"],
            "greedy_cold_cpu_hands_per_s": c["cpu_hands_per_s"],
            "greedy_speed": speed,
            "greedy_quality": {v: greedy_quality(load(v), hands, seed) for v in QUALITY_VARIANTS}}


def show_greedy_speed(s: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    w, c = s["sustained"], s["cold"]
    t = Table(title=f"greedy bots · {s['variant']} · one core (target ≥ 300 hands/s, sustained)")
    for col in ("figure", "hands", "hands per s (wall)", "per CPU s"):
        t.add_column(col, justify="left" if col == "figure" else "right")
    t.add_row(f"sustained: timed after {w['warm_hands']} warm-up hands, fresh seeds",
              str(w["hands"]), f"{w['hands_per_s']:.0f}", f"{w['cpu_hands_per_s']:.0f}")
    t.add_row("cold: the first hands of a fresh process (tables and caches built inside)",
              str(c["hands"]), f"{c['hands_per_s']:.0f}", f"{c['cpu_hands_per_s']:.0f}")
    Console().print(t)


def show_quality(q: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="greedy bot play quality (seeded: exact for this code and seed)")
    for col in ("variant", "hands", "1 greedy vs random: greedy wins",
                "a random seat wins", "all greedy: 荒庄"):
        t.add_column(col, justify="left" if col == "variant" else "right")
    for v, f in q.items():
        t.add_row(v, str(f["hands"]), f"{f['greedy_vs_random_win_rate']:.1%}",
                  f"{f['random_seat_win_rate']:.1%}", f"{f['greedy_huangzhuang_rate']:.1%}")
    Console().print(t)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=int, default=2000,
                   help="random 14-tile hands and 21-card zipai holdings (default 2000 each)")
    p.add_argument("--bot-hands", type=int, default=60, help="hands per bot kind (default 60)")
    p.add_argument("--repeat", type=int, default=7, help="passes per timing, median kept")
    p.add_argument("--anchor-seconds", type=float, default=9.0,
                   help="seconds of full-hand play for qipai, RLCard and riichienv each, "
                        "split over --rounds interleaved rounds (default 9)")
    p.add_argument("--rounds", type=int, default=9,
                   help="interleaved rounds of the hands-per-second figures, median kept")
    p.add_argument("--env-seconds", type=float, default=1.0,
                   help="CPU seconds per side per round of the environment steps/s rounds "
                        "(qipai.env against RLCard's env; --rounds rounds; default 1)")
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--json-out", metavar="FILE", help="also write the JSON object to FILE")
    p.add_argument("--sim-hands", type=int, default=1500,
                   help="greedy hands per ruleset of the qipai simulate rows (default 1500: "
                        "the runs' fixed start-up, about a second, then weighs little, as in "
                        "a simulation of many hands)")
    p.add_argument("--only-simulate", action="store_true",
                   help="time only qipai simulate (K=1, K=2, Ray)")
    p.add_argument("--greedy-warmup", type=int, default=500,
                   help="untimed greedy hands before the sustained greedy figure (default 500)")
    p.add_argument("--greedy-hands", type=int, default=1000,
                   help="timed greedy hands of the sustained greedy figure, on fresh seeds "
                        "(default 1000; the cold figure times the first --bot-hands hands "
                        "of a fresh process)")
    p.add_argument("--quality-hands", type=int, default=200,
                   help="hands per variant of the greedy play-quality rows (default 200)")
    p.add_argument("--only-bots", action="store_true",
                   help="time only bot play (all variants) and the greedy play-quality rows")
    p.add_argument("--decision-hands", type=int, default=100,
                   help="hands per variant and bot of the decision-time rows (strong and "
                        "greedy, each among greedy bots; default 100)")
    p.add_argument("--only-decisions", action="store_true",
                   help="time only the bots' decisions (strong and greedy, all variants)")
    p.add_argument("--only-env", action="store_true",
                   help="time only the environment steps/s rows (qipai.env against RLCard's env)")
    a = p.parse_args(argv)
    if (a.corpus < 1 or a.bot_hands < 1 or a.repeat < 1 or a.rounds < 1 or a.sim_hands < 1
            or a.greedy_hands < 1 or a.greedy_warmup < 0 or a.decision_hands < 1):
        p.error("--corpus, --bot-hands, --repeat, --rounds, --sim-hands, --greedy-hands and "
                "--decision-hands must be at least 1, --greedy-warmup at least 0")
    if a.only_simulate:
        top: dict[str, Any] = {"simulate": simulate_speed(a.seed, a.sim_hands)}
        figures = None
    elif a.only_bots:
        figures = {"bots": {name: bot_play(load(v), kind, a.bot_hands, a.seed)
                            for name, v, kind in (
                                ("random", VARIANT, "random"), ("greedy", VARIANT, "greedy"),
                                ("guangxi greedy", "guangxi-mahjong", "greedy"),
                                ("zipai greedy", ZIPAI_VARIANT, "greedy"))}}
        top = bot_figures(greedy_speed(a.seed, a.bot_hands, a.greedy_warmup, a.greedy_hands),
                          a.seed, a.quality_hands)
        top["decisions"] = decision_figures(a.decision_hands, a.seed)
        top["details"] = figures
        figures = None
    elif a.only_decisions:
        top = {"decisions": decision_figures(a.decision_hands, a.seed)}
        figures = None
    elif a.only_env:
        top = {"env": envbench.env_figures(a.seed, a.rounds, a.env_seconds)}
        figures = None
    else:
        figures = measure(a.seed, a.corpus, a.bot_hands, a.repeat)
        speed = greedy_speed(a.seed, a.bot_hands, a.greedy_warmup, a.greedy_hands)
        top = summary(a.seed, a.corpus, a.repeat, figures["bots"], a.anchor_seconds, a.rounds,
                      greedy=speed)
        top["simulate"] = simulate_speed(a.seed, a.sim_hands)
        top["env"] = envbench.env_figures(a.seed, a.rounds, a.env_seconds)  # issue 14
        top.update(bot_figures(speed, a.seed, a.quality_hands))  # issue 14
        top["decisions"] = decision_figures(a.decision_hands, a.seed)  # issue 38
        top["details"] = figures
    if a.json_out:
        with open(a.json_out, "wb") as f:
            f.write(msgspec.json.encode(top))
    if a.json:
        print(msgspec.json.encode(top).decode())
    else:
        if figures is not None:
            show(figures)
            show_summary(top)
        if a.only_bots:
            show_bots(top["details"]["bots"], "")
        if "greedy_speed" in top:
            show_greedy_speed(top["greedy_speed"])
        if "greedy_quality" in top:
            show_quality(top["greedy_quality"])
        if "decisions" in top:
            show_decisions(top["decisions"])
        if "simulate" in top:
            show_simulate(top["simulate"])
        if "env" in top:
            envbench.show_env(top["env"])


if __name__ == "__main__":
    main()
