"""``qipai report``: what a ``qipai simulate`` file says, per ruleset.

Read with DuckDB.  Per ruleset (in the order the simulation was given them):

* hands; 荒庄 rate; win rate of each seat and of the dealer (share of
  hands the seat is among the winners);
* share of each way of winning (of the hands won) and of each pattern (of
  the wins: a hand with two winners counts two wins; a pattern counts once
  per win), each named in Chinese, then by its id (``清一色 qingyise``,
  :func:`pattern_text`);
* 子 moved per hand — Σ over seats of max(net, 0), every seat's gain (the
  winners', and a kong fee's in a hand nobody won) —
  mean, 50th/90th/99th percentiles (linear interpolation, as
  ``quantile_cont``) and maximum; instant payments (kongs …) per hand;
* each seat's mean net (子 per hand); mean 胡数 and 醒 of a win where the
  variant has them.

Rates carry a 95 % Wilson score interval (:func:`wilson`); means a normal
interval, mean ± 1.96 · s/√n (:func:`mean_ci`).  With two or more rulesets,
each later one is compared with the first (see :func:`differences`).
Both play the same deals (hand ``i`` has the same seed in every ruleset), so
where both have the same hands and seats the differences are *paired* on
the hand index: a rate of hands (荒庄, a seat's or the dealer's wins) with
Newcombe's interval for paired proportions (:func:`newcombe_paired`), a
per-hand mean (money moved, each seat's net) as the mean of the per-hand
differences.  Shares of the hands won or of the wins (ways of winning,
patterns) have a denominator of their own in each ruleset and keep
Newcombe's hybrid score interval for independent samples
(:func:`newcombe`), conservative here; so do rates of hands, and Welch's
interval means, when the hands are not the same.

The pairing holds across variants too: it needs the same hands and seats,
and a seed deals the same cards in ``guilin-mahjong`` and
``guangxi-mahjong`` (the same 136 tiles, shuffled and dealt alike: checked
on the deals, ``tests/sim/test_report_variants.py``).  Were a variant to deal
otherwise from a seed, its pairs would be two independent hands: the paired
intervals stay right, merely no narrower than the independent ones.

Ways of winning and patterns are each variant's own (:attr:`RulesetSummary.variant`):

* within one variant (``guilin-mahjong`` and ``guilin-mahjong(hubao=false)``)
  one that only one ruleset has never happened in the other: there it is
  0 % of the hands won or of the wins, shown with its interval
  (``0.0 % [0.0, 1.3]``), and the difference is computed as for any other;
* across variants of one family (``guilin-mahjong`` and
  ``guangxi-mahjong``) only those both have are compared — 七对 ``qidui``
  and 七小对 ``qixiaodui`` are each one variant's;
* across families (mahjong and 字牌) none is, nor 胡数 or 醒: the same id
  can be another thing (字牌's ``pinghu`` is a way of winning, mahjong's a
  pattern; 字牌 counts its 醒 otherwise).

A line under the heading says so (:func:`notes`).  ``—`` means *no such
figure*: in a ruleset's column, a way of winning or pattern not seen under
any ruleset of its variant in the file (another variant's, or one its own
variant never showed: the file does not list what a variant could score),
胡数 and 醒 in a variant without them, a seat a 3-seat game has not, a
share of wins when there are none; in the difference column, no difference.
Within one variant a way of winning or pattern one ruleset showed is
``0.0 %`` with its interval in the others, never ``—``.

The rooms: the intervals in :mod:`~qipai.sim.report.stats`, reading the
file and every figure in :mod:`~qipai.sim.report.summary`, the text table
in :mod:`~qipai.sim.report.render`, the charts and the HTML page in
:mod:`~qipai.sim.report.page`; a ``qipai arena`` file (known by its
``qipai.arena`` metadata) is read and summarised by
:mod:`~qipai.sim.report.arena` (the per-deal statistic and its paired
interval).
"""

from __future__ import annotations

from qipai.sim.report.page import CJK_FONTS, PAGE_MARK, charts, is_report_page, write_html
from qipai.sim.report.render import LABEL_MIN, TITLE, markdown, print_report, table_rows
from qipai.sim.report.stats import Z, mean_ci, newcombe, newcombe_paired, welch, wilson
from qipai.sim.report.summary import (
    Figure, RulesetSummary, Summary, differences, notes, pattern_names, pattern_text, summarize,
    variant_families, variant_ids,
)

__all__ = ["CJK_FONTS", "LABEL_MIN", "PAGE_MARK", "TITLE", "Z", "Figure", "RulesetSummary",
           "Summary", "charts", "differences", "is_report_page", "markdown", "mean_ci", "newcombe",
           "newcombe_paired", "notes", "pattern_names", "pattern_text", "print_report", "summarize",
           "table_rows", "variant_families", "variant_ids", "welch", "wilson", "write_html"]
