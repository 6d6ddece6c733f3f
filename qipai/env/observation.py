"""A seat's view as a numpy array (docs: reference/env, "Observation").

The observation is a ``uint8`` array of shape ``(rows, K)`` (``K`` = the
family's card kinds), built from the seat's view only
(:class:`~qipai.core.views.SeatView`: its own hand, the others' hand sizes,
the melds as the seat sees them — face-down cards unknown —, the discards,
the stock size and the card in play).  Seats are *relative*: row block
``r`` is the seat ``r`` places after the viewer in turn order (``r = 0``
is the viewer).  Rows, in order:

* ``hand`` (1 row): the viewer's concealed cards, copies per kind;
* ``meld r kind`` (``n × M`` rows): for relative seat ``r`` and each meld
  kind of the family (mahjong ``chi peng minggang jiagang angang``; zipai
  ``chi peng sao guosao saochuan kaizhao``), the visible cards of its melds
  of that kind, copies per kind — as the viewer sees them, so another
  seat's 过扫 shows as a ``sao`` (``Manifest.face_down_kinds``) and its
  face-down cards are not counted;
* ``discards r`` (``n`` rows): relative seat ``r``'s discards, copies per kind;
* ``window`` (1 row): 1 at the card in play, if any;
* ``info`` (1 row), its first entries: the stock left; the hand sizes by
  relative seat (``n``); the face-down meld cards by relative seat (``n``);
  the dealer's relative seat; the relative seat whose turn it is, plus 1
  (0: none); the window's owner, plus 1 (0: no window); the window's
  source (0 none, 1 ``discard``, 2 ``draw``, 3 ``jiagang``, 4 ``dihu``).
  The rest of the row is 0.

:func:`seat_view` is the seat's view without its event stream (what the
encoding does not read), from the one view builder
(:func:`qipai.core.views.seat_view`); :func:`encode` takes it or the whole
view, and reads neither the events nor the instant payments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qipai.core import views
from qipai.core.errors import QipaiError
from qipai.core.views import SeatView, meld_view

__all__ = ["Layout", "MELD_KINDS", "SOURCES", "encode", "layout_for", "seat_view"]

#: The meld kinds of each family, in row order (pinyin ids as ``Meld.kind``).
MELD_KINDS: dict[str, tuple[str, ...]] = {
    "mahjong": ("chi", "peng", "minggang", "jiagang", "angang"),
    "zipai": ("chi", "peng", "sao", "guosao", "saochuan", "kaizhao"),
}
#: Window sources and their codes in the info row (0: no window).
SOURCES: dict[str, int] = {"discard": 1, "draw": 2, "jiagang": 3, "dihu": 4}


_U8 = np.dtype(np.uint8)


class Layout:
    """The observation layout of one ruleset.

    Attributes:
        n: seats.  K: card kinds.  kinds: the meld kinds (rows order).
        rows: the row names, ``"hand"``, ``"meld 1 peng"``, ``"discards 2"``,
            ``"window"``, ``"info"``.
        shape: ``(len(rows), K)``.
        info: the names of the info row's entries, in order.
    """

    def __init__(self, n: int, kinds: int, meld_kinds: tuple[str, ...]) -> None:
        self.n, self.K, self.kinds = n, kinds, meld_kinds
        M = len(meld_kinds)
        self.rows = (["hand"] + [f"meld {r} {k}" for r in range(n) for k in meld_kinds]
                     + [f"discards {r}" for r in range(n)] + ["window", "info"])
        self.shape = (len(self.rows), kinds)
        self.MELD = 1
        self.DISCARDS = 1 + n * M
        self.WINDOW = self.DISCARDS + n
        self.INFO = self.WINDOW + 1
        self.info = (["stock"] + [f"hand_size {r}" for r in range(n)]
                     + [f"face_down {r}" for r in range(n)]
                     + ["dealer", "turn+1", "window_owner+1", "window_source"])
        if len(self.info) > kinds:
            raise ValueError(f"{n} seats do not fit an info row of {kinds} entries")
        #: meld kind → its row offset (in cards) within a seat's block
        self.kind_row = {k: i for i, k in enumerate(meld_kinds)}
        self.size = len(self.rows) * kinds


_LAYOUTS: dict[tuple[int, int, str], Layout] = {}


def layout_for(ruleset: Any) -> Layout:
    """The layout of ``ruleset``'s observations (shared, built once)."""
    m = ruleset.manifest
    key = (m.players, ruleset.cards.n_kinds, m.family)
    got = _LAYOUTS.get(key)
    if got is None:
        kinds = MELD_KINDS.get(m.family)
        if kinds is None:
            from qipai.core.errors import UnknownVariant
            raise UnknownVariant(f"qipai.env has no observation layout for the family "
                                 f"{m.family!r} of {m.name!r}; families: mahjong, zipai")
        got = _LAYOUTS[key] = Layout(m.players, ruleset.cards.n_kinds, kinds)
    return got


class NotObservable(QipaiError, ValueError):
    """A view holding something the layout has no row for (a meld kind or
    window source a house plugin added); the message names it."""


def seat_view(table: Any, seat: int, face_down_kinds: dict[str, str] | None = None) -> SeatView:
    """``table.view(seat, events=False)``: the seat's view without its
    event stream, built by the one view builder
    (:func:`qipai.core.views.seat_view`) at a cost that does not grow with
    the hand.  ``face_down_kinds`` is accepted for callers that pass the
    manifest's and not read: the view shows what the table's own
    (:attr:`Table.face_down_kinds <qipai.core.table.Table.face_down_kinds>`)
    gives."""
    return views.seat_view(table, seat, events=False)


def encode(view: SeatView, layout: Layout) -> np.ndarray:
    """The observation of ``view``: ``uint8`` array of ``layout.shape``
    (see the module doc).  A new array on every call.

    Raises:
        NotObservable: a meld kind or a window source the layout lacks.
    """
    K, n = layout.K, layout.n
    buf = bytearray(layout.size)
    for c in view.hand:
        buf[c] += 1
    me = view.seat
    M = len(layout.kinds)
    kind_row = layout.kind_row
    info = layout.INFO * K
    for r in range(n):
        p = (me + r) % n
        melds = view.melds[p]
        if melds:
            block = (layout.MELD + r * M) * K
            hidden = 0
            for mv in melds:
                row = kind_row.get(mv.kind)
                if row is None:
                    raise NotObservable(f"meld kind {mv.kind!r} has no row in the observation "
                                        f"(kinds: {', '.join(layout.kinds)})")
                off = block + row * K
                for c in mv.cards:
                    if c is None:
                        hidden += 1
                    else:
                        buf[off + c] += 1
            buf[info + 1 + n + r] = hidden
        off = (layout.DISCARDS + r) * K
        for c in view.discards[p]:
            buf[off + c] += 1
        buf[info + 1 + r] = view.hand_sizes[p]
    buf[info] = min(view.stock, 255)
    base = info + 1 + 2 * n
    buf[base] = (view.dealer - me) % n
    if view.turn is not None:
        buf[base + 1] = (view.turn - me) % n + 1
    w = view.window
    if w is not None:
        buf[layout.WINDOW * K + w[0]] = 1
        buf[base + 2] = (w[1] - me) % n + 1
        src = SOURCES.get(w[2])
        if src is None:
            raise NotObservable(f"window source {w[2]!r} has no code in the observation "
                                f"(sources: {', '.join(SOURCES)})")
        buf[base + 3] = src
    return np.frombuffer(buf, dtype=np.uint8).reshape(layout.shape)


class Encoder:
    """:func:`encode` of ``table.view(seat)``, incrementally, for one table.

    Gives the very array :func:`encode` gives for the seat's view (tests
    check it seat by seat, step by step, over random play), reading only
    what that view holds: the seat's own hand, hand sizes, every seat's
    melds through :func:`~qipai.core.views.meld_view` (face-down cards
    hidden from the others), the discards, the stock size and the window.
    It keeps one buffer per viewing seat and rewrites only what changed
    since that seat's last observation: its hand row when its hand changed,
    a seat's meld rows when its melds changed, the discards that were added
    (discards only grow, as the families keep them; a list found shorter is
    read again), the window row and the info row.

    Args:
        table: the table (a new hand needs a new encoder).
        layout: :func:`layout_for` its ruleset.
        face_down_kinds: ``dict(Manifest.face_down_kinds)``.
    """

    def __init__(self, table: Any, layout: Layout, face_down_kinds: dict[str, str]) -> None:
        self.table, self.layout, self.fdk = table, layout, face_down_kinds
        n = layout.n
        self._meld_block = len(layout.kinds) * layout.K
        self._zero_melds = bytes(self._meld_block)
        #: per viewer: its buffer, its hand as last encoded, per relative
        #: seat the discards counted and the melds encoded, the window cell set
        self._buf = [bytearray(layout.size) for _ in range(n)]
        self._hand: list[list[int] | None] = [None] * n
        self._disc_len = [[0] * n for _ in range(n)]
        self._melds_seen: list[list[list[Any]]] = [[[] for _ in range(n)] for _ in range(n)]
        self._window_cell = [-1] * n
        #: per seat: (its melds, rows as it sees them, rows as others see them, face down)
        self._meld_rows: list[tuple[list[Any], bytes, bytes, int] | None] = [None] * n
        K = self._K = layout.K
        self._n = n
        self._shape = layout.shape
        self._zero_k = bytes(K)
        info = layout.INFO * K
        self._stock_cell = info
        self._base = info + 1 + 2 * n  # the info row's dealer entry
        self._window_row = layout.WINDOW * K
        #: per viewer, per relative seat r: (r, seat, meld block offset,
        #: discards row offset, hand-size cell, face-down cell)
        self._places = [tuple((r, (v + r) % n, (layout.MELD * K) + r * self._meld_block,
                               (layout.DISCARDS + r) * K, info + 1 + r, info + 1 + n + r)
                              for r in range(n)) for v in range(n)]

    def _melds(self, p: int, melds: list[Any]) -> tuple[list[Any], bytes, bytes, int]:
        """Seat ``p``'s meld rows as ``p`` sees them, as the others see
        them, and how many of its meld cards lie face down for the others."""
        got = self._meld_rows[p]
        if got is not None and got[0] == melds:
            return got
        K, layout = self.layout.K, self.layout
        rows = []
        hidden = 0
        for visible in (True, False):
            buf = bytearray(self._meld_block)
            for m in melds:
                mv = meld_view(m, visible, self.fdk)
                row = layout.kind_row.get(mv.kind)
                if row is None:
                    raise NotObservable(f"meld kind {mv.kind!r} has no row in the observation "
                                        f"(kinds: {', '.join(layout.kinds)})")
                off = row * K
                for c in mv.cards:
                    if c is None:
                        hidden += 1
                    else:
                        buf[off + c] += 1
            rows.append(bytes(buf))
        got = self._meld_rows[p] = (list(melds), rows[0], rows[1], hidden)
        return got

    def encode(self, seat: int) -> np.ndarray:
        """The observation of ``seat`` now (a new array)."""
        table = self.table
        seats = table.seats
        buf = self._buf[seat]
        hand = seats[seat].hand
        if hand != self._hand[seat]:
            buf[0:self._K] = self._zero_k
            for c in hand:
                buf[c] += 1
            self._hand[seat] = list(hand)
        disc_len = self._disc_len[seat]
        seen = self._melds_seen[seat]
        for r, p, moff, doff, hs, fd in self._places[seat]:
            s = seats[p]
            melds = s.melds
            if melds != seen[r]:
                self._put_melds(buf, r, p, melds, moff, fd)
                seen[r] = list(melds)
            d = s.discards
            done = disc_len[r]
            if len(d) != done:
                if len(d) < done:
                    buf[doff:doff + self._K] = self._zero_k
                    done = 0
                for c in d[done:]:
                    buf[doff + c] += 1
                disc_len[r] = len(d)
            buf[hs] = len(s.hand)
        base = self._base
        stock = len(table.wall)
        buf[self._stock_cell] = stock if stock < 255 else 255
        n = self._n
        buf[base] = (table.dealer - seat) % n
        turn = table.turn
        buf[base + 1] = 0 if turn is None else (turn - seat) % n + 1
        cell = self._window_cell[seat]
        if cell >= 0:
            buf[cell] = 0
        w = table.window
        if w is not None:
            cell = self._window_cell[seat] = self._window_row + w.card
            buf[cell] = 1
            buf[base + 2] = (w.owner - seat) % n + 1
            src = SOURCES.get(w.source)
            if src is None:
                raise NotObservable(f"window source {w.source!r} has no code in the "
                                    f"observation (sources: {', '.join(SOURCES)})")
            buf[base + 3] = src
        else:
            self._window_cell[seat] = -1
            buf[base + 2] = buf[base + 3] = 0
        return np.ndarray(self._shape, _U8, bytearray(buf))

    def _put_melds(self, buf: bytearray, r: int, p: int, melds: list[Any], off: int,
                   fd: int) -> None:
        """Write relative seat ``r``'s (seat ``p``'s) meld rows at ``off``
        and its face-down count at ``fd``."""
        block = self._meld_block
        if melds:
            _, own, other, hidden = self._melds(p, melds)
            buf[off:off + block] = own if r == 0 else other
            buf[fd] = 0 if r == 0 else hidden
        else:
            buf[off:off + block] = self._zero_melds
            buf[fd] = 0
