"""Generic property checks that hold for every variant.

Random legal play (seeded) on a variant's table must keep these invariants
(CONFORMANCE.md "Running"; the brief's "Invariants"):

* ``conservation`` — at every decision the cards in hands, melds, discards,
  the stock and the card in play are exactly the dealt cards;
* ``zero_sum`` — every hand's net sums to zero;
* ``replay`` — the record replays to identical events and result;
* ``snapshot`` — a snapshot restores a table that snapshots identically and
  plays on to the same end;
* ``views`` — no seat's view holds another's concealed or face-down cards,
  and permuting every card a seat cannot see leaves its view unchanged;
* ``illegal`` — an illegal action raises ``IllegalAction`` and leaves the
  table byte-for-byte unchanged.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec

from qipai.core.errors import IllegalAction
from qipai.core.model import Action, Discard, Hu, Pass, Zimo
from qipai.core.records import record_of, replay_check
from qipai.core.ruleset import Ruleset, load
from qipai.core.table import Table


class PropertyFailure(AssertionError):
    """A generic invariant that does not hold; the message names it."""


def choose(table: Table, seat: int, rng: random.Random) -> Action:
    """A random legal action, taking wins when offered (so hands end in wins too)."""
    legal = table.legal_actions(seat)
    wins = [a for a in legal if isinstance(a, (Hu, Zimo))]
    if wins:
        return wins[0]
    return rng.choice(legal)


def dealt_cards(table: Table) -> Counter:
    d = table.state.deal
    return Counter(c for h in d.hands for c in h) + Counter(d.wall)


def cards_in_play(table: Table) -> Counter:
    st = table.state
    c: Counter = Counter(st.wall)
    for s in st.seats:
        c.update(s.hand)
        c.update(s.discards)
        for m in s.melds:
            c.update(m.cards)
    if st.window is not None:
        c[st.window.card] += 1
    return c


def check_conservation(table: Table) -> None:
    got, want = cards_in_play(table), dealt_cards(table)
    if got != want:
        diff = (got - want) + (want - got)
        raise PropertyFailure(f"cards not conserved: "
                              f"{table.cards.format(diff.elements())} differ from the deal")


def check_views(table: Table, rng: random.Random) -> None:
    from qipai.conformance.runner import view_leak

    for seat in range(table.n):
        leak = view_leak(table, seat)
        if leak:
            raise PropertyFailure(leak)
        before = msgspec.json.encode(table.view(seat))
        other = Table.restore(table.ruleset, table.snapshot())
        hidden = [c for s, st in enumerate(other.seats) if s != seat for c in st.hand]
        hidden += other.state.wall
        rng.shuffle(hidden)
        it = iter(hidden)
        for s, st in enumerate(other.seats):
            if s != seat:
                st.hand = sorted(next(it) for _ in st.hand)
        other.state.wall = [next(it) for _ in other.state.wall]
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
            raise PropertyFailure(f"seed {seed}: hand not over after {max_steps} decisions")
        check_conservation(table)
        if step % 7 == 0:
            check_views(table, rng)
            check_illegal(table, rng)
        if step == snap_at:
            data = table.snapshot()
            twin = Table.restore(rs, data)
            if twin.snapshot() != data:
                raise PropertyFailure(f"seed {seed}: snapshot does not restore exactly")
        seat = table.to_decide()[0]
        action = choose(table, seat, rng)
        table.apply(action)
        if twin is not None:
            twin_actions.append(action)
        step += 1
    if twin is not None:
        for a in twin_actions:
            twin.apply(a)
        if twin.snapshot() != table.snapshot():
            raise PropertyFailure(f"seed {seed}: restored table played on differently")
    return table


def check_zero_sum(table: Table) -> None:
    r = table.result
    if sum(r.net) != 0:
        raise PropertyFailure(f"net {list(r.net)} does not sum to zero")


def check_replay(table: Table) -> None:
    rec = record_of(table)
    for data in (msgspec.json.encode(rec),):
        from qipai.core.records import decode_record

        diff = replay_check(decode_record(data))
        if diff:
            raise PropertyFailure(f"replay differs: {diff}")


PROPERTIES: dict[str, Callable[[Table], None]] = {
    "zero_sum": check_zero_sum,
    "replay": check_replay,
}


def run_properties(variant: str, games: int = 20, seed: int = 0,
                   options: dict[str, Any] | None = None) -> list[Any]:
    """Play ``games`` seeded random hands and check every property; one
    :class:`~qipai.conformance.runner.Outcome` per property."""
    from qipai.conformance.runner import Outcome

    rs = load(variant, options or {})
    failures: dict[str, str] = {}
    names = ["conservation+views+illegal+snapshot", *PROPERTIES]
    for g in range(games):
        s = seed + g
        try:
            table = play_checked(rs, s)
        except PropertyFailure as exc:
            failures.setdefault(names[0], f"seed {s}: {exc}")
            continue
        for name, check in PROPERTIES.items():
            if name in failures:
                continue
            try:
                check(table)
            except PropertyFailure as exc:
                failures[name] = f"seed {s}: {exc}"
    return [Outcome(f"property/{n}", n not in failures, failures.get(n, ""),
                    "CONFORMANCE.md Running; generic invariants") for n in names]
