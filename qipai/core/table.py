"""The table: the generic engine every variant runs on.

A :class:`Table` holds one hand's state (:class:`~qipai.core.model.TableState`)
and drives it with the variant's hooks.  The protocol (see also
:mod:`qipai.core.hookspecs`):

1. Set-up: the deck (``qipai_deck``) is shuffled with the table's RNG, or an
   explicit :class:`~qipai.core.model.Deal` is given; the dealer comes from
   ``qipai_first_dealer`` when not given; ``qipai_deal`` deals.
2. ``qipai_start`` opens the hand.
3. Decisions are *pending* for some seats: either the seat holding the turn
   (``qipai_turn_actions``) or every seat that may claim the card of an open
   window (``qipai_claim_actions``).  :meth:`Table.legal_actions` lists them.
4. :meth:`Table.apply` checks the action is one of them (else
   :class:`~qipai.core.errors.IllegalAction`, table unchanged).  A turn action
   goes to ``qipai_apply_turn``.  A claim is kept until every asked seat has
   answered; then ``qipai_resolve_claims`` and ``qipai_apply_claims`` run.
5. Variant hooks move the hand on with the primitives below
   (:meth:`draw`, :meth:`give_turn`, :meth:`open_window`, :meth:`emit`,
   :meth:`end_hand`) until some seat must decide again or the hand ends.

Every event a hook records with :meth:`Table.emit` passes through
``qipai_instant_payments`` (the engine's own ``dealt``, ``won``,
``flipped`` and ``ended`` do not).  A seat's view
(:meth:`view`) never holds another seat's concealed cards, face-down meld
cards or the stock order.
"""

from __future__ import annotations

import operator
import random
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from qipai.core import snapshot
from qipai.core.answers import (
    actions_problem, deal_problem, deck_problem, flip_problem, payments_problem,
    settlement_answer_problem,
)
from qipai.core.cards import check_copies, shuffle
from qipai.core.checks import checked_relations
from qipai.core.dispatch import culprit, hook_plugins, raiser, resolved_hooks
from qipai.core.errors import BadCards, BadOption, IllegalAction, PluginError, QipaiError
from qipai.core.model import (
    ACTION_TYPES, Action, Chi, Deal, Dealt, Ended, Event, Flip, Flipped, Meld, Paid, Pass, Payment,
    Result, SeatState, Settlement, TableState, WinClaim, WinEval, Window, net_of,
)
from qipai.core.stamps import stamp_of
from qipai.core.views import seat_view

if TYPE_CHECKING:  # pragma: no cover
    from qipai.core.ruleset import Ruleset

__all__ = ["ACTION_CLASSES", "Table"]

#: Names that moved to their own rooms: still served here for one release,
#: with a DeprecationWarning (CHANGELOG.md).
_MOVED = {**dict.fromkeys(("MeldView", "SeatView", "meld_view", "redact"), "qipai.core.views"),
          "SNAPSHOT_MAGIC": "qipai.core.snapshot"}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    import warnings

    warnings.warn(f"qipai.core.table.{name} is deprecated: import it from {module}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), name)

ACTION_CLASSES = tuple(ACTION_TYPES.values())
_ACTION_SET = frozenset(ACTION_CLASSES)

#: The fields of TableState that playing changes (the rest is the hand's
#: header: variant, options, deal, …).
_PLAY_FIELDS = frozenset({"seats", "wall", "turn", "window", "pending", "instant", "events",
                          "actions", "result", "relations", "extra"})


class Table:
    """One hand of a variant, from the deal to the settlement.

    Args:
        ruleset: a loaded :class:`~qipai.core.ruleset.Ruleset`.
        seed: seeds the RNG that shuffles and picks the first dealer; None
            (and no ``deal``) uses the OS's cryptographic source.
        deal: an explicit deal (hands by seat, stock head first); wins over
            ``seed``, and the table then keeps no seed (``table.seed`` is
            None, and so is its record's: a record's seed is the one whose
            shuffle made its deal, which replay checks).
        dealer: the dealer's seat (default: the variant's first dealer).
        relations: standing relations at the start (``{"hubao": [[0, 1]]}``).
        rng: a ``random.Random`` to use instead of ``seed`` (the table then
            keeps no seed either).
        partial: accept an explicit ``deal`` that is not the whole deck (a
            short stock, as conformance scenarios and tests set up); its
            cards must still be possible (no fifth copy).  Without it a deal
            must hold exactly the variant's deck (``qipai_deck``).
        ask_all: every claim window asks every seat but the card's owner
            (and the owner too in windows whose source the manifest's
            ``owner_claims`` lists), at least ``Pass``, so no seat learns from its view or a refusal
            whether another seat could claim (docs: concepts/turn-protocol,
            "Asking all seats alike").  Default False: only seats with a
            claim are asked.

    Seeds, seats and cards may be any integer type (``operator.index``:
    a numpy integer is the int it is; ``True`` is not a card).  A seed is
    an int of at most 256 bits (``abs(seed) < 2**256``).

    Raises:
        BadCards: an impossible deal — a fifth copy of a kind, the wrong
            seat count, not the variant's deck, ``shown`` cards not in the
            dealer's hand, something that is not a card —, a bad seed or a
            bad ``rng``.
    """

    def __init__(self, ruleset: Ruleset, *, seed: int | None = None,
                 deal: Deal | None = None, dealer: int | None = None,
                 relations: dict[str, list[list[int]]] | None = None,
                 rng: random.Random | None = None, partial: bool = False,
                 ask_all: bool = False,
                 _state: TableState | None = None, _position: bool = False) -> None:
        seed = _checked_seed(seed)
        if rng is not None and not isinstance(rng, random.Random):
            raise BadCards(f"rng must be a random.Random, not {type(rng).__name__}")
        self.ruleset = ruleset
        self.hook = resolved_hooks(ruleset)
        only = getattr(self.hook, "only", None)  # ResolvedHooks has it; pluggy's relay not
        self._instant = only("qipai_instant_payments") if only is not None else None
        self.options = ruleset.options
        self.cards = ruleset.cards
        self.n = ruleset.manifest.players
        self.seed = seed
        #: Derived data hooks may keep between calls for speed (per-seat
        #: caches, keyed by the state they derive from).  Not state: never
        #: in snapshots or records, empty on a restored table, and a hook
        #: must get the same answers without it.
        self.scratch: dict[str, Any] = {}
        #: True when the deal need not be the whole deck (``partial``, or a
        #: position); a record says so, and its replay allows it again.
        self.partial = bool(partial or _position)
        #: Rollback (see :meth:`apply`): the snapshot and action count that
        #: the actions since are played again from; True while apply runs.
        self._base: tuple[bytes | None, int] | None = None  # None bytes: from the deal
        self._applying = False
        self._stamp: Any = None  # the versions' stamp, made at the first snapshot
        self._fdk: dict[str, str] | None = None  # face_down_kinds, read at the first view
        if _state is not None:
            self.state = _state
            d = _state.deal
            self.partial = sorted([c for h in d.hands for c in h] + list(d.wall)) != \
                sorted(self.hook.qipai_deck(options=self.options))
            return
        if type(ask_all) is not bool:
            raise BadOption(f"ask_all must be True or False, not {ask_all!r}")
        if dealer is not None:
            dealer = _index(dealer, BadCards, "dealer")
            if not 0 <= dealer < self.n:
                raise BadCards(f"dealer {dealer!r} is not a seat (0..{self.n - 1})")
        relations = checked_relations(relations, self.n, ruleset.manifest.relations)
        try:  # the hooks that deal and start the hand: a plugin's exception is named
            if deal is None:
                deal, dealt_by = self._shuffled_deal(seed, rng, dealer)
            else:
                self.seed = None  # an explicit deal records no seed (replay checks a seed)
                deal, dealt_by = self._given_deal(deal, dealer, _position), None
            self.state = self._new_state(deal, relations, ask_all, dealt_by)
            self.state.events.append(Dealt(deal.dealer, tuple(len(h) for h in deal.hands),
                                           len(deal.wall), tuple(deal.shown)))
            if not _position:
                self.hook.qipai_start(table=self)
                self._base = (None, 0)  # rebuilt from the deal (see _roll_back)
        except QipaiError:
            raise  # the host's bad input (BadCards …) or a PluginError already
        except Exception as exc:
            hook, plugin = self._raiser(exc)
            raise PluginError(hook, plugin, f"{type(exc).__name__}: {exc}") from exc

    def _shuffled_deal(self, seed: int | None, rng: random.Random | None,
                       dealer: int | None) -> tuple[Deal, str]:
        """The deck shuffled and dealt (``qipai_deck``, ``qipai_first_dealer``
        when no ``dealer`` is given, ``qipai_deal``, each answer checked),
        and what dealt it: ``"host"`` (``rng``), ``"seeded"`` or ``"os"``."""
        dealt_by = "host" if rng is not None else "seeded" if seed is not None else "os"
        if rng is not None:
            self.seed = None  # the seed did not deal: the record keeps none
        else:
            if seed is None:
                rng = secrets.SystemRandom()  # the OS's CSPRNG: no seed to learn
            else:
                rng = random.Random(seed)  # reproducible: tests, demos, records
        deck, canon = self._checked_deck(self.hook.qipai_deck(options=self.options))
        shuffle(rng, deck)
        if dealer is None:
            dealer = self.hook.qipai_first_dealer(options=self.options, rng=rng)
            if type(dealer) is not int or not 0 <= dealer < self.n:
                raise PluginError(
                    "qipai_first_dealer", self._plugins("qipai_first_dealer"),
                    f"first dealer {dealer!r} is not a seat (0..{self.n - 1})")
        deal = self.hook.qipai_deal(deck=deck, dealer=dealer, options=self.options)
        only = getattr(self.hook, "only", None)  # ResolvedHooks has it; pluggy's relay not
        trusted = only is not None and getattr(only("qipai_deal"), "qipai_conserves_cards", False)
        problem = None if trusted else self._deal_problem(deal, dealer, canon)
        if problem:
            self._refuse("qipai_deal", problem,
                         lambda a: self._deal_problem(a, dealer, canon) is not None,
                         deck=deck, dealer=dealer, options=self.options)
        return deal, dealt_by

    def _given_deal(self, deal: Any, dealer: int | None, position: bool) -> Deal:
        """An explicit ``deal`` checked (:meth:`_check_deal`; for ``dealer``
        if given; and by ``qipai_check_deal`` unless a ``position``)."""
        deal = self._check_deal(deal, whole=not self.partial)
        if dealer is not None and dealer != deal.dealer:
            raise BadCards(f"the deal was dealt for dealer {deal.dealer}, not {dealer}")
        if not position:
            problem = self.hook.qipai_check_deal(deal=deal, options=self.options)
            if problem:
                raise BadCards(problem)
        return deal

    def _new_state(self, deal: Deal, relations: dict[str, list[list[int]]], ask_all: bool,
                   dealt_by: str | None) -> TableState:
        """The state of a hand just dealt: nobody to decide yet."""
        return TableState(
            variant=self.ruleset.name,
            options=self.ruleset.options_dict(),
            n_players=self.n,
            deal=deal,
            dealer=deal.dealer,
            seats=[SeatState(hand=sorted(h)) for h in deal.hands],
            wall=list(deal.wall),
            pending={},
            instant=[],
            events=[],
            actions=[],
            relations={k: [list(g) for g in v] for k, v in (relations or {}).items()},
            start_relations={k: [list(g) for g in v] for k, v in (relations or {}).items()},
            extra=self.hook.qipai_new_state(options=self.options),
            ask_all=ask_all,
            rng=dealt_by,
        )

    @classmethod
    def from_position(cls, ruleset: Ruleset, *, dealer: int, hands: Sequence[Sequence[int]],
                      wall: Sequence[int] = (), melds: Sequence[Sequence[Meld]] | None = None,
                      discards: Sequence[Sequence[int]] | None = None,
                      relations: dict[str, list[list[int]]] | None = None,
                      context: dict[str, Any] | None = None) -> Table:
        """A table set up in the middle of a hand (for puzzles, tests, the
        conformance runner's ``claim`` checks): hands, melds and discards by
        seat, the stock, and the variant's own context (``qipai_setup_position``,
        e.g. zipai 过张).  The dealer then holds the turn; a caller may open a
        window with :meth:`open_window` or make a seat draw with :meth:`draw`.

        Raises:
            BadCards: a fifth copy of a kind anywhere, or the wrong seat count.
        """
        n = ruleset.manifest.players
        kinds = ruleset.cards.n_kinds
        melds = _sequence(melds, "melds") if melds is not None else [[] for _ in range(n)]
        discards = (_sequence(discards, "discards") if discards is not None
                    else [[] for _ in range(n)])
        hands = _sequence(hands, "hands")
        if len(melds) != n or len(discards) != n:
            raise BadCards(f"{ruleset.name} seats {n} players: give melds and discards by seat")
        melds = [_melds(ms, kinds, n, seat) for seat, ms in enumerate(melds)]
        discards = [_cards(d, kinds, f"seat {seat}'s discards") for seat, d in enumerate(discards)]
        hands = [_cards(h, kinds, f"seat {seat}'s hand") for seat, h in enumerate(hands)]
        wall = _cards(wall, kinds, "the wall")
        every = [c for ms in melds for m in ms for c in m.cards] + [c for d in discards for c in d]
        every += [c for h in hands for c in h] + list(wall)
        check_copies(every, ruleset.cards, "the position's cards")
        deal = Deal(dealer, tuple(hands), wall)
        table = cls(ruleset, deal=deal, relations=relations, _position=True)
        for seat, (ms, ds) in enumerate(zip(melds, discards)):
            table.seats[seat].melds = list(ms)
            table.seats[seat].discards = list(ds)
        table.hook.qipai_setup_position(table=table, context=dict(context or {}))
        table.give_turn(dealer)
        return table

    def set_origin(self, seed: int | None, rng: str | None) -> None:
        """Say what dealt this table's deal, as its record will say it:
        ``seed``, the seed whose shuffle made the deal (None: none), and
        ``rng``, what dealt it (``"seeded"``, ``"os"``, ``"host"``; None:
        not said).  For a table set up from a deal dealt before — a host
        rebuilding a hand from its stored deal, a replay — since a table
        given a ``deal`` keeps neither.  Whether the seed deals this deal is
        :func:`~qipai.core.records.seed_problem`'s question.

        Raises:
            BadCards: the seed is not an integer below 2**256 in size, or
                ``rng`` is none of those.
        """
        seed = _checked_seed(seed)
        if rng not in _RNG_KINDS:
            raise BadCards(f"rng must be one of {', '.join(map(repr, _RNG_KINDS))}, not {rng!r}")
        self.seed = seed
        self.state.rng = rng

    def _deal_problem(self, deal: Any, dealer: int, deck: list[int]) -> str | None:
        """Why ``deal``, a ``qipai_deal`` answer for ``dealer`` from ``deck``
        (sorted), is refused (:func:`~qipai.core.answers.deal_problem`, then the variant's
        ``qipai_check_deal``), or None."""
        problem = deal_problem(deal, dealer, self.n, deck)
        if problem is None:
            problem = self.hook.qipai_check_deal(deal=deal, options=self.options)
        return problem

    def _checked_deck(self, answer: Any) -> tuple[list[int], list[int]]:
        """A ``qipai_deck`` answer as a new list, and sorted, once checked
        (:func:`~qipai.core.answers.deck_problem`): the check is made when the ruleset first
        deals a deck of these cards; after it, the sorted deck is compared
        with the one checked.

        Raises:
            PluginError: naming ``qipai_deck``, its plugin and what is wrong.
        """
        deck = list(answer) if isinstance(answer, (list, tuple)) else None
        if deck is not None and set(map(type, deck)) == {int}:
            canon = sorted(deck)  # (the types first: == takes True for 1, 1.0 for 1)
            if canon == self.ruleset.checked_deck:
                return deck, canon
        problem = deck_problem(answer, self.cards)
        if problem:
            self._refuse("qipai_deck", problem, lambda a: deck_problem(a, self.cards) is not None,
                         options=self.options)
        assert deck is not None
        canon = sorted(deck)
        self.ruleset.checked_deck = canon
        return deck, canon

    def _check_deal(self, deal: Any, whole: bool = True) -> Deal:
        """``deal`` with every field converted to ints and tuples, checked.

        ``whole``: the hands and the stock must be exactly the variant's
        deck (``qipai_deck``, as a multiset); else they need only hold no
        fifth copy.  ``shown`` must be cards of the dealer's hand.

        Raises:
            BadCards: naming what is wrong.
        """
        if not isinstance(deal, Deal):
            raise BadCards(f"not a Deal: {deal!r}")
        kinds = self.cards.n_kinds
        dealer = _index(deal.dealer, BadCards, "the deal's dealer")
        if not 0 <= dealer < self.n:
            raise BadCards(f"dealer {dealer} is not a seat (0..{self.n - 1})")
        hands_in = _sequence(deal.hands, "the deal's hands")
        if len(hands_in) != self.n:
            raise BadCards(f"{self.ruleset.name} seats {self.n} players; the deal has "
                           f"{len(hands_in)} hands")
        hands = tuple(_cards(h, kinds, f"seat {i}'s hand") for i, h in enumerate(hands_in))
        wall = _cards(deal.wall, kinds, "the deal's wall")
        shown = _cards(deal.shown, kinds, "the deal's shown cards")
        everything = [c for h in hands for c in h] + list(wall)
        check_copies(everything, self.cards, "the deal's hands and wall")
        if whole:
            deck = sorted(self.hook.qipai_deck(options=self.options))
            if sorted(everything) != deck:
                raise BadCards(f"the deal is not the {self.ruleset.name} deck: its hands and "
                               f"wall hold {len(everything)} cards of the {len(deck)}"
                               if len(everything) != len(deck) else
                               f"the deal is not the {self.ruleset.name} deck: the kinds differ")
        held = list(hands[dealer])
        for c in shown:
            if c not in held:
                raise BadCards(f"a shown card ({self.cards.token(c)}) is not in the "
                               f"dealer's hand")
            held.remove(c)
        return Deal(dealer, hands, wall, shown)

    # ------------------------------------------------------------------ queries
    # Read accessors of the state for hosts, environments and tools: each
    # gives the table's own object, not a copy (a copy would cost at every
    # call), so read it and never change it — the table changes through
    # apply and the primitives below.

    @property
    def deal(self) -> Deal:
        """The hand's deal: dealer, hands by seat, stock head first, shown cards."""
        return self.state.deal

    @property
    def dealer(self) -> int:
        """The dealer's seat (庄)."""
        return self.state.dealer

    @property
    def turn(self) -> int | None:
        """The seat holding the turn, or None (a claim window is open, or the hand is over)."""
        return self.state.turn

    @property
    def window(self) -> Window | None:
        """The open claim window (the card in play, its owner and source,
        and the claims declared so far), or None."""
        return self.state.window

    @property
    def pending(self) -> dict[int, list[Action]]:
        """The pending decisions: seat → its legal actions (see
        :meth:`to_decide` and :meth:`legal_actions`, which copy)."""
        return self.state.pending

    @property
    def actions(self) -> list[Action]:
        """Every action applied so far, in order (what a record keeps)."""
        return self.state.actions

    @property
    def wall(self) -> list[int]:
        """The stock, head first (:meth:`wall_left` is its size)."""
        return self.state.wall

    @property
    def instant(self) -> list[Payment]:
        """The instant payments made so far (杠钱 …), in order."""
        return self.state.instant

    @property
    def extra(self) -> Any:
        """The variant's own state (``Manifest.state_type``)."""
        return self.state.extra

    @property
    def relations(self) -> dict[str, list[list[int]]]:
        """Standing relations by name (``{"hubao": [[0, 1]]}``), kept by the variant."""
        return self.state.relations

    @property
    def seats(self) -> list[SeatState]:
        """Each seat's concealed hand, melds and discards, by seat."""
        return self.state.seats

    @property
    def over(self) -> bool:
        """True once the hand has a result."""
        return self.state.result is not None

    @property
    def result(self) -> Result | None:
        """How the hand ended, or None while it goes on."""
        return self.state.result

    @property
    def events(self) -> list[Event]:
        """Every event so far, in order (unredacted: :meth:`view` redacts)."""
        return self.state.events

    @property
    def face_down_kinds(self) -> dict[str, str]:
        """The manifest's ``face_down_kinds`` as a dict (read once per table):
        the kind others see for a meld lying wholly face down."""
        fdk = self._fdk
        if fdk is None:
            fdk = self._fdk = dict(getattr(self.ruleset.manifest, "face_down_kinds", ()))
        return fdk

    def to_decide(self) -> list[int]:
        """Seats with a pending decision, in seat order."""
        return sorted(self.state.pending)

    def win_eval(self, claim: WinClaim, how: str, from_seat: int | None) -> WinEval | None:
        """``qipai_win_check`` of ``claim`` won ``how`` (from ``from_seat``, None
        for a self-draw) at this table: its dealer and options.  For the
        family flows, which ask it; the answer is checked.

        Returns: the variant's evaluation, or None (it does not say).

        Raises:
            PluginError: the answer is neither a WinEval nor None; it names
                the hook and the plugin.
        """
        ev = self.hook.qipai_win_check(claim=claim, how=how, dealer=self.state.dealer,
                                       from_seat=from_seat, options=self.options)
        if ev is not None and not isinstance(ev, WinEval):  # a plugin's answer: input too
            self._refuse("qipai_win_check", f"answered {ev!r}, not a WinEval or None",
                         lambda a: not isinstance(a, WinEval), claim=claim, how=how,
                         dealer=self.state.dealer, from_seat=from_seat, options=self.options)
        return ev

    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action of ``seat`` now ([] if it has nothing to decide)."""
        return list(self.state.pending.get(seat, ()))

    def wall_left(self) -> int:
        """Cards left in the stock."""
        return len(self.state.wall)

    # ------------------------------------------------------------------ acting
    def apply(self, action: Action) -> list[Event]:
        """Apply one seat's decision; return the events it caused.

        An action equal to a listed legal one (``==``: the same type and
        equal fields, so ``1.0`` or ``True`` for card 1) is taken as that
        listed action, and the listed instance is what the record keeps;
        anything else is checked field by field (:meth:`_checked`) first.

        Raises:
            IllegalAction: the action is not legal now (wrong seat, wrong
                time, cards not held, …); the table is unchanged.
            PluginError: a hook raised while the action was applied, or
                answered something the engine refuses (see
                :class:`~qipai.core.errors.PluginError`); it names the hook
                and the plugin.  The table is then exactly as before the call.

        Transactional at almost no cost: on failure the state is rebuilt
        from the deal (a table made by the constructor), the snapshot (one
        made by :meth:`restore`) or a snapshot the first ``apply`` takes
        (a table from :meth:`from_position`, or after a primitive such as
        :meth:`draw` was called from outside ``apply``), by playing the
        actions since again — checked to give the very events and actions the table had —
        and :attr:`scratch` is emptied.  The table keeps no RNG after the
        deal, so nothing else is to restore.  This relies on what a record
        relies on: hooks answer from the table's state alone.  A hook that
        does not (the rebuild fails or differs) leaves the table where the
        failure left it, and the ``PluginError`` says so.  A host that
        changes ``table.state`` by hand between calls must not rely on it.
        """
        st = self.state
        if st.result is not None:
            raise IllegalAction("the hand is over")
        # Fast path: an action equal to a listed one is that one (the listed
        # instance is recorded, so ``True`` for 1 or a list for a tuple never
        # reaches the record).  Anything else is checked field by field.
        legal = None
        if type(action) in _ACTION_SET and type(action.seat) is int:
            legal = st.pending.get(action.seat)
        try:
            if legal is None:
                raise ValueError
            action = legal[legal.index(action)]
        except (TypeError, ValueError):  # nothing to decide, or not listed
            action = self._checked(action)
            legal = st.pending.get(action.seat)
            if legal is None or action not in legal:
                raise IllegalAction(self._why_illegal(action)) from None
            action = legal[legal.index(action)]
        if self._base is None:
            self._base = (self.snapshot(), len(st.actions))
        done = len(st.actions)
        start = len(st.events)
        self._applying = True
        try:
            st.actions.append(action)
            if st.window is not None:
                st.window.declared[action.seat] = action
                del st.pending[action.seat]
                if not st.pending:
                    self._resolve_window()
            else:
                st.pending = {}
                self.hook.qipai_apply_turn(table=self, action=action)
        except BaseException as exc:
            self._applying = False
            stuck = self._roll_back(done, start)
            if stuck is None and (isinstance(exc, QipaiError) or not isinstance(exc, Exception)):
                raise
            if isinstance(exc, PluginError):
                hook, plugin, reason = exc.hook, exc.plugin, exc.reason
            else:
                hook, plugin = self._raiser(exc)
                reason = f"{type(exc).__name__}: {exc}"
            if stuck is not None:
                reason += f"; the table could not be put back: {stuck}"
            raise PluginError(hook, plugin, reason) from exc
        self._applying = False
        return st.events[start:]

    def _roll_back(self, done: int, start: int) -> str | None:
        """Put the table back as it was with ``done`` actions and ``start``
        events: the base snapshot (:meth:`apply`), then the actions after it
        played again, checked to give the same events and actions.  Returns
        None when done, else why the table could not be put back (it is
        then left as the failure left it)."""
        data, at = self._base
        st = self.state
        try:
            if data is None:  # a table made by the constructor: made again
                fresh = type(self)(self.ruleset, deal=st.deal, relations=st.start_relations,
                                   partial=self.partial)
                for name in TableState.__struct_fields__:  # what play never changes
                    if name not in _PLAY_FIELDS:
                        setattr(fresh.state, name, getattr(st, name))
            else:
                fresh = type(self).restore(self.ruleset, data)
            for a in st.actions[at:done]:
                fresh.apply(a)
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            return f"playing the actions again failed too ({type(exc).__name__}: {exc})"
        if fresh.state.events != st.events[:start] or fresh.state.actions != st.actions[:done]:
            return "playing the actions again gave other events"
        self.state = fresh.state
        self.scratch = {}
        return None

    def _plugins(self, hook: str) -> str:
        """The pluggy names of the plugins implementing ``hook``, in call order."""
        return hook_plugins(self.ruleset.hook, hook)

    def _culprit(self, hook: str, problem: Any, **kwargs: Any) -> str:
        """Which plugin gave a refused answer of ``hook``
        (:func:`culprit` of the ruleset's relay)."""
        return culprit(self.ruleset.hook, hook, problem, **kwargs)

    def _refuse(self, hook: str, problem: str, check: Any, **kwargs: Any) -> None:
        raise PluginError(hook, self._culprit(hook, check, **kwargs), problem)

    def _raiser(self, exc: BaseException) -> tuple[str, str]:
        """:func:`raiser` of the ruleset's relay."""
        return raiser(self.ruleset.hook, exc)

    def _checked(self, action: Any) -> Action:
        """Refuse what is not an action of this table's shape (wrong types,
        cards out of range); put a chi's cards in canonical (sorted) order."""
        if not isinstance(action, ACTION_CLASSES):
            raise IllegalAction(f"not an action: {action!r}")
        seat = _index_or_none(action.seat)
        if seat is None or not 0 <= seat < self.n:
            raise IllegalAction(f"seat {action.seat!r} is not a seat at this table (0..{self.n - 1})")
        kinds = self.cards.n_kinds

        def card(c: Any) -> int:
            k = _index_or_none(c)
            if k is None or not 0 <= k < kinds:
                raise IllegalAction(f"not a card of this game: {c!r} (kinds are 0..{kinds - 1})")
            return k

        def group(g: Any, what: str) -> tuple[int, ...]:
            if isinstance(g, (str, bytes)) or not isinstance(g, Sequence):
                raise IllegalAction(f"a chi's {what} must be a sequence of cards, not {g!r}")
            return tuple(sorted(card(c) for c in g))

        if isinstance(action, Chi):
            extra = action.extra
            if isinstance(extra, (str, bytes)) or not isinstance(extra, Sequence):
                raise IllegalAction(f"a chi's extra must be a sequence of groups, not {extra!r}")
            return msgspec.structs.replace(
                action, seat=seat, cards=group(action.cards, "cards"),
                extra=tuple(sorted(group(g, "extra group") for g in extra)))
        if hasattr(action, "card"):
            return msgspec.structs.replace(action, seat=seat, card=card(action.card))
        return action if seat is action.seat else msgspec.structs.replace(action, seat=seat)

    def _why_illegal(self, action: Action) -> str:
        seat = getattr(action, "seat", None)
        if not isinstance(seat, int) or not 0 <= seat < self.n:
            return f"seat {seat!r} is not a seat at this table (0..{self.n - 1})"
        reason = self.hook.qipai_explain_illegal(table=self, action=action)
        if reason:
            return reason
        tag = type(action).__struct_config__.tag
        st = self.state
        if seat not in st.pending:  # naming who else decides would leak their options
            return f"seat {seat} has nothing to decide now ({tag})"
        legal = sorted({type(a).__struct_config__.tag for a in st.pending[seat]})
        return f"{tag} {self._fmt_action(action)} is not legal for seat {seat} now; " \
               f"legal: {', '.join(legal)}"

    def _fmt_action(self, action: Action) -> str:
        card = getattr(action, "card", None)
        if card is not None:
            return self.cards.token(card)
        cards = getattr(action, "cards", None)
        if cards:
            return " ".join(self.cards.token(c) for c in cards)
        return ""

    def _resolve_window(self) -> None:
        st = self.state
        window = st.window
        if window.declared and any(type(a) is not Pass for a in window.declared.values()):
            taken = list(self.hook.qipai_resolve_claims(table=self, window=window,
                                                        declared=dict(window.declared)))
            given = list(window.declared.values())
            for a in taken:
                if a not in given:
                    self._refuse("qipai_resolve_claims", f"{a!r} was not declared",
                                 lambda t: any(x not in given for x in t),
                                 table=self, window=window, declared=dict(window.declared))
        else:  # all passed, or nobody was asked: nothing takes effect
            taken = []
        st.window = None
        self.hook.qipai_apply_claims(table=self, window=window, taken=taken)

    # ------------------------------------------------------------------ primitives for hooks
    def emit(self, event: Event) -> None:
        """Record ``event`` and make the instant payments it triggers.

        Raises:
            PluginError: ``qipai_instant_payments`` answered something that
                is not a list of valid payments (seats in range, payer ≠
                payee, an int amount ≥ 0).
        """
        if not self._applying:
            self._base = None
        st = self.state
        st.events.append(event)
        if self._instant is not None:  # one implementation: its list itself
            due = self._instant(table=self, event=event)
            if not due:
                return
            problem = payments_problem(due, self.n)
            due = list(due)
        else:
            lists = self.hook.qipai_instant_payments(table=self, event=event)
            if not any(lists):
                return
            problem = next(filter(None, (payments_problem(ps, self.n) for ps in lists)), None)
            if problem is None:
                due = [p for ps in lists for p in ps]
        if problem:
            self._refuse("qipai_instant_payments", problem,
                         lambda ps: payments_problem(ps, self.n), table=self, event=event)
        if due:
            st.instant.extend(due)
            st.events.append(Paid(tuple(due)))

    def draw(self, seat: int, tail: bool = False) -> int | None:
        """Take the next stock card (head, or tail for a replacement) for
        ``seat`` and hand it to ``qipai_after_draw``.  Returns the card, or
        None if the stock is empty (nothing happens then)."""
        if not self._applying:
            self._base = None
        wall = self.state.wall
        if not wall:
            return None
        card = wall.pop() if tail else wall.pop(0)
        self.hook.qipai_after_draw(table=self, seat=seat, card=card, tail=tail)
        return card

    def give_turn(self, seat: int) -> None:
        """``seat`` holds the turn; its legal actions come from ``qipai_turn_actions``.

        Raises:
            PluginError: ``qipai_turn_actions`` answered no action (the hand
                could not go on) or something not an action of ``seat``.
        """
        if not self._applying:
            self._base = None
        st = self.state
        acts = self.hook.qipai_turn_actions(table=self, seat=seat)
        # The hot path checks the list; an element that is not one of the
        # seat's actions is refused when applied (IllegalAction).
        if not acts or not isinstance(acts, (list, tuple)):
            problem = f"no legal action for seat {seat}: the hand could not go on ({acts!r})" \
                if not acts else f"{acts!r} is not a list of actions"
            self._refuse("qipai_turn_actions", problem, lambda a: True, table=self, seat=seat)
        st.turn = seat
        st.window = None
        st.pending = {seat: list(acts)}

    def _owner_claims(self) -> frozenset[str]:
        """The manifest's ``owner_claims`` as a set, checked once per table."""
        got = self.scratch.get("core.owner_claims")
        if got is None:
            raw = getattr(self.ruleset.manifest, "owner_claims", ())
            if not isinstance(raw, (tuple, list)) or not all(isinstance(x, str) for x in raw):
                raise PluginError("qipai_manifest", self.ruleset.name,
                                  f"owner_claims must be a tuple of window sources (str), "
                                  f"not {raw!r}")
            got = self.scratch["core.owner_claims"] = frozenset(raw)
        return got

    def open_window(self, card: int, owner: int, source: str) -> None:
        """Offer ``card`` (from ``owner``, by ``source``) to the seats.

        Seats with nothing but a pass are not asked; a single compulsory
        action is taken at once; if nobody is asked the window resolves now.
        On an ``ask_all`` table every seat but ``owner`` that is not asked
        otherwise (nothing but a pass, or nothing at all) is asked ``Pass``,
        so the window always waits for every other seat — and for ``owner``
        too when ``source`` is one of the variant's ``Manifest.owner_claims``
        (windows in which an owner may claim his own card).

        Raises:
            PluginError: the manifest's ``owner_claims`` is not a tuple of str.
        """
        if not self._applying:
            self._base = None
        st = self.state
        window = Window(card, owner, source, {})
        st.window = window
        st.pending = {}
        by_seat = self.hook.qipai_window_actions(table=self, window=window)
        if by_seat is None:
            by_seat = {seat: self.hook.qipai_claim_actions(table=self, seat=seat, window=window)
                       for seat in range(self.n)}
            hook = "qipai_claim_actions"
        else:
            hook = "qipai_window_actions"
            if not isinstance(by_seat, dict):
                self._refuse(hook, f"{by_seat!r} is not a dict of actions by seat",
                             lambda a: True, table=self, window=window)
        for seat in by_seat or ():
            if type(seat) is not int or not 0 <= seat < self.n:
                self._refuse(hook, f"answered for seat {seat!r}, not a seat (0..{self.n - 1})",
                             lambda a: True, table=self, window=window)
        for seat, acts in sorted(by_seat.items()) if by_seat else ():
            acts = acts or ()
            problem = actions_problem(acts, seat, True)
            if problem:
                kw = dict(table=self, window=window)
                if hook == "qipai_claim_actions":
                    kw["seat"] = seat
                self._refuse(hook, problem, lambda a: True, **kw)
            acts = list(acts)
            has_pass = Pass(seat) in acts
            if not acts or (has_pass and len(acts) == 1):
                continue
            if not has_pass and len(acts) == 1:
                window.declared[seat] = acts[0]
                continue
            st.pending[seat] = acts
        if st.ask_all:  # every other seat decides, so waiting tells nobody anything
            # the owner too where the variant lets an owner claim (Manifest.owner_claims)
            skip = -1 if source in self._owner_claims() else owner
            for seat in range(self.n):
                if seat != skip and seat not in st.pending and seat not in window.declared:
                    st.pending[seat] = [Pass(seat)]
        if not st.pending:
            self._resolve_window()

    def claim_options(self, seat: int, card: int, owner: int, source: str) -> list[Action]:
        """What ``seat`` could do if ``card`` entered play from ``owner`` by
        ``source`` now (asks ``qipai_claim_actions``; changes nothing)."""
        window = Window(card=card, owner=owner, source=source, declared={})
        return list(self.hook.qipai_claim_actions(table=self, seat=seat, window=window) or ())

    def pay(self, payments: Sequence[Payment]) -> None:
        """Make instant payments now (recorded with a ``paid`` event).

        Raises:
            PluginError: not a list of valid payments (named as a
                ``qipai_instant_payments`` answer of the plugins calling it).
        """
        if not self._applying:
            self._base = None
        problem = payments_problem(payments, self.n) if payments else None
        if problem:
            raise PluginError("qipai_instant_payments (Table.pay)", "?", problem)
        if payments:
            self.state.instant.extend(payments)
            self.state.events.append(Paid(tuple(payments)))

    def settle(self, end: Any) -> Settlement:
        """``qipai_settle`` for the hand end ``end`` (a
        :class:`~qipai.core.model.HandEnd`), checked.

        Raises:
            PluginError: the answer is not a :class:`Settlement` of valid
                payments (seats in range, payer ≠ payee, int amounts from 0
                to ``MAX_AMOUNT``),
                naming the plugin that gave it.
        """
        settlement = self.hook.qipai_settle(end=end, options=self.options,
                                            bonus_flip=self.bonus_flip)
        problem = settlement_answer_problem(settlement, self.n)
        if problem:
            n = self.n
            self._refuse("qipai_settle", problem,
                         lambda a: settlement_answer_problem(a, n) is not None,
                         end=end, options=self.options, bonus_flip=self.bonus_flip)
        return settlement

    def bonus_flip(self, holding: Sequence[int], tile: int | None,
                   stock: Sequence[int]) -> Flip:
        """``qipai_bonus_flip`` at this table (its options), checked
        (:func:`~qipai.core.checks.flip_problem`): one
        winner's bonus flip (桂林 翻醒, zipai 醒).  :meth:`settle` gives it
        to ``qipai_settle`` as ``bonus_flip``, so a house plugin's flip is
        the one the hand is paid by.

        Args:
            holding: every card of the winning hand, melds included (kinds).
            tile: the winning card, or None.
            stock: the cards left to flip, head first.

        Returns: the :class:`~qipai.core.model.Flip` (cards used, 醒数).

        Raises:
            PluginError: the answer is not a Flip of cards of this game (a
                tuple) with a 醒数 from 0 to ``MAX_AMOUNT`` and per-card 醒数,
                if any, adding up to it; it names the hook and the plugin.
        """
        kwargs = {"holding": list(holding), "tile": tile, "stock": list(stock),
                  "options": self.options}
        flip = self.hook.qipai_bonus_flip(**kwargs)
        kinds = self.cards.n_kinds
        problem = flip_problem(flip, kinds)
        if problem:
            self._refuse("qipai_bonus_flip", problem,
                         lambda a: flip_problem(a, kinds) is not None, **kwargs)
        return flip

    def end_hand(self, end: str, winners: Sequence[int] = (), settlement: Settlement | None = None,
                 from_seat: int | None = None) -> Result:
        """Finish the hand: record the flips, settlement and next dealer.

        Args:
            end: ``"hu"`` or ``"huangzhuang"``.
            winners: the winner seats.
            settlement: the wins' settlement (None at 荒庄).
            from_seat: the discarder / robbed kong maker (for the next dealer).
        """
        if not self._applying:
            self._base = None
        st = self.state
        settlement = settlement or Settlement()
        problem = settlement_answer_problem(settlement, self.n)
        if problem:
            raise PluginError("qipai_settle", self._plugins("qipai_settle"), problem)
        for w in winners:
            if type(w) is not int or not 0 <= w < self.n:
                raise PluginError("Table.end_hand", self._plugins("qipai_settle"), f"winner {w!r} is not a seat (0..{self.n - 1})")
        if settlement.flipped:
            st.events.append(Flipped(tuple(settlement.flipped), dict(settlement.xing)))
        payments = tuple(st.instant) + tuple(settlement.payments)
        net = net_of(payments, self.n)
        if sum(net) != 0:  # pragma: no cover - a variant bug, never a silent wrong answer
            raise AssertionError(f"settlement does not sum to zero: {net}")
        nxt = self.hook.qipai_next_dealer(table=self, end=end, winners=list(winners),
                                          from_seat=from_seat)
        if type(nxt) is not int or not 0 <= nxt < self.n:
            self._refuse("qipai_next_dealer", f"next dealer {nxt!r} is not a seat (0..{self.n - 1})",
                         lambda a: True, table=self, end=end, winners=list(winners),
                         from_seat=from_seat)
        result = Result(end=end, winners=tuple(winners), net=tuple(net), payments=payments,
                        instant=tuple(st.instant), patterns=dict(settlement.patterns),
                        xing=dict(settlement.xing), flipped=tuple(settlement.flipped),
                        next_dealer=nxt)
        st.result = result
        st.pending = {}
        st.window = None
        st.turn = None
        st.events.append(Ended(end, tuple(winners), tuple(net), nxt))
        return result

    # ------------------------------------------------------------------ views
    # qipai.core.views.seat_view, the one view builder, as a method: bound,
    # not wrapped, since a bot views the table at every decision.
    view = seat_view

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> bytes:
        """The whole state as bytes (:mod:`qipai.core.snapshot`: the state,
        the seed and the stamp of the versions it runs under, behind a
        digest).  Restore with :meth:`restore`, which checks the digest and
        the stamp."""
        stamp = self._stamp
        if stamp is None:
            stamp = self._stamp = stamp_of(self.ruleset)
        return snapshot.encode(self.state, self.seed, stamp)

    @classmethod
    def restore(cls, ruleset: Ruleset, data: bytes, *,
                allow_version_mismatch: bool = False) -> Table:
        """A table equal to the one whose :meth:`snapshot` gave ``data``.

        The snapshot must have been made under ``ruleset``'s variant
        version, spec and house plugins, and under this qipai version unless
        ``allow_version_mismatch`` (:mod:`qipai.core.stamps`).

        Raises:
            VersionMismatch: made under another qipai version, variant
                version, ruleset or house plugins; names what differs.
            BadRecord: not a snapshot, a snapshot altered since it was made
                (the digest does not match), one of another variant or
                options, or one of an older qipai (without version stamps).
        """
        state, seed, running = snapshot.decode(ruleset, data, allow_version_mismatch)
        table = cls(ruleset, seed=seed, _state=state)
        table._base = (bytes(data), len(state.actions))
        table._stamp = running
        return table


_SEED_LIMIT = 2**256
#: What may deal a hand (``TableState.rng``, ``Record.rng``); None: not said.
_RNG_KINDS = ("seeded", "os", "host", "joint", None)


def _index(value: Any, error: type, what: str) -> int:
    """``value`` as an int (``operator.index``: ints and integer types such
    as numpy's, never bool); else ``error`` naming ``what``."""
    if isinstance(value, bool):
        raise error(f"{what} must be an integer, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise error(f"{what} must be an integer, not {value!r}") from None


def _index_or_none(value: Any) -> int | None:
    """``value`` as an int (``operator.index``, never bool), or None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _sequence(value: Any, what: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise BadCards(f"{what} must be a sequence, not {value!r}")
    return value


def _cards(value: Any, kinds: int, what: str) -> tuple[int, ...]:
    """A tuple of card kinds from a sequence of integers (BadCards otherwise)."""
    out = []
    for c in _sequence(value, what):
        k = _index(c, BadCards, f"a card of {what}")
        if not 0 <= k < kinds:
            raise BadCards(f"not a card kind in {what}: {c!r} (kinds are 0..{kinds - 1})")
        out.append(k)
    return tuple(out)


def _melds(value: Any, kinds: int, n: int, seat: int) -> list[Meld]:
    out = []
    for m in _sequence(value, f"seat {seat}'s melds"):
        if not isinstance(m, Meld):
            raise BadCards(f"seat {seat}'s melds must be Meld values, not {m!r}")
        if not isinstance(m.kind, str) or isinstance(m.hidden, bool) or \
                not isinstance(m.hidden, int) or m.hidden < 0:
            raise BadCards(f"a malformed meld of seat {seat}: {m!r}")
        cards = _cards(m.cards, kinds, f"seat {seat}'s meld")
        from_seat = None if m.from_seat is None else _index(m.from_seat, BadCards, "a meld's seat")
        if from_seat is not None and not 0 <= from_seat < n:
            raise BadCards(f"a meld of seat {seat} is from seat {from_seat}, not a seat")
        claimed = None if m.claimed is None else _cards([m.claimed], kinds, "a meld's claim")[0]
        out.append(Meld(m.kind, cards, from_seat, claimed, m.hidden))
    return out


def _checked_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    seed = _index(seed, BadCards, "the seed")
    if not -_SEED_LIMIT < seed < _SEED_LIMIT:
        raise BadCards(f"the seed must be below 2**256 in size, not {seed}")
    return seed
