"""A provably fair deal: commit to the deal before play, reveal it after.

A host deals from the OS's CSPRNG, draws a secret :func:`new_salt` and,
before the first action, publishes :func:`commitment` — the SHA-256 of the
deal's canonical bytes followed by the salt.  When the hand is over the
record reveals the deal and the salt (``Record.commitment``,
``Record.salt``), and anybody can recompute the hash: the host cannot have
changed the deal after seeing the play, and the salt keeps the players from
learning anything about the deal from the commitment while it is secret.

The construction, exactly (docs: howto/verify-a-shuffle)::

    deal_bytes = ASCII of the JSON object, keys in this order, no spaces:
                 {"dealer":D,"hands":[[k,…],…],"wall":[k,…],"shown":[k,…]}
                 (D and every card kind k a decimal integer; hands by seat,
                 each hand in its dealt order; the stock head first)
    commitment = hex(SHA-256(deal_bytes ‖ salt))     salt: the 32 raw bytes

In Python, from a record's JSON ``r``::

    import hashlib, json
    d = r["deal"]
    body = json.dumps({"dealer": d["dealer"], "hands": d["hands"],
                       "wall": d["wall"], "shown": d["shown"]},
                      separators=(",", ":")).encode()
    hashlib.sha256(body + bytes.fromhex(r["salt"])).hexdigest() == r["commitment"]

What it proves and what not: the deal was fixed before play began (and the
replay shows the hand was played from it).  It does not by itself prove the
deal was random — that rests on the host's RNG (``Record.rng``: ``"os"``
for the OS's CSPRNG; ``"seeded"`` is for tests and demos and says so).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import msgspec

from qipai.core.errors import BadRecord, QipaiError
from qipai.core.model import Deal

#: Bytes of a salt (:func:`new_salt`); a record's ``salt`` is 64 hex digits.
SALT_BYTES = 32


def _ints(values: Any, what: str) -> str:
    out = []
    for v in values:
        if type(v) is not int:
            raise BadRecord(f"the deal's {what} holds {v!r}, not a card kind (an int)")
        out.append(str(v))
    return ",".join(out)


def deal_bytes(deal: Deal) -> bytes:
    """The canonical bytes of ``deal`` that a commitment hashes: ASCII JSON,
    keys ``dealer``, ``hands``, ``wall``, ``shown`` in that order, no
    whitespace (module docstring).  Built here digit by digit, so it depends
    on no JSON library's choices.

    Raises:
        BadRecord: ``deal`` is not a :class:`~qipai.core.model.Deal` of ints.
    """
    if not isinstance(deal, Deal):
        raise BadRecord(f"a deal is a qipai.core.model.Deal, not {type(deal).__name__}")
    if type(deal.dealer) is not int:
        raise BadRecord(f"the deal's dealer is {deal.dealer!r}, not a seat (an int)")
    hands = ",".join(f"[{_ints(h, f'hand {i}')}]" for i, h in enumerate(deal.hands))
    return (f'{{"dealer":{deal.dealer},"hands":[{hands}],'
            f'"wall":[{_ints(deal.wall, "wall")}],"shown":[{_ints(deal.shown, "shown")}]}}'
            ).encode("ascii")


def new_salt() -> bytes:
    """A fresh secret salt: :data:`SALT_BYTES` bytes from the OS's CSPRNG
    (:func:`secrets.token_bytes`).  Keep it secret until the hand is over."""
    return secrets.token_bytes(SALT_BYTES)


def _salt(salt: Any) -> bytes:
    if not isinstance(salt, (bytes, bytearray)):
        raise BadRecord(f"a salt is {SALT_BYTES} bytes, not {type(salt).__name__}")
    if len(salt) != SALT_BYTES:
        raise BadRecord(f"a salt is {SALT_BYTES} bytes, not {len(salt)}")
    return bytes(salt)


def commitment(deal: Deal, salt: bytes) -> str:
    """The commitment to ``deal`` under ``salt``: lowercase hex (64 digits)
    of SHA-256(:func:`deal_bytes` ‖ ``salt``).

    Raises:
        BadRecord: ``salt`` is not :data:`SALT_BYTES` bytes, or ``deal`` not a Deal.
    """
    return hashlib.sha256(deal_bytes(deal) + _salt(salt)).hexdigest()


def committed(record: Any, salt: bytes) -> Any:
    """A copy of ``record`` (a :class:`~qipai.core.records.Record`) that
    reveals ``salt`` and carries the commitment of its deal under it — what
    a host writes when the hand is over (it published the same
    ``commitment(record.deal, salt)`` at the deal).

    Raises:
        BadRecord: ``record`` is not a Record, or as :func:`commitment`.
    """
    from qipai.core.records import Record

    if not isinstance(record, Record):
        raise BadRecord(f"committed() takes a qipai.core.records.Record, not "
                        f"{type(record).__name__}")
    return msgspec.structs.replace(record, commitment=commitment(record.deal, salt),
                                   salt=_salt(salt).hex())


class Check(msgspec.Struct, frozen=True):
    """One check of :func:`checks`: its ``name`` (``"commitment"``,
    ``"replay"``, ``"zero sum"``, ``"timeouts"``, ``"versions"``,
    ``"shuffle"``, ``"deck"``, ``"money"``), whether it passed, and a one-line ``message``.  A check
    with ``ok`` True may still carry a note (an unstamped record, a seeded
    deal) in its message."""

    name: str
    ok: bool
    message: str


def _commitment_check(record: Any) -> Check:
    if record.commitment is None:
        return Check("commitment", False,
                     "no commitment: the record carries none, so its deal cannot be checked")
    if record.salt is None:
        return Check("commitment", False,
                     "missing salt: the record reveals no salt, so its commitment "
                     "cannot be checked")
    try:
        salt = bytes.fromhex(record.salt)
    except ValueError:
        return Check("commitment", False, f"the salt {record.salt!r} is not hex")
    if len(salt) != SALT_BYTES:
        return Check("commitment", False,
                     f"the salt is {len(salt)} bytes, not {SALT_BYTES} ({2 * SALT_BYTES} hex digits)")
    try:
        got = commitment(record.deal, salt)
    except QipaiError as exc:
        return Check("commitment", False, str(exc))
    if got != record.commitment.lower():
        return Check("commitment", False,
                     f"commitment mismatch: SHA-256 of the deal and salt is {got}, "
                     f"the record's commitment is {record.commitment}")
    return Check("commitment", True, f"SHA-256 of the deal and salt is the commitment {got}")


def _zero_sum_check(record: Any) -> Check:
    result = record.result
    if result is None:
        return Check("zero sum", False, "the hand is unfinished: the record has no result")
    total = sum(result.net)
    if total != 0:
        return Check("zero sum", False, f"net {list(result.net)} sums to {total}, not 0")
    from qipai.core.model import net_of

    n = len(record.deal.hands)
    try:
        by_payments = net_of(result.payments, n)
    except (IndexError, TypeError):
        return Check("zero sum", False, "a payment names a seat that is not at the table")
    if by_payments != list(result.net):
        return Check("zero sum", False, f"net {list(result.net)} is not what the payments "
                                        f"make, {by_payments}")
    return Check("zero sum", True, f"net {list(result.net)} sums to 0 and matches the payments")


def _timeouts_check(record: Any) -> Check:
    t = list(record.timeouts)
    n = len(record.actions)
    bad = [i for i in t if not 0 <= i < n]
    if bad:
        return Check("timeouts", False, f"timeouts {bad} are not indices of the "
                                        f"{n} actions")
    if t != sorted(set(t)):
        return Check("timeouts", False, f"timeouts {t} are not increasing")
    if not t:
        return Check("timeouts", True, "no action was made by the host on a timeout")
    return Check("timeouts", True, f"{len(t)} action{'s' if len(t) != 1 else ''} "
                                   f"made by the host on a timeout: {t}")


def checks(record: Any, plugins: Any = (), allow_version_mismatch: bool = False) -> list[Check]:
    """Every check ``qipai verify`` makes of ``record``, in order: versions
    (the record's stamps against this qipai, :mod:`qipai.core.stamps`),
    commitment (deal and salt hash to it), replay (the actions replay to the
    recorded events and result, :func:`~qipai.core.records.replay_check`),
    zero sum (the result's net sums to 0 and is what its payments make),
    timeouts (indices of actions), shuffle (what dealt the hand: a note, failing
    only when ``rng`` and ``seed`` disagree — "seeded" without a seed, or a seed
    beside "os"/"host"), deck (the deal is the variant's whole deck, each card
    once: a partial deal fails), money (a record with a ``money`` block only:
    it is what the stake and rake make of the result, and sums to zero with
    the house line, :mod:`qipai.core.money`); and for a joint deal (``rng``
    ``"joint"``) joint: the server seed, each seat value and the deal seed
    (:mod:`qipai.core.joint`).

    ``plugins``: the house-rule plugins the record was played with.
    """
    from qipai.core.records import replay_check, stamp_check
    from qipai.core.stamps import unstamped_note

    out = []
    try:
        stamp_check(record, plugins=plugins, allow_version_mismatch=allow_version_mismatch)
        note = unstamped_note(msgspec.structs.asdict(record))
        out.append(Check("versions", True, f"note: {note}" if note else
                         "made under this qipai, variant version, ruleset and house plugins"))
        versions_ok = True
    except QipaiError as exc:  # VersionMismatch, or a variant/options that do not load
        out.append(Check("versions", False, str(exc)))
        versions_ok = False
    out.append(_commitment_check(record))
    if versions_ok:
        try:
            diff = replay_check(record, plugins=plugins,
                                allow_version_mismatch=allow_version_mismatch)
        except QipaiError as exc:
            diff = str(exc)
        out.append(Check("replay", diff is None, diff or
                         f"{len(record.actions)} actions replay to the recorded "
                         f"{len(record.events)} events and result"))
    else:
        out.append(Check("replay", False, "not replayed: made under other versions"))
    out.append(_zero_sum_check(record))
    out.append(_timeouts_check(record))
    out.append(_shuffle_check(record))
    if record.rng == "joint" or record.joint is not None:
        out.append(_joint_check(record))
    if versions_ok:
        out.append(_deck_check(record, plugins))
    money = _money_check(record, plugins, versions_ok)
    if money is not None:
        out.append(money)
    return out


def _money_check(record: Any, plugins: Any, versions_ok: bool) -> Check | None:
    """(A record of a table with a stake; None for one without.)  Whether
    its ``money`` is what the stake and rake rule (or the house plugin's
    ``qipai_rake``) make of its result, and sums to zero with the house
    line (:func:`qipai.core.money.money_problem`)."""
    money = getattr(record, "money", None)
    if money is None or money is msgspec.UNSET:
        return None
    from qipai.core.money import money_problem

    hook = options = None
    if versions_ok:   # the record's house plugins: a qipai_rake of theirs is asked again
        from qipai.core.ruleset import load_cached

        rs = load_cached(record.variant, record.options, plugins=plugins)
        hook, options = rs.hook, rs.options
    problem = money_problem(money, record.result, hook=hook, options=options)
    if problem is not None:
        return Check("money", False, problem)
    rake = (f", rake {money.rake.percent}% capped at {money.rake.cap} per winner"
            if money.rake is not None else ", no rake")
    return Check("money", True, f"stake {money.stake} per 子{rake}: net {list(money.net)} "
                                f"and house {money.house} sum to 0, as the result makes them")


def _deck_check(record: Any, plugins: Any = ()) -> Check:
    """Whether the deal is the variant's whole deck, each card once.  A
    partial deal (``partial``: a test's or a position's, a few cards short)
    replays and may be committed, but it is not a shuffle of the deck that a
    hand at a real table is dealt from: it fails, so that it is never
    reported as a verified hand."""
    from qipai.core.ruleset import load_cached

    rs = load_cached(record.variant, record.options, plugins=plugins)  # a house deck too
    deck = sorted(rs.hook.qipai_deck(options=rs.options))
    dealt = sorted([c for h in record.deal.hands for c in h] + list(record.deal.wall))
    if dealt == deck:
        return Check("deck", True, f"the deal is the whole deck of {len(deck)} cards, each once")
    return Check("deck", False, f"the deal holds {len(dealt)} cards, not the variant's whole deck "
                                f"of {len(deck)} each once (a partial deal, as a test's or a "
                                f"position's): not a hand dealt from the deck")


def _shuffle_check(record: Any) -> Check:
    """What dealt the hand, as the record says (``rng``), and whether its
    ``seed`` agrees: a seeded deal must carry the seed that dealt it (the
    replay check then deals from it again, :func:`~qipai.core.records.seed_problem`),
    and a deal of the OS or a host has none.  A record of before ``rng``
    (null) may carry a seed; the replay checks it the same way."""
    rng, seed = record.rng, record.seed
    if rng == "joint":
        if seed is None or record.joint is None:
            return Check("shuffle", False, 'rng is "joint" but the record lacks its '
                                           + ("seed" if seed is None else "joint parts"))
        return Check("shuffle", True, f"joint deal: dealt from seed {seed}, the deal function "
                                      "of the server seed and the seat values (check joint)")
    if rng == "seeded" and seed is None:
        return Check("shuffle", False, 'rng is "seeded" but seed is null: a seeded deal must '
                                       "carry the seed that dealt it, so that it can be checked")
    if rng in ("os", "host") and seed is not None:
        return Check("shuffle", False, f'rng is "{rng}" but seed is {seed}: only a seeded deal '
                                       "has a seed")
    if rng == "seeded":
        return Check("shuffle", True, f"note: dealt from seed {seed} — reproducible, for tests "
                                      f"and demos; not a secret shuffle")
    if rng == "os":
        return Check("shuffle", True, "dealt by the OS's CSPRNG (as the record says)")
    if rng == "host":
        return Check("shuffle", True, "dealt by the host's own RNG (as the record says)")
    return Check("shuffle", True, "note: the record does not say what dealt it")


def _joint_check(record: Any) -> Check:
    """A joint deal (:mod:`qipai.core.joint`): the server seed hashes to its
    commitment, each revealed seat value to its seat's commitment, and the
    record's seed (which the replay check deals the deal from) is the deal
    function of them.  Withheld seats are named (a note, not a failure)."""
    from qipai.core.joint import joint_problems

    j = record.joint
    if j is None:
        return Check("joint", False, 'rng is "joint" but the record has no joint parts')
    if record.rng != "joint":
        return Check("joint", False, f'the record has joint parts but rng is {record.rng!r}')
    if len(j.seats) != len(record.deal.hands):
        return Check("joint", False, f"the joint deal names {len(j.seats)} seats, the deal "
                                     f"{len(record.deal.hands)}")
    problems = joint_problems(j, record.seed)
    if problems:
        return Check("joint", False, "; ".join(problems))
    withheld = [i for i, s in enumerate(j.seats) if s.withheld]
    valued = [i for i, s in enumerate(j.seats) if s.value is not None]
    note = f"; withheld by seat {withheld} (counted empty)" if withheld else ""
    if not valued:   # (a bot table, or no human seat committed: the server's choice)
        note += ("; note: no seat's value went into this deal — it is the server seed's "
                 "alone, which the server could have picked (as a deal without seat values)")
    return Check("joint", True, f"the server seed matches its commitment, the values of seats "
                                f"{valued} match theirs, and the deal seed is the deal function "
                                f"of them{note}")


def verify_record(record: Any, plugins: Any = (), allow_version_mismatch: bool = False
                  ) -> list[str]:
    """The problems of ``record`` (a :class:`~qipai.core.records.Record`),
    one line each; empty when it verifies: its commitment matches its deal
    and salt, it replays identically under this qipai (same versions and
    plugins), its result sums to zero and its timeouts index its actions.
    See :func:`checks` for the checks one by one."""
    return [f"{c.name}: {c.message}" for c in
            checks(record, plugins=plugins, allow_version_mismatch=allow_version_mismatch)
            if not c.ok]
