"""``qipai arena``: duplicate play of challengers against a field (:mod:`qipai.sim.arena`).

Heavy modules are imported inside the command; the progress bar, the
Ctrl-C handling and the exit statuses are ``qipai simulate``'s."""

from __future__ import annotations

import contextlib
import signal
import sys

import click

from qipai.cli.common import fail
from qipai.cli.simulate import (
    _cpus, _log_progress, _looks_like_ruleset, _not_written, _progress, _ray_took, _Stop,
)


@click.command()
@click.argument("ruleset", metavar="VARIANT[(options)]")
@click.option("--challenger", "-c", "challengers", multiple=True, metavar="BOT",
              help="A bot to rate (repeat for several): a built-in name (random, greedy …), "
                   "module:Class, or a qipai.bots entry point.")
@click.option("--field", "-f", default="greedy", show_default=True, metavar="BOT",
              help="The bot at every other seat.")
@click.option("--deals", "-n", type=int, default=200, show_default=True,
              help="Deals; each is played once per challenger and seat.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed S: deal i is hand i of `qipai simulate --seed S` (hand_seed(S, i), "
                   "dealer i mod players).")
@click.option("--workers", "-k", type=int, default=None,
              help="Worker processes (default: the CPUs this process may use); with --ray, "
                   "the CPUs of a local Ray instance.")
@click.option("--out", "-o", default="arena.parquet", show_default=True,
              help="The Parquet file to write (an earlier run's results file is replaced; "
                   "any other existing file is refused).")
@click.option("--ray", "ray_address", is_flag=False, flag_value="", default=None,
              metavar="[ADDRESS]",
              help="Run the chunks as Ray tasks (as qipai simulate --ray; write --ray= for a "
                   "local instance when a word follows).")
@click.option("--chunk", type=int, default=None,
              help="Deals per task (default: up to 50, shrinking to 1; never changes the file).")
def arena(ruleset: str, challengers: tuple[str, ...], field: str, deals: int, seed: int,
          workers: int | None, out: str, ray_address: str | None, chunk: int | None) -> None:
    """Play DEALS deals of a ruleset with each challenger in every seat against the field.

    Every rotation of a deal plays the same wall, so the deal's luck
    cancels: the challenger's mean 子 per hand over its rotations of a deal
    is the per-deal statistic, and the report gives its mean over the deals
    with a 95 % interval (mean ± 1.96·sd/√deals), the win, 点炮, 自摸 and
    荒庄 rates, a per-seat breakdown and, for several challengers, their
    paired differences.  A bot that raises or answers illegally ends only
    that rotation (counted as a fault).  The file depends on the arguments,
    never on --workers or --ray.  Example:

    \b
        qipai arena guilin-mahjong --challenger greedy --field random --deals 200
        qipai report arena.parquet
    """
    stop = _Stop()
    before = signal.signal(signal.SIGINT, stop), signal.signal(signal.SIGTERM, stop)
    try:
        _arena(ruleset, challengers, field, deals, seed, workers, out, ray_address, chunk, stop)
    except KeyboardInterrupt:
        _not_written(out, "before any chunk finished")
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


def _arena(ruleset: str, challengers: tuple[str, ...], field: str, deals: int, seed: int,
           workers: int | None, out: str, ray_address: str | None, chunk: int | None,
           stop: _Stop) -> None:
    from rich.console import Console

    from qipai.sim import BadSimulation, installed
    from qipai.sim.arena import arena as run, check_bots
    from qipai.sim.report.arena import print_arena, summarize_arena
    from qipai.sim.rows import parse_rulesets

    if ray_address and _looks_like_ruleset(ray_address):
        fail(_ray_took(ray_address))
    if deals < 1:
        fail(f"--deals must be at least 1, not {deals}")
    if workers is not None and workers < 1:
        fail(f"--workers must be at least 1, not {workers}")
    if chunk is not None and chunk < 1:
        fail(f"--chunk must be at least 1, not {chunk}")
    spec = parse_rulesets([ruleset])[0]
    check_bots(challengers, field)  # BadBot / BadSimulation: one line (the group's invoke)
    installed("pyarrow.parquet", "sim")
    if ray_address is not None:
        from qipai.sim.run import import_ray, ray_target

        import_ray(not ray_target(ray_address))
    k = workers or _cpus()
    console = Console(stderr=True)
    with _progress(console, "deals") if console.is_terminal else contextlib.nullcontext() as progress:
        if progress is not None:
            task = progress.add_task(f"{len(challengers)} challenger"
                                     f"{'s' if len(challengers) != 1 else ''} (deals)",
                                     total=deals)
            advance = lambda n: progress.advance(task, n)  # noqa: E731
        else:
            advance = _log_progress(console, deals, unit="deals")
        try:
            outcome = run(spec, challengers, field, deals, seed=seed, workers=k, out=out,
                          ray_address=ray_address, chunk=chunk, on_chunk=advance)
            stop.disarm()
        except BadSimulation as exc:
            fail(str(exc))
    rate = f"{outcome.hands_per_s:.1f} deals/s, {outcome.backend}"
    if outcome.interrupted and not outcome.written:
        _not_written(out, "while writing the file" if outcome.played
                     else "before any chunk finished")
    if outcome.written:
        print_arena(Console(highlight=False), summarize_arena(out))
    if outcome.interrupted:
        click.echo(f"interrupted: kept the {outcome.written} of {deals} deals in finished "
                   f"chunks in {out} ({rate})")
        sys.exit(130)
    click.echo(f"wrote {out}: {outcome.written} deals × {len(challengers)} challenger"
               f"{'s' if len(challengers) != 1 else ''} × every seat in "
               f"{outcome.seconds:.1f} s, {rate}")
