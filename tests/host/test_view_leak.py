"""No message tells a seat (or the spectator) anything about cards it may not see.

The permutation idea over the wire: two tables are dealt twin deals that
differ only in cards the observer cannot see — the concealed hands of the
other seats, permuted among them (the stock is kept: every card drawn from
it is later discarded face up, or drawn by the observer).  Both tables are
played through the real server with the same actions: the observer decides
from its own messages only (win if it may, else pass a claim, else discard
its highest card), every other seat passes every claim and discards the card
it just drew (the dealer's first discard is one card kept in its hand in
both twins).  Every frame the observer receives over its WebSocket — views,
events, decisions, acks, the hand's end — must then be byte-identical
between the twins, once the table id, the deal commitment and the deadline
clock are blanked.  As a check that the comparison can see a difference at
all, some seat whose hand did change must receive different frames.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import msgspec
import pytest

from hostile import Conn, Server, act, normalise
from qipai.core.model import Action, Deal, Discard, Drew, Pass
from qipai.core.ruleset import load
from qipai.core.table import Table
from qipai.host.client import auto_choice

ACTIONS = msgspec.json.Decoder(list[Action])
SPECTATOR = "spectator"


def twin_deal(rs, seed: int, observer: int | str) -> tuple[Deal, Deal, dict[int, int]]:
    """A deal and its twin for ``observer``, and the dealer's kept first discard."""
    base = Table(rs, seed=seed, ask_all=True).state.deal
    n = len(base.hands)
    hidden = [s for s in range(n) if s != observer]
    d = base.dealer
    first = {d: max(base.hands[d])} if d in hidden else {}
    pool: list[int] = []
    for s in hidden:
        cards = list(base.hands[s])
        if s in first:
            cards.remove(first[s])
        pool += cards
    rng = random.Random(seed)
    hands = [list(h) for h in base.hands]
    for _ in range(20):
        rng.shuffle(pool)
        rest = list(pool)
        for s in hidden:
            k = len(base.hands[s]) - (s in first)
            hands[s] = sorted(rest[:k] + ([first[s]] if s in first else []))
            rest = rest[k:]
        if any(sorted(hands[s]) != sorted(base.hands[s]) for s in hidden):
            break
    twin = Deal(dealer=d, hands=tuple(tuple(h) for h in hands), wall=base.wall,
                shown=base.shown)
    if observer != SPECTATOR:
        assert twin.hands[observer] == base.hands[observer]
    assert twin.wall == base.wall and twin != base
    return base, twin, first


def other_seat_action(table: Table, seat: int, first: dict[int, int]):
    """Pass a claim; else discard the card just drawn; else the kept first discard."""
    legal = table.legal_actions(seat)
    if Pass(seat) in legal:
        return Pass(seat)
    for e in reversed(table.state.events):
        if getattr(e, "seat", None) == seat:
            if type(e) is Drew and Discard(seat, e.card) in legal:
                return Discard(seat, e.card)
            break
    assert Discard(seat, first[seat]) in legal, "the dealer's kept first discard"
    return Discard(seat, first[seat])


def play_twin(server: Server, rs, t: dict, deal: Deal, observer, first) -> dict:
    """Play hand 0 of table ``t`` (dealt ``deal``); every connection's frames."""
    n = rs.manifest.players
    conns = {s: Conn(server, t["id"], t["seats"][str(s)]) for s in range(n)}
    conns[SPECTATOR] = Conn(server, t["id"], t["spectator_token"])
    for c in conns.values():
        c.until("welcome")
    local = Table(rs, deal=deal, ask_all=True)
    while not local.over:
        seat = local.to_decide()[0]
        c = conns[seat]
        d = c.next_decision()
        assert ACTIONS.decode(msgspec.json.encode(d["legal"])) == local.legal_actions(seat)
        if seat == observer:
            action = msgspec.convert(auto_choice(d["legal"]), Action)
        else:
            action = other_seat_action(local, seat, first)
        reply = c.ask(act(d, msgspec.to_builtins(action)))
        assert reply["type"] == "ack", reply
        c.decide = None
        local.apply(action)
    for c in conns.values():
        c.until("hand_ended")
        c.close()
    return {k: normalise(c.raw, t["id"]) for k, c in conns.items()}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["guilin-mahjong", "guangxi-mahjong"])
def test_no_frame_differs_between_twin_deals(db_url, tmp_path, variant):
    rs = load(variant)
    dealer = Table(rs, seed=100, ask_all=True).state.deal.dealer
    # the dealer, a seat after it, the spectator: each with its own pair of twins
    observers = [dealer, (dealer + 1) % rs.manifest.players, SPECTATOR]
    plans, deals = [], []
    for observer in observers:
        base, twin, first = twin_deal(rs, 100, observer)
        plans.append((observer, base, twin, first))
        deals += [base, twin]
    path = tmp_path / "deals.json"
    path.write_bytes(msgspec.json.encode(deals))
    server = Server(db_url, tmp_path, "--seed", "1", "--turn-timeout", "3600", deals=path)
    try:
        tables = [server.create(rs.spec, bots=[]) for _ in deals]   # dealt in this order
        jobs = [(t, deal, observer, first)
                for (observer, base, twin, first), pair in zip(plans, zip(tables[::2], tables[1::2]))
                for t, deal in zip(pair, (base, twin))]
        with ThreadPoolExecutor(len(jobs)) as pool:
            seen = list(pool.map(lambda j: play_twin(server, rs, *j), jobs))
        for i, (observer, base, twin, first) in enumerate(plans):
            a, b = seen[2 * i], seen[2 * i + 1]
            assert len(a[observer]) > 100   # a whole hand's frames
            for k in range(len(a[observer])):
                assert a[observer][k] == b[observer][k], \
                    f"{variant}: observer {observer}: frame {k} differs between twin deals"
            assert a[observer] == b[observer]
            changed = [s for s in range(rs.manifest.players)
                       if s != observer and sorted(base.hands[s]) != sorted(twin.hands[s])]
            assert any(a[s] != b[s] for s in changed), "a changed seat sees its change"
    finally:
        server.stop()
