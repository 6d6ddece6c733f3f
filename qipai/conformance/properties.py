"""Generic property checks that hold for every variant.

Random legal play (seeded) on a variant's table must keep these invariants
(docs/reference/case-format.md, "Checking case files"; docs/howto/conformance.md):

* ``conservation`` — at every decision and at the end the cards in hands, melds, discards,
  the stock and the card in play are exactly the dealt cards;
* ``zero_sum`` — every hand's net sums to zero;
* ``why`` — every payment carries a breakdown (``Payment.why``) that
  evaluates exactly to its amount;
* ``deck`` — the deck holds no kind more often than the card system's copies;
* ``replay`` — the record replays to identical events and result;
* ``snapshot`` — a snapshot restores a table that snapshots identically and
  plays on to the same end;
* ``views`` — no seat's view holds another's concealed or face-down cards,
  and permuting every card a seat cannot see leaves its view unchanged;
* ``illegal`` — an illegal action raises ``IllegalAction`` and leaves the
  table byte-for-byte unchanged;
* ``ask_all`` — on an ``ask_all`` table (a host's) every claim window asks
  the same seats whatever their cards: every seat but the card's owner, and
  the owner too where the variant's ``Manifest.owner_claims`` lists the
  window's source (a seat taken at once by a compulsory claim counts as
  asked: that claim shows when the window resolves).  Otherwise the count
  of decisions (``seq``) or the window staying open would tell the other
  seats whether a seat could claim.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

import msgspec

from qipai.core.cards import check_copies
from qipai.core.errors import BadCards, IllegalAction, QipaiError
from qipai.core.model import (
    Action, Discard, Drew, Hu, Melded, Pass, Payment, Zimo, format_why, why_total,
)
from qipai.core.records import decode_record, record_of, replay_check
from qipai.core.ruleset import Ruleset
from qipai.core.table import Table
from qipai.conformance.guard import PropertyFailure, settlement_problem
from qipai.conformance.registry import is_local


def choose(table: Table, seat: int, rng: random.Random) -> Action:
    """A random legal action, taking wins when offered (so hands end in wins too)."""
    legal = table.legal_actions(seat)
    wins = [a for a in legal if isinstance(a, (Hu, Zimo))]
    if wins:
        return wins[0]
    return rng.choice(legal)


def dealt_cards(table: Table) -> Counter:
    d = table.deal
    return Counter(c for h in d.hands for c in h) + Counter(d.wall)


def cards_in_play(table: Table) -> Counter:
    c: Counter = Counter(table.wall)
    for s in table.seats:
        c.update(s.hand)
        c.update(s.discards)
        for m in s.melds:
            c.update(m.cards)
    w = table.window
    if w is not None:
        c[w.card] += 1
    return c


def check_conservation(table: Table) -> None:
    got, want = cards_in_play(table), dealt_cards(table)
    if got != want:
        diff = (got - want) + (want - got)
        raise PropertyFailure(f"cards not conserved: "
                              f"{table.cards.format(diff.elements())} differ from the deal")


def hidden_shuffled(table: Table, seat: int, rng: random.Random) -> Table:
    """A copy of ``table`` (restored from its snapshot; ``table`` is not
    touched) in which every card ``seat`` cannot see — the other seats'
    concealed hands and the stock — is dealt anew among those places, each
    hand keeping its size.  What ``seat`` may be shown must not change: the
    view-leak property, and the bots' and environment's no-peek tests."""
    other = Table.restore(table.ruleset, table.snapshot())
    hidden = [c for s, st in enumerate(other.seats) if s != seat for c in st.hand]
    hidden += other.wall
    rng.shuffle(hidden)
    it = iter(hidden)
    for s, st in enumerate(other.seats):
        if s != seat:
            st.hand = sorted(next(it) for _ in st.hand)
    # the copy is made to be changed: its hands and stock are rewritten in place
    other.wall[:] = [next(it) for _ in other.wall]
    return other


def check_views(table: Table, rng: random.Random) -> None:
    for seat in range(table.n):
        leak = view_leak(table, seat)
        if leak:
            raise PropertyFailure(leak)
        before = msgspec.json.encode(table.view(seat))
        other = hidden_shuffled(table, seat, rng)
        if msgspec.json.encode(other.view(seat)) != before:
            raise PropertyFailure(f"seat {seat}'s view changes when cards it cannot see move")


def illegal_candidates(table: Table, rng: random.Random) -> list[Action]:
    out: list[Action] = []
    deciding = set(table.to_decide())
    for seat in range(table.n):
        if seat not in deciding:
            out.append(Pass(seat))
            out.append(Discard(seat, rng.randrange(table.cards.n_kinds)))
    for seat in deciding:
        held = set(table.seats[seat].hand)
        missing = [k for k in range(table.cards.n_kinds) if k not in held]
        if missing:
            out.append(Discard(seat, rng.choice(missing)))
        out.append(Zimo(seat) if Zimo(seat) not in table.legal_actions(seat) else Pass(99))
    return [a for a in out if a not in table.legal_actions(getattr(a, "seat", -1))]


def check_illegal(table: Table, rng: random.Random) -> None:
    before = table.snapshot()
    for action in illegal_candidates(table, rng):
        try:
            table.apply(action)
        except IllegalAction as exc:
            if not str(exc):
                raise PropertyFailure(f"{action!r} refused without a reason") from None
        else:
            raise PropertyFailure(f"illegal action {action!r} was accepted")
        if table.snapshot() != before:
            raise PropertyFailure(f"refusing {action!r} changed the table")


def play_checked(rs: Ruleset, seed: int, max_steps: int = 2000) -> Table:
    """Play one seeded random hand, checking conservation, views and illegal
    actions along the way and a snapshot round-trip at a random step."""
    rng = random.Random(seed)
    table = rs.table(seed=seed)
    snap_at = rng.randrange(1, 60)
    twin: Table | None = None
    twin_actions: list[Action] = []
    step = 0
    while not table.over:
        if step > max_steps:
            raise PropertyFailure(f"hand not over after {max_steps} decisions")
        check_conservation(table)
        if step % 7 == 0:
            check_views(table, rng)
            check_illegal(table, rng)
        if step == snap_at:
            data = table.snapshot()
            twin = Table.restore(rs, data)
            if twin.snapshot() != data:
                raise PropertyFailure("a snapshot does not restore exactly")
        seat = table.to_decide()[0]
        action = choose(table, seat, rng)
        table.apply(action)
        if twin is not None:
            twin_actions.append(action)
        step += 1
    check_conservation(table)  # the final state too: a card won on is with the winner
    if twin is not None:
        for a in twin_actions:
            twin.apply(a)
        if twin.snapshot() != table.snapshot():
            raise PropertyFailure("a table restored from a snapshot played on differently "
                                  f"(snapshot taken at decision {snap_at})", table)
    return table


def check_zero_sum(table: Table) -> None:
    r = table.result
    problem = settlement_problem(r.payments, table.n)
    if problem or sum(r.net) != 0:
        raise PropertyFailure(problem or f"net {list(r.net)} does not sum to zero")


def why_problem(payments: Sequence[Payment]) -> str | None:
    """Why some payment does not explain itself, or None: every payment
    carries a non-empty ``why`` that evaluates (:func:`~qipai.core.model.why_total`)
    exactly to its ``amount``."""
    for p in payments:
        if not p.why:
            return f"{p.payer}->{p.payee} {p.amount} ({p.reason or 'no reason'}) has no why"
        try:
            total = why_total(p.why)
        except (ValueError, TypeError, AttributeError) as exc:
            return f"{p.payer}->{p.payee} {p.amount} ({p.reason}): its why is malformed: {exc}"
        if total != p.amount:
            return (f"{p.payer}->{p.payee} {p.amount} ({p.reason}): its why totals {total}: "
                    f"{format_why(p.why)}")
    return None


def check_why(table: Table) -> None:
    """Every payment of the hand (instant ones included) explains its amount."""
    problem = why_problem(table.result.payments)
    if problem:
        raise PropertyFailure(problem)


def check_deck(rs: Ruleset) -> None:
    """The deck holds each kind at most ``cards.copies`` times, and only kinds
    of the card system."""
    deck = rs.deck()
    bad = [c for c in deck if type(c) is not int or not 0 <= c < rs.cards.n_kinds]
    if bad:
        raise PropertyFailure(f"the deck holds {bad[0]!r}, not a kind of {rs.cards.name} "
                              f"(0..{rs.cards.n_kinds - 1})")
    try:
        check_copies(deck, rs.cards, "the deck's cards")
    except BadCards as exc:
        raise PropertyFailure(f"{exc} (a deck of {len(deck)} cards)") from None


def check_replay(table: Table) -> None:
    rec = decode_record(msgspec.json.encode(record_of(table)))
    try:
        if is_local(rec.variant):  # a plugin object: no registry name to load it by
            diff = replay_check(rec, ruleset=table.ruleset)
        else:
            diff = replay_check(rec, plugins=table.ruleset.plugins)  # the stamps name them
    except QipaiError as exc:  # an action refused on replay, a record that cannot be set up
        diff = str(exc)
    if diff:
        raise PropertyFailure(f"replay differs: {diff}")


def check_ask_all(rs: Ruleset, seed: int) -> None:
    """Play one seeded random hand on an ``ask_all`` table; every window
    observed open must ask (or have taken at once) exactly the seats the
    ``ask_all`` property names."""
    rng = random.Random(f"ask_all:{seed}")
    table = rs.table(seed=seed, ask_all=True)
    sources = frozenset(getattr(rs.manifest, "owner_claims", ()) or ())
    seen = None
    for _ in range(2000):
        if table.over:
            return
        w = table.window
        if w is not None and w is not seen:
            seen = w
            asked = set(table.pending) | set(w.declared)
            want = {s for s in range(table.n) if s != w.owner or w.source in sources}
            if asked != want:
                raise PropertyFailure(
                    f"a {w.source!r} window on seat {w.owner}'s card asks seats "
                    f"{sorted(asked)}, not {sorted(want)}: the others can tell whether a "
                    f"seat could claim (an owner that may claim its own card needs the "
                    f"window's source in Manifest.owner_claims)")
        seat = table.to_decide()[0]
        table.apply(choose(table, seat, rng))
    raise PropertyFailure("hand not over after 2000 decisions")


PROPERTIES: dict[str, Callable[[Table], None]] = {
    "zero_sum": check_zero_sum,
    "why": check_why,
    "replay": check_replay,
}
PLAY = "conservation+views+illegal+snapshot"
#: Every property outcome's name, in the order they are reported.
ASK_ALL = "ask_all"
PROPERTY_NAMES = ("deck", PLAY, *PROPERTIES, ASK_ALL)


def view_leak(table: Table, seat: int) -> str | None:
    """A description of anything in ``seat``'s view it may not see, or None."""
    v = table.view(seat)
    for ev in v.events:
        if isinstance(ev, Drew) and ev.seat != seat and not ev.shown and ev.card is not None:
            return f"view of seat {seat} shows seat {ev.seat}'s drawn card"
        if isinstance(ev, Melded) and ev.seat != seat and ev.meld.hidden and \
                any(c is not None for c in ev.meld.cards[: ev.meld.hidden]):
            return f"view of seat {seat} shows a face-down card of seat {ev.seat}"
    for s, ms in enumerate(v.melds):
        if s == seat:
            continue
        for real, mv in zip(table.seats[s].melds, ms):
            if sum(1 for c in mv.cards if c is None) < real.hidden:
                return f"view of seat {seat} shows a face-down meld card of seat {s}"
    masked = dict(table.ruleset.manifest.face_down_kinds)
    for ev in v.events:  # a wholly face-down meld shows no kind it masks (过扫)
        if isinstance(ev, Melded) and ev.seat != seat and ev.meld.hidden >= len(ev.meld.cards) \
                and ev.meld.kind in masked:
            return (f"view of seat {seat} shows the kind of seat {ev.seat}'s face-down "
                    f"{ev.meld.kind}")
    for s, ms in enumerate(v.melds):
        if s != seat and any(m.kind in masked and all(c is None for c in m.cards) for m in ms):
            return f"view of seat {seat} shows the kind of a face-down meld of seat {s}"
    for i, ev in enumerate(v.events):
        # a meld that lies face down must be face down in its event too
        if not isinstance(ev, Melded) or ev.seat == seat:
            continue
        shown = [c for c in ev.meld.cards if c is not None]
        for real in table.seats[ev.seat].melds:
            if real.hidden and real.kind == ev.meld.kind and \
                    len(shown) > len(real.cards) - real.hidden and \
                    sorted(real.cards) == sorted(shown):
                shown_text = table.ruleset.cards.format(sorted(shown))
                return (f"view of seat {seat} leaks the face-down cards of seat {ev.seat}'s "
                        f"{real.kind} {shown_text} in its event stream "
                        f"(event {i} shows {len(shown)} of its cards face up, the meld "
                        f"{len(real.cards) - real.hidden})")
    enc = msgspec.json.encode(v)
    if b'"wall"' in enc:
        return f"view of seat {seat} holds the wall"
    return None
