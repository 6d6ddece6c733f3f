"""The game server's messages for people: what ``qipai connect`` prints.

:class:`Printer` writes the seat's view and every event (JSON, as the
protocol sends them, docs/reference/protocol.md) in the variant's notation,
cards as ``5p(五筒)``, names from :mod:`qipai.text` as ``qipai play`` prints
them; the connection's own seat is "you" (``ROLES``' word, as ``qipai play
--human`` says it).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from qipai.text import ROLES, end_label, how_label, meld_label
from qipai.text.payments import no_card_win

__all__ = ["Printer"]


class Printer:
    """Renders messages for a terminal in the variant's notation."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.cards: Any = None
        self.names: dict[str, str] = {}  # the variant's (Manifest.names), first
        self.played = False  # a card was drawn or discarded since the deal
        self.players: dict[str, str] = {}  # the table's named seats: seat → name
        self.me: int | None = None  # the connection's seat (None: a spectator)

    def seat(self, s: int) -> str:
        """``"seat 2"``, ``"seat 2 (阿明)"`` if its player is named, or
        ``"you"`` for the connection's own seat."""
        if s == self.me:
            return ROLES["en"]["you"]
        name = self.players.get(str(s))
        return f"seat {s} ({name})" if name else f"seat {s}"

    def does(self, s: int, verb: str) -> str:
        """``"seat 2 draws"``, ``"you draw"``: who does ``verb`` (its third person)."""
        return f"{self.seat(s)} {verb[:-1] if s == self.me else verb}"

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
        t = e["type"]
        who = self.seat(e["seat"]) if "seat" in e else ""
        if t in ("drew", "discarded"):
            self.played = True
        if t == "dealt":
            self.played = False
            shown = e.get("shown") or []
            return f"shown at the deal: {self.hand(shown)}" if shown else "dealt"
        if t == "drew":
            tail = " from the tail" if e.get("tail") else ""
            return f"{self.does(e['seat'], 'draws')}{tail} {self.card(e['card'])}" + \
                (" (shown)" if e.get("shown") else "")
        if t == "discarded":
            return f"{self.does(e['seat'], 'discards')} {self.card(e['card'])}"
        if t == "melded":
            m = e["meld"]
            src = f" from {self.seat(m['from_seat'])}" if m.get("from_seat") is not None else ""
            return f"{who} {meld_label(m['kind'], self.names)} {self.hand(m['cards'])}{src}"
        if t == "won":
            src = f" from {self.seat(e['from_seat'])}" if e.get("from_seat") is not None else ""
            pats = f" — {', '.join(e['patterns'])}" if e.get("patterns") else ""
            if e.get("card") is None:  # 三笼五坎 …: won on the cards as they are
                return f"{self.does(e['seat'], 'wins')} {no_card_win(not self.played)}{src}{pats}"
            return (f"{self.does(e['seat'], 'wins')}: {how_label(e['how'], self.names)} on "
                    f"{self.card(e['card'])}{src}{pats}")
        if t == "flipped":
            xing = ", ".join(f"seat {s}: {x}" for s, x in
                             sorted((int(s), x) for s, x in (e.get("xing") or {}).items()))
            return (f"翻醒 fanxing: flipped {self.hand(e['cards']) if e['cards'] else 'nothing'}"
                    f" — 醒 xing {xing or 'none'}")
        if t == "marked":
            if e["what"] == "jiagang" and e.get("seats"):
                return (f"{self.does(e['seats'][0], 'adds')} {self.card(e.get('card'))} to a peng "
                        f"({meld_label('jiagang', self.names)}) — open to "
                        f"{how_label('qianggang', self.names)}")
            about = f" on {self.card(e['card'])}" if e.get("card") is not None else ""
            seats = f" — seats {', '.join(map(str, e['seats']))}" if e.get("seats") else ""
            return f"notice: {e['what']}{seats}{about}"
        if t == "ended":
            end = end_label(e["end"])
            return f"hand over: {end}, net {e['net']}, next dealer seat {e['next_dealer']}"
        if t == "paid":
            return "paid at once: " + "; ".join(
                f"{self.seat(p['payer'])} → {self.seat(p['payee'])} {p['amount']}"
                + (f" ({p['reason']})" if p.get("reason") else "") for p in e["payments"])
        return f"{t} {json.dumps({k: v for k, v in e.items() if k != 'type'}, ensure_ascii=False)}"

    def welcome(self, m: dict[str, Any]) -> None:
        from qipai.core.ruleset import load

        try:
            manifest = load(m["spec"]).manifest
            self.cards, self.names = manifest.cards, dict(manifest.names)
        except Exception:  # noqa: BLE001 - a variant this machine lacks: kinds as numbers
            self.cards, self.names = None, {}
        v = m["view"]
        self.played = False  # a hand's first view: its events follow
        self.players = dict(m.get("names") or {})
        self.me = m["seat"]
        seat = "spectator" if m["seat"] is None else f"seat {m['seat']}"
        if m["seat"] is not None and str(m["seat"]) in self.players:
            seat += f" ({self.players[str(m['seat'])]})"
        # hands are counted from 1, as play, replay and verify count them (the protocol's
        # ``hand`` is the 0-based index)
        self.line(f"== table {m['table']} · {m['spec']} · hand {m['hand'] + 1} · {seat} · "
                  f"dealer {v['dealer']} · totals {m['totals']}"
                  + (" · SEEDED (demo deal)" if m["seeded"] else ""))
        if self.players:
            self.line("   players: " + ", ".join(
                f"seat {s} {n}" + (" (you)" if m["seat"] is not None and int(s) == m["seat"]
                                   else "")
                for s, n in sorted(self.players.items(), key=lambda i: int(i[0]))))
        for e in v["events"]:
            if e["type"] != "dealt":
                self.line("   " + self.event(e))
        if m["seat"] is not None:
            self.line(f"   your hand: {self.hand(v['hand'])}")
