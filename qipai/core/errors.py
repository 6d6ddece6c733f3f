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
    not replay (a difference, not unreadable input).  ``refused`` is the
    table's own error for that action."""

    refused: QipaiError | None = None


class BadCase(QipaiError, ValueError):
    """A conformance case file does not follow the case format (docs/reference/case-format.md)."""


class PluginError(QipaiError, RuntimeError):
    """A plugin's hook broke the engine's contract: it raised during
    :meth:`~qipai.core.table.Table.apply`, or answered something the engine
    refuses (a payment from a seat that is not at the table, a negative or
    non-int amount, a next dealer out of range, no legal action at all, …).

    ``hook`` is the hook's name (``"qipai_settle"``), ``plugin`` the pluggy
    name of the plugin that answered (several names, comma-separated, when
    the engine cannot tell which of them did), ``reason`` what was wrong.
    Raised by ``apply``, the table is left exactly as before the call.
    """

    def __init__(self, hook: str, plugin: str, reason: str) -> None:
        super().__init__(f"plugin {plugin} broke hook {hook}: {reason}")
        self.hook = hook
        self.plugin = plugin
        self.reason = reason


class VersionMismatch(BadRecord):
    """A record or snapshot was made under another qipai version, variant
    version, ruleset or set of house plugins than the one asked to replay or
    restore it: it is refused rather than played into a different game.

    ``differences`` lists what differs, each ``(what, recorded, running)``
    (``what`` is ``"qipai version"``, ``"variant version"``, ``"ruleset"``
    or ``"house plugins"``); the message names every one.
    """

    def __init__(self, subject: str, differences: list[tuple[str, str, str]]) -> None:
        parts = "; ".join(f"{what}: recorded {rec}, running {run}"
                          for what, rec, run in differences)
        super().__init__(f"{subject} was made under other versions ({parts})")
        self.differences = differences
