"""The 大结算's counts of one finished hand (:func:`qipai.host.room.hand_stats`)."""

from __future__ import annotations

from qipai.core.model import Won
from qipai.host.room import hand_stats


def test_dianpao_is_a_discard_won_on_not_a_card_another_turned_up():
    """点炮 (放炮) is the seat whose discard (or added kong) another won on:
    mahjong's ``dianpao`` and ``qianggang``, 字牌's ``fangpao`` — not 字牌's
    ``pinghu``, a win on a card another seat turned up from the stock (its
    ``from_seat`` is that seat, who discarded nothing), nor a 自摸."""
    net = [-3, 6, -3]
    assert hand_stats(3, net, [Won(1, "pinghu", 5, 0)]) == [
        (0, 0, 0, -3), (1, 0, 0, 6), (0, 0, 0, -3)]
    assert hand_stats(3, net, [Won(1, "fangpao", 5, 0)])[0] == (0, 1, 0, -3)
    assert hand_stats(3, net, [Won(1, "zimo", 5, None)])[1] == (1, 0, 1, 6)
    four = [-2, 6, -2, -2]
    assert hand_stats(4, four, [Won(1, "dianpao", 5, 2)])[2] == (0, 1, 0, -2)
    assert hand_stats(4, four, [Won(1, "qianggang", 5, 3)])[3] == (0, 1, 0, -2)
