"""``qipai score``: the hand calculator on the command line (:mod:`qipai.calc`).

Heavy modules are imported inside the command so that ``qipai --help``
stays fast.
"""

from __future__ import annotations

import click

HOWS_HELP = ("How it was won: mahjong zimo (default), dianpao, qianggang; "
             "zipai zimo (default), fangpao, pinghu.")


def _relations(texts: tuple[str, ...]) -> dict[str, list[list[int]]]:
    from qipai.core.errors import BadOption

    out: dict[str, list[list[int]]] = {}
    for text in texts:
        name, eq, seats = text.partition("=")
        parts = [p.strip() for p in seats.split(",")]
        if not eq or not name.strip().isidentifier() or len(parts) != 2 \
                or not all(p.isdigit() for p in parts):
            raise BadOption(f"bad --relation {text!r}: write NAME=A,B, e.g. hubao=0,1")
        out.setdefault(name.strip(), []).append([int(p) for p in parts])
    return out


@click.command("score")
@click.argument("variant")
@click.argument("hand")
@click.option("--tile", default=None, metavar="CARD",
              help="The winning card, one of HAND (default: HAND's last card); "
                   "'none' for a win without one (zipai 三笼五坎, a win after 扫).")
@click.option("--how", default="zimo", show_default=True, help=HOWS_HELP)
@click.option("--melds", "melds", multiple=True, metavar="'KIND CARDS [from S]; …'",
              help="Table melds, ';'-separated (repeatable): 'peng 555p; chi 123s from 3', "
                   "'angang E'; one card stands for a 碰/杠/扫.  Claimed melds come from "
                   "the seat before the winner unless 'from S' says.")
@click.option("--seat", type=int, default=0, show_default=True, help="The winner's seat.")
@click.option("--dealer", type=int, default=0, show_default=True, help="The dealer's seat.")
@click.option("--from", "from_seat", type=int, default=None, metavar="S",
              help="Who gave the card (not for zimo; default: the seat before the winner).")
@click.option("--flag", "flags", multiple=True, metavar="FLAG",
              help="A context flag (repeatable): gangshangpao, gangshanghua, haidi, "
                   "haidipao, tianhu, dihu, renhu; zipai also sanlong_wukan, after_sao.")
@click.option("--flip", default=None, metavar="CARDS",
              help="The stock the bonus flip (翻醒/醒) takes from, head first; '' is an "
                   "empty stock.  Without it nothing is flipped.")
@click.option("--relation", "relations", multiple=True, metavar="NAME=A,B",
              help="A standing relation between two seats (repeatable): hubao=0,1, fenghu=2,1.")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="A house-rule plugin layered over the variant: an importable module "
                   "or a .py file (repeatable), as qipai play takes it.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (wins, readings, patterns, hu, payments …).")
def score(variant: str, hand: str, tile: str | None, how: str, melds: tuple[str, ...],
          seat: int, dealer: int, from_seat: int | None, flags: tuple[str, ...],
          flip: str | None, relations: tuple[str, ...], plugins: tuple[str, ...],
          as_json: bool) -> None:
    """Score HAND of VARIANT: does it win, read how, worth what, paid by whom.

    HAND is the concealed hand with the winning card, in the variant's
    notation: '11223344556677m', "'x1 x2 x3 d4 d5 d6 …'".  Every reading
    the win check considers is listed and the one paid marked (D-M4).
    VARIANT may carry options: 'guilin-mahjong(hubao=false)'.
    """
    import msgspec

    from qipai.calc import score as run
    from qipai.core.ruleset import load_plugin

    got = run(variant, hand, tile=tile, how=how, melds=melds, seat=seat, dealer=dealer,
              from_seat=from_seat, flags=flags, flip=flip, relations=_relations(relations),
              plugins=[load_plugin(p) for p in plugins])
    if as_json:
        click.echo(msgspec.json.encode(got).decode())
        return
    from rich.console import Console

    from qipai.text.score import print_score

    print_score(Console(highlight=False), got)
