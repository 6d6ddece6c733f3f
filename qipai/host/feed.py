"""The operator's events: what a table tells its operator, written to the
database's outbox (``qipai_events``) in the same transaction as the change
each reports, and delivered from there (the webhook,
:mod:`qipai.server.webhook`; ``GET /events``).

Each function answers one ``("event", row)`` operation of a
:class:`~qipai.host.store.Write`; ``data`` is the event's JSON object (the
``data`` of what is delivered, docs/reference/protocol.md "Events"):

* ``table_created`` — ``variant`` (spec), ``players`` (seats), ``bots``,
  ``levels`` (each bot seat's level),
  ``named`` (seat → ``{"player", "name"}``), ``hands`` (a room's 局数 or
  null), ``rng``; ``stake`` and ``rake`` when the table has a stake;
* ``hand_started`` — ``hand``, ``dealer``, ``commitment`` (SHA-256 hex of
  the deal and its salt, revealed at the hand's end); a joint deal's
  (:mod:`qipai.host.seatvalues`) also ``joint``: ``{"server_commitment",
  "commitments"}`` (per seat, null for none), written when it is dealt;
* ``hand_ended`` — ``hand``, ``end``, ``winners``, ``payments`` (each
  ``{"payer", "payee", "amount", "reason", "why"}``, 子), ``net`` (per
  seat), ``totals`` (the table's running net after it), ``named``,
  ``records`` (the path of the table's records), ``reveal``
  (``{"commitment", "salt", "deal"}``; a joint deal's also ``joint`` —
  the server seed and each seat's commitment, value, withheld — and
  ``seed``, the deal seed), ``chain`` (the table's chain head after the
  hand, its end link: :mod:`qipai.core.chain`; null for a hand whose row
  was made before links); a table with a stake adds ``money``
  (the hand in money, :class:`~qipai.core.money.Money`: each payment's
  ``zi`` and ``amount``, the ``rake_lines`` to the house, ``net``,
  ``house``) and ``money_totals`` (running money net per seat after it);
* ``table_closed`` — ``ended`` (``closed``, ``dissolved``, ``finished``),
  ``hands_done``, ``totals``, ``tally`` (a room's 大结算, else null),
  ``chain`` (the table's last chain head);
* ``timeout`` — ``hand``, ``seat``, ``index`` (the action's index in the
  hand) — the server played the default action for the seat;
* ``tuoguan`` — ``hand``, ``seat``, ``on`` (true: the table's bot plays for
  the seat now), ``why`` (``"timeouts"``, ``"played"`` — the player moved
  again —, ``"asked"``).

No event holds a token, a key, or a hand's salt before its end.
"""

from __future__ import annotations

from typing import Any

import msgspec

from qipai.host.store import event_params


def op(t: Any, kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
    """The ``("event", row)`` write operation of event ``kind`` of table ``t``."""
    return ("event", event_params(t.id, t.key_name, kind, data))


def named(t: Any) -> dict[str, dict[str, str]]:
    return {str(s): p for s, p in sorted(t.named.items())}


def table_created(t: Any) -> tuple[str, dict[str, Any]]:
    more = {}
    if t.stake is not None:
        more = dict(stake=t.stake, rake=msgspec.to_builtins(t.rake))
    return op(t, "table_created", variant=t.ruleset.spec, players=t.n, bots=list(t.bots),
              levels={str(s): lv for s, lv in sorted(t.levels.items())}, named=named(t),
              hands=t.room_hands, rng=t.rng_shown, **more)


def hand_started(t: Any, hand: int, table: Any, commit: str,
                 joint: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    if joint is not None:   # a joint deal (qipai.host.seatvalues): its commitments
        return op(t, "hand_started", hand=hand, dealer=table.dealer, commitment=commit,
                  joint=joint)
    return op(t, "hand_started", hand=hand, dealer=table.dealer, commitment=commit)


def hand_ended(t: Any, hand: int, result: Any, rec: dict[str, Any],
               totals: list[int], money: Any = None,
               money_totals: list[int] | None = None) -> tuple[str, dict[str, Any]]:
    more = {}
    if money is not None:   # a table with a stake (only then: as before without one)
        more = dict(money=msgspec.to_builtins(money), money_totals=money_totals)
    return op(t, "hand_ended", hand=hand, end=result.end, winners=list(result.winners),
              payments=msgspec.to_builtins(result.payments), net=list(result.net),
              totals=totals, named=named(t), records=f"/tables/{t.id}/records",
              reveal=reveal_of(rec), chain=(rec.get("chain") or {}).get("head"), **more)


def reveal_of(rec: dict[str, Any]) -> dict[str, Any]:
    """``hand_ended``'s ``reveal``: the commitment, salt and deal, and a joint
    deal's parts (``joint``: the server seed, each seat's value) and seed."""
    out = {"commitment": rec.get("commitment"), "salt": rec.get("salt"), "deal": rec.get("deal")}
    if rec.get("joint") is not None:
        out["joint"] = rec["joint"]
        out["seed"] = rec.get("seed")
    return out


def table_closed(t: Any, ended: str, hands_done: int, totals: list[int],
                 tally: Any, head: str | None = None) -> tuple[str, dict[str, Any]]:
    return op(t, "table_closed", ended=ended, hands_done=hands_done, totals=list(totals),
              tally=msgspec.to_builtins(tally) if tally is not None else None,
              chain=head)


def timeout(t: Any, hand: int, seat: int, index: int) -> tuple[str, dict[str, Any]]:
    return op(t, "timeout", hand=hand, seat=seat, index=index)


def tuoguan(t: Any, hand: int, seat: int, on: bool, why: str) -> tuple[str, dict[str, Any]]:
    return op(t, "tuoguan", hand=hand, seat=seat, on=on, why=why)
