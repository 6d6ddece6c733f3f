"""A hand's row: the fixed columns of a simulation file and the play of one hand.

:data:`COLUMNS` and :func:`schema` are the file's layout (:data:`FORMAT`
its version); :func:`hand_row` plays hand ``i`` of a ruleset from
:func:`qipai.core.sessions.hand_seed` ``(S, i)`` and returns its row; a
worker's task (:func:`_play_rows`) plays a range of hand indices under every
ruleset, and sends its rows as MessagePack (:data:`_ROWS_ENCODER`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from qipai.bots import BotFault, make_bots, run_to_end
from qipai.core.extras import require
from qipai.core.hookspecs import hookimpl
from qipai.core.sessions import hand_seed
from qipai.sim import BadSimulation


#: Version of the row layout (in the file's metadata).
FORMAT = 1


#: The columns, in order, with their meaning (types: :func:`schema`).
COLUMNS: dict[str, str] = {
    "ruleset": "the ruleset as name(key=value, …) with the options that differ from the defaults",
    "variant": "the variant's name",
    "hand": "hand index i, 0-based",
    "seed": "the hand's 128-bit seed hand_seed(S, i), in decimal",
    "dealer": "the dealer's seat (i mod players)",
    "end": "hu (胡) or huangzhuang (荒庄)",
    "winners": "winner seats ([] at 荒庄)",
    "how": "the variant's word for the win (zimo, dianpao, qianggang, pinghu, fangpao …); "
           "null at 荒庄",
    "from_seat": "the seat that discarded, made the kong or drew the card won on; null for a "
                 "self-drawn win and at 荒庄",
    "patterns": "per winner (same order as winners), the pattern ids settled",
    "hu": "per winner, its 胡数 (zipai); null items where the variant has none (mahjong)",
    "xing": "per winner, its 醒 counted; null items where none was flipped for it",
    "net": "子 per seat over the hand, instant payments included (sums to 0)",
    "instant": "the instant payments (kongs, 追牌 …): payer, payee, amount 子, reason",
    "settlement": "the settlement's payments: payer, payee, amount 子, reason",
    "steps": "decisions applied in the hand",
}


def schema() -> Any:
    """The fixed pyarrow schema of a simulation file.

    Raises:
        MissingExtra: pyarrow is not installed (extra ``qipai[sim]``).
    """
    pa = require("pyarrow", "sim")
    payment = pa.struct([("payer", pa.int8()), ("payee", pa.int8()), ("amount", pa.int32()),
                         ("reason", pa.string())])
    return pa.schema([
        ("ruleset", pa.string()),
        ("variant", pa.string()),
        ("hand", pa.int64()),
        ("seed", pa.string()),
        ("dealer", pa.int8()),
        ("end", pa.string()),
        ("winners", pa.list_(pa.int8())),
        ("how", pa.string()),
        ("from_seat", pa.int8()),
        ("patterns", pa.list_(pa.list_(pa.string()))),
        ("hu", pa.list_(pa.int32())),
        ("xing", pa.list_(pa.int32())),
        ("net", pa.list_(pa.int32())),
        ("instant", pa.list_(payment)),
        ("settlement", pa.list_(payment)),
        ("steps", pa.int32()),
    ])


#: Version of a decisions file's layout (``qipai simulate --decisions``).
DECISIONS_FORMAT = 1

#: A decisions file's columns, one row per decision of the recorded seats.
DECISION_COLUMNS: dict[str, str] = {
    "ruleset": "the ruleset, as in the results file",
    "hand": "hand index i, 0-based (the results file's row of the same ruleset and hand)",
    "seed": "the hand's seed hand_seed(S, i), in decimal",
    "seat": "the deciding seat",
    "step": "the decision's index in the hand, 0-based, every seat's decisions counted",
    "observation": "the environment's observation of the seat then (uint8, flat, C order; "
                   "its shape per ruleset in the metadata)",
    "action_mask": "the legal actions then, 1 at each legal index of the action space",
    "action": "the index of the action taken",
    "reward": "the seat's net for the hand in 子 (the environment's final reward)",
}


def decision_schema() -> Any:
    """The fixed pyarrow schema of a decisions file.

    Raises:
        MissingExtra: pyarrow is not installed (extra ``qipai[sim]``).
    """
    pa = require("pyarrow", "sim")
    return pa.schema([
        ("ruleset", pa.string()),
        ("hand", pa.int64()),
        ("seed", pa.string()),
        ("seat", pa.int8()),
        ("step", pa.int32()),
        ("observation", pa.list_(pa.uint8())),
        ("action_mask", pa.list_(pa.int8())),
        ("action", pa.int16()),
        ("reward", pa.int32()),
    ])


_SCHEMA: Any = None


def _schema() -> Any:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = schema()
    return _SCHEMA


class RulesetSpec(msgspec.Struct, frozen=True):
    """A ruleset to simulate: its normalised spec string, name and options."""

    spec: str
    name: str
    options: dict[str, Any]


def parse_rulesets(specs: Sequence[str]) -> list[RulesetSpec]:
    """Load each spec once to check it; the normalised specs, in order.

    Raises:
        UnknownVariant, BadOption: as :func:`qipai.core.ruleset.load`.
        BadSimulation: no ruleset, or one given twice (after normalising:
            ``guilin-mahjong(hubao=true)`` is ``guilin-mahjong``).
    """
    from qipai.core.ruleset import load

    if not specs:
        raise BadSimulation("give at least one ruleset, e.g. guilin-mahjong")
    out: list[RulesetSpec] = []
    for text in specs:
        rs = load(text)
        spec = RulesetSpec(rs.spec, rs.name, rs.options_dict())
        if any(s.spec == spec.spec for s in out):
            raise BadSimulation(f"ruleset {spec.spec!r} is given twice")
        out.append(spec)
    return out


# --------------------------------------------------------------------------
# one hand


class _SettleObserver:
    """Keeps the last :class:`~qipai.core.model.HandEnd` settled (a hook
    wrapper that changes nothing), so a row can give each winner's 胡数."""

    def __init__(self) -> None:
        self.last: Any = None

    @hookimpl(wrapper=True)
    def qipai_settle(self, end: Any, options: Any) -> Any:
        self.last = end
        return (yield)


_LOADED: dict[str, tuple[Any, _SettleObserver]] = {}


def _ruleset(spec: RulesetSpec) -> tuple[Any, _SettleObserver]:
    got = _LOADED.get(spec.spec)
    if got is None:
        from qipai.core.ruleset import load

        observer = _SettleObserver()
        got = (load(spec.name, dict(spec.options), plugins=[observer]), observer)
        _LOADED[spec.spec] = got
    return got


def _payments(payments: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"payer": p.payer, "payee": p.payee, "amount": p.amount, "reason": p.reason}
            for p in payments]


def hand_row(spec: RulesetSpec, bots: str, seed: int, index: int,
             recorder: Any = None, decisions: list[Any] | None = None) -> dict[str, Any]:
    """Play hand ``index`` of ``spec`` and return its row (:data:`COLUMNS`).

    With a ``recorder`` (``qipai.env``'s :class:`~qipai.env.policy.DecisionRecorder`:
    ``wrap(ruleset, bots)`` before the hand, ``take()`` after it), the
    decisions it recorded are appended to ``decisions`` as
    ``(ruleset, hand, seed, seat, step, observation, mask, action, reward)``
    (:data:`DECISION_COLUMNS`); the bots play exactly as without one."""
    rs, observer = _ruleset(spec)
    hs = hand_seed(seed, index)
    n = rs.manifest.players
    dealer = index % n
    observer.last = None
    table = rs.table(seed=hs, dealer=dealer)
    players = make_bots(bots, n, hs)
    if recorder is not None:
        players = recorder.wrap(rs, players)
    try:
        steps = run_to_end(table, players)
    except BotFault as exc:   # where, for the one line the command prints
        exc.ruleset, exc.hand = spec.spec, index
        raise
    r = table.result
    if recorder is not None:
        decisions.extend((spec.spec, index, str(hs), seat, step, obs, mask, action,
                          r.net[seat])
                         for seat, step, obs, mask, action in recorder.take())
    how = from_seat = None
    hu: dict[int, int | None] = {}
    end = observer.last if r.end == "hu" else None
    if end is not None:
        how, from_seat = end.how, end.from_seat
        for claim in end.winners:
            hu[claim.seat] = rs.win_check(claim, end.how, end.dealer, end.from_seat).hu
    n_settle = len(r.instant)
    return {
        "ruleset": spec.spec, "variant": spec.name, "hand": index, "seed": str(hs),
        "dealer": dealer, "end": r.end, "winners": list(r.winners), "how": how,
        "from_seat": from_seat,
        "patterns": [list(r.patterns.get(w, ())) for w in r.winners],
        "hu": [hu.get(w) for w in r.winners],
        "xing": [r.xing.get(w) for w in r.winners],
        "net": list(r.net), "instant": _payments(r.instant),
        "settlement": _payments(r.payments[n_settle:]), "steps": steps,
    }


def play_chunk(spec: RulesetSpec, bots: str, seed: int, start: int,
               stop: int) -> list[dict[str, Any]]:
    """Rows of hands ``start`` ≤ i < ``stop`` of ``spec`` (a worker's task)."""
    return [hand_row(spec, bots, seed, i) for i in range(start, stop)]


def _play_rows(task: tuple[tuple[RulesetSpec, ...], str, int, int, int, Any]
               ) -> list[dict[str, Any]] | tuple[list[dict[str, Any]], list[Any]]:
    """A task's rows: hands ``start`` ≤ i < ``stop`` of every ruleset.  One
    worker plays the same deals of all the rulesets: the bots' caches,
    filled by a deal under one ruleset, serve it under the others (the
    rulesets often play alike), and a run stopped early holds the same hands
    of each.  With a recorder (the task's last item, None without): the
    rows and the decisions recorded (see :func:`hand_row`)."""
    specs, bots, seed, start, stop, recorder = task
    if recorder is None:
        return [row for spec in specs for row in play_chunk(spec, bots, seed, start, stop)]
    decisions: list[Any] = []
    rows = [hand_row(spec, bots, seed, i, recorder, decisions)
            for spec in specs for i in range(start, stop)]
    return rows, decisions


def _warm(rulesets: Sequence[RulesetSpec]) -> None:
    """Build the rulesets and their lazy tables (win shapes …) in this process."""
    for spec in rulesets:
        rs, _ = _ruleset(spec)
        rs.table(seed=0, dealer=0)


_ROWS_ENCODER = msgspec.msgpack.Encoder()

_ROWS_DECODER = msgspec.msgpack.Decoder(list[dict[str, Any]])

#: A task's rows and decisions (``--decisions``), as the workers send them.
_DECISIONS_DECODER = msgspec.msgpack.Decoder(
    tuple[list[dict[str, Any]], list[tuple[str, int, str, int, int, bytes, bytes, int, int]]])
