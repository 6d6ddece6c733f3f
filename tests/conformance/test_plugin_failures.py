"""The conformance plugin fails, naming what broke, on deliberately broken
variants: a settlement that does not sum to zero, a deck with a
fifth copy, a view that leaks a hidden tile, a replay that diverges.

Each broken variant is the tutorial's 推倒胡 (docs/examples/qipai-tuidaohu)
with one bug, written as a tiny plugin module into a ``pytester`` folder and
checked with ``pytest --qipai-plugin MODULE`` — no entry point, no install.
It keeps the name ``tuidaohu`` and is checked against 推倒胡's own case files
(``QIPAI_CASES``): the same cases check any implementation of the rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "qipai-tuidaohu"

#: What every broken variant starts from: 推倒胡's manifest, flow and hooks.
BASE = f'''
from qipai.core.hookspecs import hookimpl
from qipai_tuidaohu import rules
from qipai_tuidaohu.plugin import (
    MANIFEST, QIPAI_BASE_PLUGINS, qipai_bonus_flip, qipai_waits, qipai_win_check,
)

QIPAI_CASES = {str(EXAMPLE / "qipai_tuidaohu" / "cases")!r}
'''

ZERO_SUM = BASE + '''
from qipai.core.model import Payment, Settlement
from qipai_tuidaohu.plugin import qipai_settle as _settle


@hookimpl
def qipai_settle(end, options):
    """BUG: a self-draw's payers are the next three seats, without ``% 4``."""
    if end.how != "zimo":
        return _settle(end, options)
    w = end.winners[0]
    ids = rules.patterns(w, end.how, end.dealer, end.from_seat, options)
    amount = rules.value(ids, options)
    return Settlement(payments=tuple(Payment(p, w.seat, amount, "zimo")
                                     for p in range(w.seat + 1, w.seat + 4)),
                      patterns={w.seat: ids})
'''

FIFTH_COPY = BASE + '''
from qipai.core.cards import full_deck
from qipai.families.mahjong.tiles import TILES
from qipai_tuidaohu.plugin import qipai_settle


@hookimpl
def qipai_deck(options):
    """BUG: the last 9s is a fifth 1m (still 136 tiles)."""
    deck = full_deck(TILES)
    deck[deck.index(TILES.parse("9s")[0])] = TILES.parse("1m")[0]
    return sorted(deck)
'''

LEAKY_VIEW = f'''
import msgspec
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Melded
from qipai.families.mahjong.flow import MahjongFlow
from qipai_tuidaohu.plugin import (
    MANIFEST, qipai_bonus_flip, qipai_settle, qipai_waits, qipai_win_check,
)

QIPAI_CASES = {str(EXAMPLE / "qipai_tuidaohu" / "cases")!r}


class LeakyFlow(MahjongFlow):
    """BUG: the 暗杠 lies face down, but its event shows it face up."""

    def after_kong(self, table, seat, meld):
        emit = table.emit

        def leaky(event):
            if isinstance(event, Melded) and event.meld.kind == "angang":
                event = Melded(event.seat, msgspec.structs.replace(event.meld, hidden=0))
            emit(event)

        table.emit = leaky
        try:
            super().after_kong(table, seat, meld)
        finally:
            del table.emit


QIPAI_BASE_PLUGINS = [LeakyFlow(MANIFEST, angang_hidden=4)]
'''

DIVERGING_REPLAY = BASE + '''
import itertools
from qipai_tuidaohu.plugin import qipai_settle

_hands = itertools.count()


@hookimpl
def qipai_next_dealer(table, end, winners, from_seat):
    """BUG: the next dealer comes from a counter outside the table (never
    recorded), so playing the record again picks another one."""
    return next(_hands) % 4
'''


def run(pytester: pytest.Pytester, name: str, source: str, *args: str) -> pytest.RunResult:
    pytester.syspathinsert(EXAMPLE)
    pytester.syspathinsert()
    pytester.makepyfile(**{name: source})
    return pytester.runpytest("-p", "no:cacheprovider", "--qipai-plugin", name,
                              "--qipai-games", "5", *args)


def test_the_real_tuidaohu_passes_from_a_plugin_object(pytester):
    result = run(pytester, "good_tuidaohu", BASE + "from qipai_tuidaohu.plugin import qipai_settle\n")
    result.assert_outcomes(passed=30)  # the cases and every property, why and ask_all included


def test_a_settlement_that_does_not_sum_to_zero(pytester):
    result = run(pytester, "broken_zero_sum", ZERO_SUM)
    assert result.ret != 0
    result.stdout.fnmatch_lines([
        "*case settle/zimo-pinghu failed*",
        ("*settlement does not sum to zero over the 4 seats: net [[]0, 0, 3, -1[]]*"
         "payer 4 is not a seat*payer 5 is not a seat*"),
    ])
    result.stdout.fnmatch_lines(["FAILED ::settle/zimo-pinghu*"])
    result.stdout.no_fnmatch_line("FAILED ::settle/discard-pinghu*")


def test_a_deck_with_a_fifth_copy(pytester):
    result = run(pytester, "broken_fifth_copy", FIFTH_COPY)
    assert result.ret != 0
    result.stdout.fnmatch_lines([
        "*property/deck failed: the deck's cards hold 5 copies of 1m; there are only 4*",
    ])
    result.stdout.fnmatch_lines(["*case deck/136-tiles failed*", "*copies: expected 4, got [[]3, 4, 5[]]*"])


def test_a_view_that_leaks_a_hidden_tile(pytester):
    result = run(pytester, "broken_leaky_view", LEAKY_VIEW)
    assert result.ret != 0
    result.stdout.fnmatch_lines([
        "*case view/angang-face-down failed*",
        ("*view of seat 1 leaks the face-down cards of seat 0's angang 5555p in its event "
         "stream*"),
    ])


def test_a_replay_that_diverges(pytester):
    result = run(pytester, "broken_replay", DIVERGING_REPLAY)
    assert result.ret != 0
    result.stdout.fnmatch_lines([
        # replay_check's words: the first differing field, recorded and replayed
        "*property/replay failed: seed *: replay differs: event * differs at next_dealer: "
        "recorded *, replayed *",
    ])


def test_an_unknown_plugin_module_is_a_usage_error(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--qipai-plugin", "no_such_module")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--qipai-plugin no_such_module: cannot load plugin no_such_module*"])


def test_a_plugin_with_a_misspelt_hook_is_a_usage_error_naming_it(pytester):
    """A variant module with a misspelt hook (``qipai_setle``): a usage
    error naming the option, the module and the hook (not pluggy's
    PluginValidationError as an INTERNALERROR traceback)."""
    result = run(pytester, "misspelt", BASE + '''

@hookimpl
def qipai_setle(end, options):
    return None
''')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--qipai-plugin misspelt: cannot use plugin misspelt: "
                                 "unknown hook 'qipai_setle'*"])
    assert "INTERNALERROR" not in result.stderr.str() + result.stdout.str()
