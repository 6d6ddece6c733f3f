"""``qipai report`` across variants: a way of winning or pattern only one
ruleset has is 0 % of the other's hands won or wins within one variant, or
across variants of one family when the other could have it (a way of
winning, or a pattern its variant names); else no figure of the other
(``—``, no difference); a line says when the rulesets are of different
variants.

The files are written here row by row, so every expected figure is worked
out by hand from the rows (the comments give the arithmetic; z = 1.96)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (extra qipai[sim]) not installed")
pa = pytest.importorskip("pyarrow")

from qipai.cli import cli  # noqa: E402
from qipai.core.ruleset import load  # noqa: E402


def _row(ruleset: str, variant: str, hand: int, seats: int, how: str | None = None,
         patterns: list[str] | None = None, amount: int = 0, xing: int | None = None) -> dict:
    """Hand ``hand``: 荒庄 when ``how`` is None, else won by seat hand % seats
    (with ``xing`` 醒), ``amount`` 子 paid by the next seat (so ``amount`` 子
    moved)."""
    net = [0] * seats
    winners, settlement = [], []
    if how is not None:
        w = hand % seats
        net[w], net[(w + 1) % seats] = amount, -amount
        winners = [w]
        settlement = [{"payer": (w + 1) % seats, "payee": w, "amount": amount, "reason": "hu"}]
    return {"ruleset": ruleset, "variant": variant, "hand": hand, "seed": str(1000 + hand),
            "dealer": hand % seats, "end": "huangzhuang" if how is None else "hu",
            "winners": winners, "how": how,
            "from_seat": (hand + 1) % seats if how not in (None, "zimo") else None,
            "patterns": [patterns or []] if how else [], "hu": [None] * len(winners),
            "xing": [xing] * len(winners), "net": net, "instant": [],
            "settlement": settlement, "steps": 10}


def _write(path, rows: list[dict]) -> str:
    from qipai.sim.rows import FORMAT, schema

    rulesets = list(dict.fromkeys(r["ruleset"] for r in rows))
    meta = {"format": FORMAT, "rulesets": rulesets, "bots": "greedy", "seed": 0, "hands": 10}
    table = pa.Table.from_pylist(rows, schema=schema()).replace_schema_metadata(
        {"qipai.simulate": json.dumps(meta)})
    pq.write_table(table, path)
    return str(path)


def _guilin(ruleset: str = "guilin-mahjong") -> list[dict]:
    """10 hands: 0–7 won (0, 1 自摸, 2–7 点炮; hand 0 七对, the others 平胡;
    2 子 and 2 醒 each, hand 0 4 醒), 8 and 9 荒庄."""
    return [_row(ruleset, "guilin-mahjong", i, 4,
                 how=None if i >= 8 else "zimo" if i < 2 else "dianpao",
                 patterns=["qidui"] if i == 0 else ["pinghu"], amount=2, xing=4 if i == 0 else 2)
            for i in range(10)]


def _report(path: str, *args: str, width: int = 200) -> str:
    res = CliRunner().invoke(cli, ["report", path, *args], catch_exceptions=False,
                             env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res.output
    return res.stdout


def _notes(out: str) -> list[str]:
    """The note lines under the heading (each joined again where the
    terminal wrapped it)."""
    lines = out.splitlines()
    end = next(i for i, ln in enumerate(lines) if ln.startswith("per ruleset"))
    notes: list[str] = []
    for ln in lines[1:end]:
        if ln.startswith("note:"):
            notes.append(ln.rstrip())
        else:
            notes[-1] += " " + ln.strip()
    return notes


def _cells(path: str) -> dict[str, list[str]]:
    """Figure label → its cells (each ruleset, then the differences)."""
    from qipai.sim.report import summarize, table_rows

    _, body = table_rows(summarize(path))
    return {row[0]: row[1:] for row in body}


QIDUI = "pattern 七对 qidui (of wins)"
QIXIAODUI = "pattern 七小对 qixiaodui (of wins)"
QIANGGANG = "win by 抢杠 qianggang (of hands won)"
HUANGZHUANG = "荒庄 huangzhuang (of hands)"
MOVED = "子 moved per hand (mean)"


def test_within_one_variant_a_pattern_one_ruleset_lacks_is_0_percent(tmp_path):
    """guilin-mahjong: 七对 in 1 of 8 wins; (hubao=False): hands 0–8 won, all
    平胡, hand 2 by 抢杠 — 七对 0 of 9 wins there, 抢杠 0 of 8 hands won in
    the first.  Shown 0.0 % with the Wilson interval, and differenced."""
    second = "guilin-mahjong(hubao=False)"
    rows = _guilin() + [
        _row(second, "guilin-mahjong", i, 4,
             how=None if i == 9 else "zimo" if i < 2 else "qianggang" if i == 2 else "dianpao",
             patterns=["pinghu"], amount=3) for i in range(10)]
    path = _write(tmp_path / "same.parquet", rows)
    cells = _cells(path)
    # 1/8: centre (1/8 + z²/16)/(1 + z²/8) = 0.2467, half 0.2242 → [2.2, 47.1];
    # 0/9: [0, z²/(9 + z²)] = [0, 29.9]; difference 0 − 1/8, Newcombe:
    # −0.125 − √(0 + (0.4709 − 0.125)²) = −0.4709; −0.125 + √(0.2991² + (0.125 − 0.0224)²) = +0.1912
    assert cells[QIDUI] == ["12.5 % [2.2, 47.1]", "0.0 % [0.0, 29.9]",
                            "-12.5 pp [-47.1, +19.1]"]
    # 0/8: [0, z²/(8 + z²)] = [0, 32.4]; 1/9: [2.0, 43.5]; difference 1/9 − 0:
    # 0.1111 − √((0.1111 − 0.0199)² + 0.3244²) = −0.2259; 0.1111 + √(0.3239² + 0) = 0.4350
    assert cells[QIANGGANG] == ["0.0 % [0.0, 32.4]", "11.1 % [2.0, 43.5]",
                                "+11.1 pp [-22.6, +43.5]"]
    out = _report(path)
    assert "note:" not in out and _notes(out) == []  # one variant: nothing to say
    assert "0.0 % [0.0, 29.9]" in next(ln for ln in out.splitlines() if "qidui" in ln)


def _guangxi() -> list[dict]:
    """10 hands of guangxi-mahjong, the same seeds: 0–8 won (0, 1 自摸, 2–8
    点炮; hand 0 七小对, the others 平胡; 3 子 each), 9 荒庄."""
    return [_row("guangxi-mahjong", "guangxi-mahjong", i, 4,
                 how=None if i == 9 else "zimo" if i < 2 else "dianpao",
                 patterns=["qixiaodui"] if i == 0 else ["pinghu"], amount=3) for i in range(10)]


def test_across_variants_a_pattern_of_one_variant_gets_no_difference(tmp_path):
    path = _write(tmp_path / "gx.parquet", _guilin() + _guangxi())
    cells = _cells(path)
    # each variant's own pattern: no figure of the other, no difference
    # (a difference against a "0" the other variant cannot show is meaningless)
    assert cells[QIDUI] == ["12.5 % [2.2, 47.1]", "—", "—"]
    assert cells[QIXIAODUI] == ["—", "11.1 % [2.0, 43.5]", "—"]
    assert cells["醒 xing of a win (mean)"][1:] == ["—", "—"]  # 广西 has no 醒
    # what both mahjong variants have is compared: 平胡 8/9 − 7/8, 自摸 2/9 − 2/8
    assert cells["pattern 平胡 pinghu (of wins)"][2].startswith("+1.4 pp [")
    assert cells["win by 自摸 zimo (of hands won)"][2].startswith("-2.8 pp [")
    # the figures every game has keep their difference, paired (same hands,
    # seeds and seats).  荒庄 2/10 and 1/10, both in hand 9, hand 8 in the
    # first alone: Newcombe's paired interval, φ = (1·8 − 0·1 − 10/2)/√(2·8·1·9) = 0.25,
    # −0.1 − √(0.0821² − 2φ·0.0821·0.3098 + 0.3098²) = −0.400,
    # −0.1 + √(0.3041² − 2φ·0.3041·0.1433 + 0.1433²) = +0.202
    assert cells[HUANGZHUANG][2] == "-10.0 pp [-40.0, +20.2]"
    # 子 moved: 3 − 2 in hands 0–7, 3 − 0 in hand 8, 0 in hand 9: mean 1.1,
    # s = √((8·0.01 + 1.9² + 1.1²)/9) = 0.7379, ± 1.96 · s/√10 = 0.457
    assert cells[MOVED][2] == "+1.10 [+0.64, +1.56]"
    out = _report(path)
    notes = _notes(out)
    assert notes == [("note: guangxi-mahjong is another variant than guilin-mahjong: each has "
                      "its own patterns, and a difference is given only for those both can "
                      "score (— : no such figure)")], out
    narrow = _report(path, width=80)  # wrapped at spaces to the terminal, whole
    assert _notes(narrow) == notes
    assert max(cell_len(ln) for ln in narrow.splitlines()) <= 80
    page = tmp_path / "gx.html"
    _report(path, "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert "another variant than guilin-mahjong" in html
    assert "<td>12.5 % [2.2, 47.1]</td><td>—</td><td>—</td>" in html
    md = _report(path, "--markdown")
    assert md.startswith("note: guangxi-mahjong is another variant") and \
        f"| {QIDUI} | 12.5 % [2.2, 47.1] | — | — |" in md


def test_across_variants_what_the_other_could_have_but_never_showed_is_0_percent(tmp_path):
    """桂林 shows 清一色 qingyise (hand 1) and a 抢杠 win (hand 2); 广西 shows
    neither, but names 清一色 among its patterns and wins by the family's
    ways: 0 of its 9 wins and 9 hands won, differenced (not ``—``: 广西
    can score them).  七对 stays 桂林's own (广西 names no
    ``qidui``: its seven pairs is 七小对 ``qixiaodui``)."""
    rows = _guilin()
    rows[1] = _row("guilin-mahjong", "guilin-mahjong", 1, 4, how="zimo",
                   patterns=["qingyise"], amount=2, xing=2)
    rows[2] = _row("guilin-mahjong", "guilin-mahjong", 2, 4, how="qianggang",
                   patterns=["pinghu"], amount=2, xing=2)
    assert "qingyise" in load("guangxi-mahjong").manifest.names
    assert "qidui" not in load("guangxi-mahjong").manifest.names
    path = _write(tmp_path / "gx0.parquet", rows + _guangxi())
    cells = _cells(path)
    # 1/8 (Wilson [2.2, 47.1]) and 0/9 ([0, 29.9]): −12.5 pp [−47.1, +19.1],
    # as worked out in the test within one variant above
    assert cells["pattern 清一色 qingyise (of wins)"] == [
        "12.5 % [2.2, 47.1]", "0.0 % [0.0, 29.9]", "-12.5 pp [-47.1, +19.1]"]
    assert cells[QIANGGANG] == ["12.5 % [2.2, 47.1]", "0.0 % [0.0, 29.9]",
                                "-12.5 pp [-47.1, +19.1]"]
    assert cells[QIDUI] == ["12.5 % [2.2, 47.1]", "—", "—"]
    assert cells[QIXIAODUI] == ["—", "11.1 % [2.0, 43.5]", "—"]


def test_across_families_no_way_of_winning_or_pattern_is_compared(tmp_path):
    """guilin-zipai (3 seats): 平胡 is its way of winning on another's turned
    card, not mahjong's plain hand: no difference even for an id both have;
    荒庄 and 子 moved are compared, as independent samples (other seats)."""
    zipai = [_row("guilin-zipai", "guilin-zipai", i, 3,
                  how=None if i == 9 else "zimo" if i < 2 else "pinghu",
                  patterns=["pinghu"], amount=3, xing=1) for i in range(10)]
    path = _write(tmp_path / "gz.parquet", _guilin() + zipai)
    cells = _cells(path)
    # one id, two things: a row per game, the game after the label
    assert cells["pattern 平胡 pinghu (of wins; mahjong)"] == ["87.5 % [52.9, 97.8]", "—", "—"]
    assert cells["pattern 平胡 pinghu (of wins; zipai)"] == ["—", "100.0 % [70.1, 100.0]", "—"]
    assert cells["win by 自摸 zimo (of hands won; mahjong)"] == ["25.0 % [7.1, 59.1]", "—", "—"]
    assert cells["win by 自摸 zimo (of hands won; zipai)"] == ["—", "22.2 % [6.3, 54.7]", "—"]
    assert cells["win by 点炮 dianpao (of hands won; mahjong)"][1:] == ["—", "—"]
    assert cells["seat 3 wins (of hands)"][1:] == ["—", "—"]
    # 醒: 18/8 = 2.25 and 1 a win, each game's own count: no difference
    xing = cells["醒 xing of a win (mean)"]
    assert xing[0].startswith("2.25 [") and xing[1] == "1.00 [1.00, 1.00]" and xing[2] == "—"
    # 荒庄 2/10 and 1/10, Newcombe for independent samples:
    # −0.1 − √(0.0821² + 0.3098²) = −0.4205, −0.1 + √(0.3041² + 0.1433²) = +0.2362
    assert cells[HUANGZHUANG][2] == "-10.0 pp [-42.1, +23.6]"
    # 子 moved 1.6 (s² = 6.4/9) and 2.7 (s² = 8.1/9): 1.1 ± 1.96 · √(0.0711 + 0.09)
    assert cells[MOVED][2] == "+1.10 [+0.31, +1.89]"
    notes = _notes(_report(path))
    assert notes == [("note: guilin-zipai (zipai) is another game than guilin-mahjong "
                      "(mahjong): ways of winning, patterns, 胡数 and 醒 are each game's own and "
                      "get no difference, even under the same name (— : no such figure)")]


def test_guilin_and_guangxi_mahjong_deal_the_same_cards_from_a_seed():
    """Why the report may pair the hands of these two variants: hand i's
    seed deals the same tiles to the same seats in both."""
    from qipai.bots import hand_seed

    a, b = load("guilin-mahjong"), load("guangxi-mahjong")
    assert a.deck() == b.deck()
    for i in range(20):
        s = hand_seed(7, i)
        da = a.table(seed=s, dealer=i % 4).state.deal
        assert da == b.table(seed=s, dealer=i % 4).state.deal
        assert da != a.table(seed=s + 1, dealer=i % 4).state.deal


def test_the_pattern_chart_keeps_each_game_on_its_own_rows(tmp_path, monkeypatch):
    """Across families the chart draws 字牌's 平胡 (a way of winning) on a row
    of its own, not beside mahjong's 平胡 (a plain hand), the family after
    each name; a pattern the table shows ``0.0 %`` is a bar of 0."""
    pytest.importorskip("matplotlib", reason="matplotlib (extra qipai[sim]) not installed")
    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer

    from qipai.sim import report
    from qipai.sim.report import page

    monkeypatch.setattr(page, "CJK_FONTS", ())  # ids alone: the same on every machine
    zipai = [_row("guilin-zipai", "guilin-zipai", i, 3, how="pinghu", patterns=["pinghu"],
                  amount=3, xing=1) for i in range(10)]
    rows = _guilin()
    rows[1] = _row("guilin-mahjong", "guilin-mahjong", 1, 4, how="zimo",
                   patterns=["qingyise"], amount=2, xing=2)
    path = _write(tmp_path / "gz.parquet", rows + _guangxi() + zipai)
    summary = report.summarize(path)
    figs = report.charts(summary, path)
    ax = figs["patterns"].axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    for fig in figs.values():
        plt.close(fig)
    assert ticks == ["pinghu (mahjong)", "qidui (mahjong)", "qingyise (mahjong)",
                     "qixiaodui (mahjong)", "pinghu (zipai)"]
    # bars by ruleset (legend order), as (row, % of wins): 桂林 平胡 6/8, 七对 and
    # 清一色 1/8; 广西 平胡 8/9, 清一色 0/9 (it names it), 七小对 1/9; 字牌 平胡 10/10
    bars = {c.get_label(): sorted((round(p.get_y() + p.get_height() / 2), round(p.get_width(), 1))
                                  for p in c.patches)
            for c in ax.containers if isinstance(c, BarContainer)}
    assert bars == {"guilin-mahjong": [(0, 75.0), (1, 12.5), (2, 12.5)],
                    "guangxi-mahjong": [(0, 88.9), (2, 0.0), (3, 11.1)],
                    "guilin-zipai": [(4, 100.0)]}


def test_the_payments_chart_counts_every_hand(tmp_path):
    """The largest hand (194 子 moved; bins of 194 // 60 + 1 = 4) is in the
    last bar: each ruleset's bars sum to all of its hands (the last edge
    is not 192, which would leave the 194 hand out of the chart)."""
    pytest.importorskip("matplotlib", reason="matplotlib (extra qipai[sim]) not installed")
    import matplotlib.pyplot as plt

    from qipai.sim import report

    rows = [_row("guilin-mahjong", "guilin-mahjong", i, 4, how="dianpao", patterns=["pinghu"],
                 amount=194 if i == 3 else 2) for i in range(10)]
    path = _write(tmp_path / "big.parquet", rows)
    figs = report.charts(report.summarize(path), path)
    ax = figs["moved"].axes[0]
    for fig in figs.values():
        plt.close(fig)
    (poly,) = ax.patches  # a "step" histogram: one outline
    xs, ys = poly.get_xy().T
    # the outline's top: (edge, share) at each bar; the 194 hand's bar is [192, 196)
    tops = {(round(x0), round(x1)): round(y, 6) for x0, x1, y in zip(xs[1::2], xs[2::2], ys[1::2])
            if y > 0}
    assert tops == {(0, 4): 0.9, (192, 196): 0.1}


def test_a_3_seat_game_first_then_two_mahjong_rulesets(tmp_path):
    """字牌 first, then two rulesets of 桂林麻将: one note for the mahjong
    variant, not one a ruleset; the fourth seat's rows sit with the other
    seats', not at the bottom after 醒; every panel of the net chart has its
    legend, the mahjong panels' seat 3 included (not only the first, 3-seat
    panel)."""
    pytest.importorskip("matplotlib", reason="matplotlib (extra qipai[sim]) not installed")
    import matplotlib.pyplot as plt

    from qipai.sim import report

    zipai = [_row("guilin-zipai", "guilin-zipai", i, 3, how="pinghu", patterns=["pinghu"],
                  amount=3, xing=1) for i in range(10)]
    path = _write(tmp_path / "zgg.parquet",
                  zipai + _guilin() + _guilin("guilin-mahjong(hubao=False)"))
    notes = _notes(_report(path))
    assert notes == [("note: guilin-mahjong (mahjong) is another game than guilin-zipai "
                      "(zipai): ways of winning, patterns, 胡数 and 醒 are each game's own and "
                      "get no difference, even under the same name (— : no such figure)")]
    labels = list(_cells(path))
    assert labels.index("seat 3 wins (of hands)") == labels.index("seat 2 wins (of hands)") + 1
    assert labels.index("seat 3 net 子 per hand (mean)") == \
        labels.index("seat 2 net 子 per hand (mean)") + 1
    figs = report.charts(report.summarize(path), path)
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in figs["net"].axes]
    for fig in figs.values():
        plt.close(fig)
    assert legends == [["seat 0", "seat 1", "seat 2"]] + [["seat 0", "seat 1", "seat 2",
                                                           "seat 3"]] * 2


@pytest.mark.parametrize("width", [30, 20])
def test_a_terminal_too_narrow_for_one_column_cuts_nothing(tmp_path, width):
    """Under about 32 columns not even the labels and one column fit: the
    tables are made as wide as they must be (the terminal wraps the lines)
    and every value and interval is printed whole (rich does not cut them:
    the hands cell "10" is not shown as "1", nor "[2.2, 47.1]" without its end)."""
    from qipai.sim.report import summarize, table_rows
    from qipai.sim.report.render import _units

    path = _write(tmp_path / "gx.parquet", _guilin() + _guangxi())
    out = _report(path, width=width)
    _, body = table_rows(summarize(path))
    for row in body:
        for cell in row[1:]:
            for unit in _units(cell):  # a value, its interval, a percentile: never broken
                assert unit in out, (unit, row[0])
    hands = next(ln for ln in out.splitlines() if ln.startswith("│ hands"))
    assert hands.split("│")[2].strip() == "10", hands


def test_a_bound_that_rounds_to_zero_prints_without_a_minus():
    from qipai.sim.report.render import _num

    assert _num(-0.004, 2, "+") == "+0.00" and _num(-0.004, 2, "") == "0.00"
    assert _num(-0.0, 1, "") == "0.0" and _num(-0.006, 2, "") == "-0.01"
    assert _num(0.004, 2, "+") == "+0.00" and _num(1.25, 1, "+") == "+1.2"
