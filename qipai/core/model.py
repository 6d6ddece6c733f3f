"""The data that crosses the engine's boundary, as msgspec Structs.

Cards are kinds (ints, see :mod:`qipai.core.cards`); seats are ints in turn
order.  Actions and events are frozen tagged unions (the tag is the pinyin
id, field ``type``), so records and views encode to JSON or msgpack and
decode back to the same values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Union

from msgspec import Struct, field

# --------------------------------------------------------------------------
# Melds and payments


class Meld(Struct, frozen=True):
    """A group laid on the table.

    Attributes:
        kind: pinyin id — mahjong ``chi peng minggang jiagang angang``; zipai
            ``chi peng sao guosao saochuan kaizhao``.
        cards: the kinds in the meld (3 or 4 cards).
        from_seat: the seat whose card was claimed into it (None if concealed).
        claimed: the claimed card's kind (None if concealed).
        hidden: how many of its cards lie face down; other seats see them as
            ``?`` (Guilin 暗杠: 3; zipai 扫: all).
    """

    kind: str
    cards: tuple[int, ...]
    from_seat: int | None = None
    claimed: int | None = None
    hidden: int = 0


class Term(Struct, frozen=True, omit_defaults=True):
    """One term of a payment's breakdown (:attr:`Payment.why`).

    A breakdown is an arithmetic expression over its terms' ``value`` s,
    read as ordinary arithmetic: each term joins the terms before it by its
    ``op`` — ``"+"`` (an addend; the first term's op is ``"+"``) or ``"*"``
    (a factor, shown as ×) — and ``×`` binds tighter than ``+``, so a breakdown is a sum
    of products (:func:`why_total`).  A term with ``of`` is a parenthesised
    sub-expression: its ``value`` is ``why_total(of)`` (checked).  ``basis``
    shows what a value was read from without being evaluated (zipai: the
    子 from the 胡数, the 胡数 from the split's groups).

    Attributes:
        kind: what the term is — ``pattern`` (a value pattern, 子/张),
            ``multiplier`` (a factor such as 门清 ×2), ``dealer`` (the
            dealer's share), ``xing`` (醒/翻醒 in all; ``of`` the flips),
            ``flip`` (one flipped card, ``cards`` = it, ``value`` = what it
            was worth), ``liability`` (the rule that made this seat pay:
            互包, 封胡, 连杠 …; its value the factor), ``fee`` (an instant
            payment: a kong, 追牌), ``share`` / ``sum`` (a named / plain
            bracket), zipai ``zi`` ``hu`` ``group`` ``bonus``.
        id: the pinyin id (``pengpenghu``, ``menqing``, ``hubao``); the
            variant's ``Manifest.names`` gives its Chinese name.
        value: the number (子 / 张, a factor, 醒数, 胡数).
        op: ``"+"`` or ``"*"`` (ASCII in data; text shows ``×``).
        cards: the cards the term is about (a flipped card, a group), kinds.
        rule: the rule applied, as the variant's page (docs/variants/) numbers
            it: a section, e.g. guilin-mahjong ``"§4.2 case 2"``, a decision
            (``"D-GX8"``) or both; a section of another page names that page
            first (``"mahjong-common §3"``); or empty
            (docs/concepts/payments.md).
        of: the sub-expression of a bracket (its value = ``why_total(of)``).
        basis: informative terms the value was read from; not evaluated.
    """

    kind: str
    id: str
    value: int
    op: str = "+"
    cards: tuple[int, ...] = ()
    rule: str = ""
    of: tuple[Term, ...] = ()
    basis: tuple[Term, ...] = ()


#: The two operators of a breakdown: ``"+"`` (plus) and ``"*"`` (times).
OPS = ("+", "*")


def why_total(why: tuple[Term, ...] | list[Term]) -> int:
    """The amount a breakdown stands for: the sum of its products.

    Terms are read left to right; a ``"*"`` term multiplies the current
    product, a ``"+"`` term starts a new one (the first term starts the
    first); the products are added.  A bracket (``of``) counts as its value,
    which must equal ``why_total(of)``.  ``basis`` does not count (its own
    brackets are checked the same way).  An empty breakdown is 0.

    Raises:
        ValueError: an op other than ``+``/``*``, a first term with op
            ``*``, or a bracket whose value is not the total of its terms.
    """
    total = 0
    product: int | None = None
    for i, t in enumerate(why):
        if t.basis:
            why_total(t.basis)  # its brackets must total too; it does not count
        if t.of and why_total(t.of) != t.value:
            raise ValueError(f"term {t.id or t.kind!r}: value {t.value} is not its terms' "
                             f"total {why_total(t.of)}")
        if t.op == "*":
            if product is None:
                raise ValueError(f"the first term ({t.id or t.kind!r}) cannot have op *")
            product *= t.value
        elif t.op == "+":
            if product is not None:
                total += product
            product = t.value
        else:
            raise ValueError(f"term {i} ({t.id or t.kind!r}): unknown op {t.op!r}; "
                             "expected + or *")
    return total + (product or 0)


def bracket(terms: tuple[Term, ...] | list[Term], kind: str = "sum", id: str = "",
            op: str = "+", rule: str = "") -> Term:
    """``terms`` as one term (a bracket whose value is their total).

    One term alone is returned itself with ``op`` (no bracket is needed).
    """
    terms = tuple(terms)
    if len(terms) == 1 and not id:
        t = terms[0]
        return t if t.op == op else Term(t.kind, t.id, t.value, op, t.cards, t.rule,
                                         t.of, t.basis)
    return Term(kind, id, why_total(terms), op, rule=rule, of=terms)


def times(terms: tuple[Term, ...] | list[Term], factor: Term) -> tuple[Term, ...]:
    """``factor × (terms)``: the factor first (op ``+``), then the terms as
    one factor (bracketed unless a single term)."""
    f = Term(factor.kind, factor.id, factor.value, "+", factor.cards, factor.rule,
             factor.of, factor.basis)
    return (f, bracket(terms, op="*"))


def format_why(why: tuple[Term, ...] | list[Term], names: dict[str, str] | None = None,
               cards: Any = None, _parent: str = "") -> str:
    """A breakdown as text: ``"碰碰胡 pengpenghu 9 × 自摸 zimo 2"``.

    Args:
        why: the terms.
        names: pinyin id → Chinese name (a variant's ``Manifest.names``);
            an id not in it is shown alone.
        cards: a callable formatting a tuple of kinds (``CardSystem.format``),
            or None to leave the cards out.

    Returns:
        One line; a named bracket is shown as its name and value, then its
        terms in parentheses (``翻醒 fanxing 11 (8s 4 + 7p 7)``; an id inside
        it equal to the bracket's is not repeated), a plain one as its terms
        in parentheses; a ``basis`` in square brackets after the value.
    """
    names = names or {}
    parts: list[str] = []
    for i, t in enumerate(why):
        if i:
            parts.append("×" if t.op == "*" else t.op)
        label = "" if t.id == _parent else " ".join(
            x for x in (names.get(t.id, ""), t.id) if x)
        if t.cards and cards is not None:
            label = f"{label} {cards(t.cards)}".strip()
        if t.of:
            inner = format_why(t.of, names, cards, t.id)
            text = f"{label} {t.value} ({inner})" if label else f"({inner})"
        else:
            text = f"{label} {t.value}" if label else str(t.value)
        if t.basis:
            text += f" [{format_why(t.basis, names, cards)}]"
        parts.append(text)
    return " ".join(parts)


class Payment(Struct, frozen=True):
    """One transfer of ``amount`` 子 from ``payer`` to ``payee``, for ``reason``.

    ``why`` is the breakdown of ``amount`` (:class:`Term`; ``why_total(why)
    == amount`` for every payment a variant makes); empty in records made
    before record format 2.
    """

    payer: int
    payee: int
    amount: int
    reason: str = ""
    why: tuple[Term, ...] = ()


def net_of(payments: list[Payment] | tuple[Payment, ...], n_players: int) -> list[int]:
    """Net gain per seat (n_players ints, 子) of a list of payments; sums to 0."""
    net = [0] * n_players
    for p in payments:
        net[p.payer] -= p.amount
        net[p.payee] += p.amount
    return net


# --------------------------------------------------------------------------
# Actions: what a seat decides.  Frozen so legal lists can be compared.


class Discard(Struct, frozen=True, tag="discard"):
    """Discard one card from the concealed hand."""

    seat: int
    card: int


class Chi(Struct, frozen=True, tag="chi"):
    """Claim the card in play into a run (``cards`` = the whole group, the
    claimed card included).  ``extra``: further groups laid down with it
    (zipai 下伙), each a tuple of kinds."""

    seat: int
    cards: tuple[int, ...]
    extra: tuple[tuple[int, ...], ...] = ()


class Peng(Struct, frozen=True, tag="peng"):
    """Claim the card in play with a pair from the hand."""

    seat: int


class Minggang(Struct, frozen=True, tag="minggang"):
    """Claim a discard with three concealed copies (点杠/明杠)."""

    seat: int


class Angang(Struct, frozen=True, tag="angang"):
    """Declare a concealed kong of ``card`` (暗杠)."""

    seat: int
    card: int


class Jiagang(Struct, frozen=True, tag="jiagang"):
    """Add ``card`` to one's own peng (蓄杠/加杠)."""

    seat: int
    card: int


class Hu(Struct, frozen=True, tag="hu"):
    """Win on another seat's card (a discard, a robbed kong tile, a zipai draw)."""

    seat: int


class Zimo(Struct, frozen=True, tag="zimo"):
    """Win on one's own draw (自摸)."""

    seat: int


class Pass(Struct, frozen=True, tag="pass"):
    """Let a card go (过)."""

    seat: int


Action = Union[Discard, Chi, Peng, Minggang, Angang, Jiagang, Hu, Zimo, Pass]
ACTION_TYPES: dict[str, type] = {
    t.__struct_config__.tag: t  # type: ignore[attr-defined]
    for t in (Discard, Chi, Peng, Minggang, Angang, Jiagang, Hu, Zimo, Pass)
}

# --------------------------------------------------------------------------
# Events: what happened.  ``card`` fields are None in a view that may not see them.


class Dealt(Struct, frozen=True, tag="dealt"):
    """The deal: hand sizes by seat, the stock size, cards shown to all."""

    dealer: int
    hand_sizes: tuple[int, ...]
    stock: int
    shown: tuple[int, ...] = ()


class Drew(Struct, frozen=True, tag="drew"):
    """``seat`` drew a card (from the tail when ``tail``); ``shown`` when it is
    turned face up for all (zipai 示众)."""

    seat: int
    card: int | None
    tail: bool = False
    shown: bool = False


class Discarded(Struct, frozen=True, tag="discarded"):
    seat: int
    card: int


class Melded(Struct, frozen=True, tag="melded"):
    """``seat`` laid ``meld`` on the table (a claim, a kong, a zipai 扫 …)."""

    seat: int
    meld: Meld


class Paid(Struct, frozen=True, tag="paid"):
    """Instant payments (kong fees, 追牌), made at once and kept."""

    payments: tuple[Payment, ...]


class Marked(Struct, frozen=True, tag="marked"):
    """A variant's notice: ``what`` happened (``"hubao"``, ``"huangzhuang"``,
    ``"jiagang"`` — a 蓄杠 tile open to 抢杠 …) to ``seats``, about ``card``."""

    what: str
    seats: tuple[int, ...] = ()
    card: int | None = None


class Won(Struct, frozen=True, tag="won"):
    """``seat`` won ``how`` on ``card`` from ``from_seat``."""

    seat: int
    how: str
    card: int | None
    from_seat: int | None
    patterns: tuple[str, ...] = ()


class Flipped(Struct, frozen=True, tag="flipped"):
    """Bonus flip (翻醒/醒): the cards turned over, the 醒数 per winner."""

    cards: tuple[int, ...]
    xing: dict[int, int] = {}


class Ended(Struct, frozen=True, tag="ended"):
    """The hand is over: ``end`` is ``"hu"`` or ``"huangzhuang"``."""

    end: str
    winners: tuple[int, ...]
    net: tuple[int, ...]
    next_dealer: int


Event = Union[Dealt, Drew, Discarded, Melded, Paid, Marked, Won, Flipped, Ended]

# --------------------------------------------------------------------------
# Wins and settlements, as the variant's scoring hooks see them


class WinClaim(Struct, frozen=True):
    """One winner's hand, as the win check and settlement see it.

    Attributes:
        seat: the winner.
        hand: concealed kinds **before** the winning card.
        melds: the winner's table melds.
        tile: the winning card (None for wins without one, e.g. zipai 三笼五坎).
        flags: context flags (``gangshanghua``, ``gangshangpao``, ``haidi`` …).
        kong_chain: the winner's current kong chain (Guangxi 连杠), in order.
    """

    seat: int
    hand: tuple[int, ...]
    melds: tuple[Meld, ...] = ()
    tile: int | None = None
    flags: tuple[str, ...] = ()
    kong_chain: tuple[Meld, ...] = ()


class HandEnd(Struct, frozen=True):
    """Everything settlement needs about a finished hand with winners.

    Attributes:
        dealer: the dealer's seat.
        how: the variant's word for the win (mahjong ``zimo dianpao qianggang``).
        from_seat: the discarder, kong maker or drawer.
        winners: one :class:`WinClaim` per winner.
        stock: the cards left to flip, head first.
        relations: standing relations by name (``"hubao": [[0, 1]]``).
        n_players: seats at the table.
    """

    dealer: int
    how: str
    from_seat: int | None
    winners: tuple[WinClaim, ...]
    stock: tuple[int, ...] = ()
    relations: dict[str, list[list[int]]] = {}
    n_players: int = 4


class WinEval(Struct, frozen=True):
    """The answer of a win check.

    Attributes:
        wins: whether the hand wins.
        patterns: every pattern id the settlement applies (values and
            multipliers).
        hu: zipai 胡数 of the best split (None for mahjong).
    """

    wins: bool
    patterns: tuple[str, ...] = ()
    hu: int | None = None


class WinReading(Struct, frozen=True):
    """One way a winning hand reads (hook ``qipai_readings``): a hand read in
    several ways is paid by one of them (mahjong-common.md D-M4; zipai: the
    split with the most 胡数).

    Attributes:
        shape: the reading's shape id (mahjong ``standard qidui lanpai
            shisanyao ziyise``; zipai ``split`` or the meld the winning card
            made, e.g. ``kaizhao``).
        groups: the groups it reads, in the variant's notation (``"123m"``,
            ``"peng 555p"``; zipai ``"kan d3 d3 d3"``), the pair included.
        patterns: the pattern ids (values and multipliers) it scores.
        value: what it pays the winner in all (the variant's unit, 子 or 张)
            before the bonus flip and liabilities; zipai: the 子 of its 胡数.
        hu: zipai 胡数 of the reading (None for mahjong).
        paid: whether it is the reading the settlement pays.
    """

    shape: str
    groups: tuple[str, ...]
    patterns: tuple[str, ...]
    value: int
    hu: int | None = None
    paid: bool = False


class Settlement(Struct, frozen=True):
    """The settlement of a hand's wins (instant payments are separate).

    Attributes:
        payments: every transfer (子); net per seat sums to zero.
        patterns: per winner seat, the pattern ids applied.
        xing: per winner seat, the 醒数 counted.
        flipped: the cards used as flipped cards, in order.
    """

    payments: tuple[Payment, ...] = ()
    patterns: dict[int, tuple[str, ...]] = {}
    xing: dict[int, int] = {}
    flipped: tuple[int, ...] = ()


class Flip(Struct, frozen=True):
    """The outcome of a bonus flip: the cards used (head first) and the 醒数.

    ``each``: the 醒数 each flipped card gave, in order (sums to ``xing``),
    when the variant tells it (empty otherwise).
    """

    flipped: tuple[int, ...]
    xing: int
    each: tuple[int, ...] = ()


#: The ``bonus_flip`` a settlement is given (hook ``qipai_settle``):
#: ``bonus_flip(holding, tile, stock) -> Flip``, the ruleset's
#: ``qipai_bonus_flip`` with its options, the answer checked.
FlipFn = Callable[[Sequence[int], int | None, Sequence[int]], Flip]


# --------------------------------------------------------------------------
# The table


class Deal(Struct, frozen=True):
    """A dealt order: hands by seat, the stock head first, the dealer, and
    the cards of the hands shown to all (zipai: the dealer's 亮张)."""

    dealer: int
    hands: tuple[tuple[int, ...], ...]
    wall: tuple[int, ...]
    shown: tuple[int, ...] = ()


class SeatState(Struct):
    """One seat: concealed hand (kinds, kept sorted), melds, discards."""

    hand: list[int] = field(default_factory=list)
    melds: list[Meld] = field(default_factory=list)
    discards: list[int] = field(default_factory=list)


class Window(Struct):
    """A card entering play that other seats may claim.

    Attributes:
        card: the card.
        owner: the seat it comes from (discarder, drawer, kong maker).
        source: ``"discard"``, ``"draw"`` or ``"jiagang"``.
        declared: what each seat asked for so far.
    """

    card: int
    owner: int
    source: str
    declared: dict[int, Action] = {}


class Result(Struct, frozen=True):
    """How a hand ended and what everybody paid (子).

    Attributes:
        end: ``"hu"`` or ``"huangzhuang"``.
        winners: winner seats.
        net: gain per seat over the whole hand (instant payments included).
        payments: every payment of the hand, instant ones first.
        instant: the instant payments alone (kongs, 追牌 …).
        patterns, xing, flipped: as in :class:`Settlement`.
        next_dealer: who deals the next hand.
    """

    end: str
    winners: tuple[int, ...]
    net: tuple[int, ...]
    payments: tuple[Payment, ...]
    instant: tuple[Payment, ...]
    patterns: dict[int, tuple[str, ...]]
    xing: dict[int, int]
    flipped: tuple[int, ...]
    next_dealer: int


class TableState(Struct):
    """The whole mutable state of a table; a snapshot is this, msgpack-encoded.

    ``extra`` is the variant's own state (its ``Manifest.state_type``).
    """

    variant: str
    options: dict[str, Any]
    n_players: int
    deal: Deal
    dealer: int
    seats: list[SeatState]
    wall: list[int]
    turn: int | None = None
    window: Window | None = None
    pending: dict[int, list[Action]] = {}
    instant: list[Payment] = []
    events: list[Event] = []
    actions: list[Action] = []
    result: Result | None = None
    relations: dict[str, list[list[int]]] = {}
    start_relations: dict[str, list[list[int]]] = {}
    extra: Any = None
    #: Every claim window asks every seat but its owner (at least ``Pass``):
    #: see :meth:`Table.open_window <qipai.core.table.Table.open_window>`.
    ask_all: bool = False
    #: What dealt the hand: ``"seeded"`` (``random.Random(seed)``), ``"os"``
    #: (the OS's CSPRNG), ``"host"`` (a host's ``rng``); None for an explicit deal.
    rng: str | None = None
