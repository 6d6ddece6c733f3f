"""Property tests of 推倒胡's own rules, with the strategies qipai exports.

Run from this folder: ``pytest`` (these tests) or ``pytest --qipai-variant
tuidaohu`` (these tests plus the conformance suite)."""

from __future__ import annotations

from hypothesis import given, settings

from qipai.conformance import strategies as qst
from qipai.core.model import HandEnd, net_of
from qipai.core.ruleset import load

RS = load("tuidaohu")


# start-property-tests
@settings(deadline=None)  # the first call warms qipai's shape tables
@given(qst.winning_hands(qidui=True))
def test_every_complete_hand_wins(claim):
    assert RS.win_check(claim, "zimo", dealer=0).wins


@settings(deadline=None)  # the first call warms qipai's shape tables
@given(qst.waiting_hands(qidui=True))
def test_the_winning_tile_is_a_wait(claim):
    assert claim.tile in RS.waits(list(claim.hand), claim.melds)


@settings(deadline=None)  # the first call warms qipai's shape tables
@given(qst.winning_hands(qidui=True), qst.seeds())
def test_a_win_by_discard_is_paid_by_the_discarder_alone(claim, seed):
    discarder = (claim.seat + 1 + seed % 3) % 4
    end = HandEnd(dealer=0, how="dianpao", from_seat=discarder, winners=(claim,))
    net = net_of(RS.settle(end).payments, 4)
    stake = net[claim.seat]
    assert net[discarder] == -stake and stake in (1, 2, 4) and sum(net) == 0
# end-property-tests
