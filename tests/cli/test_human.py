"""``qipai play --human SEAT``: a person plays one seat through stdin."""

from __future__ import annotations

import io
import re

import pytest
from click.testing import CliRunner

from qipai.cli import cli
from qipai.core.table import Table


def play(*args: str, input: str):
    return CliRunner().invoke(cli, ["play", *args], input=input, catch_exceptions=False)


@pytest.mark.parametrize("variant, seat", [("guilin-mahjong", 1), ("guangxi-mahjong", 2),
                                           ("guilin-zipai", 0)])
def test_a_whole_hand_through_stdin(variant: str, seat: int) -> None:
    # Always the first action listed (the lowest discard, or a claim before
    # 过): plenty of lines for a whole hand.
    res = play(variant, "--human", str(seat), "--seed", "3", input="1\n" * 400)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "you are seat" in out and "your hand" in out
    assert "  1  " in out and "your choice" in out
    assert "settlement" in out and "net:" in out and "next dealer" in out
    assert out.rstrip().endswith("Goodbye.")
    assert "the input ended" not in out
    assert "Traceback" not in out


def test_hand_is_shown_with_chinese_names() -> None:
    res = play("--human", "0", "--seed", "3", input="1\n" * 400)
    out = res.stdout
    # mahjong tiles appear as notation and Chinese names (一万 …)
    assert any(f"{n}万" in out for n in "一二三四五六七八九")
    assert "discard " in out


def test_bad_choices_are_refused_with_the_reason_and_asked_again() -> None:
    res = play("--human", "1", "--seed", "3", input="x\n0\n99\n" + "1\n" * 400)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "refused: 'x' is not an action: type 1 to " in out
    assert "refused: 0 is not one of the actions" in out
    assert "refused: 99 is not one of the actions" in out
    assert "settlement" in out  # the game went on after the refusals


def test_end_of_input_ends_cleanly() -> None:
    res = play("--human", "1", "--seed", "3", input="1\n")
    assert res.exit_code == 0
    assert "the input ended: the hand is left unfinished" in res.stdout
    assert "Traceback" not in res.output


def test_q_quits() -> None:
    res = play("--human", "1", "--seed", "3", input="q\n")
    assert res.exit_code == 0
    assert "you quit" in res.stdout


def test_the_seat_is_shown_only_its_own_view(monkeypatch) -> None:
    seen: list[int] = []
    real = Table.view

    def view(self, seat, *, events=True):
        if events:  # a display; the bots build their own seats' views without events
            seen.append(seat)
        return real(self, seat, events=events)

    monkeypatch.setattr(Table, "view", view)
    res = play("guilin-zipai", "--human", "2", "--seed", "5", input="1\n" * 400)
    assert res.exit_code == 0, res.output
    assert seen and set(seen) == {2}


@pytest.mark.parametrize("args, words", [
    (["--human", "4"], ["seats 0 to 3"]),
    (["guilin-zipai", "--human", "3"], ["seats 0 to 2"]),
    (["--human", "0", "--json"], ["--json"]),
])
def test_bad_human_options(args: list[str], words: list[str]) -> None:
    res = play(*args, input="")
    assert res.exit_code == 2
    line = res.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line
    for w in words:
        assert w in line


def _first_offer(args: list[str]) -> tuple[str, list[str]]:
    """Play ``args`` and leave at once: the first decision's listing (its
    lines ``  1  discard 2m 二万`` …) and the output."""
    out = play(*args, input="q\n").stdout
    listing = re.findall(r"^  (\d+)  (.*)$", out.split("your choice")[0], re.M)
    assert listing and listing[0][0] == "1", out   # numbered from 1
    return out, [text for _, text in listing]


@pytest.mark.parametrize("variant, which", [("guilin-mahjong", "token"),
                                            ("guilin-mahjong", "chinese"),
                                            ("guilin-zipai", "chinese")])
def test_a_typed_card_discards_it(variant: str, which: str) -> None:
    """The card's notation (``3m``) or Chinese name (``三万``) is taken for
    its discard, as its number is."""
    args = [variant, "--human", "0", "--seed", "4"]
    _, offers = _first_offer(args)
    discard = next(o for o in offers if o.startswith("discard "))
    token, chinese = discard.split()[1:3]
    out = play(*args, input=f"{token if which == 'token' else chinese}\nq\n").stdout
    assert f"you discarded {token} {chinese}" in out, out
    assert "refused" not in out


def test_input_naming_no_action_or_several_gets_a_one_line_hint() -> None:
    res = play("--human", "0", "--seed", "4", input="xyz\n123m\n\n" + "1\n" * 400)
    out = res.stdout
    assert res.exit_code == 0, res.output
    hints = re.findall(r"refused: (.*)", out)   # each after its prompt, on one line
    assert len(hints) == 3, hints
    assert hints[0].startswith("'xyz' is not an action: type 1 to ")
    assert "a card to discard (as " in hints[0] and "discard" in hints[0]
    assert hints[1] == "'123m' is 3 cards: discard one at a time"
    assert re.fullmatch(r"passing is not among the actions now: choose 1 to \d+", hints[2])
    assert "settlement" in out   # the game went on


def test_auto_pass_is_an_option() -> None:
    """By default a claim window where the seat may only pass is passed for
    it; ``--no-auto-pass`` asks it there too (one action: 过), and the hand
    goes as it would (the bots play alike)."""
    args = ["--human", "2", "--seed", "5"]
    asked = play(*args, "--no-auto-pass", input="1\n" * 800)
    passed = play(*args, input="1\n" * 800)
    assert asked.exit_code == passed.exit_code == 0, asked.output + passed.output
    only_pass = re.compile(r"^  1  过 pass[^\n]*\nyour choice \(1–1,", re.M)
    assert only_pass.search(asked.stdout), asked.stdout
    assert not only_pass.search(passed.stdout)
    net = [line for line in passed.stdout.splitlines() if line.startswith("you are seat 2; net")]
    assert net and net == [line for line in asked.stdout.splitlines()
                           if line.startswith("you are seat 2; net")]


def test_auto_pass_goes_with_human() -> None:
    res = play("--no-auto-pass", input="")
    assert res.exit_code == 2 and "go with --human" in res.stderr


def test_ctrl_c_ends_the_session_in_one_line() -> None:
    from rich.console import Console

    from qipai.cli.human import Quit, play_human
    from qipai.core.ruleset import load

    def read(prompt: str) -> str:
        raise KeyboardInterrupt

    with pytest.raises(Quit, match="interrupted"):
        play_human(load("guilin-mahjong"), 0, seed=3, console=Console(file=io.StringIO()),
                   read=read)
