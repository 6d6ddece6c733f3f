"""The action a host plays for a seat that does not decide in time.

:func:`default_action` asks the hook ``qipai_default_action`` (a variant
or house plugin may answer) and otherwise takes the generic default:

* a claim window (the seat may pass): ``Pass`` — the card goes by;
* the seat's turn: discard the card it just drew (its last ``drew``
  event, when that card may be discarded now), else the last card of its
  hand in sort order that may be discarded (after a 碰/吃 there is no
  drawn card), else the first legal action (a turn with no discard, such
  as a mandatory move).

The host records such an action as a timeout (``Record.timeouts``).
"""

from __future__ import annotations

from typing import Any

from qipai.core.errors import IllegalAction, PluginError
from qipai.core.model import Action, Discard, Drew, Pass


def default_action(table: Any, seat: int) -> Action:
    """The default action of ``seat`` now: one of ``table.legal_actions(seat)``.

    Raises:
        IllegalAction: ``seat`` has nothing to decide.
        PluginError: ``qipai_default_action`` answered an action that is not legal.
    """
    legal = table.legal_actions(seat)
    if not legal:
        raise IllegalAction(f"seat {seat} has nothing to decide now")
    chosen = table.hook.qipai_default_action(table=table, seat=seat)
    if chosen is not None:
        if chosen not in legal:
            raise PluginError("qipai_default_action", table._plugins("qipai_default_action"),
                              f"{chosen!r} is not a legal action of seat {seat}")
        return legal[legal.index(chosen)]
    if Pass(seat) in legal:
        return legal[legal.index(Pass(seat))]
    discards = {a.card: a for a in legal if type(a) is Discard}
    if discards:
        for event in reversed(table.state.events):
            if getattr(event, "seat", None) != seat:
                continue
            if type(event) is Drew and event.card in discards:
                return discards[event.card]
            break  # its latest event is not a draw (a 碰, a discard …): no card just drawn
        for card in sorted(table.state.seats[seat].hand, reverse=True):
            if card in discards:
                return discards[card]
    return legal[0]
