"""``qipai connect URL``: a small terminal client of the game server.

It prints the seat's view and every event in the variant's notation (the
player's own seat as "you"), and at each decision lists the legal actions,
numbered from 1, with the seconds left before the server's deadline, and
reads the answer as ``qipai play --human`` does (:mod:`qipai.text.answer`:
a number, a card to discard such as ``W``, ``3m`` or ``三万``, an action's
word such as ``peng`` or ``过``; Enter alone passes, when passing is
allowed).  A line that names no action, or more than one, gets a one-line
hint and is asked again; nothing is sent.  With ``--auto-pass`` (the
default) a decision with one legal answer (a claim window where the seat
may only pass, a forced move) is answered without asking.  ``q``, the end
of input and Ctrl-C leave: the socket is closed.  ``--auto`` plays
by itself (wins when it may, passes claims, discards the highest card),
for demos and checks.  It speaks only the protocol
(docs/reference/protocol.md), through the ``websockets`` package.  A table
that moves to another node of a cluster (``qipai serve --cluster``: a
``moved``) is followed, and a connection that drops is opened again, the
hand resynced: :func:`run`.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any, TextIO

import click

from qipai.cli.common import fail
from qipai.core.errors import QipaiError

__all__ = ["BadServerMessage", "auto_choice", "connect", "run"]


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


#: Seconds between two messages the client sends: under the server's
#: default rate (``qipai serve --rate``, 100 a second).
PACE_S = 0.012
#: Seconds to wait before sending again an act the server dropped (Throttled).
RESEND_S = 0.25
#: Seconds before connecting again after a ``moved`` without an address (the
#: table's node died; a survivor takes it over within seconds).
MOVED_WAIT_S = 0.75
#: Seconds before the first new connection after one dropped; each failed
#: try doubles it, up to :data:`RECONNECT_MAX_S`.
RECONNECT_BASE_S = 0.5
RECONNECT_MAX_S = 4.0
#: Seconds a lost connection is tried again before the client gives up.
RECONNECT_S = 60.0


class _Left(Exception):
    """The player left (``q``, the end of input); ``why`` in words."""


#: The language of the words this client adds (:data:`qipai.text.CLIENT`):
#: the one its lines are printed in (:mod:`qipai.text.wire`).
LANG = "en"


def run(url: str, auto: bool = False, hands: int | None = None,
        out: TextIO = sys.stdout, inp: TextIO = sys.stdin, auto_pass: bool = True) -> int:
    """Connect to ``url`` (``ws://…/tables/ID/ws?token=…``) and play.

    Acts are paced under the server's default message rate, and an act
    the server dropped unread (``Throttled``, naming its ``seq``) is sent
    again, so a decision is never left to the seat's timeout.

    ``auto_pass``: answer a decision with one legal answer without asking.

    A cluster's ``moved`` (the table is served by another node: a drain, a
    takeover) is followed at once — one line says where — to the same path
    at its ``address`` (``address`` None: the same node again after
    :data:`MOVED_WAIT_S`); the welcome there resyncs the hand, and an act
    not acknowledged is sent again if its decision is offered again (it
    was not applied).  A connection that drops (its node killed, the
    network cut) is opened again with a backoff, at the addresses known —
    ``url``'s, then those ``moved`` named — in turn, for at most
    :data:`RECONNECT_S` seconds.  A connection the server closes itself
    (without ``moved``) ends the run as ``closed`` does.

    Returns: 0 after ``hands`` hands (or when the table closes, or when the
    player leaves: ``q`` or the end of ``inp``), 2 when the server refuses
    the connection, 1 when a lost connection could not be opened again
    within :data:`RECONNECT_S` seconds.

    Raises:
        BadServerMessage: the server sent a ``decide`` with no legal action.
        OSError, websockets' errors: the first connection could not be opened.
    """
    from websockets.exceptions import ConnectionClosed, ConnectionClosedOK
    from websockets.sync.client import connect

    from qipai.host.protocol import messages
    from qipai.text.answer import say
    from qipai.text.wire import Printer

    p = Printer(out)
    me: list[int | None] = [None]     # the connection's seat
    tuoguan: set[int] = set()         # seats in 托管, as last told
    done = 0
    last: tuple[int, int, str] | None = None  # (hand, seq, frame) of the last act sent
    acked = True     # the last act sent was acknowledged (applied)
    seat_conns = 1   # the seat's connections open at the table, as last told
    shown = -1       # the last hand whose end (摊牌, payments) was printed
    sent_at = 0.0
    printed = (-1, 0)   # (hand, events of its view printed): a resync prints only the rest
    welcomed = False    # a welcome came on this connection
    readied: int | None = None   # the hand whose ready step this connection answered
    ws: Any = None

    def send(frame: str) -> None:
        """Send, no faster than the server's message rate (a faster client's
        excess is dropped and answered Throttled)."""
        nonlocal sent_at
        wait = sent_at + PACE_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        ws.send(frame)
        sent_at = time.monotonic()

    joint = SeatValue()

    def handle(m: dict[str, Any]) -> int | None:
        """One server message acted on; the run's status once it ends (None: go on)."""
        nonlocal tuoguan, done, last, acked, seat_conns, shown, printed, welcomed, readied
        t = m["type"]
        if t == "welcome":
            again = welcomed_before and printed[0] == m["hand"]
            welcomed = True
            if again:   # the same hand after a reconnection: what was not printed yet
                p.me = m["seat"]
                for e in m["view"]["events"][printed[1]:]:
                    p.line("   " + p.event(e))
                if m["seat"] is not None:
                    p.line(f"   your hand: {p.hand(m['view']['hand'])}")
            else:
                p.welcome(m)
            printed = (m["hand"], len(m["view"]["events"]))
            me[0] = m["seat"]
            _room_lines(p, m, shown)
            if m.get("presence"):
                tuoguan = set(m["presence"]["tuoguan"])
            step = m.get("ready_step")
            if step and m["seat"] in step["waiting"] and readied != step["hand"]:
                readied = step["hand"]
                send(json.dumps({"type": "ready", "hand": step["hand"]}))
        elif t == "events":
            for e in m["events"]:
                p.line("   " + p.event(e))
            if m.get("hand") == printed[0]:
                printed = (printed[0], printed[1] + len(m["events"]))
        elif t == "decide":
            if not acked and last is not None and (m["hand"], m["seq"]) == last[:2]:
                # offered again on a new connection: the act was not applied (the
                # connection dropped, or the table moved, before its ack): again
                acked = True
                send(last[2])
                return None

            def extra(word: str) -> None:
                """``d``/``d no``: dissolve; ``t``: 托管 on or off."""
                if word == "t":
                    send(json.dumps({"type": "tuoguan", "on": me[0] not in tuoguan}))
                else:
                    send(json.dumps({"type": "dissolve", "agree": word == "d"}))
            if me[0] in tuoguan:
                p.line("   (托管: the bot plays this for you; answer to take the "
                       "seat back)")
                if auto or (auto_pass and len(m["legal"]) == 1):
                    return None   # left to the bot: an answer of ours ends 托管
            try:
                frame = _answer(m, auto, inp, p, auto_pass, extra)
            except _Left as left:
                p.line("== " + say(LANG, "left_table", why=left))
                return 0   # leaving the with-block closes the socket
            if frame is not None:   # (None: d or t was typed instead)
                last, acked = (m["hand"], m["seq"], frame), False
                send(frame)
        elif t == "ack":
            if last is not None and m.get("seq") == last[1]:
                acked = True
        elif t == "hand_ended":
            _showdown(p, m)
            shown = m["hand"]
            p.line(f"== hand {m['hand'] + 1} over · totals {m['totals']}")
            for line in _money_lines(p, m.get("money"), m.get("money_totals")):
                p.line(line)
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
        elif t == "ready_step":
            if not m["waiting"]:
                p.line(f"== hand {m['hand'] + 1} begins")
            elif me[0] in m["waiting"]:   # 准备: answered at once
                p.line(f"== ready for hand {m['hand'] + 1} (sent)")
                if readied != m["hand"]:   # (once: the welcome's step is this one)
                    readied = m["hand"]
                    send(json.dumps({"type": "ready", "hand": m["hand"]}))
            else:
                p.line(f"== waiting for {_seats(p, m['waiting'])} to be ready")
        elif t == "seat_values":
            frame = joint.step(m)
            if frame is not None:
                send(frame)
            for line in joint.said:
                p.line("== " + line)
            joint.said.clear()
        elif t == "vote":
            p.line("== " + _vote(p, m))
        elif t == "presence":
            tuoguan = set(m["tuoguan"])
            p.line(f"== online: {_seats(p, m['online']) or 'nobody'}"
                   + (f" · 托管 (played by the bot): {_seats(p, m['tuoguan'])}"
                      if m["tuoguan"] else ""))
        elif t == "tally":
            p.line(f"== final tally (大结算), room {m['ended']} after "
                   f"{m['hands_done']} hands:")
            for st in m["seats"]:
                p.line(f"   {p.seat(st['seat'])}: total {st['total']}, wins "
                       f"{st['wins']}, 自摸 {st['zimo']}, 点炮 {st['dianpao']}, "
                       f"best hand {st['best']}"
                       + (f", money {_yuan(st['money'])}"
                          if st.get("money") is not None else ""))
            if m.get("stake") is not None:
                p.line(f"   house (rake): {_yuan(m['house'])}")
        elif t == "closed":
            p.line(f"== table closed · totals {m['totals']}")
            return 0
        elif t == "error":
            if m["code"] == "Throttled" and last is not None and m.get("seq") == last[1]:
                time.sleep(RESEND_S)  # dropped unread, not applied: send it again
                send(last[2])
                return None
            if m["code"] == "Moving":   # not applied: a moved follows, and it goes again there
                return None
            p.line(f"!! {m['code']}: {m['message']}")
            if m["code"] in ("BadToken", "UnknownTable"):
                return 2
        return None

    path = _path_of(url)
    known = [_origin_of(url)]   # the addresses to try: url's, then those a moved named
    at = known[0]
    lost_at: float | None = None   # when the connection was lost (None: not lost)
    tries = 0                      # connections tried since it was lost
    welcomed_before = False        # a welcome came on an earlier connection
    while True:
        try:
            ws = connect(url if at == known[0] else at + path)   # (url: as it was given)
        except Exception as exc:  # noqa: BLE001 - refused, unreachable: another address
            if lost_at is None:   # the first connection: why it failed is the answer
                raise
            if time.monotonic() - lost_at > RECONNECT_S:
                p.line(f"!! the connection is lost: no server answered in {RECONNECT_S:g} s "
                       f"({type(exc).__name__}); the table goes on without you")
                return 1
            tries += 1
            at = known[(known.index(at) + 1) % len(known)]   # the next one known
            time.sleep(min(RECONNECT_BASE_S * 2 ** (tries - 1), RECONNECT_MAX_S))
            continue
        moved: dict[str, Any] | None = None
        joint.sent.clear()   # what the server lacks of the seat's values: sent again here
        welcomed = False
        readied = None   # a ready sent on a lost connection may not have arrived: again here
        with ws:
            try:
                for text in ws:
                    for m in messages(json.loads(text)):   # a batch frame: its messages in order
                        if m["type"] == "moved":   # (a cluster) the socket is closed next
                            moved = m
                            continue
                        code = handle(m)
                        if code is not None:
                            return code
                closed_ok = True
            except ConnectionClosed as exc:   # (a send found it closed, or it dropped)
                closed_ok = isinstance(exc, ConnectionClosedOK)
                # a moved not read yet, still held (say, sent while the player chose)
                moved = moved or _held_moved(ws, messages)
        welcomed_before = welcomed_before or welcomed
        if welcomed:
            lost_at = None   # it was back: a new loss is timed from now
        if moved is None and closed_ok:
            return 0   # the server closed it (a server stopping): as before
        first = lost_at is None
        if first:
            lost_at, tries = time.monotonic(), 0
        elif time.monotonic() - lost_at > RECONNECT_S:
            p.line(f"!! the connection is lost: the table was not reached again in "
                   f"{RECONNECT_S:g} s; it goes on without you")
            return 1
        if moved is not None and moved.get("address"):
            at = _ws_origin(moved["address"])
            if at not in known:
                known.append(at)
            p.line(f"== the table moved to node {moved.get('node')} "
                   f"({moved['address']}): reconnecting")
        elif moved is not None:
            if first:
                p.line("== the table's node stopped; another is taking it over: "
                       "reconnecting in a moment")
            time.sleep(MOVED_WAIT_S)
        else:
            if first:
                p.line("!! the connection dropped: reconnecting")
            time.sleep(RECONNECT_BASE_S)


def _held_moved(ws: Any, messages: Any) -> dict[str, Any] | None:
    """The ``moved`` among the messages a closed connection still holds, unread."""
    found = None
    while True:
        try:
            text = ws.recv(timeout=0)
        except Exception:  # noqa: BLE001 - none left (EOF), or closed: done
            return found
        try:
            found = next((m for m in messages(json.loads(text)) if m["type"] == "moved"),
                         found)
        except (ValueError, KeyError, TypeError):
            continue


def _origin_of(url: str) -> str:
    """``ws(s)://host:port`` of a WebSocket address."""
    from urllib.parse import urlsplit

    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


def _ws_origin(address: str) -> str:
    """The WebSocket origin of a node's ``address``: ``http://host:port`` →
    ``ws://host:port``, ``https://host`` → ``wss://host``."""
    from urllib.parse import urlsplit

    u = urlsplit(address.strip())
    return f"{'wss' if u.scheme in ('https', 'wss') else 'ws'}://{u.netloc}"


def _path_of(url: str) -> str:
    """The path and query of a WebSocket address (``/tables/ID/ws?token=…``)."""
    from urllib.parse import urlsplit

    u = urlsplit(url)
    return u.path + (f"?{u.query}" if u.query else "")


class SeatValue:
    """A joint deal's part of a seat (docs: "Fairness you can check"): on
    ``seat_values`` it draws a random 32-byte value and sends its SHA-256
    (``seat_commit``), then reveals it (``seat_reveal``) once asked — each
    once per hand and connection, the same value on each (a new connection
    sends what the server still lacks) — and says "your value: …" so the player can find it in
    the hand's record.  :attr:`values`: hand → ``(value hex, commitment)``."""

    def __init__(self) -> None:
        self.values: dict[int, tuple[str, str]] = {}
        self.sent: set[tuple[int, str]] = set()
        self.said: list[str] = []

    def step(self, m: dict[str, Any]) -> str | None:
        """The frame to send for the ``seat_values`` message ``m`` (None: nothing)."""
        import hashlib
        import secrets

        from qipai.text.answer import say

        seat, hand = m.get("seat"), m["hand"]
        if seat is None:
            return None
        if m["phase"] == "commit" and str(seat) not in m["commitments"] \
                and (hand, "commit") not in self.sent:
            self.sent.add((hand, "commit"))
            if hand not in self.values:   # (a new connection sends the same one again)
                raw = secrets.token_bytes(32)
                self.values[hand] = (raw.hex(), hashlib.sha256(raw).hexdigest())
                self.said.append(say(LANG, "joint_deal", k=hand + 1,
                                     commitment=m["server_commitment"]))
                self.said.append(say(LANG, "your_value", value=raw.hex(), k=hand + 1))
            return json.dumps({"type": "seat_commit", "hand": hand,
                               "commitment": self.values[hand][1]})
        mine = self.values.get(hand)
        if (m["phase"] == "reveal" and mine is not None and seat not in m["revealed"]
                and m["commitments"].get(str(seat)) == mine[1]
                and (hand, "reveal") not in self.sent):
            self.sent.add((hand, "reveal"))
            return json.dumps({"type": "seat_reveal", "hand": hand, "value": mine[0]})
        return None


def _seats(p: Any, seats: list[int]) -> str:
    return ", ".join(p.seat(s) for s in seats)


def _room_lines(p: Any, m: dict[str, Any], shown: int = -1) -> None:
    """A welcome's room (第 k/N 局) and, between two hands, the last one's 摊牌
    — unless it is hand ``shown``, whose end was just printed."""
    room = m.get("room")
    if room and room.get("hands"):
        p.line(f"   room: hand {room['hand']} of {room['hands']} (第 {room['hand']}/"
               f"{room['hands']} 局)")
    last = m.get("last_result")
    if last and m.get("ready_step") and last["hand"] != shown:
        p.line(f"== the last hand (hand {last['hand'] + 1}):")
        _showdown(p, {"showdown": last["showdown"], "result": last["result"]})


def _showdown(p: Any, m: dict[str, Any]) -> None:
    """A hand's 摊牌 (every seat's hand and melds) and its settlement."""
    sd = m.get("showdown")
    if sd:
        for h in sd["hands"]:
            melds = " ".join(f"[{p.hand(x['cards'])}]" for x in h["melds"])
            p.line(f"   摊牌 {p.seat(h['seat'])}: {p.hand(h['hand'])}"
                   + (f" · melds {melds}" if melds else ""))
        for w in sd["wins"]:
            p.line("   " + p.event(w))
    r = m.get("result")
    if r:
        for pay in r.get("payments") or ():
            p.line(f"   {p.seat(pay['payer'])} → {p.seat(pay['payee'])} {pay['amount']}"
                   + (f" ({pay['reason']})" if pay.get("reason") else ""))
        p.line(f"   net: {', '.join(f'{p.seat(s)} {n:+d}' for s, n in enumerate(r['net']))}")


def _vote(p: Any, m: dict[str, Any]) -> str:
    """A dissolve vote in words."""
    by = p.seat(m["by"])
    if m.get("outcome") == "passed":
        return f"dissolve vote ({by}'s) passed: the room ends"
    if m.get("outcome") == "refused":
        return f"dissolve vote ({by}'s) refused by {p.seat(m['refused_by'])}"
    if m.get("outcome") == "expired":
        return f"dissolve vote ({by}'s) expired"
    return (f"dissolve vote proposed by {by}: agreed {_seats(p, m['agreed'])}; waiting for "
            f"{_seats(p, m['waiting'])} (type d to agree, d no to refuse)")


def _answer(m: dict[str, Any], auto: bool, inp: TextIO, p: Any, auto_pass: bool = True,
            extra: Any = None) -> str | None:
    """The ``act`` frame answering the ``decide`` message ``m``: chosen by
    :func:`auto_choice`, the only legal one (``auto_pass``), or asked for.

    Raises:
        BadServerMessage: ``m`` offers no legal action.
        _Left: the player left (``q``, the end of input)."""
    legal = m["legal"]
    if not isinstance(legal, list) or not legal:
        raise BadServerMessage(f"the server sent a decide (hand "
                               f"{m.get('hand')}, seq {m.get('seq')}) {_NO_LEGAL}")
    if auto:
        choice = auto_choice(legal)
    elif auto_pass and len(legal) == 1:
        from qipai.text.answer import say

        choice = legal[0]
        p.line("   " + say(LANG, "only_move", action=p.action(choice)))
    else:
        for i, a in enumerate(legal, 1):   # numbered from 1, as play --human numbers them
            p.line(f"  {i}  {p.action(a)}")
        choice = _ask(legal, inp, p, m, extra)
        if choice is None:
            return None
    return json.dumps({"type": "act", "hand": m["hand"], "seq": m["seq"], "action": choice})


def _seconds_left(m: dict[str, Any]) -> int:
    """Whole seconds left before the decision's ``deadline`` (the server's
    Unix time), within 0 and its ``timeout``: a clock set otherwise than the
    server's shows the whole allowance rather than nonsense."""
    timeout = float(m.get("timeout") or 0)
    left = float(m.get("deadline") or 0) - time.time()
    if not 0 <= left <= timeout:
        left = timeout if left > timeout else 0
    return int(left)


def _ask(legal: list[dict[str, Any]], inp: TextIO, p: Any, m: dict[str, Any],
         extra: Any = None) -> dict[str, Any] | None:
    """The action the player types (:func:`qipai.text.answer.pick`); a line
    naming none, or more than one, gets its hint and is asked again, each
    prompt with the seconds left before the deadline of ``m`` (the decide).
    ``d`` and ``d no`` go to ``extra`` (dissolve) and the decision is asked
    again; ``t`` goes to ``extra`` (托管 on or off) and answers None: the
    bot takes the decision, or the server offers it again with a clock.
    A decision offered in 托管 (no deadline) says so instead of "0 s left".

    Raises:
        _Left: ``q``, or the end of input."""
    from qipai.text.answer import BadAnswer, leaves, pick, say

    while True:
        left = (say(LANG, "time_left", s=_seconds_left(m)) if m.get("deadline")
                else "no clock (托管)")
        prompt = f"{say(LANG, 'prompt', n=len(legal))} · {left}> "
        print("   " + prompt, end="", file=p.out, flush=True)
        text = inp.readline()
        if not text:
            raise _Left(say(LANG, "input_ended"))
        if leaves(text):
            raise _Left(say(LANG, "quit"))
        word = " ".join(text.split()).lower()
        if extra is not None and word in ("d", "d no"):
            extra(word)   # the vote answered: the decision is still to be taken
            continue
        if extra is not None and word == "t":
            extra(word)   # 托管 on: the bot takes it; off: the server offers it again
            return None
        try:
            return legal[pick(text, legal, p.cards, p.names, LANG)]
        except BadAnswer as bad:
            p.line(f"   {bad}")


@click.command()
@click.argument("url")
@click.option("--auto", is_flag=True, help="Play by itself (win, pass claims, discard the "
                                           "highest card) instead of asking.")
@click.option("--hands", type=click.IntRange(min=1), default=None,
              help="Leave after this many hands (default: until the table closes).")
@click.option("--auto-pass/--no-auto-pass", default=True, show_default=True,
              help="Answer a decision with one legal answer (a claim window where you may "
                   "only pass, a forced move) without asking.")
def connect(url: str, auto: bool, hands: int | None, auto_pass: bool) -> None:
    """Play a seat of a `qipai serve` table in this terminal.

    URL is ws://HOST:PORT/tables/ID/ws?token=TOKEN (a seat's token, a seat
    token the operator signed — a JWT —, or the spectator's to watch), or
    the page's seat link http://HOST:PORT/#play/ID/TOKEN; the named players
    are shown by name beside their seats.  Answer with the
    action's number (from 1), a card to discard (W, 3m, 三万) or an action's
    word (peng, 胡, pass); Enter alone passes; q leaves; d proposes or agrees
    to dissolving a room (d no refuses); t turns 托管 on or off.  A room's
    ready step is answered at once.  A table that moves to another node of
    a cluster is followed there, and a dropped connection is opened again
    (for at most a minute; then the status is 1).
    """
    try:
        import websockets  # noqa: F401
    except ModuleNotFoundError as exc:
        fail(f"qipai connect needs the 'serve' extra (missing module {exc.name!r}): "
             f"pip install 'qipai[serve]'")
    url = seat_address(url)
    if not url.startswith(("ws://", "wss://")):   # the page's lobby address, say
        fail(f"{re.sub(r'#.*', '#…', url)} is not a seat's WebSocket address: give "
             f"ws://HOST:PORT/tables/ID/ws?token=TOKEN (wss:// over TLS), or the page's "
             f"seat link http://HOST:PORT/#play/ID/TOKEN")
    # the seat's token is not echoed (a terminal's output is pasted, logged)
    shown = re.sub(r"(?<=[?&]token=)[^&#]*", "…", url)

    def hidden(text: str) -> str:
        return text.replace(url, shown)

    try:
        code = run(url, auto=auto, hands=hands, auto_pass=auto_pass)
    except KeyboardInterrupt:   # Ctrl-C: the with-block has closed the socket
        from qipai.text.answer import say

        click.echo("\n== " + say(LANG, "left_table", why=say(LANG, "interrupted")))
        sys.exit(130)
    except (OSError, ValueError) as exc:
        fail(hidden(str(exc)) if url in str(exc) else f"cannot connect to {shown}: {exc}")
    except Exception as exc:  # websockets' own errors (refused handshake, closed)
        said = _refusal_said(exc)
        if said:   # the server refused the upgrade in its own words (TooManyConnections)
            fail(f"{shown}: {said}")
        if type(exc).__module__.startswith("websockets"):
            # some name the URL themselves (InvalidURI): not twice
            fail(hidden(str(exc)) if url in str(exc) else f"{shown}: {exc}")
        raise
    sys.exit(code)


_SEAT_LINK = re.compile(r"(https?)://([^/?#]+)/?#play/([^/?#]+)/([^/?#]+)")


def seat_address(url: str) -> str:
    """The WebSocket address of the page's seat link
    ``http(s)://HOST/#play/ID/TOKEN`` (what an operator hands a player):
    ``ws(s)://HOST/tables/ID/ws?token=TOKEN``; any other ``url`` as it is."""
    from urllib.parse import quote, unquote

    m = _SEAT_LINK.fullmatch(url.strip())
    if m is None:
        return url
    scheme, host, table, token = m.groups()
    ws = "wss" if scheme == "https" else "ws"
    return (f"{ws}://{host}/tables/{quote(unquote(table), safe='')}/ws"
            f"?token={quote(unquote(token), safe='')}")


def _refusal_said(exc: BaseException) -> str | None:
    """``"CODE: message"`` of a WebSocket upgrade the server answered with
    its JSON error (``{"error", "message"}``, e.g. 503 TooManyConnections),
    else None."""
    body = getattr(getattr(exc, "response", None), "body", None)
    if not isinstance(body, (bytes, bytearray)):
        return None
    import msgspec

    try:
        got = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not (isinstance(got, dict) and isinstance(got.get("error"), str)
            and isinstance(got.get("message"), str)):
        return None
    return f"{got['error']}: {' '.join(got['message'].split())}"


def _yuan(x: int) -> str:
    """Minor units (分) as 元 with two decimals, integer arithmetic only."""
    a = abs(x)
    return f"{'-' if x < 0 else ''}{a // 100}.{a % 100:02d} 元"


def _money_lines(p: Any, money: Any, totals: Any) -> list[str]:
    """A hand's money (a table with a stake), for the settlement: each
    payment in 子 and in money, the rake lines to the house, the seats'
    money and the house's take; ``[]`` without a stake."""
    if not money:
        return []
    out = [f"   money: {_yuan(money['stake'])} a 子"
           + (f", rake {money['rake']['percent']}% of each winner's gain, at most "
              f"{_yuan(money['rake']['cap'])} a hand" if money.get("rake") else "")]
    for x in money["payments"]:
        out.append(f"   {p.seat(x['payer'])} → {p.seat(x['payee'])}: {x['zi']} 子 = "
                   f"{_yuan(x['amount'])}")
    for x in money["rake_lines"]:
        out.append(f"   {p.seat(x['payer'])} → house: rake {_yuan(x['amount'])}")
    out.append("   money net: " + ", ".join(f"{p.seat(s)} {_yuan(v)}"
                                            for s, v in enumerate(money["net"]))
               + f" · house {_yuan(money['house'])}")
    if totals is not None:
        out.append("   money totals: " + ", ".join(f"{p.seat(s)} {_yuan(v)}"
                                                   for s, v in enumerate(totals)))
    return out
