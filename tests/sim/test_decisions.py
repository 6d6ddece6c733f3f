"""``qipai simulate --decisions``: every decision of the chosen seats in the
environment's encoding — the same bytes whatever the workers, the rows the
environment itself gives when the hand is replayed in it, the file rules of
``--out``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (extra qipai[sim]) not installed")
np = pytest.importorskip("numpy")
pytest.importorskip("pettingzoo", reason="pettingzoo (extra qipai[env]) not installed")

from qipai.cli import cli  # noqa: E402
from qipai.core.sessions import hand_seed  # noqa: E402
from cliassert import one_line_error  # noqa: E402  (tests/helpers)

SPECS = ["guilin-zipai", "guilin-mahjong"]


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)



@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """3 greedy hands of each of SPECS, every seat recorded, one worker."""
    d = tmp_path_factory.mktemp("dec")
    out, dec = str(d / "r.parquet"), str(d / "d.parquet")
    res = invoke("simulate", *SPECS, "-n", "3", "--seed", "5", "-k", "1", "--out", out,
                 "--decisions", dec)
    assert res.exit_code == 0, res.output
    assert f"wrote {dec}: " in res.stdout
    return out, dec


def test_two_workers_write_the_same_decisions_and_the_results_do_not_change(run, tmp_path):
    out, dec = run
    out2, dec2, plain = (str(tmp_path / f"{x}.parquet") for x in ("r2", "d2", "plain"))
    res = invoke("simulate", *SPECS, "-n", "3", "--seed", "5", "-k", "2", "--chunk", "1",
                 "--out", out2, "--decisions", dec2)
    assert res.exit_code == 0, res.output
    assert open(dec, "rb").read() == open(dec2, "rb").read()
    assert open(out, "rb").read() == open(out2, "rb").read()
    # recording changes no decision: the results are those of a run without it
    assert invoke("simulate", *SPECS, "-n", "3", "--seed", "5", "-k", "1",
                  "--out", plain).exit_code == 0
    assert open(out, "rb").read() == open(plain, "rb").read()


def test_the_file_holds_every_decision_sorted_with_its_metadata(run):
    out, dec = run
    t = pq.read_table(dec)
    meta = json.loads(t.schema.metadata[b"qipai.decisions"])
    assert meta["seats"] is None and meta["rulesets"] == SPECS and meta["seed"] == 5
    assert meta["encoding"]["guilin-mahjong"] == {"observation_shape": [27, 34], "actions": 110}
    assert meta["encoding"]["guilin-zipai"] == {"observation_shape": [24, 20], "actions": 135}
    rows = t.to_pylist()
    keys = [(r["ruleset"], r["hand"], r["step"]) for r in rows]
    assert keys == sorted(keys)
    results = {(r["ruleset"], r["hand"]): r for r in pq.read_table(out).to_pylist()}
    for (spec, hand), r in results.items():
        mine = [d for d in rows if (d["ruleset"], d["hand"]) == (spec, hand)]
        # every seat recorded: one row per decision of the hand, steps 0..steps-1
        assert [d["step"] for d in mine] == list(range(r["steps"]))
        assert all(d["seed"] == str(hand_seed(5, hand)) for d in mine)
        assert all(d["reward"] == r["net"][d["seat"]] for d in mine)
    for d in rows:
        shape = meta["encoding"][d["ruleset"]]
        assert len(d["observation"]) == shape["observation_shape"][0] * \
            shape["observation_shape"][1]
        assert len(d["action_mask"]) == shape["actions"]
        assert d["action_mask"][d["action"]] == 1  # the action taken was legal


@pytest.mark.parametrize("spec", SPECS)
def test_rows_are_the_environments_observations_of_the_hand_replayed(run, spec):
    """Each hand dealt again in the AEC environment (hand_seed, dealer) and
    played with the recorded actions: at every step the selected agent, its
    observation and its mask are the row's, and its final reward the row's."""
    import qipai.env

    _, dec = run
    rows = [d for d in pq.read_table(dec).to_pylist() if d["ruleset"] == spec]
    env = qipai.env.make(spec)
    n = len(env.possible_agents)
    for hand in sorted({d["hand"] for d in rows}):
        mine = [d for d in rows if d["hand"] == hand]
        env.reset(options={"hand_seed": int(mine[0]["seed"]), "dealer": hand % n})
        for d in mine:
            agent = env.agent_selection
            assert agent == f"seat_{d['seat']}"
            obs = env.observe(agent)
            assert obs["observation"].ravel().tolist() == d["observation"]
            assert obs["action_mask"].tolist() == d["action_mask"]
            env.step(d["action"])
        assert env.table.result is not None
        assert env.rewards[f"seat_{mine[0]['seat']}"] == mine[0]["reward"]


def test_decision_seats_records_only_those_seats(run, tmp_path):
    _, everything = run
    out, dec = str(tmp_path / "r.parquet"), str(tmp_path / "d.parquet")
    res = invoke("simulate", *SPECS, "-n", "3", "--seed", "5", "-k", "1", "--out", out,
                 "--decisions", dec, "--decision-seats", "1,2")
    assert res.exit_code == 0, res.output
    t = pq.read_table(dec)
    assert json.loads(t.schema.metadata[b"qipai.decisions"])["seats"] == [1, 2]
    all_rows = [d for d in pq.read_table(everything).to_pylist() if d["seat"] in (1, 2)]
    assert t.to_pylist() == all_rows


def test_a_decisions_path_that_is_not_an_earlier_decisions_file_is_refused(run, tmp_path):
    out, dec = run
    notes = tmp_path / "notes.md"
    notes.write_text("mine\n")
    new_out = str(tmp_path / "r.parquet")
    before = open(out, "rb").read()
    # a results file, a text file, the --out file itself: refused, nothing written
    for path, words in ((out, ("will not replace", "not a decisions file of qipai simulate")),
                        (str(notes), ("will not replace", "not a Parquet file")),
                        (new_out, ("is the results file",))):
        one_line_error(invoke("simulate", "guilin-mahjong", "-n", "1", "--out", new_out,
                              "--decisions", path), *words)
    assert open(out, "rb").read() == before and notes.read_text() == "mine\n"
    assert not (tmp_path / "r.parquet").exists()
    one_line_error(invoke("simulate", "guilin-zipai", "-n", "1", "--out", new_out,
                          "--decisions", str(tmp_path / "d.parquet"), "--decision-seats", "3"),
                   "decision seat 3", "0..2")
    one_line_error(invoke("simulate", "guilin-zipai", "-n", "1", "--out", new_out,
                          "--decision-seats", "0"), "needs --decisions")
    # an earlier decisions file is replaced
    again = tmp_path / "again.parquet"
    again.write_bytes(open(dec, "rb").read())
    res = invoke("simulate", "guilin-mahjong", "-n", "1", "--out", new_out,
                 "--decisions", str(again))
    assert res.exit_code == 0, res.output
    assert json.loads(pq.read_schema(again).metadata[b"qipai.decisions"])["hands"] == 1
    assert not list(tmp_path.glob("*.part"))
