"""``qipai play``: bots (and maybe you) play hands of a variant; the log or JSON."""

from __future__ import annotations

from typing import Any

import click

from qipai.cli.common import DEFAULT_VARIANT, EXIT_BOT, bot_names, fail, load_plugin


@click.command()
@click.argument("variant", default=DEFAULT_VARIANT, metavar="[VARIANT]")
@click.option("--seed", type=int, default=None,
              help="Seed of the session (shuffles and bots), for tests and demos; without "
                   "it every hand is dealt from the OS's CSPRNG.")
@click.option("--hands", type=click.IntRange(min=1), default=1, show_default=True,
              help="Hands to play at one table; the dealer passes by the rules.")
@click.option("--bots", default="greedy", show_default=True, metavar="NAME[,NAME...]",
              help="Who plays: one bot for every seat, or a comma list of one per seat "
                   "(with --human, your seat's entry is ignored).  A name is a built-in "
                   "bot (greedy, random), a level (easy, normal, hard), module:Class, or "
                   "a qipai.bots entry point (docs: Bots).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (hands with their records) instead of the log.")
@click.option("--commit", is_flag=True,
              help="With --json: commit each hand's deal under a fresh salt and reveal both "
                   "in its record, as a host does (try qipai verify on it).")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="A house-rule plugin layered over the variant: an importable module "
                   "or a .py file (repeatable).")
@click.option("--human", type=int, default=None, metavar="SEAT",
              help="Play seat SEAT yourself in the terminal; bots play the others.")
@click.option("--auto-pass/--no-auto-pass", default=None,
              help="With --human: play a decision with one legal answer (a claim window "
                   "where you may only pass, a forced move) without asking, as qipai "
                   "connect does (default: on).")
def play(variant: str, seed: int | None, hands: int, bots: str, as_json: bool,
         commit: bool, plugins: tuple[str, ...], human: int | None,
         auto_pass: bool | None) -> None:
    """Let bots play HANDS hands of VARIANT (default guilin-mahjong).

    VARIANT may carry options: 'guilin-mahjong(hubao=false, max_flips=1)'.
    With --human SEAT you play that seat (see qipai.cli.human).
    """
    from qipai.bots import BotFault
    from qipai.core.ruleset import load

    if commit and not as_json:
        fail("--commit needs --json (the committed records are in the JSON)")
    if auto_pass is not None and human is None:
        fail("--auto-pass/--no-auto-pass go with --human (the bots are never asked)")
    rs = load(variant, plugins=[load_plugin(p) for p in plugins])
    who = bot_names(bots, rs.manifest.players)
    try:
        _play(rs, seed, hands, bots, who, as_json, commit, plugins, human, auto_pass)
    except BotFault as exc:  # mid-hand: the bot and its decision, one line (exit status 1)
        fail(str(exc), EXIT_BOT)


def _play(rs: Any, seed: int | None, hands: int, bots: str,
          who: str | list[str], as_json: bool, commit: bool, plugins: tuple[str, ...],
          human: int | None, auto_pass: bool | None) -> None:
    from qipai.bots import play_hands

    if human is not None:
        from qipai.cli.human import play_as_human

        return play_as_human(rs, human, seed=seed, hands=hands, bots=who, as_json=as_json,
                             auto_pass=auto_pass is not False)
    tables = play_hands(rs, hands, seed=seed, bots=who)
    if as_json:
        _print_json(rs, seed, bots, list(tables), commit)
        return
    from rich.console import Console

    from qipai.text.log import print_hand, print_total

    console = Console(highlight=False)
    dealt = f"seed {seed}" if seed is not None else "dealt by the OS's CSPRNG"
    console.print(f"[bold]{rs.manifest.title} {rs.spec}[/bold] · {dealt} · {bots} bots · "
                  f"{hands} hand{'s' if hands != 1 else ''}")
    import shlex

    if seed is not None:
        extra = "".join(f" --plugin {shlex.quote(p)}" for p in plugins)
        console.print(f"reproduce: qipai play {shlex.quote(rs.spec)} --seed {seed} "
                      f"--hands {hands} --bots {shlex.quote(bots)}{extra}", style="dim",
                      soft_wrap=True)
    done = []
    for i, table in enumerate(tables, 1):
        print_hand(console, table, i)
        done.append(table)
    print_total(console, done)


def _print_json(rs: Any, seed: int | None, bots: str, tables: list[Any],
                commit: bool = False) -> None:
    import msgspec

    from qipai.core.fair import committed, new_salt
    from qipai.core.records import plain, record_of

    out_hands = []
    total = [0] * rs.manifest.players
    for t in tables:
        r = t.result
        total = [a + b for a, b in zip(total, r.net)]
        out_hands.append({
            "dealer": t.dealer, "end": r.end, "winners": list(r.winners),
            "net": list(r.net), "record": plain(
                committed(record_of(t), new_salt()) if commit else record_of(t)),
        })
    doc = {"variant": rs.name, "options": rs.options_dict(), "seed": seed, "bots": bots,
           "hands": out_hands, "total": total}
    click.echo(msgspec.json.encode(doc).decode())
