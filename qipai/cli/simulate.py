"""``qipai simulate`` and ``qipai report``: batch simulation (:mod:`qipai.sim`) and its summary.

Heavy modules are imported inside the commands."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Any, NoReturn

import click

from qipai.cli.common import EXIT_BOT, fail


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _progress(console: Any, unit: str = "hands") -> Any:
    from rich.progress import (
        BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
        TimeElapsedColumn, TimeRemainingColumn,
    )
    from rich.text import Text

    class HandsPerSecond(ProgressColumn):
        def render(self, task: Any) -> Text:
            if task.finished and task.elapsed:  # the whole run's mean
                speed = task.completed / task.elapsed
            else:  # rich's estimate over the last seconds
                speed = task.speed
            return Text(f"– {unit}/s" if speed is None else f"{speed:.1f} {unit}/s")

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    HandsPerSecond(), TextColumn("ETA"), TimeRemainingColumn(),
                    TimeElapsedColumn(), console=console)


class _Stop:
    """The SIGINT and SIGTERM handler of a run: the first signal raises
    ``KeyboardInterrupt`` — the run stops and writes the chunks already
    finished —, every later one is ignored.  A signal sent to a process
    group often arrives twice (``kill %1``, ``timeout``: once directly and
    once forwarded by ``uv run``), and a second ``KeyboardInterrupt`` would
    cut short the write of the finished chunks, or escape it and be
    reported as a stop before any chunk finished.  :meth:`disarm` once the
    run has returned: its file is then written, whatever comes next."""

    def __init__(self) -> None:
        self.armed = True

    def disarm(self) -> None:
        self.armed = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt


def _log_progress(console: Any, total: int, every: float = 60.0, unit: str = "hands") -> Any:
    """Progress for a log file (stderr not a terminal, e.g. under nohup):
    a plain line every ``every`` seconds instead of a live bar."""
    t0 = last = time.monotonic()
    done = 0

    def advance(n: int) -> None:
        nonlocal done, last
        done += n
        now = time.monotonic()
        if now - last >= every or done == total:
            last = now
            rate = done / (now - t0) if now > t0 else 0.0
            eta = (total - done) / rate if rate else float("inf")
            console.print(f"{done}/{total} {unit}, {rate:.1f} {unit}/s, ETA {eta / 60:.0f} min",
                          highlight=False)
    return advance


@click.command()
@click.argument("rulesets", nargs=-1, metavar="VARIANT[(options)]...")
@click.option("--hands", "-n", type=int, default=1000, show_default=True,
              help="Hands of each ruleset.")
@click.option("--bots", default="greedy", show_default=True, metavar="NAME",
              help="Who plays every seat: greedy, random, a level (easy, normal, hard), "
                   "module:Class or a qipai.bots entry point (docs: Bots).  Each worker "
                   "process (and Ray worker) imports it again: module:Class must be "
                   "importable there.  A bot that raises or answers an illegal action "
                   "stops the run (exit status 1), no file written.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Simulation seed S: hand i is dealt and played from hand_seed(S, i).")
@click.option("--workers", "-k", type=int, default=None,
              help="Worker processes (default: the CPUs this process may use; never more "
                   "than the chunks of hands); with --ray, the CPUs of a local Ray instance.")
@click.option("--out", "-o", default="results.parquet", show_default=True,
              help="The Parquet file to write (an earlier run's results file is replaced; "
                   "any other existing file is refused).")
@click.option("--ray", "ray_address", is_flag=False, flag_value="", default=None,
              metavar="[ADDRESS]",
              help="Run the chunks as Ray tasks: on the cluster at ADDRESS (ray.init(address=…), "
                   "e.g. auto or ray://host:10001), or without one on a local instance.  "
                   "Needs the extra qipai[ray].  The word after --ray is taken as ADDRESS "
                   "unless it starts with '-': give --ray after the rulesets, or write "
                   "--ray=ADDRESS, or --ray= for a local instance.")
@click.option("--chunk", type=int, default=None,
              help="Hand indices per task, each played under every ruleset (default: up to 50, "
                   "shrinking to 1 towards the end so the workers finish together; never "
                   "changes the file).")
@click.option("--decisions", default=None, metavar="FILE.parquet",
              help="Also write every decision of --decision-seats to this Parquet file: the "
                   "environment's observation (qipai.env), the action mask, the action taken "
                   "and the seat's net for the hand, for training (an earlier decisions file "
                   "is replaced, any other existing file refused).  Needs qipai[env].")
@click.option("--decision-seats", default=None, metavar="0,1,..",
              help="The seats whose decisions --decisions records (default: every seat).")
def simulate(rulesets: tuple[str, ...], hands: int, bots: str, seed: int, workers: int | None,
             out: str, ray_address: str | None, chunk: int | None, decisions: str | None,
             decision_seats: str | None) -> None:
    """Play HANDS hands of each ruleset with bots and write one Parquet row per hand.

    Hand i of every ruleset is dealt from hand_seed(SEED, i) and dealt by
    seat i mod players, so the file depends only on the rulesets, --hands,
    --bots and --seed, never on --workers or --ray.  Ctrl-C (exit status
    130) writes the chunks already finished, and a second Ctrl-C (or
    SIGTERM) does not stop that write; a first one before any chunk
    finished, or during the write, writes no file.  Example:

    \b
        qipai simulate guilin-mahjong 'guilin-mahjong(hubao=false)' -n 10000
        qipai report results.parquet
        qipai simulate guilin-mahjong -n 200 --decisions decisions.parquet
    """
    # Ctrl-C and SIGTERM (``kill PID`` of a run under nohup, whose SIGINT a
    # non-interactive shell ignores) both keep the finished chunks; only the
    # first of them stops the run (see _Stop).
    stop = _Stop()
    before = signal.signal(signal.SIGINT, stop), signal.signal(signal.SIGTERM, stop)
    try:
        _simulate(rulesets, hands, bots, seed, workers, out, ray_address, chunk, stop,
                  decisions, decision_seats)
    except KeyboardInterrupt:  # before the run started: loading the rulesets, Ray …
        _not_written(out, "before any chunk finished")
    finally:  # the caller's own (a test runner's, a script's calling main())
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


def _looks_like_ruleset(address: str) -> bool:
    """Whether a --ray ADDRESS is a ruleset (a registered variant's name,
    or a spec with options): a Ray address is never either."""
    from qipai.core.ruleset import available

    return "(" in address or address in available()


def _ray_took(address: str) -> str:
    """What to say when --ray took a ruleset (or something Ray refuses) as
    its address: click gives --ray the next word unless it starts with '-'."""
    return (f"--ray took {address!r} as the cluster address; put --ray after the rulesets "
            f"or write --ray= for a local instance")


def _not_written(out: str, when: str) -> NoReturn:
    before = "; the file already there is unchanged" if os.path.exists(out) else ""
    click.echo(f"interrupted {when}: {out} not written{before}")
    sys.exit(130)


def _simulate(rulesets: tuple[str, ...], hands: int, bots: str, seed: int,
              workers: int | None, out: str, ray_address: str | None,
              chunk: int | None, stop: _Stop | None = None, decisions: str | None = None,
              decision_seats: str | None = None) -> None:
    from rich.console import Console

    from qipai.sim import BadSimulation, RayUnavailable
    from qipai.sim.run import parse_rulesets, simulate as run

    if ray_address and _looks_like_ruleset(ray_address):
        fail(_ray_took(ray_address))
    if not rulesets:
        fail("give at least one ruleset, e.g. qipai simulate guilin-mahjong --hands 1000")
    if hands < 1:
        fail(f"--hands must be at least 1, not {hands}")
    if workers is not None and workers < 1:
        fail(f"--workers must be at least 1, not {workers}")
    if chunk is not None and chunk < 1:
        fail(f"--chunk must be at least 1, not {chunk}")
    from qipai.bots.registry import BadBot, BotFault, bot_factory

    try:
        bot_factory(bots)
    except BadBot as exc:
        fail(f"--bots: {exc}")
    if decision_seats is not None and decisions is None:
        fail("--decision-seats needs --decisions FILE")
    seats = None
    if decision_seats is not None:
        try:
            seats = [int(x) for x in decision_seats.split(",")]
        except ValueError:
            fail(f"--decision-seats must be seat numbers like 0,2, not {decision_seats!r}")
        if not seats or min(seats) < 0:
            fail(f"--decision-seats must be seat numbers like 0,2, not {decision_seats!r}")
    specs = parse_rulesets(rulesets)
    recorder = None
    if decisions is not None:
        from qipai.core.extras import require

        require("numpy", "env")
        from qipai.env.policy import DecisionRecorder

        recorder = DecisionRecorder(seats)
    from qipai.sim import installed

    installed("pyarrow.parquet", "sim")
    if ray_address is not None:
        from qipai.sim.run import import_ray, ray_target

        import_ray(not ray_target(ray_address))
    k = workers or _cpus()
    console = Console(stderr=True)
    total = hands * len(specs)
    with _progress(console) if console.is_terminal else contextlib.nullcontext() as progress:
        if progress is not None:
            task = progress.add_task(f"{len(specs)} ruleset{'s' if len(specs) != 1 else ''}",
                                     total=total)
            advance = lambda n: progress.advance(task, n)  # noqa: E731
        else:
            advance = _log_progress(console, total)
        try:
            outcome = run(specs, hands, bots=bots, seed=seed, workers=k, out=out,
                          ray_address=ray_address, chunk=chunk, on_chunk=advance,
                          decisions=decisions, recorder=recorder)
            if stop is not None:
                stop.disarm()  # the file is written (or not): say which, whatever comes
        except BadSimulation as exc:
            fail(str(exc))
        except BotFault as exc:   # the run stops; no file is written
            where = (f"{exc.ruleset} hand {exc.hand}: " if hasattr(exc, "hand") else "")
            fail(f"{where}{exc}; {out} not written", EXIT_BOT)
        except RayUnavailable as exc:
            # an address with a port (HOST:PORT, ray://…) or "auto" was meant as one
            if exc.address is None or ":" in exc.address or exc.address in ("auto", "local"):
                raise
            fail(f"{exc} ({_ray_took(exc.address)})")
    rate = f"{outcome.hands_per_s:.1f} hands/s, {outcome.backend}"
    if outcome.interrupted:
        if outcome.written:
            click.echo(f"interrupted: kept the {outcome.written} of {total} hands in finished "
                       f"chunks in {out} ({rate})")
            if decisions is not None:
                click.echo(f"and their {outcome.decisions} decisions in {decisions}"
                           if outcome.decisions else f"{decisions} not written")
            sys.exit(130)
        _not_written(out, "while writing the file" if outcome.played
                     else "before any chunk finished")
    click.echo(f"wrote {out}: {outcome.written} hands ({len(specs)} × {hands}) in "
               f"{outcome.seconds:.1f} s, {rate}")
    if decisions is not None:
        click.echo(f"wrote {decisions}: {outcome.decisions} decisions")


@click.command()
@click.argument("file")
@click.option("--html", "html", default=None,
              help="Also write an HTML page with charts (pattern frequencies, money moved, "
                   "cumulative net by seat); a page an earlier report wrote is replaced, "
                   "any other file never.")
@click.option("--markdown", "as_markdown", is_flag=True,
              help="Print the table as Markdown (for docs) instead of a terminal table.")
def report(file: str, html: str | None, as_markdown: bool) -> None:
    """Summarise a `qipai simulate` FILE: per ruleset and, for two, their differences.

    A `qipai arena` FILE (known by its metadata) gets the arena's summary:
    each challenger's 子 per hand with its paired interval, its rates, the
    per-seat breakdown and the challengers' paired differences.

    Rates carry 95 % Wilson score intervals, means a normal interval (mean ±
    1.96 standard errors).  Differences are paired on the hands (the rulesets
    share their deals): rates of hands with Newcombe's paired interval, means
    as the mean of the per-hand differences; shares of wins with Newcombe's
    interval for independent samples.
    """
    from rich.console import Console

    from qipai.sim import BadSimulation
    from qipai.sim.report import is_report_page, markdown, print_report, summarize, write_html
    from qipai.sim.run import PARQUET_MAGIC, check_writable, file_head

    if html is not None:  # before anything is printed: refused, the report is not half done
        if os.path.abspath(html) == os.path.abspath(file) or (
                os.path.exists(html) and os.path.exists(file) and os.path.samefile(html, file)):
            raise BadSimulation(f"--html {html} is the results file itself; give the page "
                                f"another name (the results stay as they are)")
        if os.path.isfile(html) and file_head(html) == PARQUET_MAGIC:
            raise BadSimulation(f"will not write the page over {html}: it is a Parquet "
                                f"file (results?); give the page another name")
        if os.path.exists(html) and not os.path.isdir(html) and not is_report_page(html):
            raise BadSimulation(f"will not write the page over {html}: it is not a page "
                                f"qipai report wrote; give the page another name, or remove "
                                f"the file first")
        check_writable(html)
    from qipai.sim.report.arena import arena_markdown, is_arena_file, print_arena, summarize_arena

    if is_arena_file(file):  # a qipai arena file: its own summary
        if html is not None:
            raise BadSimulation(f"{file} is a qipai arena file: --html draws simulate files "
                                f"only (print its report without --html)")
        arena = summarize_arena(file)
        if as_markdown:
            click.echo(arena_markdown(arena), nl=False)
        else:
            print_arena(Console(highlight=False), arena)
        return
    summary = summarize(file)
    if as_markdown:
        click.echo(markdown(summary), nl=False)
    else:
        print_report(Console(highlight=False), summary)
    if html is not None:
        write_html(summary, file, html)
        click.echo(f"wrote {html}")
