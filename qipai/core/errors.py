"""Errors raised by qipai.

Every error a host can trigger with bad input is a subclass of
:class:`QipaiError` and carries a one-line message naming what was wrong.
"""

from __future__ import annotations


class QipaiError(Exception):
    """Base class of every error qipai raises on bad input."""


class BadNotation(QipaiError, ValueError):
    """A card string could not be parsed; the message names the bad token."""


class BadCards(QipaiError, ValueError):
    """A set of cards is impossible: a fifth copy, a wrong hand size, …"""


class UnknownVariant(QipaiError, LookupError):
    """No variant of that name is registered in the ``qipai.variants`` group."""


class BadOption(QipaiError, ValueError):
    """An option is unknown or its value is not allowed; the message names it."""


class IllegalAction(QipaiError, ValueError):
    """An action that is not legal now; the table is left unchanged.

    ``reason`` is the one-line explanation (wrong seat, wrong time, cards not
    held, chi from a seat other than the previous one, …).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BadRecord(QipaiError, ValueError):
    """A game record cannot be decoded or does not fit its variant."""


class ReplayDiverged(BadRecord):
    """A record's action is refused when it is played again: the record does
    not replay (a difference, not unreadable input)."""


class BadCase(QipaiError, ValueError):
    """A conformance case file does not follow CONFORMANCE.md."""
