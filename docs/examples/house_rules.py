"""A host's house rules for 广西麻将, as a tiny plugin layered over the variant.

Options are the first tool (``guangxi-mahjong(fenghu_count=4)``); a plugin is
the second, for a change no option covers.  This one makes two:

* 荒庄轮庄 — after an exhaustive draw the deal passes to the next seat
  (the source's rule is 荒庄连庄: the dealer deals again);
* 暗杠 fees stand at 荒庄 (the source returns them).

Load it with ``load("guangxi-mahjong", plugins=[house_rules])``, or from the
command line with ``qipai play guangxi-mahjong --plugin docs/examples/house_rules.py``.
"""

from __future__ import annotations

from qipai.core.hookspecs import hookimpl


@hookimpl(tryfirst=True)
def qipai_next_dealer(table, end, winners, from_seat):
    """荒庄: the next seat deals; otherwise defer to the variant (None)."""
    if end == "huangzhuang":
        return (table.state.dealer + 1) % table.n
    return None


@hookimpl(wrapper=True)
def qipai_instant_payments(table, event):
    """Drop the variant's 暗杠 refunds at 荒庄."""
    payments = yield
    return [ps for ps in ([p for p in group if p.reason != "angang_refund"] for group in payments)]
