"""The conformance case format as msgspec Structs: one Struct per check kind.

These Structs *are* the format (docs/reference/case-format.md states it in
words): the loader validates every case file against them
(:func:`qipai.conformance.cases.read_file`), ``qipai conformance
--check-cases`` reports what they refuse, and ``qipai schema --cases``
prints the JSON Schema they generate (:func:`case_file_schema`).

A case file is a :class:`CaseFile`; its ``cases`` are a union tagged by
``check`` (``deck`` … ``view``), each with a ``given`` and an ``expect``
Struct of its own.  Unknown keys are refused everywhere (a misspelt key
would otherwise check nothing).  An optional key that is left out is
``UNSET`` — "not given", "not checked" — never a default value the runner
would silently check.

Card fields (type :data:`Cards`) are text in the variant's notation; the
Structs check that they are text, :func:`qipai.conformance.cases.notation_problems`
parses them with the variant's own card system.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec
from msgspec import UNSET, Meta, UnsetType, field

# ------------------------------------------------------------------ value types

Seat = Annotated[int, Meta(ge=0, description="a seat number, 0 … players-1 in turn order")]
SeatKey = Annotated[str, Meta(pattern="^[0-9]+$",
                              description="a seat number written as a string (a TOML key)")]
Cards = Annotated[
    Union[str, list[str]],
    Meta(description="cards in the variant's notation: a compact string such as "
                     "\"123m45p EEC\" or \"x1 x2 d10\" (a list of tokens is accepted too)"),
]
Card = Annotated[str, Meta(description="one card in the variant's notation, e.g. \"5p\" or \"d2\"")]
BySeat = Annotated[list[int], Meta(description="one integer per seat, indexed by seat")]
Pair = Annotated[tuple[int, int], Meta(description="two seats, e.g. [0, 1]")]
Relations = Annotated[
    dict[str, list[Pair]],
    Meta(description="standing relations by name: hubao (互包 pairs), fenghu "
                     "([a, b]: seat a gave seat b three pengs), or a variant's own"),
]
MeldKind = Literal["chi", "peng", "minggang", "jiagang", "angang",
                   "sao", "guosao", "saochuan", "kaizhao"]
How = Literal["zimo", "dianpao", "qianggang", "fangpao", "pinghu"]
Flag = Literal["gangshanghua", "gangshangpao", "haidi", "haidipao", "quanqiupao",
               "tianhu", "dihu", "renhu", "sanlong_wukan", "after_sao"]
Action = Annotated[str, Meta(description="one decision, \"<seat> <verb> [cards]\", "
                                         "e.g. \"0 discard 5p\", \"2 peng\"")]

_STRICT = {"forbid_unknown_fields": True, "omit_defaults": True}


class Meld(msgspec.Struct, **_STRICT):
    """A meld on the table: ``{ kind = "peng", tiles = "EEE", from = 1 }``."""

    kind: MeldKind
    tiles: Annotated[Cards, Meta(description="its cards; a kong, peng or sao may be "
                                             "written as one card (\"7s\")")]
    from_: Annotated[Seat, Meta(description="the seat whose card was claimed; left "
                                            "out for concealed kinds")] | UnsetType = \
        field(default=UNSET, name="from")


class Payment(msgspec.Struct, **_STRICT):
    """The total one seat pays another: ``{ from = 3, to = 0, amount = 35 }``."""

    from_: Seat = field(name="from")
    to: Seat
    amount: Annotated[int, Meta(ge=0, description="in the variant's unit; a zero entry "
                                                   "checks nothing")]


class SeatAction(msgspec.Struct, **_STRICT):
    """A seat and a claim action id: ``{ seat = 2, action = "peng" }``."""

    seat: Seat
    action: str
    cards: Annotated[Cards, Meta(description="for a chi: the run it makes")] | UnsetType = UNSET


class PassedClaim(msgspec.Struct, **_STRICT):
    """An earlier pass (过张): ``{ seat = 1, card = "x3", action = "chi" }``."""

    seat: Seat
    card: Card
    action: str | UnsetType = UNSET


def _require(what: str, obj: Any, *names: str) -> None:
    if all(getattr(obj, n) is UNSET for n in names):
        raise ValueError(f"{what}: nothing expected (give at least one of {', '.join(names)})")


# ------------------------------------------------------------------ deck


class DeckGiven(msgspec.Struct, **_STRICT):
    """``deck`` takes nothing."""


class DeckExpect(msgspec.Struct, **_STRICT):
    """What the deck holds."""

    size: Annotated[int, Meta(ge=0, description="cards in the deck")] | UnsetType = UNSET
    kinds: Annotated[int, Meta(ge=0, description="distinct kinds")] | UnsetType = UNSET
    copies: Annotated[int | list[int],
                      Meta(description="copies of each kind (a sorted list when kinds differ)")] \
        | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "size", "kinds", "copies")


# ------------------------------------------------------------------ deal


class DealGiven(msgspec.Struct, **_STRICT):
    """The dealer and, optionally, the whole shuffled deck."""

    dealer: Seat | UnsetType = UNSET
    deck: Annotated[Cards, Meta(description="the full shuffled deck, in order")] | UnsetType = UNSET


class DealExpect(msgspec.Struct, **_STRICT):
    """Hand sizes, the stock, and (with ``deck`` given) the hands."""

    hand_sizes: BySeat | UnsetType = UNSET
    stock: Annotated[int, Meta(ge=0, description="cards left to draw")] | UnsetType = UNSET
    hands: Annotated[list[Cards], Meta(description="by seat, order within a hand ignored")] \
        | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "hand_sizes", "stock", "hands")


# ------------------------------------------------------------------ win


class WinGiven(msgspec.Struct, **_STRICT):
    """One hand at the moment it may win."""

    hand: Annotated[Cards, Meta(description="concealed cards before the winning card")]
    melds: list[Meld] | UnsetType = UNSET
    tile: Annotated[Card, Meta(description="the winning card")] | UnsetType = UNSET
    how: How | UnsetType = UNSET
    seat: Seat | UnsetType = UNSET
    dealer: Seat | UnsetType = UNSET
    from_: Annotated[Seat, Meta(description="whose card it is (not for zimo)")] | UnsetType = \
        field(default=UNSET, name="from")
    flags: list[Flag] | UnsetType = UNSET
    kong_chain: Annotated[list[Meld], Meta(description="连杠: the kongs of the winner's "
                                                       "current chain, in order")] \
        | UnsetType = UNSET


class WinExpect(msgspec.Struct, **_STRICT):
    """Whether it wins, the patterns applied, the 胡数 (zipai)."""

    wins: bool | UnsetType = UNSET
    patterns: Annotated[list[str], Meta(description="pattern ids, order ignored")] \
        | UnsetType = UNSET
    hu: Annotated[int, Meta(description="zipai: 胡数 of the best split")] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "wins", "patterns", "hu")


# ------------------------------------------------------------------ waits


class WaitsGiven(msgspec.Struct, **_STRICT):
    """A hand one card short of a win."""

    hand: Cards
    melds: list[Meld] | UnsetType = UNSET


class WaitsExpect(msgspec.Struct, **_STRICT):
    """The winning kinds."""

    tiles: Annotated[Cards, Meta(description="the distinct winning kinds, order ignored")]


# ------------------------------------------------------------------ flip


class FlipGiven(msgspec.Struct, **_STRICT):
    """The winner's holding and what is left to flip."""

    holding: Annotated[Cards, Meta(description="every card of the winning hand, melds "
                                               "included")]
    tile: Card | UnsetType = UNSET
    stock: Annotated[Cards, Meta(description="what is left to flip, head first")] \
        | UnsetType = UNSET


class FlipExpect(msgspec.Struct, **_STRICT):
    """The flipped cards and the 醒数."""

    flipped: Annotated[Cards, Meta(description="the cards used as flips, in order")] \
        | UnsetType = UNSET
    xing: Annotated[int, Meta(ge=0)] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "flipped", "xing")


# ------------------------------------------------------------------ settle


class Winner(msgspec.Struct, **_STRICT):
    """One winner of a settled hand: the fields of a ``win`` case's given."""

    seat: Seat
    hand: Cards
    melds: list[Meld] | UnsetType = UNSET
    tile: Card | UnsetType = UNSET
    flags: list[Flag] | UnsetType = UNSET
    kong_chain: list[Meld] | UnsetType = UNSET


class SettleGiven(msgspec.Struct, **_STRICT):
    """A finished hand: its winners, how it was won, the standing relations."""

    winners: list[Winner]
    dealer: Seat | UnsetType = UNSET
    how: How | UnsetType = UNSET
    from_: Annotated[Seat, Meta(description="the discarder, kong maker or drawer")] \
        | UnsetType = field(default=UNSET, name="from")
    stock: Annotated[Cards, Meta(description="cards left to flip, head first")] \
        | UnsetType = UNSET
    hubao: Annotated[list[Pair], Meta(description="互包 pairs")] | UnsetType = UNSET
    fenghu: Annotated[list[Pair], Meta(description="封胡: [a, b], seat a gave b three pengs")] \
        | UnsetType = UNSET
    kong_chain: list[Meld] | UnsetType = UNSET
    relations: Relations | UnsetType = UNSET


_PATTERNS_BY_SEAT = Annotated[dict[SeatKey, list[str]],
                              Meta(description="pattern ids by winner's seat, order ignored")]
_XING_BY_SEAT = Annotated[dict[SeatKey, int], Meta(description="醒数 by winner's seat")]


class SettleExpect(msgspec.Struct, **_STRICT):
    """Who pays whom."""

    net: Annotated[BySeat, Meta(description="what each seat gains or loses; sums to 0")] \
        | UnsetType = UNSET
    pairwise: Annotated[list[Payment], Meta(description="order ignored, zero amounts "
                                                        "omitted")] | UnsetType = UNSET
    patterns: _PATTERNS_BY_SEAT | UnsetType = UNSET
    xing: _XING_BY_SEAT | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "net", "pairwise", "patterns", "xing")


# ------------------------------------------------------------------ claim


class ClaimGiven(msgspec.Struct, **_STRICT):
    """A position and one card entering play."""

    hands: Annotated[list[Cards], Meta(description="concealed hands by seat")]
    card: Card
    from_: Annotated[Seat, Meta(description="the card's owner")] = field(name="from")
    melds: Annotated[list[list[Meld]], Meta(description="melds by seat")] | UnsetType = UNSET
    dealer: Seat | UnsetType = UNSET
    source: Literal["discard", "draw", "jiagang"] | UnsetType = UNSET
    declared: Annotated[list[SeatAction], Meta(description="what each seat asks for; "
                                                          "seats not listed pass")] \
        | UnsetType = UNSET
    wall_left: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    relations: Relations | UnsetType = UNSET
    passed: list[PassedClaim] | UnsetType = UNSET
    discards: Annotated[list[Cards], Meta(description="each seat's discards, by seat")] \
        | UnsetType = UNSET


_CHI = Annotated[str, Meta(description="a 吃 as a scenario writes it: \"chi 3p 4p 5p\", "
                                       "\"chi x1 x2 x3 + x3 x4 x5\"")]


class ClaimExpect(msgspec.Struct, **_STRICT):
    """The legal claims by seat, and the claims that take effect."""

    legal: Annotated[dict[SeatKey, list[str]],
                     Meta(description="claim action ids by seat, order ignored, "
                                      "never \"pass\"")] | UnsetType = UNSET
    legal_chi: Annotated[dict[SeatKey, list[_CHI]], Meta(description="each legal 吃 by seat")] \
        | UnsetType = UNSET
    resolved: Annotated[list[SeatAction], Meta(description="the claims that take effect, "
                                                          "order ignored")] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "legal", "legal_chi", "resolved")


# ------------------------------------------------------------------ scenario, view


class ScenarioGiven(msgspec.Struct, **_STRICT):
    """A deal and the decisions played on it through the table engine."""

    hands: Annotated[list[Cards], Meta(description="the dealt hands, by seat")]
    dealer: Seat | UnsetType = UNSET
    wall: Annotated[Cards, Meta(description="the stock in draw order, head first")] \
        | UnsetType = UNSET
    relations: Relations | UnsetType = UNSET
    actions: list[Action] | UnsetType = UNSET


class ScenarioExpect(msgspec.Struct, **_STRICT):
    """How the hand ended and what was paid."""

    end: Literal["hu", "huangzhuang"] | UnsetType = UNSET
    winners: list[Seat] | UnsetType = UNSET
    net: BySeat | UnsetType = UNSET
    kong_net: BySeat | UnsetType = UNSET
    instant_net: BySeat | UnsetType = UNSET
    pairwise: list[Payment] | UnsetType = UNSET
    patterns: _PATTERNS_BY_SEAT | UnsetType = UNSET
    xing: _XING_BY_SEAT | UnsetType = UNSET
    next_dealer: Seat | UnsetType = UNSET
    error: Annotated[int, Meta(ge=0, description="the index of the action that must be "
                                                 "refused")] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "end", "winners", "net", "kong_net", "instant_net",
                 "pairwise", "patterns", "xing", "next_dealer", "error")


class ViewGiven(msgspec.Struct, **_STRICT):
    """A scenario, and the seat whose view is checked."""

    hands: list[Cards]
    seat: Seat
    dealer: Seat | UnsetType = UNSET
    wall: Cards | UnsetType = UNSET
    relations: Relations | UnsetType = UNSET
    actions: list[Action] | UnsetType = UNSET


class ViewExpect(msgspec.Struct, **_STRICT):
    """What the seat sees."""

    hand: Cards | UnsetType = UNSET
    melds: Annotated[list[list[str]],
                     Meta(description="by seat, \"<kind> <cards>\" with ? for a card the "
                                      "viewer may not see")] | UnsetType = UNSET
    hand_sizes: BySeat | UnsetType = UNSET
    stock: Annotated[int, Meta(ge=0)] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _require("expect", self, "hand", "melds", "hand_sizes", "stock")


# ------------------------------------------------------------------ cases


_Id = Annotated[str, Meta(min_length=1, description="unique within the variant")]
_Source = Annotated[str, Meta(min_length=1, description="where the rule comes from")]
_Options = Annotated[dict[str, Any], Meta(description="variant options, over the file's")]
_CASE = {**_STRICT, "tag_field": "check"}


class DeckCase(msgspec.Struct, tag="deck", **_CASE):
    """The deck's size, kinds and copies."""

    id: _Id
    source: _Source
    expect: DeckExpect
    given: DeckGiven = field(default_factory=DeckGiven)
    note: str = ""
    options: _Options = {}


class DealCase(msgspec.Struct, tag="deal", **_CASE):
    """The deal: hand sizes, the stock, the hands."""

    id: _Id
    source: _Source
    expect: DealExpect
    given: DealGiven = field(default_factory=DealGiven)
    note: str = ""
    options: _Options = {}


class WinCase(msgspec.Struct, tag="win", **_CASE):
    """Is it a win, and as what."""

    id: _Id
    source: _Source
    given: WinGiven
    expect: WinExpect
    note: str = ""
    options: _Options = {}


class WaitsCase(msgspec.Struct, tag="waits", **_CASE):
    """Which kinds complete a hand."""

    id: _Id
    source: _Source
    given: WaitsGiven
    expect: WaitsExpect
    note: str = ""
    options: _Options = {}


class FlipCase(msgspec.Struct, tag="flip", **_CASE):
    """The bonus flip (翻醒, 醒)."""

    id: _Id
    source: _Source
    given: FlipGiven
    expect: FlipExpect
    note: str = ""
    options: _Options = {}


class SettleCase(msgspec.Struct, tag="settle", **_CASE):
    """Who pays whom for one finished hand."""

    id: _Id
    source: _Source
    given: SettleGiven
    expect: SettleExpect
    note: str = ""
    options: _Options = {}


class ClaimCase(msgspec.Struct, tag="claim", **_CASE):
    """Which claim wins on one card."""

    id: _Id
    source: _Source
    given: ClaimGiven
    expect: ClaimExpect
    note: str = ""
    options: _Options = {}


class ScenarioCase(msgspec.Struct, tag="scenario", **_CASE):
    """A hand played through the real table engine."""

    id: _Id
    source: _Source
    given: ScenarioGiven
    expect: ScenarioExpect
    note: str = ""
    options: _Options = {}


class ViewCase(msgspec.Struct, tag="view", **_CASE):
    """What one seat may see."""

    id: _Id
    source: _Source
    given: ViewGiven
    expect: ViewExpect
    note: str = ""
    options: _Options = {}


AnyCase = Union[DeckCase, DealCase, WinCase, WaitsCase, FlipCase, SettleCase, ClaimCase,
                ScenarioCase, ViewCase]

#: The check kinds, in the format's order, and the Struct of each.
CASE_TYPES: dict[str, type] = {t.__struct_config__.tag: t for t in AnyCase.__args__}
CHECKS: tuple[str, ...] = tuple(CASE_TYPES)


class CaseFile(msgspec.Struct, **_STRICT):
    """A case file: the variant, options for every case in it, the cases."""

    variant: Annotated[str, Meta(min_length=1, description="the registered variant name")]
    cases: list[AnyCase]
    options: _Options = {}


def case_file_schema() -> dict[str, Any]:
    """The JSON Schema of a case file (``qipai schema --cases``), generated
    from :class:`CaseFile`; a TOML case file read as JSON is an instance."""
    from qipai.core.records import plain_schema

    return plain_schema(msgspec.json.schema(CaseFile))


def schema_text() -> str:
    """:func:`case_file_schema` as indented JSON text, keys in a stable order."""
    return msgspec.json.format(msgspec.json.encode(case_file_schema()), indent=2).decode()
