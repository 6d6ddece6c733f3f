"""The report's intervals: Wilson's for a rate, Newcombe's for a difference of rates, normal ones.

Every interval is a two-sided 95 % one (:data:`Z`); the report's module
doc (:mod:`qipai.sim.report`) says which figure gets which.
"""

from __future__ import annotations

import math


#: The normal quantile of a two-sided 95 % interval.
Z = 1.959963984540054


def wilson(x: int, n: int, z: float = Z) -> tuple[float, float]:
    """Wilson score interval of a proportion ``x / n`` (``(0, 1)`` for n = 0)."""
    if n <= 0:
        return (0.0, 1.0)
    p = x / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z / d * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe(x1: int, n1: int, x2: int, n2: int, z: float = Z) -> tuple[float, float]:
    """Newcombe's hybrid score interval (his method 10) of ``x2/n2 − x1/n1``."""
    p1, p2 = (x1 / n1 if n1 else 0.0), (x2 / n2 if n2 else 0.0)
    l1, u1 = wilson(x1, n1, z)
    l2, u2 = wilson(x2, n2, z)
    d = p2 - p1
    return (d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2),
            d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2))


def newcombe_paired(both: int, only1: int, only2: int, neither: int,
                    z: float = Z) -> tuple[float, float]:
    """Newcombe's interval (his method 10 for paired data) of ``p2 − p1``,
    the difference of two proportions measured on the same ``n`` units:
    ``both`` units count in both, ``only1`` in the first alone, ``only2`` in
    the second alone, ``neither`` in none (``p1 = (both + only1) / n``,
    ``p2 = (both + only2) / n``).

    From each proportion's Wilson interval, joined with the correlation φ of
    the two counts (its numerator ``both · neither − only1 · only2`` less
    ``n/2`` when positive, not below 0; φ = 0 when a margin is empty).
    Source: R. G. Newcombe, "Improved confidence intervals for the
    difference between binomial proportions based on paired data",
    *Statistics in Medicine* 17 (1998) 2635–2650, method 10.  ``(0, 0)``
    for n = 0.

    Raises:
        ValueError: a negative count.
    """
    if min(both, only1, only2, neither) < 0:
        raise ValueError(f"counts must be ≥ 0, not {(both, only1, only2, neither)}")
    n = both + only1 + only2 + neither
    if n == 0:
        return (0.0, 0.0)
    x1, x2 = both + only1, both + only2
    p1, p2 = x1 / n, x2 / n
    l1, u1 = wilson(x1, n, z)
    l2, u2 = wilson(x2, n, z)
    margins = x1 * (n - x1) * x2 * (n - x2)
    if margins == 0:
        phi = 0.0
    else:
        num = both * neither - only1 * only2
        if num > 0:
            num = max(num - n / 2, 0.0)
        phi = num / math.sqrt(margins)
    d = p2 - p1
    lo = (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    hi = (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2
    return (d - math.sqrt(max(lo, 0.0)), d + math.sqrt(max(hi, 0.0)))


def mean_ci(mean: float, sd: float | None, n: int, z: float = Z) -> tuple[float, float]:
    """``mean ± z · sd / √n``; ``(nan, nan)`` when n < 2 (no spread to
    estimate: printed ``n/a``, never a zero-width interval)."""
    if n < 2 or sd is None:
        return (math.nan, math.nan)
    half = z * sd / math.sqrt(n)
    return (mean - half, mean + half)


def welch(m1: float, s1: float | None, n1: int, m2: float, s2: float | None, n2: int,
          z: float = Z) -> tuple[float, float]:
    """Normal interval of ``m2 − m1`` with Welch's standard error;
    ``(nan, nan)`` when either side has fewer than 2 hands (see :func:`mean_ci`)."""
    d = m2 - m1
    if n1 < 2 or n2 < 2 or s1 is None or s2 is None:
        return (math.nan, math.nan)
    half = z * math.sqrt(s1 * s1 / n1 + s2 * s2 / n2)
    return (d - half, d + half)
