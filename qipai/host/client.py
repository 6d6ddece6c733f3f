"""``qipai connect URL``: a small terminal client of the game server.

It prints the seat's view and every event in the variant's notation, and at
each decision lists the legal actions, numbered, and reads a number (Enter
alone takes the first: a pass, when passing is allowed).  ``--auto`` plays
by itself (wins when it may, passes claims, discards the highest card),
for demos and checks.  It speaks only the protocol
(docs/reference/protocol.md), through the ``websockets`` package.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from qipai.core.errors import QipaiError


class BadServerMessage(QipaiError):
    """The server sent what the protocol does not allow (a ``decide`` with
    no legal action): the client stops, naming it."""


_NO_LEGAL = ("with no legal action: there is nothing to answer it with (a server's decide "
             "always offers at least one)")


def auto_choice(legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Win if possible, else pass a claim, else discard the highest card it may.

    Raises:
        BadServerMessage: ``legal`` is empty (a ``decide`` always offers one)."""
    if not legal:
        raise BadServerMessage(f"the server offered a decision {_NO_LEGAL}")
    for kind in ("hu", "zimo"):
        for a in legal:
            if a["type"] == kind:
                return a
    for a in legal:
        if a["type"] == "pass":
            return a
    discards = [a for a in legal if a["type"] == "discard"]
    return max(discards, key=lambda a: a["card"]) if discards else legal[0]


class Printer:
    """Renders messages for a terminal in the variant's notation."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.cards: Any = None
        self.played = False  # a card was drawn or discarded since the deal

    def line(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def card(self, k: int | None) -> str:
        if k is None or self.cards is None:
            return "?"
        return f"{self.cards.token(k)}({self.cards.chinese(k)})"

    def hand(self, kinds: list[int]) -> str:
        return " ".join(self.card(k) for k in kinds) or "—"

    def action(self, a: dict[str, Any]) -> str:
        t = a["type"]
        if "card" in a:
            return f"{t} {self.card(a['card'])}"
        if t == "chi":
            return f"chi {self.hand(list(a['cards']))}"
        return t

    def event(self, e: dict[str, Any]) -> str:
        """One event (JSON, as the server sends it) as a line, the names in
        Chinese and pinyin as ``qipai play`` prints them."""
        from qipai.cli import HOW_NAMES, MELD_NAMES
        from qipai.explain import no_card_win

        t = e["type"]
        who = f"seat {e['seat']}" if "seat" in e else ""
        if t in ("drew", "discarded"):
            self.played = True
        if t == "dealt":
            self.played = False
            shown = e.get("shown") or []
            return f"shown at the deal: {self.hand(shown)}" if shown else "dealt"
        if t == "drew":
            tail = " from the tail" if e.get("tail") else ""
            return f"{who} draws{tail} {self.card(e['card'])}" + \
                (" (shown)" if e.get("shown") else "")
        if t == "discarded":
            return f"{who} discards {self.card(e['card'])}"
        if t == "melded":
            m = e["meld"]
            src = f" from seat {m['from_seat']}" if m.get("from_seat") is not None else ""
            return f"{who} {MELD_NAMES.get(m['kind'], m['kind'])} {self.hand(m['cards'])}{src}"
        if t == "won":
            src = f" from seat {e['from_seat']}" if e.get("from_seat") is not None else ""
            pats = f" — {', '.join(e['patterns'])}" if e.get("patterns") else ""
            if e.get("card") is None:  # 三笼五坎 …: won on the cards as they are
                return f"{who} wins {no_card_win(not self.played)}{src}{pats}"
            return (f"{who} wins: {HOW_NAMES.get(e['how'], e['how'])} on "
                    f"{self.card(e['card'])}{src}{pats}")
        if t == "flipped":
            xing = ", ".join(f"seat {s}: {x}" for s, x in
                             sorted((int(s), x) for s, x in (e.get("xing") or {}).items()))
            return (f"翻醒 fanxing: flipped {self.hand(e['cards']) if e['cards'] else 'nothing'}"
                    f" — 醒 xing {xing or 'none'}")
        if t == "marked":
            if e["what"] == "jiagang" and e.get("seats"):
                return (f"seat {e['seats'][0]} adds {self.card(e.get('card'))} to a peng "
                        f"(蓄杠 xugang) — open to 抢杠 qianggang")
            about = f" on {self.card(e['card'])}" if e.get("card") is not None else ""
            seats = f" — seats {', '.join(map(str, e['seats']))}" if e.get("seats") else ""
            return f"notice: {e['what']}{seats}{about}"
        if t == "ended":
            end = "胡 hu" if e["end"] == "hu" else "荒庄 huangzhuang (no winner)"
            return f"hand over: {end}, net {e['net']}, next dealer seat {e['next_dealer']}"
        if t == "paid":
            return "paid at once: " + "; ".join(
                f"seat {p['payer']} → seat {p['payee']} {p['amount']}"
                + (f" ({p['reason']})" if p.get("reason") else "") for p in e["payments"])
        return f"{t} {json.dumps({k: v for k, v in e.items() if k != 'type'}, ensure_ascii=False)}"

    def welcome(self, m: dict[str, Any]) -> None:
        from qipai.core.ruleset import load

        try:
            self.cards = load(m["spec"]).cards
        except Exception:  # noqa: BLE001 - a variant this machine lacks: kinds as numbers
            self.cards = None
        v = m["view"]
        self.played = False  # a hand's first view: its events follow
        seat = "spectator" if m["seat"] is None else f"seat {m['seat']}"
        # hands are counted from 1, as play, replay and verify count them (the protocol's
        # ``hand`` is the 0-based index)
        self.line(f"== table {m['table']} · {m['spec']} · hand {m['hand'] + 1} · {seat} · "
                  f"dealer {v['dealer']} · totals {m['totals']}"
                  + (" · SEEDED (demo deal)" if m["seeded"] else ""))
        for e in v["events"]:
            if e["type"] != "dealt":
                self.line("   " + self.event(e))
        if m["seat"] is not None:
            self.line(f"   your hand: {self.hand(v['hand'])}")


#: Seconds between two messages the client sends: under the server's
#: default rate (``qipai serve --rate``, 100 a second).
PACE_S = 0.012
#: Seconds to wait before sending again an act the server dropped (Throttled).
RESEND_S = 0.25


def run(url: str, auto: bool = False, hands: int | None = None,
        out: TextIO = sys.stdout, inp: TextIO = sys.stdin) -> int:
    """Connect to ``url`` (``ws://…/tables/ID/ws?token=…``) and play.

    Acts are paced under the server's default message rate, and an act
    the server dropped unread (``Throttled``, naming its ``seq``) is sent
    again, so a decision is never left to the seat's timeout.

    Returns: 0 after ``hands`` hands (or when the table closes), 2 when the
    server refuses the connection.

    Raises:
        BadServerMessage: the server sent a ``decide`` with no legal action.
    """
    from websockets.sync.client import connect

    from qipai.host.protocol import messages

    p = Printer(out)
    done = 0
    last: tuple[int, str] | None = None  # (seq, frame) of the last act sent
    seat_conns = 1   # the seat's connections open at the table, as last told
    sent_at = 0.0

    def send(frame: str) -> None:
        """Send, no faster than the server's message rate (a faster client's
        excess is dropped and answered Throttled)."""
        nonlocal sent_at
        wait = sent_at + PACE_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        ws.send(frame)
        sent_at = time.monotonic()

    with connect(url) as ws:
        for text in ws:
            for m in messages(json.loads(text)):   # a batch frame: its messages in order
                t = m["type"]
                if t == "welcome":
                    p.welcome(m)
                elif t == "events":
                    for e in m["events"]:
                        p.line("   " + p.event(e))
                elif t == "decide":
                    legal = m["legal"]
                    if not isinstance(legal, list) or not legal:
                        raise BadServerMessage(f"the server sent a decide (hand "
                                               f"{m.get('hand')}, seq {m.get('seq')}) {_NO_LEGAL}")
                    if auto:
                        choice = auto_choice(legal)
                    else:
                        for i, a in enumerate(legal):
                            p.line(f"   [{i}] {p.action(a)}")
                        choice = _ask(legal, inp, p)
                    last = (m["seq"], json.dumps({"type": "act", "hand": m["hand"],
                                                  "seq": m["seq"], "action": choice}))
                    send(last[1])
                elif t == "hand_ended":
                    p.line(f"== hand {m['hand'] + 1} over · totals {m['totals']}")
                    done += 1
                    if hands is not None and done >= hands:
                        return 0
                elif t == "seat_conns":
                    if m["count"] > 1:
                        p.line(f"!! this seat has {m['count']} connections open at the table; "
                               f"if you did not open the others, someone else has your link")
                    elif seat_conns > 1:
                        p.line("== this seat has 1 connection open again (this one)")
                    seat_conns = m["count"]
                elif t == "closed":
                    p.line(f"== table closed · totals {m['totals']}")
                    return 0
                elif t == "error":
                    if m["code"] == "Throttled" and last is not None and m.get("seq") == last[0]:
                        time.sleep(RESEND_S)  # dropped unread, not applied: send it again
                        send(last[1])
                        continue
                    p.line(f"!! {m['code']}: {m['message']}")
                    if m["code"] in ("BadToken", "UnknownTable"):
                        return 2
    return 0


def _ask(legal: list[dict[str, Any]], inp: TextIO, p: Printer) -> dict[str, Any]:
    while True:
        print("   choose> ", end="", file=p.out, flush=True)
        text = inp.readline()
        if not text:  # end of input: play on by itself
            return auto_choice(legal)
        text = text.strip()
        if not text:
            return legal[0]
        if text.isdigit() and int(text) < len(legal):
            return legal[int(text)]
        p.line(f"   a number 0..{len(legal) - 1}")


__all__ = ["run", "auto_choice", "BadServerMessage"]
