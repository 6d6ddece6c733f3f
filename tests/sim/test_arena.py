"""``qipai arena`` (qipai.sim.arena, qipai.sim.report.arena): determinism
across workers and backends, rows equal to plain bot play, the paired
interval against a computation by hand from the Parquet rows, bots by
``module:Class``, faults recorded, bad names refused."""

from __future__ import annotations

import importlib.util
import math
import os
import statistics

import pytest
from click.testing import CliRunner

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (extra qipai[sim]) not installed")

from qipai.bots import hand_seed, make_bots, run_to_end  # noqa: E402
from qipai.cli import cli  # noqa: E402
from qipai.core.ruleset import load  # noqa: E402
from qipai.sim.arena import arena  # noqa: E402
from qipai.sim.report.arena import summarize_arena  # noqa: E402
from cliassert import one_line_error  # noqa: E402  (tests/helpers)


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)



def read(path: str) -> list[dict]:
    return pq.read_table(path).to_pylist()


def test_one_and_two_workers_write_the_same_bytes(tmp_path):
    a, b = str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")
    for out, k in ((a, "1"), (b, "2")):
        res = invoke("arena", "guilin-zipai", "-c", "random", "-c", "greedy", "--field",
                     "greedy", "--deals", "5", "--seed", "7", "-k", k, "--chunk", "2",
                     "--out", out)
        assert res.exit_code == 0, res.output
        assert f"wrote {out}: 5 deals × 2 challengers" in res.stdout
    assert open(a, "rb").read() == open(b, "rb").read()
    rows = read(a)
    # 5 deals × 2 challengers × 3 seats (字牌 is 1v2), by challenger, deal, seat
    assert [(r["challenger"], r["deal"], r["seat"]) for r in rows] == \
        [(c, d, s) for c in ("greedy", "random") for d in range(5) for s in range(3)]


def test_rows_are_the_rotations_plain_bot_play_gives(tmp_path):
    """Each row is deal i dealt from hand_seed(S, i) by seat i mod players,
    the challenger at its seat and the field at the others, every bot seeded
    from the hand seed and its seat (as make_bots seeds them)."""
    out = str(tmp_path / "r.parquet")
    arena("guilin-mahjong", ["random"], "greedy", 3, seed=5, out=out)
    rows = read(out)
    assert len(rows) == 12
    rs = load("guilin-mahjong")
    for r in rows:
        hs = hand_seed(5, r["deal"])
        assert int(r["seed"]) == hs and r["dealer"] == r["deal"] % 4
        names = ["greedy"] * 4
        names[r["seat"]] = "random"
        table = rs.table(seed=hs, dealer=r["dealer"])
        steps = run_to_end(table, make_bots(names, 4, hs))
        res = table.result
        assert (r["end"], r["winners"], r["net"], r["steps"]) == \
            (res.end, list(res.winners), list(res.net), steps)
        assert r["challenger_net"] == res.net[r["seat"]] and r["fault"] is None
    # the same wall in every rotation: a deal's seed is one
    assert len({r["seed"] for r in rows if r["deal"] == 0}) == 1


def test_the_paired_interval_is_the_one_computed_by_hand(tmp_path):
    out = str(tmp_path / "p.parquet")
    res = invoke("arena", "guilin-mahjong", "-c", "random", "-c", "greedy", "--field",
                 "greedy", "--deals", "12", "--seed", "2", "-k", "1", "--out", out)
    assert res.exit_code == 0, res.output
    rows = read(out)
    summary = summarize_arena(out)
    by = {c.name: c for c in summary.challengers}
    per_deal = {}
    for name in ("random", "greedy"):
        deals = sorted({r["deal"] for r in rows})
        stat = [statistics.mean(r["challenger_net"] for r in rows
                                if r["challenger"] == name and r["deal"] == d) for d in deals]
        per_deal[name] = stat
        m, sd = statistics.mean(stat), statistics.stdev(stat)
        half = 1.959963984540054 * sd / math.sqrt(len(stat))
        got = by[name].net
        assert got.n == 12
        assert got.value == pytest.approx(m, abs=1e-12)
        assert got.ci == pytest.approx((m - half, m + half), abs=1e-12)
        # win rate: the share of the deal's rotations the challenger won, over the deals
        wins = [statistics.mean(float(r["seat"] in r["winners"]) for r in rows
                                if r["challenger"] == name and r["deal"] == d) for d in deals]
        assert by[name].win.value == pytest.approx(statistics.mean(wins))
    # the field as challenger: its rotations are one table, whose nets sum to 0
    assert per_deal["greedy"] == [0] * 12 and by["greedy"].net.ci == (0.0, 0.0)
    # the difference random − greedy, paired on the deals
    diff = [b - a for a, b in zip(per_deal["greedy"], per_deal["random"])]
    (d,) = summary.differences
    assert (d.earlier, d.later) == ("random", "greedy")
    assert d.diff.value == pytest.approx(-statistics.mean(diff))
    # printed, by the arena and by qipai report (which knows the file by its metadata)
    m = by["random"].net
    text = f"{m.value:+.2f} [{m.ci[0]:+.2f}, {m.ci[1]:+.2f}]"
    # openskill (extra qipai[sim]): the field, greedy, rated above random
    if importlib.util.find_spec("openskill") is not None:
        assert [r.name for r in summary.ratings] == ["greedy", "random"]
        assert summary.ratings[0].ordinal > summary.ratings[1].ordinal
    report = invoke("report", out, "--markdown")
    assert report.exit_code == 0, report.output
    assert f"| random | 12 | {text} |" in report.stdout
    assert "| greedy − random | 12 |" in report.stdout


def test_a_bot_by_module_and_class_plays_as_the_bot_it_is(tmp_path):
    """arena_bots:Greedy (a GreedyBot under another name, tests/helpers/)
    plays every rotation exactly as greedy does."""
    out = str(tmp_path / "m.parquet")
    res = invoke("arena", "guilin-mahjong", "-c", "arena_bots:Greedy", "-c", "greedy",
                 "--field", "random", "--deals", "4", "-k", "2", "--out", out)
    assert res.exit_code == 0, res.output
    rows = read(out)
    mine = [(r["deal"], r["seat"], r["net"], r["steps"]) for r in rows
            if r["challenger"] == "arena_bots:Greedy"]
    theirs = [(r["deal"], r["seat"], r["net"], r["steps"]) for r in rows
              if r["challenger"] == "greedy"]
    assert mine == theirs and len(mine) == 16
    (d,) = summarize_arena(out).differences
    assert d.diff.value == 0
    # qipai report knows the file by its metadata: the arena's summary, not simulate's
    res = invoke("report", out)
    assert res.exit_code == 0, res.output
    assert "challengers against a field of random (4 deals, each in 4 seats" in \
        " ".join(res.stdout.split())
    one_line_error(invoke("report", out, "--html", str(tmp_path / "r.html")),
                   "is a qipai arena file: --html draws simulate files only")


def test_a_bot_that_raises_is_its_rotations_fault_not_a_crash(tmp_path):
    out = str(tmp_path / "f.parquet")
    res = invoke("arena", "guilin-mahjong", "-c", "arena_bots:FaultsAtSeatTwo", "--field",
                 "greedy", "--deals", "3", "-k", "1", "--out", out)
    assert res.exit_code == 0, res.output
    rows = read(out)
    faults = [r for r in rows if r["fault"] is not None]
    assert [(r["deal"], r["seat"]) for r in faults] == [(d, 2) for d in range(3)]
    for r in faults:
        assert "bot arena_bots:FaultsAtSeatTwo at seat 2, decision" in r["fault"]
        assert "RuntimeError: arena test: seat 2 gives up" in r["fault"]
        assert r["fault_seat"] == 2 and r["net"] is None and r["challenger_net"] is None
    s = summarize_arena(out).challengers[0]
    assert (s.faults, s.own_faults, s.rotations, s.deals) == (3, 3, 9, 3)
    # the per-deal statistic: the mean over the three rotations that finished
    expect = statistics.mean(statistics.mean(r["challenger_net"] for r in rows
                                             if r["deal"] == d and r["fault"] is None)
                             for d in range(3))
    assert s.net.value == pytest.approx(expect)
    assert s.seats[2].net.n == 0
    assert "faults of arena_bots:FaultsAtSeatTwo: 3 rotations left out (3 its own)" in \
        " ".join(res.stdout.split())
    # a field bot's illegal answer is a fault too, not the challenger's own
    out2 = str(tmp_path / "g.parquet")
    arena("guilin-zipai", ["greedy"], "arena_bots:Illegal", 1, out=out2)
    rows = read(out2)
    assert all("answered 'not an action', which is not one of its legal actions" in r["fault"]
               and r["fault_seat"] != r["seat"] for r in rows)
    assert summarize_arena(out2).challengers[0].own_faults == 0


@pytest.mark.parametrize("k", ["1", "2"])
@pytest.mark.parametrize("bot, words", [
    ("arena_bots:SitRaises", ["at seat", "RuntimeError: arena test: no seat for me"]),
    ("arena_bots:Exits", ["decision", "raised SystemExit: 3"]),
    ("arena_bots:NotMadeWithSomeSeeds", ["could not be made",
                                         "RuntimeError: arena test: an unlucky seed"]),
])
def test_a_bot_that_fails_to_sit_exits_or_is_not_made_is_a_fault(bot, words, k, tmp_path):
    """Not only ``act``: a bot's ``sit``, its ``sys.exit`` (which once left
    a pool waiting for ever for its dead worker's chunk) and its making with
    a seat's RNG are that rotation's fault, the same at K=1 and K=2."""
    out = str(tmp_path / f"{k}.parquet")
    res = invoke("arena", "guilin-zipai", "-c", bot, "-c", "greedy", "--field", "greedy",
                 "--deals", "3", "-k", k, "--out", out)
    assert res.exit_code == 0, res.output
    # the report is not cut at 80 columns (a pipe's width) by a long bot name
    assert "95 % intervals" in " ".join(res.stdout.split()) and "faults ┃" in res.stdout
    faults = [r for r in read(out) if r["fault"] is not None]
    assert faults and all(r["fault_seat"] == r["seat"] and r["challenger"] == bot
                          and r["net"] is None for r in faults)
    for w in words:
        assert all(w in r["fault"] for r in faults), (w, faults[0]["fault"])
    if bot != "arena_bots:NotMadeWithSomeSeeds":   # (that one is made at some seats)
        assert len(faults) == 9


@pytest.mark.parametrize("args, words", [
    (["-c", "nosuchbot"], ["unknown bot 'nosuchbot'", "greedy"]),
    (["-c", "no_such_module_for_qipai:Bot"], ["does not import"]),
    (["-c", "arena_bots:NoAct"], ["has no act(view, legal) method"]),
    (["-c", "greedy", "--field", "arena_bots:Missing"], ["has no 'Missing'"]),
    (["-c", "greedy", "-c", "greedy"], ["challenger 'greedy' is given twice"]),
    (["-c", "greedy", "-c", " greedy "], ["challenger 'greedy' is given twice"]),
    ([], ["give at least one --challenger"]),
    (["-c", "greedy", "--deals", "0"], ["--deals must be at least 1"]),
])
def test_bad_input_is_one_line_before_any_deal(args, words, tmp_path):
    out = str(tmp_path / "bad.parquet")
    one_line_error(invoke("arena", "guilin-mahjong", *args, "--out", out), *words)
    assert not os.path.exists(out)


def test_a_file_that_is_not_a_results_file_is_not_replaced(tmp_path):
    out = tmp_path / "notes.txt"
    out.write_text("mine")
    one_line_error(invoke("arena", "guilin-mahjong", "-c", "greedy", "-n", "1", "--out",
                          str(out)), "will not replace")
    assert out.read_text() == "mine"


def test_ctrl_c_keeps_the_finished_chunks(tmp_path):
    out = str(tmp_path / "i.parquet")
    seen = []

    def stop_after_two(n: int) -> None:
        seen.append(n)
        if len(seen) == 2:
            raise KeyboardInterrupt

    o = arena("guilin-zipai", ["random"], "greedy", 10, seed=1, chunk=2, out=out,
              on_chunk=stop_after_two)
    assert o.interrupted and o.written == 4 and o.asked == 10
    assert sorted({r["deal"] for r in read(out)}) == [0, 1, 2, 3]


@pytest.mark.slow
def test_ray_writes_the_bytes_the_process_pool_writes(tmp_path):
    # as test_sim's: qipai imports Ray itself (its uv hook turned off first)
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray (extra qipai[ray]) not installed")
    a, b = str(tmp_path / "pool.parquet"), str(tmp_path / "ray.parquet")
    arena("guilin-mahjong", ["random"], "greedy", 6, seed=4, workers=2, chunk=3, out=a)
    o = arena("guilin-mahjong", ["random"], "greedy", 6, seed=4, workers=2, chunk=3, out=b,
              ray_address="")
    assert o.backend == "ray" and o.written == 6
    assert open(a, "rb").read() == open(b, "rb").read()
