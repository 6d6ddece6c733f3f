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

桂林字牌 (3 seats) cannot be twinned so simply: a card turned up from the
stock is swept (扫) or taken by force from a hand that holds its pair, so
which cards a seat hides changes what everyone sees.  Its twins
(:func:`zipai_twins`) are searched instead: cards swapped between the other
seats' hands (never the dealer's 亮张), kept only when the engine itself,
playing both deals with the same policy (the observer as above, the others
passing every claim and discarding their highest card), shows the observer
the same view after every action.  The server must then send it the same
frames too.
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
from qipai.core.views import redact
from qipai.cli.connect import auto_choice

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


def highest_discard(table: Table, seat: int):
    """Pass a claim; else discard the highest card it may (the zipai twins' other seats)."""
    legal = table.legal_actions(seat)
    if Pass(seat) in legal:
        return Pass(seat)
    discards = [a for a in legal if type(a) is Discard]
    return max(discards, key=lambda a: a.card) if discards else legal[0]


def observer_action(table: Table, seat: int):
    """What the observer plays: the terminal client's choice over its legal list."""
    legal = msgspec.to_builtins(list(table.legal_actions(seat)))
    return msgspec.convert(auto_choice(legal), Action)


def local_run(rs, deal: Deal, observer) -> tuple:
    """The engine's own play of ``deal``: every action, and what the observer
    may see after each — a seat's view, for the spectator the events as the
    engine redacts them for nobody's eyes (all that is public), then the result."""
    table = Table(rs, deal=deal, ask_all=True)
    fdk = dict(rs.manifest.face_down_kinds)

    def view() -> bytes:
        if observer == SPECTATOR:
            return msgspec.json.encode(([redact(e, -1, fdk) for e in table.state.events],
                                        table.state.result))
        return msgspec.json.encode(table.view(observer))
    views, actions = [view()], []
    while not table.over:
        seat = table.to_decide()[0]
        a = observer_action(table, seat) if seat == observer else highest_discard(table, seat)
        table.apply(a)
        actions.append(a)
        views.append(view())
    return actions, views


def zipai_twins(rs, observer, seeds=range(100, 200), swaps: int = 3) -> tuple[Deal, Deal]:
    """A deal and a twin differing in cards swapped between the other seats'
    hands, which the engine shows ``observer`` identically (module docstring)."""
    n = rs.manifest.players
    hidden = [s for s in range(n) if s != observer]
    for seed in seeds:
        base = Table(rs, seed=seed, ask_all=True).state.deal
        want = local_run(rs, base, observer)
        rng = random.Random(seed)
        for _ in range(20):
            hands = [list(h) for h in base.hands]
            for _ in range(swaps):
                a, b = rng.sample(hidden, 2)
                i, j = (rng.choice([k for k, c in enumerate(hands[s])
                                    if not (s == base.dealer and c in base.shown)])
                        for s in (a, b))
                hands[a][i], hands[b][j] = hands[b][j], hands[a][i]
            if all(sorted(hands[s]) == sorted(base.hands[s]) for s in hidden):
                continue
            twin = Deal(dealer=base.dealer, hands=tuple(tuple(sorted(h)) for h in hands),
                        wall=base.wall, shown=base.shown)
            if local_run(rs, twin, observer) == want:
                return base, twin
    raise AssertionError(f"no zipai twin for observer {observer}")


def play_twin(server: Server, rs, t: dict, deal: Deal, observer, other) -> dict:
    """Play hand 0 of table ``t`` (dealt ``deal``), ``other(table, seat)``
    playing the seats but the observer; every connection's frames."""
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
            action = other(local, seat)
        reply = c.ask(act(d, msgspec.to_builtins(action)))
        assert reply["type"] == "ack", reply
        c.decide = None
        local.apply(action)
    for c in conns.values():
        c.until("hand_ended")
        c.close()
    return {k: through_hand_end(normalise(c.raw, t["id"])) for k, c in conns.items()}


def through_hand_end(msgs: list[str]) -> list[str]:
    """The messages up to hand 0's ``hand_ended`` (the next hand's
    ``welcome`` may share its frame: it is another deal, not this one's),
    that one without its ``showdown``: the 摊牌 shows every hand once the
    hand is over, as a real table does — it differs between twins by design."""
    for k, m in enumerate(msgs):
        if m.startswith('{"type":"hand_ended"'):
            ended = msgspec.json.decode(m)
            assert "showdown" in ended   # (what is left out is only that)
            del ended["showdown"]
            return msgs[:k] + [msgspec.json.encode(ended).decode()]
    return msgs


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
        jobs = [(t, deal, observer,
                 lambda local, seat, first=first: other_seat_action(local, seat, first))
                for (observer, base, twin, first), pair in zip(plans, zip(tables[::2], tables[1::2]))
                for t, deal in zip(pair, (base, twin))]
        with ThreadPoolExecutor(len(jobs)) as pool:
            seen = list(pool.map(lambda j: play_twin(server, rs, *j), jobs))
        for i, (observer, base, twin, first) in enumerate(plans):
            a, b = seen[2 * i], seen[2 * i + 1]
            assert len(a[observer]) > 100   # a whole hand's messages
            for k in range(len(a[observer])):
                assert a[observer][k] == b[observer][k], \
                    f"{variant}: observer {observer}: message {k} differs between twin deals"
            assert a[observer] == b[observer]
            changed = [s for s in range(rs.manifest.players)
                       if s != observer and sorted(base.hands[s]) != sorted(twin.hands[s])]
            assert any(a[s] != b[s] for s in changed), "a changed seat sees its change"
    finally:
        server.stop()


@pytest.mark.slow
def test_no_frame_differs_between_zipai_twin_deals(db_url, tmp_path):
    rs = load("guilin-zipai")
    n = rs.manifest.players
    dealer = Table(rs, seed=100, ask_all=True).state.deal.dealer
    observers = [dealer, (dealer + 1) % n, SPECTATOR]
    plans = [(observer, *zipai_twins(rs, observer)) for observer in observers]
    deals = [d for _, base, twin in plans for d in (base, twin)]
    path = tmp_path / "deals.json"
    path.write_bytes(msgspec.json.encode(deals))
    server = Server(db_url, tmp_path, "--seed", "1", "--turn-timeout", "3600", deals=path)
    try:
        tables = [server.create(rs.spec, bots=[]) for _ in deals]   # dealt in this order
        jobs = [(t, deal, observer) for (observer, base, twin), pair
                in zip(plans, zip(tables[::2], tables[1::2]))
                for t, deal in zip(pair, (base, twin))]
        with ThreadPoolExecutor(len(jobs)) as pool:
            seen = list(pool.map(lambda j: play_twin(server, rs, *j, other=highest_discard),
                                 jobs))
        for i, (observer, base, twin) in enumerate(plans):
            a, b = seen[2 * i], seen[2 * i + 1]
            # a whole hand's frames (the spectator's: no decide, no ack)
            assert len(a[observer]) > 20 and '"type":"hand_ended"' in a[observer][-1]
            for k in range(len(a[observer])):
                assert a[observer][k] == b[observer][k], \
                    f"guilin-zipai: observer {observer}: frame {k} differs between twin deals"
            assert a[observer] == b[observer]
            changed = [s for s in range(n)
                       if s != observer and sorted(base.hands[s]) != sorted(twin.hands[s])]
            assert changed and any(a[s] != b[s] for s in changed), "a changed seat sees it"
    finally:
        server.stop()
