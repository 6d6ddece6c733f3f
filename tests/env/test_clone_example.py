"""docs/examples/clone_and_finetune.py: its parts without torch (the
decisions as arrays, the duplicate evaluation), and the whole script at tiny
sizes when sb3-contrib and torch are installed (slow)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow", reason="pyarrow (extra qipai[sim]) not installed")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "examples" / "clone_and_finetune.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("clone_and_finetune", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_decisions_load_as_the_environments_arrays(example, tmp_path):
    path = example.record("guilin-zipai", 2, 4, tmp_path)
    data = example.load_decisions(path)
    n = len(data["action"])
    assert n > 10
    assert data["observation"].shape == (n, 24, 20) and data["observation"].dtype == np.uint8
    assert data["action_mask"].shape == (n, 135)
    assert (data["action_mask"][np.arange(n), data["action"]] == 1).all()


def test_duplicate_evaluation_of_the_field_against_itself_is_even(example):
    """The same bots on the same deals play the same hands: every rotation's
    net equals the all-field hand's at that seat, so the edge is exactly 0;
    a weaker challenger loses on the same deals."""
    r = example.duplicate("guilin-mahjong", "greedy", "greedy", deals=2, seed=1)
    assert r["hands"] == 8 and r["edge"] == 0.0
    weak = example.duplicate("guilin-mahjong", "random", "greedy", deals=3, seed=1)
    assert weak["hands"] == 12 and weak["edge"] < 0


@pytest.mark.slow
def test_the_example_runs_at_tiny_sizes(tmp_path):
    pytest.importorskip("sb3_contrib", reason="sb3-contrib and torch not installed "
                        "(.ci/run installs them: uv pip install torch sb3-contrib)")
    run = subprocess.run([sys.executable, str(SCRIPT), "--dir", str(tmp_path), "--hands", "8",
                          "--epochs", "1", "--ppo-steps", "64", "--deals", "1"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert re.search(r"decisions: \d+ from 8 greedy hands", out)
    assert re.search(r"clone: picks greedy's action on [\d.]+% of held-out decisions", out)
    assert "fine-tuned: 64 PPO steps" in out
    for name in ("clone", "agent"):
        assert re.search(rf"{name} vs greedy: edge [-+][\d.]+ 子/hand .* 4 hands", out), out
        assert (tmp_path / f"{name}.zip").is_file()
