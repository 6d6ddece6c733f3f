"""Payments explained for people: each payment's breakdown as a table row.

A command that shows a settlement (``qipai play``, ``qipai replay``,
``qipai score``, ``qipai play --human``) calls :func:`print_payments` (rich)
or :func:`payment_rows` (plain rows).  The breakdown is the payment's
``why`` (:class:`qipai.core.model.Term`); the Chinese names come from the
variant's ``Manifest.names`` and the card names from its card system, so
nothing here knows a variant.

Example::

    from qipai.text.payments import print_payments
    print_payments(console, table.result.payments, rs.manifest)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from qipai.core.model import Payment, format_why, why_total

__all__ = ["PaymentRow", "no_card_win", "payment_rows", "print_payments", "payments_json",
           "why_json"]


class PaymentRow(msgspec.Struct, frozen=True):
    """One payment as text.

    Attributes:
        payer, payee: seats.
        amount: 子 (or 张), as paid.
        reason: the payment's reason id (``hu``, ``hubao``, ``angang`` …).
        why: the breakdown as one line (``"碰碰胡 pengpenghu 9 × 自摸 zimo 2"``),
            empty when the payment carries none (records of format 1).
        exact: whether the breakdown evaluates to ``amount``.
    """

    payer: int
    payee: int
    amount: int
    reason: str
    why: str
    exact: bool


def _names_cards(manifest: Any, names: Mapping[str, str] | None,
                 cards: Any) -> tuple[dict[str, str], Any]:
    if manifest is not None:
        names = {**getattr(manifest, "names", {}), **(names or {})}
        if cards is None and getattr(manifest, "cards", None) is not None:
            cards = _card_text(manifest.cards)
    return dict(names or {}), cards


def _card_text(system: Any) -> Any:
    """One card as ``C(中)``, several in the compact notation (``x1 x2 x3``)."""
    def text(kinds: Any) -> str:
        kinds = tuple(kinds)
        if len(kinds) == 1:
            return f"{system.token(kinds[0])}({system.chinese(kinds[0])})"
        return system.format(kinds)
    return text


def payment_rows(payments: Iterable[Payment], manifest: Any = None, *,
                 names: Mapping[str, str] | None = None, cards: Any = None) -> list[PaymentRow]:
    """Each payment as a :class:`PaymentRow`, in the given order.

    Args:
        payments: the payments (``Result.payments``, a ``Paid`` event's …).
        manifest: the variant's :class:`~qipai.core.ruleset.Manifest` (its
            ``names`` and card system), or None.
        names: more pinyin id → Chinese names (override the manifest's).
        cards: a callable formatting card kinds (default: one card as
            ``C(中)``, several in the manifest's card notation).
    """
    names_, cards_ = _names_cards(manifest, names, cards)
    rows = []
    for p in payments:
        text = format_why(p.why, names_, cards_) if p.why else ""
        try:
            exact = bool(p.why) and why_total(p.why) == p.amount
        except ValueError:
            exact = False
        rows.append(PaymentRow(p.payer, p.payee, p.amount, p.reason, text, exact))
    return rows


def print_payments(console: Any, payments: Iterable[Payment], manifest: Any = None, *,
                   title: str | None = None, names: Mapping[str, str] | None = None,
                   cards: Any = None) -> None:
    """Print ``payments`` on a rich ``console`` as a small table:
    ``payer → payee``, ``amount``, ``= breakdown`` (``reason`` when the
    payment has no breakdown).  Nothing is printed for no payments.

    Args: as :func:`payment_rows`; ``title`` heads the table.
    """
    from rich.table import Table
    from rich.text import Text

    rows = payment_rows(payments, manifest, names=names, cards=cards)
    if not rows:
        return
    table = Table(title=title, title_justify="left", show_header=True, box=None,
                  pad_edge=False, header_style="bold")
    table.add_column("payer → payee", no_wrap=True)
    table.add_column("amount", justify="right")
    table.add_column("= why", overflow="fold")
    for r in rows:
        why = r.why or f"({r.reason})"
        if r.why and not r.exact:
            why += "  [breakdown does not total the amount]"
        table.add_row(f"seat {r.payer} → seat {r.payee}", str(r.amount), Text(f"= {why}"))
    console.print(table)


def why_json(payment: Payment) -> list[dict[str, Any]]:
    """``payment.why`` as JSON-ready builtins (the record's spelling)."""
    return msgspec.to_builtins(payment.why)


def payments_json(payments: Iterable[Payment]) -> list[dict[str, Any]]:
    """Payments as JSON-ready dicts: ``payer``, ``payee``, ``amount``,
    ``reason``, ``why`` (a list of terms, as in records)."""
    return [msgspec.to_builtins(p) for p in payments]


def no_card_win(at_deal: bool) -> str:
    """How a win with no winning card (``Won.card`` None) reads, after
    "seat N wins": ``"on the deal, with the cards dealt (no winning card)"``
    when no card was drawn or discarded before it — zipai 三笼五坎, or a 天胡
    whose 亮张 went into an initial 扫穿 (guilin-zipai §3.3 step 1, D-ZP16),
    the only such wins today; otherwise ``"with the cards held (no winning
    card)"``.  The win's ``how`` (``zimo``: each other seat pays) is left out:
    such a win is no 自摸 (guilin-zipai §4)."""
    if at_deal:
        return "on the deal, with the cards dealt (no winning card)"
    return "with the cards held (no winning card)"

