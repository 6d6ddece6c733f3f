"""Seeded hands play exactly as they did: the records of every shipped variant are pinned.

``qipai play SPEC --seed S --hands 4 --bots B --json`` is hashed for each
shipped variant with its default options and with one set of options, with
random and with greedy bots, on two seeds, and once with the house-rule
example plugin.  A change that is meant to change no behaviour (a move, a
refactoring, a speed-up) leaves every hash as it is.  A change of a rule
or of a bot changes some on purpose: then say so in the commit and put the
new hashes here (``uv run python tests/test_golden_records.py`` prints them).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
HOUSE = str(ROOT / "docs" / "examples" / "house_rules.py")

PINNED = {
    ("guilin-mahjong", "random", 1): "952ba52f7fc970b6",
    ("guilin-mahjong", "random", 7): "8787c5a4d16acbaf",
    ("guilin-mahjong", "greedy", 1): "20f19c909d673fb9",
    ("guilin-mahjong", "greedy", 7): "b9f394b5624daaec",
    ('guilin-mahjong(hubao=false, zhuipai="off")', "random", 1): "7765bdfc57f7bd0e",
    ('guilin-mahjong(hubao=false, zhuipai="off")', "random", 7): "7437624046d70ccc",
    ('guilin-mahjong(hubao=false, zhuipai="off")', "greedy", 1): "7c64876fca23ece1",
    ('guilin-mahjong(hubao=false, zhuipai="off")', "greedy", 7): "3519605d9a8d6e7a",
    ("guangxi-mahjong", "random", 1): "7cc83d632cbf5c91",
    ("guangxi-mahjong", "random", 7): "ee3211af58e48f8d",
    ("guangxi-mahjong", "greedy", 1): "6937ae3aa1725520",
    ("guangxi-mahjong", "greedy", 7): "b6f80c4cf8943d8a",
    ('guangxi-mahjong(fenghu_count=4, liability="both")', "random", 1): "ab65143fb6b537bf",
    ('guangxi-mahjong(fenghu_count=4, liability="both")', "random", 7): "c05d207da6741c78",
    ('guangxi-mahjong(fenghu_count=4, liability="both")', "greedy", 1): "f7d21d1589d00737",
    ('guangxi-mahjong(fenghu_count=4, liability="both")', "greedy", 7): "0b374ea0723f5b9d",
    ("guilin-zipai", "random", 1): "3c982e8a7d40c94a",
    ("guilin-zipai", "random", 7): "faffdb9bae961408",
    ("guilin-zipai", "greedy", 1): "fbc4d3366ca4c492",
    ("guilin-zipai", "greedy", 7): "a6165e43df649f12",
    ('guilin-zipai(xiahuo=false, hu_scale="15/5")', "random", 1): "a7912f6184e7ea55",
    ('guilin-zipai(xiahuo=false, hu_scale="15/5")', "random", 7): "4a85d48eed4b934d",
    ('guilin-zipai(xiahuo=false, hu_scale="15/5")', "greedy", 1): "837d6ccf7855477e",
    ('guilin-zipai(xiahuo=false, hu_scale="15/5")', "greedy", 7): "1681ff2c5644620d",
}
HOUSE_PINNED = "2bb2ac73df2659c4"


def _played(*args: str) -> str:
    from qipai.cli import cli

    result = CliRunner().invoke(cli, ["play", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return hashlib.sha256(result.output.encode()).hexdigest()[:16]


@pytest.mark.parametrize(("spec", "bots", "seed"), sorted(PINNED))
def test_seeded_hands_play_as_pinned(spec: str, bots: str, seed: int) -> None:
    got = _played(spec, "--seed", str(seed), "--hands", "4", "--bots", bots)
    assert got == PINNED[spec, bots, seed]


def test_the_house_rule_example_plays_as_pinned() -> None:
    got = _played("guangxi-mahjong", "--seed", "5", "--hands", "3", "--plugin", HOUSE)
    assert got == HOUSE_PINNED


if __name__ == "__main__":
    for spec, bots, seed in sorted(PINNED):
        print(f"    ({spec!r}, {bots!r}, {seed}): "
              f"{_played(spec, '--seed', str(seed), '--hands', '4', '--bots', bots)!r},")
    print("HOUSE_PINNED =", repr(_played("guangxi-mahjong", "--seed", "5", "--hands", "3",
                                           "--plugin", HOUSE)), file=sys.stdout)
