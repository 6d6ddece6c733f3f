"""A seeded table checks what ``qipai_deck`` and ``qipai_deal`` answer
(plugin output is input too): a deck of cards of the game with no fifth
copy, a deal of that very deck — each card once, in ``n`` hands for the
dealer it was asked for — that the variant's own ``qipai_check_deal``
accepts.  Anything else is a :class:`PluginError` naming the hook and the
plugin when the table is made, not a wrong hand played on (a deal holding
seven 3m would play to the end and fail at settlement, blamed on
``qipai_settle``).
"""

from __future__ import annotations

import msgspec
import pytest

from qipai.bots import play_hand
from qipai.core.errors import PluginError
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Deal
from qipai.core.ruleset import load


class Deals:
    """A house ``qipai_deal`` in the variant's place: the dealer takes the
    deck's first ``big`` cards, the others ``small`` each in seat order, the
    rest is the wall — then ``edit`` spoils it."""

    def __init__(self, edit, big=14, small=13):
        self.edit, self.big, self.small = edit, big, small

    @hookimpl(tryfirst=True)
    def qipai_deal(self, deck, dealer, options):
        n = 3 if self.big == 21 else 4
        hands, i = [], 0
        for seat in range(n):
            k = self.big if seat == dealer else self.small
            hands.append(tuple(deck[i:i + k]))
            i += k
        return self.edit(Deal(dealer, tuple(hands), tuple(deck[i:])))


class Decks:
    """A house ``qipai_deck``: the standard mahjong deck, spoilt by ``edit``."""

    def __init__(self, edit):
        self.edit = edit

    @hookimpl(tryfirst=True)
    def qipai_deck(self, options):
        from qipai.core.cards import full_deck
        from qipai.families.mahjong.tiles import TILES

        return self.edit(full_deck(TILES))


def _refused(house, hook, why, variant="guilin-mahjong"):
    """Making a seeded table with ``house`` is a PluginError of ``hook``
    matching ``why`` and naming ``house``."""
    rs = load(variant, plugins=[house])
    with pytest.raises(PluginError, match=why) as e:
        rs.table(seed=5)
    assert (e.value.hook, e.value.plugin) == (hook, rs.pm.get_name(house))


def _hands(deal):
    return [list(h) for h in deal.hands]


def _swap_first_cards(deal):
    # seat 0's first tile becomes seat 1's first tile: one kind gains a
    # copy, another loses one; the sizes stay right
    hands = _hands(deal)
    hands[0][0] = hands[1][0]
    return msgspec.structs.replace(deal, hands=tuple(map(tuple, hands)))


def _one_from_the_wall(deal):
    # the same cards, but seat 1 holds a 14th tile taken from the wall
    hands = _hands(deal)
    hands[1].append(deal.wall[0])
    return Deal(deal.dealer, tuple(map(tuple, hands)), tuple(deal.wall[1:]), deal.shown)


def _another_dealer(deal):
    return msgspec.structs.replace(deal, dealer=(deal.dealer + 1) % len(deal.hands))


def _three_hands(deal):
    return msgspec.structs.replace(deal, hands=deal.hands[:3],
                                   wall=tuple(deal.wall) + tuple(deal.hands[3]))


@pytest.mark.parametrize("edit, why", [
    (_swap_first_cards, "not the deck it was given"),
    (_one_from_the_wall, "seat 1 .* is dealt 14 tiles; it must hold 13"),
    (_another_dealer, "dealt for dealer"),
    (_three_hands, "dealt 3 hands for 4 seats"),
    (lambda d: {"hands": d.hands}, "not a Deal"),
    (lambda d: msgspec.structs.replace(d, wall=tuple(float(c) for c in d.wall)),
     "not the deck it was given"),
])
def test_a_bad_deal_is_a_plugin_error_when_the_table_is_made(edit, why):
    _refused(Deals(edit), "qipai_deal", why)


def test_a_zipai_shown_card_must_be_the_dealers():
    def shown_elsewhere(deal):
        other = (deal.dealer + 1) % 3
        card = next(c for c in deal.hands[other] if c not in deal.hands[deal.dealer])
        return msgspec.structs.replace(deal, shown=(card,))

    _refused(Deals(shown_elsewhere, 21, 20), "qipai_deal", "shown", "guilin-zipai")


def test_a_wrapper_that_spoils_the_deal_is_the_one_named():
    class Wrapper:
        @hookimpl(hookwrapper=True)
        def qipai_deal(self, deck, dealer, options):
            outcome = yield
            outcome.force_result(_swap_first_cards(outcome.get_result()))

    _refused(Wrapper(), "qipai_deal", "not the deck")


def test_a_house_deal_that_is_right_plays():
    rs = load("guilin-mahjong", plugins=[Deals(lambda d: d)])
    assert play_hand(rs, seed=5).result is not None


def _fifth_copy(deck):
    deck[deck.index(deck[-1])] = deck[0]
    return deck


@pytest.mark.parametrize("edit, why", [
    (_fifth_copy, "copies|copy"),
    (lambda deck: deck + [999], "999, not a card"),
    (lambda deck: deck[:-1] + ["1m"], "'1m', not a card"),
    (lambda deck: [], "empty deck"),
])
def test_a_bad_deck_is_a_plugin_error_when_the_table_is_made(edit, why):
    _refused(Decks(edit), "qipai_deck", why)


def test_the_check_changes_no_deal_and_a_failed_one_leaves_the_ruleset_as_it_was():
    rs = load("guilin-mahjong")
    before = play_hand(rs, seed=9).snapshot()
    # a deck answer that differs is checked again, not taken from the
    # ruleset's memory of the good one
    rs.pm.register(bad := Decks(_fifth_copy))
    with pytest.raises(PluginError):
        rs.table(seed=9)
    rs.pm.unregister(bad)
    assert play_hand(rs, seed=9).snapshot() == before


def test_only_the_family_flows_own_deal_goes_unchecked():
    # the shipped variants deal through the family flows' marked qipai_deal
    # (slices of the shuffled deck: conserved by construction, and by the
    # conformance property of every hand); an override in a subclass is
    # not marked, so a variant that deals its own way is checked
    from qipai.core.dispatch import resolved_hooks
    from qipai.families.mahjong.flow import MahjongFlow
    from qipai.families.zipai.flow import ZipaiFlow

    for name in ("guilin-mahjong", "guangxi-mahjong", "guilin-zipai"):
        deal = resolved_hooks(load(name)).only("qipai_deal")
        assert getattr(deal, "qipai_conserves_cards", False), name

    class OwnDeal(MahjongFlow):
        def qipai_deal(self, deck, dealer, options):
            return super().qipai_deal(deck, dealer, options)

    assert not getattr(OwnDeal.qipai_deal, "qipai_conserves_cards", False)
    assert ZipaiFlow.qipai_deal.qipai_conserves_cards


# ------------------------------------------------ deals of the wrong types


def _lists(deal):
    return Deal(deal.dealer, tuple(list(h) for h in deal.hands), tuple(deal.wall), deal.shown)


def test_a_deal_of_lists_is_refused():
    # refused, not played: its record would not replay (a list is not the
    # tuple the record decodes)
    _refused(Deals(_lists), "qipai_deal", "not tuples")


def test_a_deck_of_bools_is_refused_after_a_good_deck_was_checked():
    # the ruleset remembers the sorted deck it checked; True == 1 and
    # 1.0 == 1 must not pass as that deck
    rs = load("guilin-mahjong")
    rs.table(seed=1)
    for odd in (True, 1.0):
        def swap(deck, odd=odd):
            deck[deck.index(1)] = odd
            return deck

        rs.pm.register(bad := Decks(swap))
        with pytest.raises(PluginError, match="not a card of this game"):
            rs.table(seed=1)
        rs.pm.unregister(bad)


class Raising:
    @hookimpl(tryfirst=True)
    def qipai_deal(self, deck, dealer, options):
        return 1 // 0


def test_an_exception_in_a_dealing_hook_is_a_plugin_error():
    _refused(Raising(), "qipai_deal", "ZeroDivisionError")
    # a deck too short for the family's deal: the deal's IndexError, named
    # as the family flow's (it is the flow's code that raised)
    rs = load("guilin-mahjong", plugins=[Decks(lambda deck: deck[:40])])
    with pytest.raises(PluginError, match="IndexError") as e:
        rs.table(seed=1)
    assert e.value.hook == "qipai_deal" and "MahjongFlow" in e.value.plugin


@pytest.mark.parametrize("answer", [5, "1m 2m", {"1m": 4}])
def test_a_deck_that_is_no_list_is_a_plugin_error(answer):
    _refused(Decks(lambda deck: answer), "qipai_deck", "not a list of cards")


def test_the_answer_checks_moved_from_checks_are_still_read_there_with_a_warning():
    from qipai.core import answers, checks

    for name in ("conserves_cards", "flip_problem", "MAX_AMOUNT"):
        with pytest.warns(DeprecationWarning, match=f"qipai.core.answers.{name}"):
            assert getattr(checks, name) is getattr(answers, name)
    with pytest.raises(AttributeError):
        checks.no_such_name  # noqa: B018
