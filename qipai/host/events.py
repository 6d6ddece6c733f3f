"""What happens at the tables, told once: one :class:`Events` per server.

The authority calls :meth:`Events.emit` where a table is created or
closed, a hand ends, a seat's decision times out or an act is refused;
each event is

* counted here (plain integers read when ``/metrics`` is scraped, so the
  hot path pays an addition, not a metrics library), and
* logged on the :data:`logger` ``qipai.events`` as one record whose
  message is the event's name and whose ``extra`` holds its fields
  (``record.event``, ``record.fields``): the server's log formatter writes
  it as text or as one JSON object a line (``qipai serve --log-format``).

The fields never hold a seat's or admin token, a hand's salt before its
reveal, or any key: only ids, seat numbers, the variant spec, the hand's
end and its net, and the name of the operator key that made the table
(``key``, null without one: on ``table_created``, ``hand_ended``,
``timeout`` and ``table_closed``).  An applied action is counted only (:meth:`Events.applied`),
never logged: there are thousands a second.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

#: The logger every event goes to (INFO).
logger = logging.getLogger("qipai.events")


class Events:
    """The event counts of one server, and the one place events are emitted."""

    def __init__(self) -> None:
        self.actions = 0            #: actions applied (submitted to the group commit)
        self.hands = 0              #: hands ended
        self.timeouts = 0           #: decisions that timed out (the default action played)
        self.created = 0            #: tables created
        self.closed = 0             #: tables closed
        self.refusals: Counter[str] = Counter()   #: refusals by their code

    def applied(self) -> None:
        """(The hot path.)  One action applied: counted, not logged."""
        self.actions += 1

    def emit(self, event: str, **fields: Any) -> None:
        """Count ``event`` and log it with ``fields`` on :data:`logger`."""
        if event == "hand_ended":
            self.hands += 1
        elif event == "timeout":
            self.timeouts += 1
        elif event == "refused":
            self.refusals[fields.get("reason", "?")] += 1
        elif event == "table_created":
            self.created += 1
        elif event == "table_closed":
            self.closed += 1
        if logger.isEnabledFor(logging.INFO):
            logger.info(event, extra={"event": event, "fields": fields})
