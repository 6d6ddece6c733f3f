"""qipai — Chinese regional tile and card games on one table engine.

Start with :func:`qipai.core.ruleset.load` (a variant by name, with its
options), ``Ruleset.table()`` and the ``qipai`` command
(:mod:`qipai.cli`); bots that play whole hands live in :mod:`qipai.bots`.
Importing this package imports nothing else, so the command starts fast.
"""

from typing import Any

__all__ = ["score"]


def score(variant: str, hand: Any, **context: Any) -> Any:
    """Score one hand in one call: :func:`qipai.calc.score` (imported on use).

    ``qipai.score("guilin-mahjong", "11223344556677m", how="dianpao",
    seat=1, dealer=0, from_seat=0)`` → a :class:`qipai.calc.Score`.
    """
    from qipai.calc import score as _score

    return _score(variant, hand, **context)
