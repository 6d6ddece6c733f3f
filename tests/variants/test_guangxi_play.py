"""广西麻将 played end to end: CLI, JSON, replay, 500 seeded greedy hands."""

from __future__ import annotations

import json

import pytest

from click.testing import CliRunner

from qipai.bots import play_hand
from qipai.cli import cli
from qipai.core.records import record_of, replay_check
from qipai.core.ruleset import load


def test_play_prints_a_full_hand():
    out = CliRunner().invoke(cli, ["play", "guangxi-mahjong", "--seed", "5"])
    assert out.exit_code == 0, out.output
    assert "广西麻将" in out.output and "settlement" in out.output


def test_play_json_replays(tmp_path):
    out = CliRunner().invoke(cli, ["play", "guangxi-mahjong", "--seed", "9", "--hands", "3",
                                   "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["variant"] == "guangxi-mahjong" and len(doc["hands"]) == 3
    assert all(sum(h["net"]) == 0 for h in doc["hands"])
    f = tmp_path / "rec.json"
    f.write_text(out.output)
    rep = CliRunner().invoke(cli, ["replay", str(f)])
    assert rep.exit_code == 0, rep.output


@pytest.mark.slow
def test_500_seeded_greedy_hands_end_zero_sum_and_replay():
    rs = load("guangxi-mahjong")
    wins = 0
    for seed in range(500):
        t = play_hand(rs, seed=seed, bots="greedy")
        assert t.over, seed
        assert sum(t.result.net) == 0, seed
        assert replay_check(record_of(t)) is None, seed
        wins += t.result.end == "hu"
    assert wins > 250
