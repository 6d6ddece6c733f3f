"""Research at scale: play many bot hands per ruleset and compare the rulesets.

* :mod:`qipai.sim.run` — ``qipai simulate``: N hands of each ruleset, one
  Parquet row per hand (:data:`~qipai.sim.rows.COLUMNS`, :mod:`qipai.sim.rows`),
  on local worker processes or as Ray tasks (:mod:`qipai.sim.backends`),
  written by :mod:`qipai.sim.parquet`; the file's bytes depend only on the
  rulesets, N, the bots and the seed.
* :mod:`qipai.sim.arena` — ``qipai arena``: duplicate play, each deal with
  every challenger bot in every seat against a field bot, on the same
  chunks and backends.
* :mod:`qipai.sim.report` — ``qipai report``: rates with Wilson intervals,
  money moved, mean net per seat and differences between rulesets, read
  with DuckDB; an HTML page with matplotlib charts (the package
  :mod:`qipai.sim.report`: stats, summary, render, page).

Both need the optional extra ``qipai[sim]`` (pyarrow, DuckDB, matplotlib),
installed by default by ``uv run`` (the ``sim`` dependency group); Ray is the
extra ``qipai[ray]`` (:func:`~qipai.core.extras.require` names the extra a
missing module comes with).  This package sits above the core: the core
never imports it.
"""

from __future__ import annotations

from qipai.core.errors import QipaiError
from qipai.core.extras import MissingExtra, installed, require

__all__ = ["BadSimulation", "MissingExtra", "RayUnavailable", "installed", "require"]


class BadSimulation(QipaiError, ValueError):
    """Bad input to a simulation or a report (hands < 1, workers < 1, a file
    that is not a ``qipai simulate`` output …); the message names it."""


class RayUnavailable(QipaiError, RuntimeError):
    """``ray.init`` failed: no cluster at the address, or a local instance
    that did not start (on a heavily loaded machine Ray's node can time out
    while starting its agents); or Ray's workers ran no task.

    Attributes:
        address: the cluster address ``ray.init`` failed with, when that is
            what failed; else None (a local instance, the workers).
    """

    def __init__(self, message: str, address: str | None = None) -> None:
        super().__init__(message)
        self.address = address
