"""``qipai simulate`` and ``qipai report`` (qipai.sim): determinism across
workers and backends, rows equal to plain bot play, the report's figures
against an independent computation from the Parquet rows, bad input."""

from __future__ import annotations

import importlib.util
import math
import os
import re

import pytest
from click.testing import CliRunner

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (extra qipai[sim]) not installed")
np = pytest.importorskip("numpy")

from qipai.bots import hand_seed, make_bots, run_to_end  # noqa: E402
from qipai.cli import cli  # noqa: E402
from qipai.core.ruleset import load  # noqa: E402
from qipai.sim import MissingExtra, RayUnavailable, require  # noqa: E402
from qipai.sim.run import parse_rulesets, simulate  # noqa: E402
from cliassert import one_line_error  # noqa: E402  (tests/helpers)

GUILIN = ["guilin-mahjong", "guilin-mahjong(hubao=false)"]
GUILIN_B = "guilin-mahjong(hubao=False)"  # as the file names it


def invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)



@pytest.fixture(scope="module")
def guilin_file(tmp_path_factory) -> str:
    """24 greedy hands of guilin-mahjong, default and hubao=false."""
    out = str(tmp_path_factory.mktemp("sim") / "g.parquet")
    res = invoke("simulate", *GUILIN, "--hands", "24", "--seed", "3", "--workers", "1",
                 "--out", out)
    assert res.exit_code == 0, res.output
    assert f"wrote {out}: 48 hands (2 × 24)" in res.stdout
    return out


# ---------------------------------------------------------------- determinism


def test_one_and_two_workers_write_the_same_bytes(tmp_path):
    specs = ["guilin-zipai", "guangxi-mahjong"]
    a, b, c = (str(tmp_path / f"{x}.parquet") for x in "abc")
    res = invoke("simulate", *specs, "--hands", "5", "--seed", "11", "-k", "1", "--out", a)
    assert res.exit_code == 0, res.output
    res = invoke("simulate", *specs, "--hands", "5", "--seed", "11", "-k", "2", "--chunk", "2",
                 "--out", b)
    assert res.exit_code == 0, res.output
    assert open(a, "rb").read() == open(b, "rb").read()
    # another seed gives another file
    invoke("simulate", *specs, "--hands", "5", "--seed", "12", "-k", "1", "--out", c)
    assert open(a, "rb").read() != open(c, "rb").read()


def test_rows_are_the_hands_plain_bot_play_gives(tmp_path):
    """Each row is hand i played from hand_seed(S, i), dealer i mod players,
    with the bots seeded from that hand seed: replaying it without the
    simulator's settle observer gives the same winners, net and steps."""
    out = str(tmp_path / "z.parquet")
    simulate(parse_rulesets(["guilin-zipai", "guilin-mahjong"]), 4, seed=9, out=out)
    rows = pq.read_table(out).to_pylist()
    assert [(r["ruleset"], r["hand"]) for r in rows] == \
        [(v, i) for v in ("guilin-mahjong", "guilin-zipai") for i in range(4)]
    for r in rows:
        rs = load(r["ruleset"])
        n = rs.manifest.players
        assert int(r["seed"]) == hand_seed(9, r["hand"]) and r["dealer"] == r["hand"] % n
        table = rs.table(seed=int(r["seed"]), dealer=r["dealer"])
        steps = run_to_end(table, make_bots("greedy", n, int(r["seed"])))
        res = table.result
        assert (r["end"], r["winners"], r["net"], r["steps"]) == \
            (res.end, list(res.winners), list(res.net), steps)
        assert sum(r["net"]) == 0
        inst = [0] * n
        for p in r["instant"] + r["settlement"]:
            inst[p["payer"]] -= p["amount"]
            inst[p["payee"]] += p["amount"]
        assert inst == r["net"]
        assert len(r["patterns"]) == len(r["hu"]) == len(r["xing"]) == len(r["winners"])
        if r["end"] == "huangzhuang":
            assert r["how"] is None and r["winners"] == []
        if r["variant"] == "guilin-zipai":
            # a zipai win has its 胡数: at least 10 (the default 起胡) but 三笼五坎
            for hu, pats in zip(r["hu"], r["patterns"]):
                assert hu is not None and (hu >= 10 or "sanlong_wukan" in pats), (hu, pats)
        else:
            assert all(h is None for h in r["hu"])


def test_ctrl_c_keeps_the_finished_chunks(tmp_path):
    for workers in (1, 2):
        out = str(tmp_path / f"i{workers}.parquet")
        seen = []

        def stop_after_two(n: int) -> None:
            seen.append(n)
            if len(seen) == 2:
                raise KeyboardInterrupt

        o = simulate(parse_rulesets(["guilin-mahjong"]), 20, bots="random", seed=1,
                     workers=workers, chunk=2, out=out, on_chunk=stop_after_two)
        assert o.interrupted and o.written == 4 and o.asked == 20
        t = pq.read_table(out)
        assert t.num_rows == 4 and b"qipai.simulate" in t.schema.metadata
    # a task plays its hands under every ruleset: stopped early, the file
    # holds the same hands of each
    seen.clear()
    out = str(tmp_path / "two.parquet")
    o = simulate(parse_rulesets(GUILIN), 20, bots="random", seed=1, workers=2, chunk=2,
                 out=out, on_chunk=stop_after_two)
    assert o.interrupted and o.written == 8
    rows = pq.read_table(out).to_pylist()
    hands = {g: sorted(r["hand"] for r in rows if r["ruleset"] == g)
             for g in ("guilin-mahjong", "guilin-mahjong(hubao=False)")}
    assert hands["guilin-mahjong"] == hands["guilin-mahjong(hubao=False)"]
    assert len(hands["guilin-mahjong"]) == 4


@pytest.mark.parametrize("where, args", [
    ("_warm", ["-k", "1"]),  # building the rulesets before the first hand
    ("_warm", ["-k", "2"]),
    ("_play_rows", ["-k", "1"]),  # playing the first chunk
    ("start_ray", ["--ray="]),  # connecting to Ray
])
def test_ctrl_c_before_any_chunk_finished_writes_nothing(where, args, monkeypatch, tmp_path):
    """Ctrl-C before a chunk finished is one line naming the file, exit
    status 130 and no file (it was "Aborted!", status 1, during the warm-up)."""
    from qipai.sim import backends, run

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    # start_ray is called by the Ray backend, the others by the run itself
    monkeypatch.setattr(backends if where == "start_ray" else run, where, interrupt)
    if where == "start_ray":  # the CLI imports Ray first: a stand-in will do
        import sys
        import types

        monkeypatch.setitem(sys.modules, "ray", types.ModuleType("ray"))
    out = tmp_path / "x.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "4", *args, "--out", str(out))
    assert res.exit_code == 130, res.output
    assert res.stdout == f"interrupted before any chunk finished: {out} not written\n"
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_while_writing_leaves_no_partial_file(monkeypatch, tmp_path):
    """Ctrl-C during the Parquet write: the temporary OUT.part is removed,
    a file already at OUT stays as it was, one line says so, status 130."""
    import pyarrow as pa
    import pyarrow.parquet

    earlier = tmp_path.parent / f"{tmp_path.name}-earlier.parquet"  # an earlier run's file
    pyarrow.parquet.write_table(pa.table({"hand": [0]}).replace_schema_metadata(
        {"qipai.simulate": "{}"}), earlier)
    earlier_bytes = earlier.read_bytes()

    def write_half(table, where, **kwargs):
        with open(where, "wb") as fh:
            fh.write(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(pyarrow.parquet, "write_table", write_half)
    out = tmp_path / "x.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "2", "-k", "1", "--out", str(out))
    assert res.exit_code == 130, res.output
    assert res.stdout == f"interrupted while writing the file: {out} not written\n"
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(earlier_bytes)  # (a file that is not an earlier run's is refused first)
    res = invoke("simulate", "guilin-mahjong", "-n", "2", "-k", "1", "--out", str(out))
    assert res.exit_code == 130, res.output
    assert res.stdout == (f"interrupted while writing the file: {out} not written; "
                          f"the file already there is unchanged\n")
    assert list(tmp_path.iterdir()) == [out] and out.read_bytes() == earlier_bytes
    o = simulate(parse_rulesets(["guilin-mahjong"]), 2, out=str(tmp_path / "y.parquet"))
    assert (o.interrupted, o.written, o.played) == (True, 0, 2)


def test_sigint_to_the_process_group_before_the_first_chunk(tmp_path):
    """A real Ctrl-C (SIGINT to the process group, workers included) while
    the pool plays a first chunk that cannot finish: one line, status 130,
    no file, no traceback from the parent or a worker."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "x.parquet"
    proc = subprocess.Popen(
        [sys.executable, "-m", "qipai", "simulate", "guilin-mahjong", "-n", "1000000",
         "--chunk", "500000", "-k", "2", "--out", str(out)],  # two chunks: two workers
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        children = f"/proc/{proc.pid}/task/{proc.pid}/children"
        if not os.path.exists(children):
            pytest.skip("needs Linux's /proc/PID/task/PID/children")
        def workers() -> int:
            with open(children) as fh:
                return len(fh.read().split())

        deadline = time.monotonic() + 300  # a guard against a hang, not a timing
        while proc.poll() is None and workers() < 2:
            time.sleep(0.01)  # until both workers are there: the pool starts or plays
            if time.monotonic() > deadline:
                pytest.fail("the pool's two workers never started")
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr[-2000:]
    assert stdout == f"interrupted before any chunk finished: {out} not written\n"
    assert "Traceback" not in stderr, stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_a_huge_hands_count_starts_at_once_and_stops_on_ctrl_c(tmp_path):
    """--hands 10**12 (more than memory could list as tasks) starts playing
    at once, on one process and on a pool, and Ctrl-C after a chunk writes
    it: the tasks are made as they are handed out, not listed first.  Run in
    a process whose address space is capped at 2 GB, which a list of the
    tasks would exceed."""
    import subprocess
    import sys

    code = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from qipai.sim.run import parse_rulesets, simulate
def stop(n):
    raise KeyboardInterrupt
for k in (1, 2):
    o = simulate(parse_rulesets(["guilin-mahjong"]), 10**12, bots="random", workers=k,
                 out=sys.argv[1] + f"/h{{k}}.parquet", on_chunk=stop)
    print(k, o.interrupted, o.written, o.asked)
"""
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split("\n")[:2] == ["1 True 50 1000000000000", "2 True 50 1000000000000"]
    assert pq.read_table(tmp_path / "h2.parquet").num_rows == 50


@pytest.mark.slow
def test_ray_writes_the_bytes_the_process_pool_writes(tmp_path):
    # Not importorskip: Ray must first be imported by qipai (import_ray turns
    # its `uv run` hook off before the import, as `qipai simulate --ray` does);
    # imported here first, under `uv run pytest`, its workers would start
    # through uv in a copy of the project, slowly or never.
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray (extra qipai[ray]) not installed")
    specs = parse_rulesets(["guilin-mahjong", "guilin-zipai"])
    a, b = str(tmp_path / "pool.parquet"), str(tmp_path / "ray.parquet")
    # and the decisions (--decisions): the recorder travels to Ray's workers
    da, db = str(tmp_path / "pool-d.parquet"), str(tmp_path / "ray-d.parquet")
    from qipai.env.policy import DecisionRecorder

    simulate(specs, 6, seed=4, workers=2, chunk=2, out=a, decisions=da,
             recorder=DecisionRecorder([0, 1]))
    try:
        o = simulate(specs, 6, seed=4, workers=2, chunk=3, out=b, ray_address="",
                     decisions=db, recorder=DecisionRecorder([0, 1]))
    except RayUnavailable as exc:  # the machine, not the code: say so and skip (never in CI)
        if os.environ.get("QIPAI_CI"):
            pytest.fail(f"QIPAI_CI is set and a local Ray instance did not start: {exc}", pytrace=False)
        pytest.skip(f"a local Ray instance did not start here: {exc}")
    assert o.backend == "ray" and o.written == 12 and o.decisions > 0
    assert open(a, "rb").read() == open(b, "rb").read()
    assert open(da, "rb").read() == open(db, "rb").read()


@pytest.mark.slow
def test_ray_workers_that_do_not_start_are_a_typed_error_not_a_hang(monkeypatch):
    """Workers that crash as they start (as a ``uv run`` driver's did, their
    runtime environment running uv in a copy of the project) are retried by
    Ray forever; qipai gives up after its bound with RayUnavailable."""
    from qipai.sim import backends as run

    # Ray's uv hook would replace the broken interpreter by `uv run …` (as
    # import_ray turns it off, before Ray is imported, or in case it was).
    monkeypatch.setenv(run.RAY_UV_HOOK, "0")
    ray = pytest.importorskip("ray", reason="ray (extra qipai[ray]) not installed")
    monkeypatch.setattr(ray._private.ray_constants, run.RAY_UV_HOOK, False, raising=False)
    try:  # workers whose interpreter exits at once, before registering
        ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR",
                 log_to_driver=False, runtime_env={"py_executable": "false"})
    except Exception as exc:  # noqa: BLE001 - the machine, not the code
        if os.environ.get("QIPAI_CI"):
            pytest.fail(f"QIPAI_CI is set and a local Ray instance did not start: {exc}",
                        pytrace=False)
        pytest.skip(f"a local Ray instance did not start here: {exc}")
    try:
        with pytest.raises(RayUnavailable, match="workers ran no task within 20 s"):
            run.start_ray("", 1, parse_rulesets(["guilin-mahjong"]), timeout=20)
    finally:
        ray.shutdown()


def test_a_local_ray_instance_turns_off_rays_uv_hook_unless_set(monkeypatch):
    from qipai.sim import backends as run

    monkeypatch.setattr(run, "require", lambda module, extra: module)
    monkeypatch.delenv(run.RAY_UV_HOOK, raising=False)
    run.import_ray(local=False)  # a cluster: Ray's default stays
    assert run.RAY_UV_HOOK not in os.environ
    run.import_ray(local=True)
    assert os.environ[run.RAY_UV_HOOK] == "0"
    monkeypatch.setenv(run.RAY_UV_HOOK, "1")  # the user's choice wins
    run.import_ray(local=True)
    assert os.environ[run.RAY_UV_HOOK] == "1"


# ---------------------------------------------------------------- the report


def _wilson(x: int, n: int) -> tuple[float, float]:
    """The roots p of (x/n − p)² = z² p (1 − p) / n (the score interval)."""
    z2, ph = 1.959963984540054 ** 2, x / n
    a, b, c = 1 + z2 / n, -(2 * ph + z2 / n), ph * ph
    disc = math.sqrt(b * b - 4 * a * c)
    return ((-b - disc) / (2 * a), (-b + disc) / (2 * a))


def _rate(x: int, n: int) -> str:
    lo, hi = _wilson(x, n)
    return f"{100 * x / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"


def _mean(values, signed: bool = False) -> str:
    v = np.asarray(values, dtype=float)
    m, half = v.mean(), 1.959963984540054 * v.std(ddof=1) / math.sqrt(len(v))
    s = "+" if signed else ""
    return f"{m:{s}.2f} [{m - half:{s}.2f}, {m + half:{s}.2f}]"


def _row_of(out: str, label: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith(f"│ {label} ")]
    assert len(lines) == 1, (label, out)
    return lines[0]


def test_report_prints_the_figures_of_the_rows(guilin_file):
    res = invoke("report", guilin_file, env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    out = res.stdout
    rows = pq.read_table(guilin_file).to_pylist()
    by = {s: [r for r in rows if r["ruleset"] == s] for s in ("guilin-mahjong",
                                                              "guilin-mahjong(hubao=False)")}
    cells = {}
    for name, rs in by.items():
        n = len(rs)
        hz = sum(r["end"] == "huangzhuang" for r in rs)
        won = [r for r in rs if r["end"] == "hu"]
        wins = [p for r in won for p in r["patterns"]]
        moved = [sum(max(x, 0) for x in r["net"]) for r in rs]
        cells.setdefault("荒庄 huangzhuang (of hands)", []).append(_rate(hz, n))
        cells.setdefault("dealer 庄 wins (of hands)", []).append(
            _rate(sum(r["dealer"] in r["winners"] for r in rs), n))
        for s in range(4):
            cells.setdefault(f"seat {s} wins (of hands)", []).append(
                _rate(sum(s in r["winners"] for r in rs), n))
            cells.setdefault(f"seat {s} net 子 per hand (mean)", []).append(
                _mean([r["net"][s] for r in rs], signed=True))
        cells.setdefault("win by 自摸 zimo (of hands won)", []).append(
            _rate(sum(r["how"] == "zimo" for r in won), len(won)))
        cells.setdefault("pattern 平胡 pinghu (of wins)", []).append(
            _rate(sum("pinghu" in p for p in wins), len(wins)))
        cells.setdefault("子 moved per hand (mean)", []).append(_mean(moved))
        q = np.percentile(moved, [50, 90, 99])
        cells.setdefault("子 moved per hand p50 / p90 / p99 / max", []).append(
            " / ".join(f"{x:g}" for x in q) + f" / {max(moved)}")
        cells.setdefault("instant payments 子 per hand (mean)", []).append(
            _mean([sum(p["amount"] for p in r["instant"]) for r in rs]))
    assert re.search(r"hands\s+│\s+24 │\s+24 │", out)
    for label, want in cells.items():
        line = _row_of(out, label)
        for cell in want:
            assert cell in line, (label, cell, line)
    # the difference of money moved: paired on the hand index
    a, b = by["guilin-mahjong"], by["guilin-mahjong(hubao=False)"]
    d = [sum(max(x, 0) for x in rb["net"]) - sum(max(x, 0) for x in ra["net"])
         for ra, rb in zip(a, b)]
    assert _mean(d, signed=True) in _row_of(out, "子 moved per hand (mean)")
    # a difference of rates of hands: paired on the hand index (the same
    # deals), Newcombe's method 10 — each Wilson interval joined with the
    # correlation φ of the two indicators (numerator less n/2 when positive)
    assert [ra["seed"] for ra in a] == [rb["seed"] for rb in b]
    for s in range(4):
        i1 = [s in r["winners"] for r in a]
        i2 = [s in r["winners"] for r in b]
        e = sum(x and y for x, y in zip(i1, i2))
        f = sum(x and not y for x, y in zip(i1, i2))
        g = sum(y and not x for x, y in zip(i1, i2))
        h = 24 - e - f - g
        (l1, u1), (l2, u2) = _wilson(e + f, 24), _wilson(e + g, 24)
        p1, p2 = (e + f) / 24, (e + g) / 24
        den = math.sqrt((e + f) * (g + h) * (e + g) * (f + h))
        num = e * h - f * g
        phi = 0 if den == 0 else (max(num - 12, 0) if num > 0 else num) / den
        lo = p2 - p1 - math.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
        hi = p2 - p1 + math.sqrt((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2)
        want = f"{100 * (p2 - p1):+.1f} pp [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        assert want in _row_of(out, f"seat {s} wins (of hands)"), (s, want)
    # a share of the hands won: Newcombe's interval for independent samples
    # from the two Wilson intervals (each ruleset has its own denominator)
    w1 = [r for r in a if r["end"] == "hu"]
    w2 = [r for r in b if r["end"] == "hu"]
    x1, n1 = sum(r["how"] == "zimo" for r in w1), len(w1)
    x2, n2 = sum(r["how"] == "zimo" for r in w2), len(w2)
    (l1, u1), (l2, u2) = _wilson(x1, n1), _wilson(x2, n2)
    p1, p2 = x1 / n1, x2 / n2
    lo = p2 - p1 - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    hi = p2 - p1 + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    want = f"{100 * (p2 - p1):+.1f} pp [{100 * lo:+.1f}, {100 * hi:+.1f}]"
    assert want in _row_of(out, "win by 自摸 zimo (of hands won)")


@pytest.mark.parametrize("counts, published", [
    # Newcombe (1998), Statistics in Medicine 17:2635, method 10: his
    # examples (e, f, g, h) and the limits he gives for (f − g)/n
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((53, 0, 0, 1), (-0.0729, 0.0729)),
    ((0, 30, 0, 0), (0.8395, 1.0)),
])
def test_the_paired_interval_gives_newcombes_published_limits(counts, published):
    from qipai.sim.report import newcombe_paired

    lo, hi = newcombe_paired(*counts)  # p2 − p1: the mirror of his p1 − p2
    assert (round(-hi, 4), round(-lo, 4)) == published


def test_the_paired_interval_is_tighter_than_the_independent_one_when_outcomes_agree():
    from qipai.sim.report import newcombe, newcombe_paired

    # 1000 hands, the same 278 won by the dealer under both rules: the
    # independent interval spans about ±4 pp, the paired one almost nothing
    lo, hi = newcombe(278, 1000, 278, 1000)
    assert lo < -0.035 and hi > 0.035
    lo, hi = newcombe_paired(278, 0, 0, 722)
    assert -0.005 < lo <= 0 <= hi < 0.005
    with pytest.raises(ValueError, match="≥ 0"):
        newcombe_paired(1, -1, 0, 0)


def _tables(out: str) -> list[list[list[str]]]:
    """The rich tables printed in ``out``: per table its rows (the header
    first), each cell's lines joined by a space."""
    tables: list[list[list[list[str]]]] = []
    row = None
    for line in out.splitlines():
        if line.startswith("┏"):
            tables.append([])
            row = None
        elif line[:1] in ("┃", "│"):
            parts = [p.strip() for p in re.split("[┃│]", line)[1:-1]]
            if row is None:
                row = [[] for _ in parts]
                tables[-1].append(row)
            for cell, part in zip(row, parts):
                if part:
                    cell.append(part)
        else:  # a rule between rows, the last line of a table
            row = None
    return [[[" ".join(cell) for cell in r] for r in t] for t in tables]


def _squeeze(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(scope="module")
def three_rulesets_file(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("sim3") / "three.parquet")
    third = "guilin-mahjong(hubao=false, zhuipai=off, hubao_dealin=literal)"
    simulate(parse_rulesets([*GUILIN, third]), 4, seed=3, out=out)
    return out


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("which", ["guilin_file", "three_rulesets_file"])
def test_report_fits_a_narrow_terminal_and_cuts_nothing(which, width, request):
    """In 80 (or 60) columns every line fits, nothing is elided, every cell
    of the table (label, value, interval, ruleset name) is there whole, a
    value's interval is never broken across lines, and with three rulesets
    the columns spread over several tables, each with the figure column."""
    from rich.cells import cell_len

    from qipai.sim.report import summarize, table_rows

    path = request.getfixturevalue(which)
    res = invoke("report", path, env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(cell_len(ln) for ln in lines) <= width, res.stdout
    assert "…" not in res.stdout
    for ln in lines:  # the value columns: no line holds half an interval
        for part in re.split("[┃│]", ln)[2:-1]:
            assert part.count("[") == part.count("]"), ln
    head, body = table_rows(summarize(path))
    tables = _tables(res.stdout)
    if width == 80:  # two rulesets fit in one table, three do not
        assert (len(tables) == 1) == (which == "guilin_file")
    shown = []
    for t in tables:  # the labels, joined again, are whole: they wrap at spaces only
        assert t[0][0] == "figure" and [r[0] for r in t[1:]] == [r[0] for r in body]
        for j, h in enumerate(t[0][1:], 1):
            i = [_squeeze(x) for x in head].index(_squeeze(h))
            shown.append(i)
            assert [_squeeze(r[j]) for r in t[1:]] == [_squeeze(r[i]) for r in body]
    assert sorted(shown) == list(range(1, len(head)))


def test_report_html_has_four_charts(guilin_file, tmp_path):
    page = tmp_path / "r.html"
    res = invoke("report", guilin_file, "--html", str(page))
    assert res.exit_code == 0, res.output
    text = page.read_text(encoding="utf-8")
    # patterns, payments, cumulative nets and (two rulesets) the paired differences
    assert text.count("data:image/png;base64,") == 4
    assert "pattern 平胡 pinghu (of wins)" in text and "guilin-mahjong(hubao=False)" in text
    assert "Paired differences from the first ruleset" in text


def test_the_differences_chart_draws_the_paired_differences_computed_by_hand(guilin_file):
    """Each point is the mean of the per-hand differences (hubao=false −
    default, same hand index = same deal) with mean ± 1.96·sd/√n."""
    import matplotlib.pyplot as plt

    from qipai.sim.report import charts, summarize
    from qipai.sim.report.page import paired_points

    rows = pq.read_table(guilin_file).to_pylist()
    by = {(r["ruleset"], r["hand"]): r for r in rows}
    summary = summarize(guilin_file)
    points = {label: (v, ci) for _, label, v, ci in paired_points(summary)}
    assert sorted(points) == sorted(["子 moved per hand", "instant payments 子 per hand",
                                     *(f"seat {s} net 子 per hand" for s in range(4))])
    for s in range(4):
        d = np.array([by[(GUILIN_B, i)]["net"][s] - by[("guilin-mahjong", i)]["net"][s]
                      for i in range(24)], dtype=float)
        half = 1.959963984540054 * d.std(ddof=1) / math.sqrt(24)
        v, ci = points[f"seat {s} net 子 per hand"]
        assert v == pytest.approx(d.mean()) and ci == pytest.approx((d.mean() - half,
                                                                      d.mean() + half))
    figs = charts(summary, guilin_file)
    ax = figs["differences"].axes[0]
    drawn = sorted(x for line in ax.get_lines() for x in line.get_xdata()
                   if line.get_marker() == "o")
    for fig in figs.values():
        plt.close(fig)
    assert drawn == pytest.approx(sorted(v for v, _ in points.values()))


def test_the_cumulative_net_chart_has_the_noise_band(guilin_file):
    """Grey band ±1.96·sd·√n around 0, sd over every seat's net per hand."""
    import matplotlib.pyplot as plt

    from qipai.sim.report import charts, summarize

    rows = pq.read_table(guilin_file).to_pylist()
    figs = charts(summarize(guilin_file), guilin_file)
    axes = figs["net"].axes
    for fig in figs.values():
        plt.close(fig)
    for ax, r in zip(axes, ["guilin-mahjong", GUILIN_B]):
        xs = np.array([x for row in rows if row["ruleset"] == r for x in row["net"]], float)
        top = 1.959963984540054 * xs.std(ddof=1) * math.sqrt(24)
        (band,) = ax.collections
        ys = band.get_paths()[0].vertices[:, 1]
        assert ys.max() == pytest.approx(top) and ys.min() == pytest.approx(-top)


def test_patterns_are_named_in_chinese_then_by_id_everywhere(guilin_file, tmp_path):
    """Each pattern's label is its variant's Chinese name (Manifest.names,
    from the rules' term lists), then its id: the same in the terminal
    table, --markdown and the HTML page."""
    from qipai.sim.report import summarize

    names = load("guilin-mahjong").manifest.names
    ids = sorted({p for r in pq.read_table(guilin_file).to_pylist()
                  for ps in r["patterns"] for p in ps})
    assert "pinghu" in ids
    want = [f"pattern {names[p]} {p} (of wins)" for p in ids]
    labels = [f.label for rs in summarize(guilin_file).rulesets for f in rs.figures
              if f.key.startswith("pattern:")]
    assert sorted(set(labels)) == sorted(want)
    terminal = invoke("report", guilin_file, env={"COLUMNS": "250"}).stdout
    md = invoke("report", guilin_file, "--markdown").stdout
    page = tmp_path / "r.html"
    invoke("report", guilin_file, "--html", str(page))
    html = page.read_text(encoding="utf-8")
    for label in want:
        assert _row_of(terminal, label)
        assert f"| {label} |" in md
        assert f"<td>{label}</td>" in html


def test_the_pattern_chart_names_patterns_as_the_table_where_a_font_can(guilin_file,
                                                                        monkeypatch):
    """The chart's pattern names are the table's where a font with Chinese
    characters is installed, else the ids alone (never empty boxes)."""
    import matplotlib.pyplot as plt

    from qipai.sim import report
    from qipai.sim.report import page

    summary = report.summarize(guilin_file)
    for fonts in (page.CJK_FONTS, ()):
        monkeypatch.setattr(page, "CJK_FONTS", fonts)
        figs = report.charts(summary, guilin_file)
        ticks = [t.get_text() for t in figs["patterns"].axes[0].get_yticklabels()]
        for fig in figs.values():
            plt.close(fig)
        if page._cjk_font():
            assert "平胡 pinghu" in ticks
        else:
            assert "pinghu" in ticks and not any(re.search("[\u4e00-\u9fff]", t)
                                                 for t in ticks)


def test_pattern_names_join_the_variants_names_and_skip_unknown_ones():
    from qipai.sim.report import pattern_names, pattern_text

    got = pattern_names(["guilin-mahjong", "guangxi-mahjong", "no-such-variant"],
                        ["pengpenghu", "qingyise", "not_a_pattern"])
    assert got == {"pengpenghu": "碰碰胡/对对胡", "qingyise": "清一色"}
    assert pattern_text("qingyise", got) == "清一色 qingyise"
    assert pattern_text("not_a_pattern", got) == "not_a_pattern"


def test_the_howto_report_table_has_the_labels_report_prints(guilin_file):
    """docs/howto/simulate.md shows a `qipai report --markdown` table of a
    long run: its labels are the ones the command prints now."""
    import itertools
    from pathlib import Path

    from qipai.sim.report import pattern_names, pattern_text
    from qipai.sim.report.summary import _HOW

    lines = (Path(__file__).parents[2] / "docs" / "howto" / "simulate.md").read_text(
        encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| figure |"))
    table = itertools.takewhile(lambda ln: ln.startswith("|"), lines[start + 2:])
    rows = [ln.split(" | ")[0][2:] for ln in table]
    printed = {ln.split(" | ")[0][2:]
               for ln in invoke("report", guilin_file, "--markdown").stdout.splitlines()}
    assert len(rows) > 20
    for label in rows:
        if m := re.fullmatch(r"pattern (?:\S+ )?([a-z_]+) \(of wins\)", label):
            p = m.group(1)
            assert label == f"pattern {pattern_text(p, pattern_names(['guilin-mahjong'], [p]))}"\
                f" (of wins)"
        elif m := re.fullmatch(r"win by (?:\S+ )?([a-z]+) \(of hands won\)", label):
            assert label == f"win by {_HOW[m.group(1)]} (of hands won)"
        else:
            assert label in printed, label


def test_report_of_zipai_gives_hu_and_xing(tmp_path):
    out = str(tmp_path / "z.parquet")
    simulate(parse_rulesets(["guilin-zipai"]), 6, seed=2, out=out)
    rows = pq.read_table(out).to_pylist()
    hus = [h for r in rows for h in r["hu"]]
    res = invoke("report", out, env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    if len(hus) >= 2:
        assert _mean(hus) in _row_of(res.stdout, "胡数 hu of a win (mean)")


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("args, words", [
    (["no-such-game"], ["unknown variant", "no-such-game"]),
    (["guilin-mahjong(nope=1)"], ["nope"]),
    (["guilin-mahjong(hubao=3)"], ["hubao"]),
    (["guilin-mahjong", "--hands", "0"], ["--hands", "at least 1"]),
    (["guilin-mahjong", "--hands", "-5"], ["--hands", "at least 1", "-5"]),
    (["guilin-mahjong", "--chunk", "0"], ["--chunk", "at least 1"]),
    (["guilin-mahjong", "--workers", "0"], ["--workers", "at least 1"]),
    (["guilin-mahjong", "--bots", "clever"], ["clever", "greedy"]),
    (["guilin-mahjong", "guilin-mahjong(hubao=true)"], ["given twice"]),
    ([], ["at least one ruleset"]),
])
def test_simulate_bad_input_is_one_line(args, words, tmp_path):
    out = tmp_path / "x.parquet"
    one_line_error(invoke("simulate", *args, "--out", str(out)), *words)
    assert not out.exists()


def test_report_bad_files_are_one_line(tmp_path):
    one_line_error(invoke("report", str(tmp_path / "none.parquet")), "no such file")
    one_line_error(invoke("report", ""), "no file given")  # not ": no such file"
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    one_line_error(invoke("report", str(junk)), "not a Parquet file")
    import pyarrow as pa

    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1]}), other)
    one_line_error(invoke("report", str(other)), "not a qipai simulate output")
    one_line_error(invoke("report", str(tmp_path)), "is a directory")


def test_report_html_unwritable_is_one_line(guilin_file, tmp_path):
    page = tmp_path / "no-such-dir" / "r.html"
    one_line_error(invoke("report", guilin_file, "--html", str(page)), "cannot write", "r.html")
    assert not page.parent.exists()
    for name in ("", str(tmp_path / "new-dir") + os.sep):  # no file name: not ignored
        res = invoke("report", guilin_file, "--html", name)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert res.stderr.strip() == f"error: cannot write {name!r}: no file name"
    assert list(tmp_path.iterdir()) == []


def test_a_missing_extra_is_named(monkeypatch, tmp_path):
    with pytest.raises(MissingExtra, match=r"qipai\[ray\]"):
        require("no_such_module_for_qipai", "ray")
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import fails
    one_line_error(invoke("simulate", "guilin-mahjong", "--out", str(tmp_path / "x.parquet")),
                   "qipai[sim]")


def test_an_unwritable_out_fails_before_any_hand(tmp_path):
    missing = tmp_path / "no-such-dir" / "x.parquet"
    one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--out", str(missing)),
                   "cannot write", "no directory")
    assert not missing.parent.exists()
    one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--out", str(tmp_path)),
                   "cannot write", "is a directory")
    for name in ("", str(tmp_path / "new-dir") + os.sep):  # no file name
        one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--out", name),
                       "cannot write", "no file name")
    assert not (tmp_path / "new-dir").exists()
    if os.path.isdir("/proc/self"):  # a directory nobody can create files in, even root
        one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2",
                              "--out", "/proc/x.parquet"), "cannot write", "/proc/x.parquet")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode: nothing to check here
            return
        one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2",
                              "--out", str(ro / "x.parquet")), "permission denied")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


def test_an_out_that_is_not_parquet_is_not_replaced(tmp_path, guilin_file):
    notes = tmp_path / "README.md"
    notes.write_text("# my notes\n")
    one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--out", str(notes)),
                   "will not replace", "README.md", "not a Parquet file")
    assert notes.read_text() == "# my notes\n"
    # another tool's Parquet file (no qipai.simulate metadata) is refused too:
    # starting with PAR1 is not enough to be replaced
    import pyarrow as pa

    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), foreign)
    before = foreign.read_bytes()
    one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--out", str(foreign)),
                   "will not replace", "foreign.parquet",
                   "not the results of qipai simulate or qipai arena")
    assert foreign.read_bytes() == before
    # an earlier run's results are replaced, and so is an empty file
    old = tmp_path / "old.parquet"
    old.write_bytes(open(guilin_file, "rb").read())
    empty = tmp_path / "empty.parquet"
    empty.touch()
    for f in (old, empty):
        res = invoke("simulate", "guilin-mahjong", "-n", "2", "-k", "1", "--out", str(f))
        assert res.exit_code == 0, res.output
        assert pq.read_table(f).num_rows == 2


def test_ray_without_ray_is_one_line(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import fails
    out = tmp_path / "x.parquet"
    one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--out", str(out), "--ray"),
                   "ray is not installed", "qipai[ray]")
    assert not out.exists()


RAY_TOOK = ("--ray took {!r} as the cluster address; put --ray after the rulesets or write "
            "--ray= for a local instance")


@pytest.mark.parametrize("args, address", [
    (["--ray", "guilin-mahjong"], "guilin-mahjong"),  # the only ruleset: none left
    (["--ray", "guilin-mahjong(hubao=false)", "guilin-mahjong"], "guilin-mahjong(hubao=false)"),
    (["guilin-mahjong", "--ray", "guilin-zipai"], "guilin-zipai"),
])
def test_a_ruleset_taken_as_the_ray_address_is_named(args, address, monkeypatch, tmp_path):
    """click gives --ray the word after it: a ruleset there is the address.
    Said before Ray is imported (here it is not even installed)."""
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)
    out = tmp_path / "x.parquet"
    one_line_error(invoke("simulate", *args, "-n", "2", "--out", str(out)),
                   RAY_TOOK.format(address))
    assert not out.exists()


def test_an_address_ray_init_refuses_gets_the_hint(monkeypatch, tmp_path):
    """ray.init failing with the address (a stand-in Ray that refuses it as
    Ray does a word without a port) names the address --ray took; a local
    instance that does not start gets no such hint."""
    import sys
    import types

    ray = types.ModuleType("ray")
    ray.is_initialized = lambda: False

    def init(address=None, **kwargs):
        raise ValueError(f"Invalid address format: {address}" if address else "node timed out")

    ray.init = init
    monkeypatch.setitem(sys.modules, "ray", ray)
    out = tmp_path / "x.parquet"
    res = invoke("simulate", "guilin-mahjong", "--ray", "guilin-mahjon", "-n", "2",
                 "--out", str(out))
    one_line_error(res, "Ray at guilin-mahjon did not start: Invalid address format",
                   RAY_TOOK.format("guilin-mahjon"))
    res = invoke("simulate", "guilin-mahjong", "--ray", "-n", "2", "--out", str(out))
    one_line_error(res, "Ray (a local instance) did not start: node timed out")
    assert "--ray took" not in res.stderr
    assert not out.exists()


def _stand_in_ray(init):
    """A module standing in for Ray whose ``ray.init`` is ``init``."""
    import types

    ray = types.ModuleType("ray")
    ray.is_initialized = lambda: False
    ray.shutdown = lambda: None
    ray.init = init
    return ray


def test_a_ray_address_where_nothing_answers_is_one_line_at_once(monkeypatch, tmp_path):
    """--ray=HOST:PORT where nothing listens: one line naming the address,
    without asking ray.init (which retries such an address for about 14
    minutes) and without the '--ray took' hint (an address with a port is
    meant as one)."""
    import socket
    import sys

    inits = []
    monkeypatch.setitem(sys.modules, "ray", _stand_in_ray(lambda **kw: inits.append(kw)))
    with socket.socket() as s:  # a port just free on 127.0.0.1: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "x.parquet"
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        res = invoke("simulate", "guilin-mahjong", "-n", "2", f"--ray={address}",
                     "--out", str(out))
        one_line_error(res, f"Ray at {address} did not start: nothing answers at "
                            f"127.0.0.1:{port} (")
        assert "--ray took" not in res.stderr
    # RAY_ADDRESS is the address of --ray= and --ray=auto, as Ray's own rule
    # has it (it is probed, and '--ray=' does not say 'a local instance')
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    for flag in ("--ray=", "--ray=auto"):
        res = invoke("simulate", "guilin-mahjong", "-n", "2", flag, "--out", str(out))
        one_line_error(res, f"Ray at 127.0.0.1:{port} (RAY_ADDRESS) did not start: nothing "
                            f"answers")
    monkeypatch.delenv("RAY_ADDRESS")
    one_line_error(invoke("simulate", "guilin-mahjong", "-n", "2", "--ray=127.0.0.1:99999",
                          "--out", str(out)), "99999 is not a port (1..65535)")
    assert inits == [] and not out.exists()


def test_sigterm_while_ray_starts_is_a_stop_before_any_chunk(monkeypatch, tmp_path):
    """ray.init installs Ray's SIGTERM handler (exit at once, status 15, no
    line).  A SIGTERM that it takes while Ray starts is simulate's stop: one
    line, status 130, no file; and the handlers simulate replaced are
    put back."""
    import signal
    import sys

    def init(**kwargs):  # as Ray does: its own handler, then a SIGTERM arrives
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs between bytecodes
            pass

    monkeypatch.setitem(sys.modules, "ray", _stand_in_ray(init))
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    out = tmp_path / "x.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "4", "--ray=", "--out", str(out))
    assert res.exit_code == 130, res.output
    assert res.stdout == f"interrupted before any chunk finished: {out} not written\n"
    assert list(tmp_path.iterdir()) == []
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@pytest.mark.slow
def test_sigterm_during_a_ray_run_keeps_the_finished_chunks(tmp_path):
    """SIGTERM (``kill PID`` of a background run) during a --ray run stops it
    and keeps the finished chunks, as without Ray (Ray's own SIGTERM
    handler, which ray.init installs over simulate's, would exit at once:
    status 15, no file)."""
    import signal

    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray (extra qipai[ray]) not installed")
    from qipai.cli.simulate import _Stop

    stop = _Stop()
    before = signal.signal(signal.SIGTERM, stop)
    chunks = []

    def term_after_the_first(n: int) -> None:
        chunks.append(n)
        if len(chunks) == 1:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass

    out = str(tmp_path / "r.parquet")
    try:
        o = simulate(parse_rulesets(["guilin-mahjong"]), 400, bots="random", seed=3, workers=2,
                     chunk=4, out=out, ray_address="", on_chunk=term_after_the_first)
    except RayUnavailable as exc:  # the machine, not the code: say so and skip (never in CI)
        pytest.skip(f"Ray did not start here: {exc}")
    finally:
        signal.signal(signal.SIGTERM, before)
    assert o.interrupted and o.backend == "ray" and 4 <= o.written < 400
    assert pq.read_table(out).num_rows == o.written


@pytest.mark.slow
def test_real_ray_refusing_a_ruleset_like_address_gets_the_hint(tmp_path):
    pytest.importorskip("ray", reason="ray (extra qipai[ray]) not installed")
    out = tmp_path / "x.parquet"
    res = invoke("simulate", "guilin-mahjong", "--ray", "guilin-zipia", "-n", "1",
                 "--out", str(out))
    one_line_error(res, "Ray at guilin-zipia did not start", RAY_TOOK.format("guilin-zipia"))
    assert not out.exists()


def test_markdown_table_has_a_row_per_figure(guilin_file):
    res = invoke("report", guilin_file, "--markdown")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("| figure | `guilin-mahjong` | `guilin-mahjong(hubao=False)` |")
    assert lines[1] == "|---|---:|---:|---:|"
    assert any(ln.startswith("| hands | 24 | 24 |") for ln in lines)
    assert any(ln.startswith("| 子 moved per hand p50 / p90 / p99 / max |") for ln in lines)
    assert all(ln.count("|") == 5 for ln in lines)


def test_report_of_a_file_with_the_metadata_but_not_the_rows_is_one_line(guilin_file, tmp_path):
    """A file carrying ``qipai.simulate`` metadata whose columns are not the
    simulate schema (another program's table, an edited file), or whose
    metadata is not the JSON object simulate writes, is bad input."""
    import json

    import pyarrow as pa

    meta = {"qipai.simulate": json.dumps({"format": 1, "rulesets": ["guilin-mahjong"]})}
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1, 2]}).replace_schema_metadata(meta), other)
    one_line_error(invoke("report", str(other)), "not a qipai simulate output", "ruleset")
    rows = pq.read_table(guilin_file)
    no_net = tmp_path / "no_net.parquet"
    pq.write_table(rows.drop_columns(["net"]), no_net)
    one_line_error(invoke("report", str(no_net)), "not a qipai simulate output", "net")
    for raw in ("not json", "[1, 2]"):
        bad = tmp_path / "bad_meta.parquet"
        pq.write_table(rows.replace_schema_metadata({"qipai.simulate": raw}), bad)
        one_line_error(invoke("report", str(bad)), "qipai.simulate metadata")
    later = tmp_path / "later.parquet"
    pq.write_table(rows.replace_schema_metadata(
        {"qipai.simulate": json.dumps({"format": 99, "rulesets": []})}), later)
    one_line_error(invoke("report", str(later)), "format 99")


@pytest.mark.parametrize("second", ["SIGINT", "SIGTERM"])
def test_a_second_stop_does_not_cut_the_write_of_the_finished_chunks(monkeypatch, tmp_path,
                                                                     second):
    """A signal to the process group often arrives twice (``kill %1``,
    ``timeout``: once directly, once forwarded by ``uv run``).  The first
    stops the run after one chunk; a second one arriving while the finished
    chunk is written is ignored: the file holds that chunk, the last line
    says so, status 130 (the write is not cut short, "not written").
    The handlers the command replaced are put back afterwards."""
    import signal

    import pyarrow.parquet

    import qipai.sim.run as sim_run

    calls = []
    play, write = sim_run._play_rows, pyarrow.parquet.write_table

    def play_then_stop(task):
        calls.append(task)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # the first stop, as the second chunk starts
        return play(task)

    def write_after_a_second_stop(*args, **kwargs):
        os.kill(os.getpid(), getattr(signal, second))
        for _ in range(1000):  # the handler runs between bytecodes: give it some
            pass
        return write(*args, **kwargs)

    monkeypatch.setattr(sim_run, "_play_rows", play_then_stop)
    monkeypatch.setattr(pyarrow.parquet, "write_table", write_after_a_second_stop)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    out = tmp_path / "x.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "40", "-k", "1", "--chunk", "10",
                 "--bots", "random", "--out", str(out))
    assert res.exit_code == 130, res.output
    assert res.stdout.startswith(f"interrupted: kept the 10 of 40 hands in finished chunks "
                                 f"in {out} ("), res.stdout
    assert pq.read_table(out).column("hand").to_pylist() == list(range(10))
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_no_more_worker_processes_than_chunks(tmp_path):
    """--workers 999 for 3 hands starts 3 processes (one per hand, the
    smallest chunk), not 999; the file is the one of --workers 1."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    res = invoke("simulate", "guilin-mahjong", "-n", "3", "-k", "999", "--bots", "random",
                 "--out", str(a))
    assert res.exit_code == 0, res.output
    assert res.stdout.rstrip().endswith(", 3 processes"), res.stdout
    o = simulate(parse_rulesets(["guilin-mahjong"]), 5, bots="random", workers=999, chunk=2,
                 out=str(b))
    assert o.backend == "3 processes"  # ceil(5 / 2) chunks
    simulate(parse_rulesets(["guilin-mahjong"]), 3, bots="random", workers=1, out=str(b))
    assert a.read_bytes() == b.read_bytes()


def test_report_html_onto_the_results_file_is_refused(guilin_file, tmp_path):
    """--html naming the results file itself (the same path, or another
    name for it) is refused before anything is printed: the results stay."""
    import shutil

    copy = tmp_path / "same.parquet"
    shutil.copy(guilin_file, copy)
    before = copy.read_bytes()
    (tmp_path / "link.html").symlink_to(copy)
    for page in (str(copy), str(tmp_path / "link.html"), f"{tmp_path}/./same.parquet"):
        res = invoke("report", str(copy), "--html", page)
        one_line_error(res, "is the results file itself")
        assert res.stdout == ""
    assert copy.read_bytes() == before
    # another Parquet file — another run's results — is not written over
    # either
    other = tmp_path / "other.parquet"
    shutil.copy(guilin_file, other)
    res = invoke("report", str(copy), "--html", str(other))
    one_line_error(res, "will not write the page over", "other.parquet", "Parquet file")
    assert res.stdout == "" and other.read_bytes() == before
    # nor any other file but a page an earlier report wrote (a README.md
    # given by mistake stays as it is)
    for name in ("README.md", "index.html"):
        notes = tmp_path / name
        notes.write_text("# my notes\n")
        res = invoke("report", str(copy), "--html", str(notes))
        one_line_error(res, "will not write the page over", name, "not a page qipai report wrote")
        assert res.stdout == "" and notes.read_text() == "# my notes\n"
    fifo = tmp_path / "fifo.html"  # not read (that would wait for a writer): refused
    os.mkfifo(fifo)
    one_line_error(invoke("report", str(copy), "--html", str(fifo)), "not a page qipai report")
    page = tmp_path / "page.html"
    assert invoke("report", str(copy), "--html", str(page)).exit_code == 0
    first = page.read_text(encoding="utf-8")
    page.write_text(first.replace("</body>", "<p>stale</p></body>"), encoding="utf-8")
    assert invoke("report", str(copy), "--html", str(page)).exit_code == 0  # replaced
    assert page.read_text(encoding="utf-8") == first
    empty = tmp_path / "empty.html"
    empty.touch()
    assert invoke("report", str(copy), "--html", str(empty)).exit_code == 0
    assert empty.read_text(encoding="utf-8").startswith("<!doctype html>")
    # the page is written through a temporary file of its own: a file the
    # user keeps as PAGE.part is not touched
    (tmp_path / "page.html.part").write_text("mine")
    assert invoke("report", str(copy), "--html", str(page)).exit_code == 0
    assert (tmp_path / "page.html.part").read_text() == "mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".page.html")]


def _rewritten(rows, tmp_path, name: str, **columns):
    """``rows`` with some columns replaced, written with their metadata."""
    import pyarrow as pa

    for col, values in columns.items():
        i = rows.schema.get_field_index(col)
        rows = rows.set_column(i, rows.schema.field(i), pa.array(values, rows.schema.field(i).type))
    path = tmp_path / name
    pq.write_table(rows, path)
    return str(path)


def test_report_of_rows_simulate_never_writes_is_one_line(guilin_file, tmp_path):
    """Rows of the right schema but not as simulate writes them — a hand
    with a net of 2 seats in a 4-seat ruleset, a winner or dealer that is
    no seat — and metadata whose rulesets are not a list of strings are
    one line naming what is wrong (not a TypeError from deep inside, nor a
    ruleset silently left out)."""
    import json

    rows = pq.read_table(guilin_file)
    n = rows.num_rows
    net = rows.column("net").to_pylist()
    net[5] = [1, -1]
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "net.parquet", net=net)),
                   "net of 2 seats", "hand")
    winners = rows.column("winners").to_pylist()
    winners[0] = [7]
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "w.parquet", winners=winners)),
                   "winners [7]")
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "d.parquet", dealer=[9] * n)),
                   "dealer 9")
    meta = json.loads(rows.schema.metadata[b"qipai.simulate"])
    for bad in (None, "guilin-mahjong", [1]):
        path = tmp_path / "meta.parquet"
        pq.write_table(rows.replace_schema_metadata(
            {"qipai.simulate": json.dumps({**meta, "rulesets": bad})}), path)
        one_line_error(invoke("report", str(path)), "rulesets", "not a list of ruleset strings")


def test_report_of_hand_edited_rows_names_what_is_wrong(guilin_file, tmp_path):
    """Nets that do not sum to 0, a ruleset the metadata does not list, a
    metadata ``hands`` that is no number of hands: one line saying so
    (not reported as if simulate had written them — an extra column for the
    unlisted ruleset, '-5 hands asked').  A winner that is no seat is named
    as such."""
    import json

    rows = pq.read_table(guilin_file)
    net = rows.column("net").to_pylist()
    hand5 = rows.column("hand").to_pylist()[5]
    net[5] = [net[5][0] + 1] + net[5][1:]
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "sum.parquet", net=net)),
                   f"hand {hand5} of", "summing to 1, not 0")
    winners = rows.column("winners").to_pylist()
    winners[0] = [7]
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "w.parquet", winners=winners)),
                   "winners [7]: not all seats (0..3)")
    names = rows.column("ruleset").to_pylist()
    names[2] = "guilin-mahjong(hubao=True)"
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "rs.parquet", ruleset=names)),
                   "ruleset 'guilin-mahjong(hubao=True)', which its metadata does not list")
    meta = json.loads(rows.schema.metadata[b"qipai.simulate"])
    for bad in (-5, 0, "12", 2.5, None):
        path = tmp_path / "hands.parquet"
        pq.write_table(rows.replace_schema_metadata(
            {"qipai.simulate": json.dumps({**meta, "hands": bad})}), path)
        one_line_error(invoke("report", str(path)), "metadata's hands is", "not a number of hands")
    del meta["hands"]  # absent: as bad (not 'None hands asked per ruleset')
    pq.write_table(rows.replace_schema_metadata({"qipai.simulate": json.dumps(meta)}), path)
    one_line_error(invoke("report", str(path)), "metadata's hands is None")
    meta = json.loads(rows.schema.metadata[b"qipai.simulate"])
    for listed, words in (([], "which its metadata does not list (none)"),
                          (meta["rulesets"] + ["guangxi-mahjong"],
                           "its metadata lists 'guangxi-mahjong' but no row is of it")):
        pq.write_table(rows.replace_schema_metadata(
            {"qipai.simulate": json.dumps({**meta, "rulesets": listed})}), path)
        one_line_error(invoke("report", str(path)), words)


def test_report_says_when_two_rulesets_are_not_paired(guilin_file, tmp_path):
    """A file where one ruleset lacks a hand the other has (edited by
    hand): the report says its differences are not paired on the hands
    (rather than silently widening the intervals, ±0.3 to ±3.8 pp)."""
    import pyarrow.compute as pc

    rows = pq.read_table(guilin_file)
    second = "guilin-mahjong(hubao=False)"
    assert invoke("report", guilin_file).stdout.count("not paired") == 0
    keep = pc.invert(pc.and_(pc.equal(rows["ruleset"], second), pc.equal(rows["hand"], 3)))
    path = tmp_path / "edited.parquet"
    pq.write_table(rows.filter(keep), path)
    res = invoke("report", str(path))
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert (f"note: {second} and guilin-mahjong do not hold the same hands (23 and 24 hands"
            in text and "not paired on the hands" in text), text


def test_report_says_when_another_variant_is_not_paired(tmp_path):
    """The note holds for another variant of the same seats too (guangxi
    pairs with guilin when both hold the same hands): a hand dropped from
    one of them is said, not silently unpaired."""
    import pyarrow.compute as pc

    out = str(tmp_path / "gg.parquet")
    simulate(parse_rulesets(["guilin-mahjong", "guangxi-mahjong"]), 12, bots="random", seed=5,
             workers=1, out=out)
    assert "not paired" not in invoke("report", out).stdout
    rows = pq.read_table(out)
    keep = pc.invert(pc.and_(pc.equal(rows["ruleset"], "guangxi-mahjong"),
                             pc.equal(rows["hand"], 0)))
    path = tmp_path / "edited.parquet"
    pq.write_table(rows.filter(keep), path)
    text = " ".join(invoke("report", str(path)).stdout.split())
    assert ("note: guangxi-mahjong and guilin-mahjong do not hold the same hands (11 and 12"
            in text), text


def test_report_of_null_cells_or_a_hand_twice_is_one_line(guilin_file, tmp_path):
    """A null ``end`` or a null inside ``net``, and a file joined from two
    runs (each hand index twice, of two seeds), are refused naming the hand
    (the nulls are not read as nothing, and the joined file is not reported:
    its paired means would join every hand with both of the other ruleset's
    hands of that index)."""
    rows = pq.read_table(guilin_file)
    ends = rows.column("end").to_pylist()
    ends[3] = None
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "end.parquet", end=ends)),
                   "hand 3 of", "no end")
    net = rows.column("net").to_pylist()
    net[4] = [None, 1, -1, 0]
    one_line_error(invoke("report", _rewritten(rows, tmp_path, "nnet.parquet", net=net)),
                   "hand 4 of", "1 null net(s)")
    seeds = [str(int(x) + 1) for x in rows.column("seed").to_pylist()]
    other = _rewritten(rows, tmp_path, "other.parquet", seed=seeds)
    joined = tmp_path / "joined.parquet"
    import pyarrow as pa

    pq.write_table(pa.concat_tables([rows, pq.read_table(other)]), joined)
    one_line_error(invoke("report", str(joined)), "hand 0 of", "in it 2 times")


def test_report_of_damaged_pages_is_one_line(guilin_file, tmp_path):
    """A file whose footer reads but whose data pages are damaged: one
    line (not DuckDB's InvalidInputException and a traceback)."""
    data = bytearray(open(guilin_file, "rb").read())
    for i in range(200, min(2200, len(data) - 2000)):
        data[i] ^= 0x5A
    bad = tmp_path / "damaged.parquet"
    bad.write_bytes(bytes(data))
    res = invoke("report", str(bad))
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.stderr.startswith(f"error: {bad}: ") and len(res.stderr.splitlines()) == 1, \
        res.stderr


def test_report_across_seat_counts_and_of_one_hand(tmp_path):
    """A 4-seat and a 3-seat ruleset: seat 3 exists in one only, so it has
    no difference (not as if the 3-seat ruleset's seat 3 had won 0 hands).
    One hand: a mean has no interval, shown n/a (not a zero-width "95 %
    interval")."""
    from qipai.sim.report import differences, summarize

    out = str(tmp_path / "x.parquet")
    res = invoke("simulate", "guilin-mahjong", "guilin-zipai", "-n", "6", "-k", "1",
                 "--bots", "random", "--out", out)
    assert res.exit_code == 0, res.output
    s = summarize(out)
    (d,) = differences(s)
    assert "seat3" not in d and "net3" not in d and "seat2" in d
    res = invoke("report", out)
    row = next(ln for ln in res.stdout.splitlines() if "seat 3 wins" in ln)
    assert row.split("│")[-2].strip() == "—", row
    one = str(tmp_path / "one.parquet")
    res = invoke("simulate", "guilin-mahjong", "-n", "1", "-k", "1", "--bots", "random",
                 "--out", one)
    assert res.exit_code == 0, res.output
    res = invoke("report", one)
    lines = res.stdout.splitlines()
    i = next(i for i, ln in enumerate(lines) if "moved per hand (mean)" in ln)
    cell = lines[i].split("│")[-2].strip()  # "3.00 [n/a]", or a narrow table's two lines
    if "[" not in cell:
        cell += " " + lines[i + 1].split("│")[-2].strip()
    assert re.fullmatch(r"\d+\.\d\d \[n/a\]", cell), lines[i:i + 2]


def test_amounts_past_the_files_integers_are_one_line(tmp_path):
    """An option the variant accepts (追牌 of 3,000,000,000 子 a seat) makes
    hand 197 (seed 0) move more than the file's 32-bit columns hold: one
    line naming the hand and its net, exit 2, no file (not pyarrow's
    ArrowInvalid and a traceback after the hands were played)."""
    out = tmp_path / "ovf.parquet"
    res = invoke("simulate", "guilin-mahjong(zhuipai_amount=3000000000)", "-n", "200",
                 "-k", "1", "--out", str(out))
    one_line_error(res, "hand 197 of guilin-mahjong(zhuipai_amount=3000000000) moved more 子",
                   "net [3000000000, -8999999982, 2999999991, 2999999991]",
                   "at most 2,147,483,647")
    assert not out.exists() and not list(tmp_path.iterdir())
