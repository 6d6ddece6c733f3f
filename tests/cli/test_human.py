"""``qipai play --human SEAT``: a person plays one seat through stdin."""

from __future__ import annotations

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
    assert "refused: 'x' is not a number" in out
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
