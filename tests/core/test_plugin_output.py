"""Plugin output is checked at the engine boundary, and ``apply`` is
transactional: a bad answer is refused naming the plugin, and leaves the
table as it was.

Each house plugin here answers a hook badly only while ``armed``: the hand
is played with bots up to a turn, the plugin is armed, the next ``apply``
must raise :class:`~qipai.core.errors.PluginError` naming the hook and the
plugin (its pluggy name) and leave the table exactly as it was (snapshot
equal).  Disarmed, the same table then plays on to the very record a table
without the plugin plays from the same seed: nothing of the failed call is
left anywhere.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from qipai.bots import make_bots, run_to_end
from qipai.core import table as table_module
from qipai.core.errors import PluginError, QipaiError
from qipai.core.hookspecs import hookimpl
from qipai.core.model import Discarded, Payment, Settlement
from qipai.core.ruleset import load

VARIANTS = ["guilin-mahjong", "guangxi-mahjong", "guilin-zipai"]
SEED = 11


class House:
    """A house plugin that misbehaves only while ``armed``, and then only
    in the actions after the ``at``-th: a bug that depends on the table's
    state alone, as hooks must (a record replays only then)."""

    armed = False
    at = 0

    def arm(self, table):
        self.armed, self.at = True, len(table.state.actions)

    def on(self, table):
        return self.armed and len(table.state.actions) > self.at


class BadPayment(House):
    def __init__(self, payment=None):
        self.payment = payment

    @hookimpl
    def qipai_instant_payments(self, table, event):
        if self.on(table) and isinstance(event, Discarded):
            return [self.payment]
        return None


class BadNextDealer(House):
    @hookimpl(tryfirst=True)
    def qipai_next_dealer(self, table, end, winners, from_seat):
        return 9 if self.on(table) else None


class NoTurnActions(House):
    @hookimpl(tryfirst=True)
    def qipai_turn_actions(self, table, seat):
        return [] if self.on(table) else None


class RaisingDraw(House):
    @hookimpl(tryfirst=True)
    def qipai_after_draw(self, table, seat, card, tail):
        if self.on(table):
            raise RuntimeError("house rule bug")
        return None


class BadWinCheck(House):
    @hookimpl(tryfirst=True)
    def qipai_win_check(self, claim, how, dealer, from_seat, options):
        return True if self.armed else None  # not a WinEval


class BadSettle(House):
    def __init__(self, settle):
        self.settle = settle

    @hookimpl(tryfirst=True)
    def qipai_settle(self, end, options, bonus_flip):
        if not self.armed:
            return None
        good = self.settle(end=end, options=options, bonus_flip=bonus_flip)
        return Settlement(payments=(Payment(-1, 0, 1, "house"),) + tuple(good.payments),
                          patterns=good.patterns, xing=good.xing, flipped=good.flipped)


def _to_turn(table, bots):
    """Apply bot decisions until a seat holds the turn with no window open
    and at least one discard has been made; False if the hand ended first."""
    st_ = table.state
    while st_.result is None:
        if st_.window is None and len(st_.actions) >= 2:
            return True
        seat = min(st_.pending)
        table.apply(bots[seat].choose(table, seat))
    return False


def _clean_actions(variant, seed):
    rs = load(variant)
    t = rs.table(seed=seed)
    run_to_end(t, make_bots("random", t.n, seed))
    return t.state.actions, t.result


def _fails_then_recovers(variant, plugin, hook, seed=SEED, at_end=False):
    """Arm ``plugin`` at a turn (or for the whole hand), expect the next
    failing apply to raise a PluginError for ``hook``, the table unchanged;
    then disarm and play on: the same record as without the plugin."""
    rs = load(variant, plugins=[plugin])
    t = rs.table(seed=seed)
    bots = make_bots("random", t.n, seed)
    if not at_end:
        assert _to_turn(t, bots)
    plugin.arm(t)
    for _ in range(1000):
        seat = min(t.state.pending)
        action = bots[seat].choose(t, seat)
        before = t.snapshot()
        pending = {s: list(a) for s, a in t.state.pending.items()}
        try:
            t.apply(action)
        except PluginError as exc:
            err = exc
            break
        assert t.state.result is None, "the armed plugin was never asked"
    assert t.snapshot() == before
    assert t.state.pending == pending
    assert err.hook == hook
    assert err.plugin == rs.pm.get_name(plugin)
    assert hook in str(err) and err.plugin in str(err)
    plugin.armed = False
    t.apply(action)
    run_to_end(t, bots)
    actions, result = _clean_actions(variant, seed)
    assert t.state.actions == actions
    assert t.result == result
    return err


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("payment", [
    Payment(-1, 0, 1, "x"),     # payer -1 would charge seat n-1
    Payment(0, 7, 1, "x"),      # no such payee
    Payment(1, 0, -3, "x"),     # a negative amount reverses who pays
    Payment(1, 0, 1.5, "x"),    # a float makes the record undecodable
    Payment(1, 0, True, "x"),   # bool is not an amount
    Payment(True, 0, 1, "x"),   # nor a seat
    Payment(2, 2, 1, "x"),      # paying oneself
    "not a payment",
])
def test_a_bad_instant_payment_is_refused(variant, payment):
    _fails_then_recovers(variant, BadPayment(payment), "qipai_instant_payments")


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_next_dealer_out_of_range_is_refused(variant):
    err = _fails_then_recovers(variant, BadNextDealer(), "qipai_next_dealer", at_end=True)
    assert "next dealer 9" in err.reason


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_turn_actions_is_refused_not_a_deadlock(variant):
    err = _fails_then_recovers(variant, NoTurnActions(), "qipai_turn_actions")
    assert "no legal action" in err.reason


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_hook_raising_mid_apply_leaves_the_table_as_before(variant):
    err = _fails_then_recovers(variant, RaisingDraw(), "qipai_after_draw")
    assert isinstance(err.__cause__, RuntimeError)
    assert "house rule bug" in err.reason


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_win_check_that_is_no_wineval_is_refused(variant):
    """``qipai_win_check`` answering ``True``: a PluginError naming the hook
    and the plugin, not an AttributeError from inside the family's flow."""
    # armed before the deal: its answer cannot depend on the table's state
    # (the hook is given none), so it is bad from the start, as a plugin with
    # this bug would be
    plugin = BadWinCheck()
    plugin.armed = True
    rs = load(variant, plugins=[plugin])
    with pytest.raises(PluginError) as info:
        t = rs.table(seed=SEED)
        run_to_end(t, make_bots("random", t.n, SEED))
    err = info.value
    assert err.hook == "qipai_win_check" and err.plugin == rs.pm.get_name(plugin)
    assert "answered True, not a WinEval or None" in err.reason


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_bad_settlement_payment_is_refused(variant):
    rs = load(variant)
    plugin = BadSettle(rs.hook.qipai_settle)
    seed = next(s for s in range(SEED, SEED + 200) if _clean_actions(variant, s)[1].winners)
    err = _fails_then_recovers(variant, plugin, "qipai_settle", seed=seed, at_end=True)
    assert "payer -1 is not a seat" in err.reason


def test_window_actions_for_a_non_seat_is_a_plugin_error():
    class Stranger(House):
        @hookimpl(tryfirst=True)
        def qipai_window_actions(self, table, window):
            return {7: []} if self.on(table) else None

    _fails_then_recovers("guilin-mahjong", Stranger(), "qipai_window_actions")


_SEATS = st.one_of(st.integers(-3, 6), st.booleans(), st.floats(allow_nan=False))
_AMOUNTS = st.one_of(st.integers(-5, 2**40), st.booleans(), st.floats(allow_nan=False))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payer=_SEATS, payee=_SEATS, amount=_AMOUNTS)
@example(payer=0, payee=1, amount=0)
@example(payer=3, payee=0, amount=2**40)
@example(payer=-1, payee=0, amount=1)
def test_any_instant_payment_is_valid_or_refused_with_the_table_unchanged(payer, payee, amount):
    plugin = BadPayment(Payment(payer, payee, amount, "house"))
    rs = load("guilin-mahjong", plugins=[plugin])
    t = rs.table(seed=SEED)
    bots = make_bots("random", 4, SEED)
    assert _to_turn(t, bots)
    plugin.arm(t)
    seat = min(t.state.pending)
    before = t.snapshot()
    valid = (all(type(s) is int and 0 <= s < 4 for s in (payer, payee)) and payer != payee
             and type(amount) is int and amount >= 0)
    try:
        t.apply(bots[seat].choose(t, seat))
    except QipaiError as exc:
        assert isinstance(exc, PluginError) and not valid
        assert t.snapshot() == before
        return
    assert valid
    assert t.state.instant[-1] == plugin.payment
    assert table_module.Table.restore(rs, t.snapshot()).state == t.state  # still encodes


def test_the_fast_hook_callers_follow_call_monitoring_through_public_api():
    rs = load("guilin-mahjong")
    calls = []
    undo = rs.pm.add_hookcall_monitoring(lambda name, impls, kw: calls.append(name),
                                         lambda outcome, name, impls, kw: None)
    t = rs.table(seed=1)
    run_to_end(t, make_bots("random", 4, 1))
    assert "qipai_turn_actions" in calls and "qipai_deck" in calls
    undo()
    calls.clear()
    t2 = rs.table(seed=1)
    run_to_end(t2, make_bots("random", 4, 1))
    assert calls == []
    assert t2.state.actions == t.state.actions


def test_no_private_internals_of_pluggy_or_random():
    """The engine reads pluggy and ``random`` through their public API only."""
    root = Path(table_module.__file__).resolve().parent.parent
    private = re.compile(r"_randbelow|_inner_hookexec|\._hookexec|_multicall|pluggy\._")
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not private.search(text), f"{path}: {private.search(text).group()}"


def test_seeded_hands_deal_and_play_as_before():
    """Through ``rng.shuffle``/``rng.choice`` the same seeds deal the same
    hands and the random bots choose the same actions (a digest of 15
    seeded hands per variant, pinned)."""
    h = hashlib.sha256()
    for variant in VARIANTS:
        rs = load(variant)
        for seed in range(15):
            t = rs.table(seed=seed)
            run_to_end(t, make_bots("random", t.n, seed))
            h.update(msgspec.json.encode([t.state.deal, t.state.actions]))
    assert h.hexdigest() == DIGEST


# A zipai seat whose 开招 is mandatory is offered no 吃/Pass
# (guilin-zipai §3.1): the random bots choose among those actions only.
DIGEST = "814a752a4d7acb7d59d32854c1fade57c76d765fb9eb2f43e2068e844331d865"


def test_resolved_hooks_are_published_whole_across_threads():
    """A fresh ruleset's hook cache, resolved from 8 threads at once, is one
    object and its callers are the same in every thread."""
    for _ in range(5):
        rs = load("guilin-mahjong")
        barrier = threading.Barrier(8)
        seen = []

        def work():
            barrier.wait()
            hooks = table_module.resolved_hooks(rs)
            seen.append((hooks, hooks.qipai_turn_actions, hooks.qipai_claim_actions,
                         hooks.only("qipai_instant_payments")))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(seen) == 8
        assert all(s[0] is seen[0][0] for s in seen)
        assert all(a is b for s in seen for a, b in zip(s, seen[0]))


def test_a_hook_that_does_not_replay_is_reported_not_hidden():
    """A hook answering from outside the table's state (here: armed from
    the first action on, so playing the earlier actions again fails too)
    cannot be rolled back; the PluginError says so."""
    plugin = RaisingDraw()
    rs = load("guilin-mahjong", plugins=[plugin])
    t = rs.table(seed=SEED)
    bots = make_bots("random", 4, SEED)
    assert _to_turn(t, bots)
    plugin.armed, plugin.at = True, 0
    with pytest.raises(PluginError, match="could not be put back") as info:
        for _ in range(50):
            seat = min(t.state.pending)
            t.apply(bots[seat].choose(t, seat))
    assert info.value.hook == "qipai_after_draw"


def test_a_restored_table_rolls_back_too():
    plugin = RaisingDraw()
    rs = load("guilin-zipai", plugins=[plugin])
    t = rs.table(seed=SEED)
    bots = make_bots("random", t.n, SEED)
    assert _to_turn(t, bots)
    t2 = table_module.Table.restore(rs, t.snapshot())
    plugin.arm(t2)
    for _ in range(50):
        seat = min(t2.state.pending)
        action = bots[seat].choose(t2, seat)
        before = t2.snapshot()
        try:
            t2.apply(action)
        except PluginError as exc:
            assert exc.hook == "qipai_after_draw"
            assert "could not be put back" not in exc.reason
            assert t2.snapshot() == before
            return
    pytest.fail("the armed plugin was never asked")
