"""Threads: the lazily built lookup tables and caches are safe to share.

A host runs tables in threads.  Every table the engine builds on first use
(``suit_tables``, the zipai chunks, memos) must look complete to a thread
that arrives while another is still building it.  Each check runs in a fresh interpreter, so the
tables are cold, with a tiny switch interval so threads interleave inside
the builds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_PRELUDE = """
import json, sys, threading
sys.setswitchinterval(1e-6)
"""

_WIN_CHECKS = _PRELUDE + """
from qipai.core.cards import counts
from qipai.families.mahjong import shapes
from qipai.families.mahjong.tiles import TILES
from qipai.families.zipai import groups
from qipai.families.zipai.cards import CARDS
from qipai.variants.guilin_mahjong.patterns import is_win_shape

N = 16
barrier = threading.Barrier(N)
out = []
mj = counts(TILES.parse("123m456m789m123p55p"), 34)
zp = counts(CARDS.parse("x1 x2 x3 x4 x5 x6 x7 x8 x9 d1 d2 d3 x10 x10"), 20)


def work(i):
    barrier.wait()
    kind = i % 3
    if kind == 0:
        out.append(("win_shape", is_win_shape(mj)))
    elif kind == 1:
        out.append(("is_standard", shapes.is_standard(mj)))
    else:
        out.append(("zipai", groups.hand_hu(zp) >= 0))


ts = [threading.Thread(target=work, args=(i,)) for i in range(N)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(out))
"""

_PLAY = _PRELUDE + """
import msgspec
from qipai.bots import play_hand
from qipai.core.records import record_of
from qipai.core.ruleset import load

THREADS, HANDS = int(sys.argv[1]), int(sys.argv[2])
VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]
rulesets = {v: load(v) for v in VARIANTS}
jobs = [(v, seed) for v in VARIANTS for seed in range(HANDS)]
records = {}


def work(k):
    if THREADS > 1:
        barrier.wait()
    for v, seed in jobs[k::THREADS]:
        table = play_hand(rulesets[v], seed=seed)
        records[f"{v}:{seed}"] = msgspec.json.encode(record_of(table)).decode()


barrier = threading.Barrier(THREADS)
ts = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(records))
"""


def _run(script: str, *args: str) -> object:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("attempt", range(3))
def test_cold_win_checks_agree_across_threads(attempt):
    """16 threads, cold tables: every check of a winning hand says True."""
    out = _run(_WIN_CHECKS)
    assert len(out) == 16
    assert [what for what, ok in out if not ok] == []


@pytest.mark.slow
def test_threaded_cold_play_equals_serial_play():
    """Hands of each variant played in 8 threads from a cold start give the
    same records as the same seeds played serially (another interpreter)."""
    hands = 20
    threaded = _run(_PLAY, "8", str(hands))
    serial = _run(_PLAY, "1", str(hands))
    assert len(serial) == 3 * hands
    assert threaded.keys() == serial.keys()
    diverged = [k for k in serial if threaded[k] != serial[k]]
    assert diverged == []


def test_replay_loads_each_ruleset_once(monkeypatch):
    """``replay`` reuses the ruleset of an earlier record with the same
    variant and options instead of loading it again per record."""
    from qipai.bots import play_hand
    from qipai.core import ruleset as ruleset_mod
    from qipai.core.records import record_of, replay

    recs = [record_of(play_hand(ruleset_mod.load("guilin-mahjong(hubao=false)"), seed=s))
            for s in range(3)]
    ruleset_mod._LOADED.clear()
    calls = []
    real = ruleset_mod.load
    monkeypatch.setattr(ruleset_mod, "load", lambda *a, **k: calls.append(a) or real(*a, **k))
    tables = [replay(r) for r in recs]
    assert len(calls) == 1
    assert tables[0].ruleset is tables[2].ruleset
    assert [msgspec_json(record_of(t)) for t in tables] == [msgspec_json(r) for r in recs]


def msgspec_json(obj: object) -> bytes:
    import msgspec

    return msgspec.json.encode(obj)


def test_load_cached_is_shared_between_threads_and_keyed_by_options():
    import threading

    from qipai.core.errors import BadOption
    from qipai.core.ruleset import _LOADED, load_cached

    _LOADED.clear()
    got = []
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()
        got.append(load_cached("guilin-mahjong", {"hubao": False}))

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(got) == 8 and all(rs is got[0] for rs in got)
    assert got[0].options.hubao is False
    assert load_cached("guilin-mahjong") is not got[0]
    assert load_cached("guilin-mahjong", {"hubao": True}).options.hubao is True
    with pytest.raises(BadOption):
        load_cached("guilin-mahjong", {"nope": 1})
    # options that cannot be a key are loaded (or refused) as load does
    with pytest.raises(BadOption):
        load_cached("guilin-mahjong", {"hubao": object()})
