"""Checking one case against a variant: every check kind of the case format.

The format is docs/reference/case-format.md (:mod:`qipai.conformance.casespec`).
Each check kind has a checker in :data:`CHECKERS` (``given`` and ``expect``
against the variant's ruleset, raising :class:`Mismatch`), through the
variant's public API only; :func:`run_case` checks one case and returns an
:class:`Outcome`, and :func:`cards_refused` tells a case the variant refuses
from one that merely fails.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from qipai.core.errors import BadCards, BadNotation, IllegalAction, QipaiError
from qipai.core.model import (
    Angang, Chi, Deal, Discard, Drew, HandEnd, Hu, Jiagang, Meld, Melded, Minggang, Pass, Peng,
    WinClaim, Won, Zimo, net_of,
)
from qipai.core.ruleset import Ruleset
from qipai.core.table import Table
from qipai.conformance.cases import Case
from qipai.conformance.guard import PropertyFailure, settlement_problem
from qipai.conformance.properties import view_leak
from qipai.conformance.registry import ruleset_for

KONG_KINDS = ("minggang", "jiagang", "angang")
# kong fees, and their refunds (reason "<kind>_refund", e.g. 广西 暗杠 fees at 荒庄)
KONG_FEE_REASONS = KONG_KINDS + tuple(f"{k}_refund" for k in KONG_KINDS)


class Outcome(msgspec.Struct, frozen=True):
    """The result of one check: ``passed``, and on failure what differed."""

    id: str
    passed: bool
    message: str = ""
    source: str = ""


class Mismatch(Exception):
    """An expectation that does not hold (key, expected, actual)."""


# ------------------------------------------------------------------ parsing helpers


def cards(rs: Ruleset, text: Any) -> list[int]:
    if text is None:
        return []
    return rs.parse(text)


def meld(rs: Ruleset, m: dict[str, Any]) -> Meld:
    """A meld from ``{kind, tiles, from}``; a kong given as one tile is four."""
    kind = m["kind"]
    tiles = cards(rs, m.get("tiles", m.get("cards")))
    if kind in KONG_KINDS + ("saochuan", "kaizhao") and len(tiles) == 1:
        tiles = tiles * 4
    elif kind in ("peng", "sao", "guosao") and len(tiles) == 1:
        tiles = tiles * 3
    src = m.get("from")
    hidden = 0
    return Meld(kind=kind, cards=tuple(tiles), from_seat=src,
                claimed=tiles[0] if src is not None and kind != "chi" else None, hidden=hidden)


def melds(rs: Ruleset, ms: Iterable[dict[str, Any]] | None) -> tuple[Meld, ...]:
    return tuple(meld(rs, m) for m in (ms or ()))


def win_claim(rs: Ruleset, g: dict[str, Any], top: dict[str, Any] | None = None) -> WinClaim:
    top = top or {}
    tile = g.get("tile")
    chain = g.get("kong_chain", top.get("kong_chain"))
    return WinClaim(
        seat=g.get("seat", top.get("seat", 0)),
        hand=tuple(cards(rs, g.get("hand"))),
        melds=melds(rs, g.get("melds")),
        tile=cards(rs, tile)[0] if tile else None,
        flags=tuple(g.get("flags", ())),
        kong_chain=melds(rs, chain),
    )


def expect_eq(key: str, expected: Any, actual: Any) -> None:
    if expected != actual:
        raise Mismatch(f"{key}: expected {expected!r}, got {actual!r}")


def kinds_text(rs: Ruleset, kinds: Iterable[int]) -> str:
    return rs.cards.format(sorted(kinds))


def multiset(rs: Ruleset, text: Any) -> Counter:
    return Counter(cards(rs, text))


# ------------------------------------------------------------------ checks


def check_deck(rs: Ruleset, g: dict, e: dict) -> None:
    deck = rs.deck()
    c = Counter(deck)
    if "size" in e:
        expect_eq("size", e["size"], len(deck))
    if "kinds" in e:
        expect_eq("kinds", e["kinds"], len(c))
    if "copies" in e:
        expect_eq("copies", e["copies"], sorted(set(c.values())) if len(set(c.values())) > 1
                  else next(iter(c.values())))


def check_deal(rs: Ruleset, g: dict, e: dict) -> None:
    dealer = g.get("dealer", 0)
    if "deck" in g:
        deck = cards(rs, g["deck"])
        expect_eq("deck size", len(rs.deck()), len(deck))
        if Counter(deck) != Counter(rs.deck()):
            raise Mismatch("given deck is not a full deck of this variant")
    else:
        import random
        deck = rs.deck()
        random.Random(0).shuffle(deck)
    deal = rs.hook.qipai_deal(deck=list(deck), dealer=dealer, options=rs.options)
    if "hand_sizes" in e:
        expect_eq("hand_sizes", list(e["hand_sizes"]), [len(h) for h in deal.hands])
    if "stock" in e:
        expect_eq("stock", e["stock"], len(deal.wall))
    if "hands" in e:
        for seat, (want, got) in enumerate(zip(e["hands"], deal.hands)):
            if multiset(rs, want) != Counter(got):
                raise Mismatch(f"hands[{seat}]: expected {kinds_text(rs, cards(rs, want))}, "
                               f"got {kinds_text(rs, got)}")


def check_win(rs: Ruleset, g: dict, e: dict) -> None:
    claim = win_claim(rs, g)
    ev = rs.win_check(claim, g.get("how", "zimo"), g.get("dealer", 0), g.get("from"))
    if "wins" in e:
        expect_eq("wins", e["wins"], ev.wins)
    if "patterns" in e:
        expect_eq("patterns", sorted(e["patterns"]), sorted(ev.patterns))
    if "hu" in e:
        expect_eq("hu", e["hu"], ev.hu)


def check_waits(rs: Ruleset, g: dict, e: dict) -> None:
    got = rs.waits(cards(rs, g.get("hand")), melds(rs, g.get("melds")))
    if "tiles" in e:
        want = sorted(set(cards(rs, e["tiles"])))
        if want != sorted(got):
            raise Mismatch(f"tiles: expected {kinds_text(rs, want)}, got {kinds_text(rs, got)}")


def check_flip(rs: Ruleset, g: dict, e: dict) -> None:
    tile = g.get("tile")
    f = rs.bonus_flip(cards(rs, g.get("holding")), cards(rs, tile)[0] if tile else None,
                      cards(rs, g.get("stock")))
    if "flipped" in e:
        want = cards(rs, e["flipped"])
        if want != list(f.flipped):
            raise Mismatch(f"flipped: expected {rs.cards.format_seq(want) if hasattr(rs.cards, 'format_seq') else want}, "
                           f"got {[rs.cards.token(c) for c in f.flipped]}")
    if "xing" in e:
        expect_eq("xing", e["xing"], f.xing)


def _relations(g: dict) -> dict[str, list[list[int]]]:
    rel = dict(g.get("relations") or {})
    for key in ("hubao", "fenghu"):
        if key in g:
            rel[key] = [list(x) for x in g[key]]
    return rel


def pairwise_of(payments: Iterable[Any]) -> Counter:
    tot: Counter = Counter()
    for p in payments:
        if p.amount:
            tot[(p.payer, p.payee)] += p.amount
    return +tot


def check_pairwise(want: list[dict], payments: Iterable[Any]) -> None:
    w: Counter = Counter()
    for p in want:
        w[(p["from"], p["to"])] += p["amount"]
    got = pairwise_of(payments)
    if +w != got:
        fmt = lambda c: sorted(f"{a}->{b}: {v}" for (a, b), v in c.items())  # noqa: E731
        raise Mismatch(f"pairwise: expected {fmt(+w)}, got {fmt(got)}")


def check_by_seat(key: str, want: dict, got: dict, normal: Callable[[Any], Any]) -> None:
    for seat, value in want.items():
        actual = got.get(int(seat))
        if normal(value) != (normal(actual) if actual is not None else None):
            raise Mismatch(f"{key}[{seat}]: expected {value!r}, got {actual!r}")


def _sorted(v: Any) -> Any:
    return sorted(v) if isinstance(v, (list, tuple)) else v


def check_settle(rs: Ruleset, g: dict, e: dict) -> None:
    n = rs.manifest.players
    end = HandEnd(dealer=g.get("dealer", 0), how=g.get("how", "zimo"), from_seat=g.get("from"),
                  winners=tuple(win_claim(rs, w, g) for w in g.get("winners", ())),
                  stock=tuple(cards(rs, g.get("stock") or [])), relations=_relations(g),
                  n_players=n)
    s = rs.settle(end)
    problem = settlement_problem(s.payments, n)
    if problem:
        raise Mismatch(problem)
    net = net_of(s.payments, n)
    if "net" in e:
        expect_eq("net", list(e["net"]), net)
    if "pairwise" in e:
        check_pairwise(e["pairwise"], s.payments)
    if "patterns" in e:
        check_by_seat("patterns", e["patterns"], dict(s.patterns), _sorted)
    if "xing" in e:
        check_by_seat("xing", e["xing"], dict(s.xing), lambda x: x)


def action_id(a: Any) -> str:
    return type(a).__struct_config__.tag


def chi_text(rs: Ruleset, a: Chi) -> str:
    text = "chi " + " ".join(rs.cards.token(c) for c in a.cards)
    for grp in a.extra:
        text += " + " + " ".join(rs.cards.token(c) for c in grp)
    return text


def _chi_key(rs: Ruleset, text: str) -> tuple:
    body = text.strip()
    if body.startswith("chi"):
        body = body[3:]
    groups = [tuple(sorted(cards(rs, part))) for part in body.split("+")]
    return (groups[0], tuple(sorted(groups[1:])))


def check_claim(rs: Ruleset, g: dict, e: dict) -> None:
    n = rs.manifest.players
    hands = [cards(rs, h) for h in g["hands"]]
    ms = [list(melds(rs, m)) for m in (g.get("melds") or [[] for _ in range(n)])]
    discards = [cards(rs, d) for d in (g.get("discards") or [[] for _ in range(n)])]
    card = cards(rs, g["card"])[0]
    owner = g["from"]
    source = g.get("source", "discard")
    used = Counter(c for h in hands for c in h) + Counter(c for s in ms for m in s for c in m.cards) \
        + Counter(c for d in discards for c in d) + Counter([card])
    rest = list((Counter(rs.deck()) - used).elements())
    if "wall_left" in g:
        rest = rest[: max(0, g["wall_left"] - (1 if source == "draw" else 0))]
    wall = [card] + rest if source == "draw" else rest
    passed = [{"seat": p["seat"], "card": cards(rs, p["card"])[0], "action": p.get("action", "")}
              for p in g.get("passed", ())]
    table = Table.from_position(rs, dealer=g.get("dealer", 0), hands=hands, wall=wall,
                                melds=ms, discards=discards, relations=_relations(g),
                                context={"passed": passed} if passed else None)
    offered = {seat: table.claim_options(seat, card, owner, source) for seat in range(n)}
    start = len(table.events)
    if source == "draw":
        table.draw(owner)
        if not any(isinstance(ev, Drew) and ev.shown for ev in table.events[start:]):
            # a mandatory move took the drawn card before anyone saw it
            offered = {seat: [a for a in table.legal_actions(seat) if isinstance(a, Zimo)]
                       if seat == owner else [] for seat in range(n)}
    if "legal" in e:
        for seat, want in e["legal"].items():
            got = sorted({action_id(a) for a in offered[int(seat)] if not isinstance(a, Pass)})
            expect_eq(f"legal[{seat}]", sorted(set(want)), got)
    if "legal_chi" in e:
        for seat, want in e["legal_chi"].items():
            got = sorted(_chi_key(rs, chi_text(rs, a)) for a in offered[int(seat)]
                         if isinstance(a, Chi))
            expect_eq(f"legal_chi[{seat}]", sorted(_chi_key(rs, w) for w in want), got)
    if "resolved" not in e:
        return
    if source != "draw":
        start = len(table.events)
        table.open_window(card, owner, source)
    declared = {d["seat"]: (d["action"], d.get("cards", "")) for d in g.get("declared", ())}
    window = table.window
    while window is not None and table.window is window and table.to_decide():
        seat = table.to_decide()[0]
        verb, chi_cards = declared.get(seat, ("pass", ""))
        table.apply(_claim_action(rs, table, seat, verb, chi_cards))
    got_res = []
    for i, ev in enumerate(table.events[start:]):
        if isinstance(ev, Drew) and (source != "draw" or i > 0 and ev.seat != owner
                                     or ev.card != card):
            break  # the next draw: play has moved past this card
        if isinstance(ev, Won):
            got_res.append((ev.seat, "hu"))
        elif isinstance(ev, Melded) and (ev.meld.claimed == card or
                                         (ev.meld.kind in MANDATORY_VERBS and card in ev.meld.cards)):
            got_res.append((ev.seat, ev.meld.kind))
    want_res = sorted((r["seat"], r["action"]) for r in e["resolved"])
    expect_eq("resolved", want_res, sorted(set(got_res)))


# ------------------------------------------------------------------ scenarios

TURN_VERBS = {"discard", "angang", "jiagang", "zimo"}
CLAIM_VERBS = {"chi", "peng", "minggang", "hu", "pass"}
MANDATORY_VERBS = {"kaizhao", "sao", "saochuan", "guosao"}
_ACTION = re.compile(r"^\s*(\d+)\s+([a-z_]+)\s*(.*)$")


class Refused(Exception):
    """A scenario action the table refused (its index is the case's ``error``)."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"action {index} refused: {reason}")
        self.index = index
        self.reason = reason


def _claim_action(rs: Ruleset, table: Table, seat: int, verb: str, rest: str) -> Any:
    if verb == "pass":
        return Pass(seat)
    if verb == "hu":
        return Hu(seat)
    if verb == "peng":
        return Peng(seat)
    if verb == "minggang":
        return Minggang(seat)
    if verb == "chi":
        if not rest.strip():  # a claim case may declare "chi" alone: the first legal one
            chis = [a for a in table.legal_actions(seat) if isinstance(a, Chi)]
            return chis[0] if chis else Chi(seat, ())
        parts = rest.split("+")
        main = tuple(sorted(cards(rs, parts[0])))
        extra = tuple(tuple(sorted(cards(rs, p))) for p in parts[1:])
        for a in table.legal_actions(seat):  # match the variant's own ordering of cards
            if isinstance(a, Chi) and tuple(sorted(a.cards)) == main and \
                    tuple(sorted(tuple(sorted(x)) for x in a.extra)) == tuple(sorted(extra)):
                return a
        return Chi(seat, main, extra)
    raise Refused(-1, f"unknown claim verb {verb!r}")


def _turn_action(rs: Ruleset, seat: int, verb: str, rest: str) -> Any:
    if verb == "zimo":
        return Zimo(seat)
    cs = cards(rs, rest)
    if len(cs) != 1:
        raise ValueError(f"{verb} takes one card, got {rest!r}")
    return {"discard": Discard, "angang": Angang, "jiagang": Jiagang}[verb](seat, cs[0])


def _pass_all(table: Table) -> None:
    for seat in table.to_decide():
        table.apply(Pass(seat))


def play_scenario(rs: Ruleset, g: dict) -> Table:
    """Set up the scenario's deal and play its actions by the case format's
    rules (docs/reference/case-format.md, ``scenario``); raise :class:`Refused` at the
    first refused action."""
    hands = [cards(rs, h) for h in g["hands"]]
    wall = cards(rs, g.get("wall", ""))
    table = Table(rs, deal=Deal(g.get("dealer", 0), tuple(map(tuple, hands)), tuple(wall)),
                  relations=_relations(g), partial=True)
    mark = len(table.events)
    for i, text in enumerate(g.get("actions", ())):
        m = _ACTION.match(text)
        if not m:
            raise Refused(i, f"cannot read action {text!r}")
        seat, verb, rest = int(m.group(1)), m.group(2), m.group(3)
        try:
            if verb in MANDATORY_VERBS:  # assert the move happens, advancing to it
                def happened() -> bool:
                    return any(isinstance(ev, Melded) and ev.seat == seat and ev.meld.kind == verb
                               for ev in table.events[mark:])
                while not happened() and table.window is not None and not table.over:
                    _pass_all(table)
                if not happened():
                    raise Refused(i, f"no {verb} by seat {seat} happened here")
                continue
            if verb == "hu" and table.over and seat in table.result.winners:
                continue  # a compulsory win the engine already made
            if table.over:
                raise Refused(i, "the hand is over")
            if verb == "zimo":
                # zipai shows a drawn card and offers it: the zimo is made at
                # the seat's first own shown draw it may win on (earlier
                # windows pass); else on its own turn (mahjong, D-ZP4)
                while (w := table.window) is not None and not table.over:
                    if w.source == "draw" and w.owner == seat and \
                            any(isinstance(a, Zimo) for a in table.legal_actions(seat)):
                        break
                    _pass_all(table)
                if table.over:
                    raise Refused(i, "the hand is over")
                if table.window is not None:
                    mark = len(table.events)
                    table.apply(Zimo(seat))
                    continue
            if verb in TURN_VERBS:
                while table.window is not None and not table.over:
                    _pass_all(table)
                if table.over or table.turn != seat or seat not in table.to_decide():
                    raise Refused(i, f"the table waits for seat {table.turn}, not seat {seat}")
                mark = len(table.events)
                table.apply(_turn_action(rs, seat, verb, rest))
            elif verb in CLAIM_VERBS:
                w = table.window
                if w is None:
                    raise Refused(i, f"no card is open to claims (seat {table.turn} to act)")
                if seat in w.declared:  # names a later window: close this one first
                    _pass_all(table)
                    w = table.window
                    if w is None:
                        raise Refused(i, "no later card is open to claims")
                if seat not in table.to_decide():
                    raise Refused(i, f"seat {seat} has no claim on this card")
                mark = len(table.events)
                table.apply(_claim_action(rs, table, seat, verb, rest))
            else:
                raise Refused(i, f"unknown verb {verb!r}")
        except (IllegalAction, ValueError) as exc:
            if isinstance(exc, Refused):
                raise
            raise Refused(i, str(exc)) from None
    while not table.over and table.window is not None:
        _pass_all(table)
    return table


def check_scenario(rs: Ruleset, g: dict, e: dict) -> None:
    try:
        table = play_scenario(rs, g)
    except Refused as r:
        if "error" in e:
            expect_eq("error", e["error"], r.index)
            return
        raise Mismatch(f"action {r.index} ({g['actions'][r.index]!r}) was refused: {r.reason}")
    if "error" in e:
        raise Mismatch(f"error: expected action {e['error']} to be refused, all were accepted")
    res = table.result
    if res is None:
        raise Mismatch(f"the hand did not end after the actions (waiting for seats "
                       f"{table.to_decide()})")
    n = rs.manifest.players
    if "end" in e:
        expect_eq("end", e["end"], res.end)
    if "winners" in e:
        expect_eq("winners", sorted(e["winners"]), sorted(res.winners))
    if "net" in e:
        expect_eq("net", list(e["net"]), list(res.net))
    if "instant_net" in e:
        expect_eq("instant_net", list(e["instant_net"]), net_of(res.instant, n))
    if "kong_net" in e:
        kongs = [p for p in res.instant if p.reason in KONG_FEE_REASONS]
        expect_eq("kong_net", list(e["kong_net"]), net_of(kongs, n))
    if "pairwise" in e:
        check_pairwise(e["pairwise"], res.payments)
    if "patterns" in e:
        check_by_seat("patterns", e["patterns"], dict(res.patterns), _sorted)
    if "xing" in e:
        check_by_seat("xing", e["xing"], dict(res.xing), lambda x: x)
    if "next_dealer" in e:
        expect_eq("next_dealer", e["next_dealer"], res.next_dealer)


def _meld_text(rs: Ruleset, mv: Any) -> tuple[str, int, Counter]:
    return (mv.kind, sum(1 for c in mv.cards if c is None),
            Counter(c for c in mv.cards if c is not None))


def _meld_want(rs: Ruleset, text: str) -> tuple[str, int, Counter]:
    kind, _, rest = text.strip().partition(" ")
    toks = rest.split()
    hidden = sum(1 for t in toks if t == "?")
    return (kind, hidden, Counter(cards(rs, " ".join(t for t in toks if t != "?"))))


def check_view(rs: Ruleset, g: dict, e: dict) -> None:
    try:
        table = play_scenario(rs, {**g, "actions": g.get("actions", [])})
    except Refused as r:
        raise Mismatch(f"action {r.index} was refused: {r.reason}")
    seat = g["seat"]
    v = table.view(seat)
    if "hand" in e:
        if multiset(rs, e["hand"]) != Counter(v.hand):
            raise Mismatch(f"hand: expected {e['hand']}, got {kinds_text(rs, v.hand)}")
    if "hand_sizes" in e:
        expect_eq("hand_sizes", list(e["hand_sizes"]), list(v.hand_sizes))
    if "stock" in e:
        expect_eq("stock", e["stock"], v.stock)
    if "melds" in e:
        for s, want in enumerate(e["melds"]):
            got = sorted((k, h, sorted(c.elements())) for k, h, c in
                         (_meld_text(rs, mv) for mv in v.melds[s]))
            exp = sorted((k, h, sorted(c.elements())) for k, h, c in
                         (_meld_want(rs, t) for t in want))
            expect_eq(f"melds[{s}]", exp, got)
    leak = view_leak(table, seat)
    if leak:
        raise Mismatch(leak)


CHECKERS: dict[str, Callable[[Ruleset, dict, dict], None]] = {
    "deck": check_deck, "deal": check_deal, "win": check_win, "waits": check_waits,
    "flip": check_flip, "settle": check_settle, "claim": check_claim,
    "scenario": check_scenario, "view": check_view,
}


EXPECT_KEYS: dict[str, set[str]] = {
    "deck": {"size", "kinds", "copies"},
    "deal": {"hand_sizes", "stock", "hands"},
    "win": {"wins", "patterns", "hu"},
    "waits": {"tiles"},
    "flip": {"flipped", "xing"},
    "settle": {"net", "pairwise", "patterns", "xing"},
    "claim": {"legal", "legal_chi", "resolved"},
    "scenario": {"end", "winners", "net", "kong_net", "instant_net", "pairwise", "patterns",
                 "xing", "next_dealer", "error"},
    "view": {"hand", "melds", "hand_sizes", "stock"},
}


def run_case(variant: str, case: Case, options: dict[str, Any]) -> Outcome:
    """Check one case; never raises for a failing or malformed case, nor for
    a variant whose code raises (an ``Exception``: that case fails).  A case
    that expects nothing the runner knows fails: it would check nothing; so
    does a malformed case (``case.problem``: the format's Structs refused it)."""
    if case.problem:
        return Outcome(case.id, False, f"malformed case: {case.problem}", case.source)
    unknown = sorted(set(case.expect) - EXPECT_KEYS[case.check])
    if unknown or not case.expect:
        what = f"unknown expect keys {unknown}" if unknown else "nothing expected"
        return Outcome(case.id, False, f"malformed case: {what} (a {case.check} case "
                                       f"checks {sorted(EXPECT_KEYS[case.check])})", case.source)
    try:
        rs = ruleset_for(variant, options)
        CHECKERS[case.check](rs, case.given, case.expect)
    except (Mismatch, PropertyFailure) as m:
        return Outcome(case.id, False, str(m), case.source)
    except QipaiError as exc:
        return Outcome(case.id, False, f"{type(exc).__name__}: {exc}", case.source)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return Outcome(case.id, False, f"malformed case or variant error: "
                                       f"{type(exc).__name__}: {exc}", case.source)
    except Exception as exc:  # noqa: BLE001 - the variant's own code raised: this case fails
        return Outcome(case.id, False, f"the variant raised {type(exc).__name__}: {exc}",
                       case.source)
    return Outcome(case.id, True, "", case.source)


def cards_refused(rs: Any, case: Case) -> str:
    """Why the variant refuses the cards or seats of ``case`` (a well-formed
    case whose notation reads), or ``""``: the case is checked against
    ``rs`` as the runner checks it, and only the variant's refusal of its
    input (:class:`~qipai.core.errors.BadCards`, ``BadNotation``) is kept —
    a seat out of range, a fifth copy of a card, a relation that is not two
    seats.  A case that merely fails its expectation is well-formed."""
    try:
        CHECKERS[case.check](rs, case.given, case.expect)
    except (BadCards, BadNotation) as exc:
        return f"the variant refuses it: {exc}"
    except Exception:  # noqa: BLE001, S110 - a failing case, or a variant's error: reported when run
        pass
    return ""
