"""How far a seat's hand is from a win: the environments' progress signals
for reward shaping (docs: reference/env, "Info").

Read from the seat's own view only (its hand, its melds, the cards it can
see), with the greedy bots' measures:

* mahjong — ``shanten``: the hand's 向听
  (:func:`qipai.families.mahjong.shanten.shanten`; −1 complete, 0 ready …);
* zipai — ``missing``: the cards still missing from a win in shape (1:
  ready), and ``hu_estimate``: the most 胡数 a split with that few missing
  would reach (its table melds, 坎, complete groups and the partials' best
  completions: :func:`qipai.bots.zipai_splits`), with ``hu_needed`` the
  ruleset's minimum 胡数 of a win.

A value that cannot be measured (a hand of a size no win fits, a zipai hand
with only 坎 left) is None.
"""

from __future__ import annotations

from typing import Any

from qipai.bots.base import seen_kinds
from qipai.bots.zipai import zipai_threshold, zipai_splits
from qipai.core.errors import BadCards
from qipai.families.mahjong.shanten import shanten
from qipai.families.zipai import groups as zipai_groups

__all__ = ["KEYS", "progress", "signals"]

#: The info keys of each family.
KEYS: dict[str, tuple[str, ...]] = {
    "mahjong": ("shanten",),
    "zipai": ("missing", "hu_estimate", "hu_needed"),
}


def progress(ruleset: Any, view: Any, discard_due: bool) -> dict[str, Any]:
    """The progress signals of ``view``'s seat (see the module doc).

    Args:
        ruleset: the table's ruleset (its family; zipai: its ``hu_scale``).
        view: the seat's :class:`~qipai.core.views.SeatView`, or a
            function that gives it (mahjong's signal needs only the seat's
            hand and melds: pass ``hand`` and ``melds`` then).
        discard_due: the seat holds a card it must discard (zipai: that
            card's best discard is taken as made).

    Returns: ``{key: value}`` with the keys of :data:`KEYS` for the family
    (none for another family).
    """
    return signals(ruleset, view.hand, view.melds[view.seat], lambda: view, discard_due)


def signals(ruleset: Any, hand: Any, melds: Any, view: Any, discard_due: bool
            ) -> dict[str, Any]:
    """:func:`progress` from the seat's concealed ``hand`` (kinds), its own
    ``melds`` and ``view()`` (called for zipai only: the cards it can see)."""
    family = ruleset.manifest.family
    K = ruleset.cards.n_kinds
    c = [0] * K
    for k in hand:
        c[k] += 1
    own = melds
    if family == "mahjong":
        try:
            return {"shanten": shanten(c, len(own))}
        except BadCards:  # a hand size no win fits (a variant's own shape)
            return {"shanten": None}
    if family == "zipai":
        view = view()
        need = zipai_threshold(ruleset.options)
        splits = zipai_splits(c, seen_kinds(view, K), pending_discard=discard_due)
        if not splits:
            return {"missing": None, "hu_estimate": None, "hu_needed": need}
        missing = min(d for d, _ in splits)
        table = sum(zipai_groups.meld_hu(m) for m in own)  # its own: all cards shown
        hu = max(v for d, v in splits if d == missing) + table
        return {"missing": missing, "hu_estimate": round(float(hu), 3), "hu_needed": need}
    return {}
