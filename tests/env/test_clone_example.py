"""docs/examples/clone_and_finetune.py: its parts without torch (the
decisions as arrays, the evaluation in the arena), and the whole script at
tiny sizes when sb3-contrib and torch are installed (slow)."""

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


def test_the_evaluation_is_the_arena_against_greedy(example, tmp_path):
    """The field against itself scores exactly 0 (the same bots on the same
    deals); a weaker challenger loses on the same deals; the file is an
    arena file ``qipai report`` reads."""
    from qipai.sim.report.arena import is_arena_file

    even = example.evaluate("guilin-mahjong", "greedy", 2, 1, tmp_path / "even.parquet")
    assert (even.deals, even.rotations, even.net.value) == (2, 8, 0.0)
    assert is_arena_file(str(tmp_path / "even.parquet"))
    weak = example.evaluate("guilin-mahjong", "random", 3, 1, tmp_path / "weak.parquet")
    assert weak.rotations == 12 and weak.net.value < 0


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
    assert re.search(r"clone: picks greedy's action on [\d.]+% of held-out decisions "
                     r"\(turns ([\d.]+|nan)%, claims ([\d.]+|nan)%", out), out
    assert "fine-tuned: 64 PPO steps" in out
    for name in ("clone", "agent"):
        line = rf"{name} vs greedy: [-+][\d.]+ 子/hand \(95% n/a\) over 1 deals, 4 hands"
        assert re.search(line, out), out
        assert (tmp_path / f"{name}.zip").is_file()
        assert (tmp_path / f"arena-{name}.parquet").is_file()
