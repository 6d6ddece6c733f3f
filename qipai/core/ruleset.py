"""Rulesets: a variant found by name, its options validated, its hooks bound.

``load("guilin-mahjong(hubao=false, max_flips=1)")`` or
``load("guilin-mahjong", {"hubao": False})`` finds the variant through the
entry-point group ``qipai.variants`` (our own variants are registered the
same way as a third party's), builds a ``PluginManager`` holding it, its
family defaults and any house-rule plugins, and converts the options into
the variant's options Struct.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import threading
from collections.abc import Iterable, Sequence
from functools import cached_property
from importlib.metadata import entry_points
from typing import Any

import msgspec
from pluggy import PluginValidationError

from qipai.core import hookspecs
from qipai.core.answers import flip_problem, settlement_answer_problem
from qipai.core.cards import CardSystem
from qipai.core.checks import checked_relations
from qipai.core.dispatch import PluginManager, culprit, raiser
from qipai.core.errors import BadNotation, BadOption, PluginError, QipaiError, UnknownVariant
from qipai.core.model import Flip, HandEnd, Meld, Settlement, WinClaim, WinEval, WinReading

ENTRY_POINT_GROUP = "qipai.variants"


@dataclasses.dataclass(frozen=True)
class Manifest:
    """What a variant is.

    Attributes:
        name: registered name (``"guilin-mahjong"``).
        title: human title (``"桂林麻将"``).
        players: seats at the table.
        cards: the card system (notation, kinds, copies).
        options_type: msgspec Struct class of the options, with defaults; it
            should set ``forbid_unknown_fields=True``.
        family: ``"mahjong"`` or ``"zipai"`` (informative).
        version: the variant's version, written into records.
        state_type: msgspec Struct class of the variant's table state, or None.
        relations: the names of the standing relations the variant keeps
            (``("hubao",)``); a table or settlement given another name is
            refused.  None (the default) accepts any name.
        face_down_kinds: for a meld lying wholly face down, the kind other
            seats see instead of its own (``(("guosao", "sao"),)``: zipai's
            过扫 shows as a 扫, so others learn only that a hidden meld of 3
            was laid — docs/variants/guilin-zipai.md, Play).  Pairs, empty by default.
        owner_claims: the sources of the claim windows (``"discard"``,
            ``"draw"`` …) in which the card's own owner may claim it — zipai's
            ``("draw",)``: the drawer may 吃 or 胡 the card it shows.  On an
            ``ask_all`` table the owner of such a window is asked too (at
            least ``Pass``), so the window reads the same whether or not the
            owner could claim.  Empty by default (mahjong: nobody claims his
            own discard).
        names: pinyin id → Chinese name of the ids the variant's payment
            breakdowns use (``{"pengpenghu": "碰碰胡"}``; see
            :class:`~qipai.core.model.Term`), for text shown to people.
    """

    name: str
    title: str
    players: int
    cards: CardSystem
    options_type: type
    family: str = ""
    version: str = "0"
    state_type: type | None = None
    relations: tuple[str, ...] | None = None
    face_down_kinds: tuple[tuple[str, str], ...] = ()
    names: dict[str, str] = dataclasses.field(default_factory=dict)
    owner_claims: tuple[str, ...] = ()


def available() -> dict[str, Any]:
    """Registered variants: name → entry point (not loaded)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


# the name is whatever comes before "(" (a title in Chinese too; an unknown
# name is UnknownVariant, not a malformed spec), stripped of blanks
_SPEC = re.compile(r"^\s*([^()\s](?:[^()]*[^()\s])?)\s*(?:\((.*)\))?\s*$", re.S)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name(key=value, …)"`` into the name and an options dict.

    Values are Python/TOML-like literals (``true``/``false``, numbers, quoted
    or bare strings).

    Raises:
        BadOption: when the text is not of that form.
    """
    m = _SPEC.match(spec)
    if not m:
        raise BadOption(f"bad ruleset spec {spec!r}: expected name or name(key=value, …)")
    name, inner = m.group(1), m.group(2)
    opts: dict[str, Any] = {}
    if inner and inner.strip():
        for part in _split_args(inner):
            if "=" not in part:
                raise BadOption(f"bad option {part.strip()!r} in {spec!r}: expected key=value")
            key, _, raw = part.partition("=")
            key = key.strip()
            if not key.isidentifier():
                raise BadOption(f"bad option name {key!r} in {spec!r}")
            if key in opts:
                raise BadOption(f"option {key!r} is given twice in {spec!r}")
            opts[key] = _literal(raw.strip(), key, spec)
    return name, opts


def _split_args(inner: str) -> list[str]:
    parts, depth, cur, quote = [], 0, [], ""
    for ch in inner:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _literal(raw: str, key: str = "", spec: str = "") -> Any:
    """The value of ``key=raw``: ``true``/``false``/``none``, a Python
    literal, or else the text itself (a bare string).

    Raises:
        BadOption: a dict in the literal gives one key twice
            (``values={"pinghu": [1, 1], "pinghu": [2, 2]}``) — Python would
            keep the last silently.
    """
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        tree = ast.parse(raw, mode="eval")
        value = ast.literal_eval(tree)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            seen: list[Any] = []
            for k in node.keys:
                kv = ast.literal_eval(k) if k is not None else None
                if kv in seen:
                    raise BadOption(f"option {key!r}: key {kv!r} is given twice in {raw!r}"
                                    + (f" (in {spec!r})" if spec else ""))
                seen.append(kv)
    return value


def _plugin_text(plugin: Any) -> str:
    """A plugin as a message names it: a module by its name, else its class."""
    name = getattr(plugin, "__name__", None)
    return name if isinstance(name, str) else f"{type(plugin).__module__}.{type(plugin).__qualname__}"


class Ruleset:
    """A variant with its options and plugins, ready to make tables.

    Build it with :func:`load`.  Attributes: ``name``, ``manifest``,
    ``options`` (the options Struct), ``pm`` (the ``PluginManager``),
    ``hook`` (its hook relay), ``plugins`` (the house-rule plugins).
    """

    def __init__(self, plugin: Any, options: dict[str, Any] | None = None,
                 plugins: Sequence[Any] = ()) -> None:
        pm = PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        try:
            for base in getattr(plugin, "QIPAI_BASE_PLUGINS", ()):
                # named as messages name it, not by pluggy's default (its id)
                name = _plugin_text(base)
                pm.register(base, name=None if pm.has_plugin(name) else name)
            pm.register(plugin)
            for extra in plugins:
                pm.register(extra)
            pm.check_pending()
        except PluginValidationError as exc:  # an unknown hook, a wrong hook signature
            raise UnknownVariant(f"cannot use plugin {_plugin_text(exc.plugin)}: "
                                 f"{' '.join(str(exc).split())}") from None
        except ValueError as exc:  # pluggy: one plugin registered twice
            raise BadOption(f"a plugin is given twice ({' '.join(str(exc).split())})") from None
        manifest = pm.hook.qipai_manifest()
        if manifest is None:
            raise UnknownVariant(f"plugin {plugin!r} does not implement qipai_manifest")
        self.pm = pm
        self.hook = pm.hook
        #: The house-rule plugins, in registration order (their stamps are
        #: in records and snapshots: :mod:`qipai.core.stamps`).
        self.plugins: tuple[Any, ...] = tuple(plugins)
        self.manifest: Manifest = manifest
        self.name = manifest.name
        self.cards = manifest.cards
        self.options = convert_options(manifest, options or {})
        #: The hook callers resolved for this ruleset's tables and the key
        #: (plugins, call monitoring) they were resolved under
        #: (:func:`qipai.core.dispatch.resolved_hooks`); None before the
        #: first table.
        self.hook_callers: tuple[Any, Any] | None = None
        #: The sorted deck a table of this ruleset last checked (a
        #: ``qipai_deck`` answer): a deck of the same cards is not checked
        #: again.  None before the first deal.
        self.checked_deck: list[int] | None = None

    # -- options --------------------------------------------------------------
    def options_dict(self) -> dict[str, Any]:
        """The options as a plain dict (every option, defaults included)."""
        return msgspec.to_builtins(self.options)

    @cached_property
    def spec(self) -> str:
        """``name(key=value, …)`` with the options that differ from the defaults."""
        default = msgspec.to_builtins(self.manifest.options_type())
        diff = {k: v for k, v in self.options_dict().items() if default.get(k) != v}
        if not diff:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in diff.items())})"

    @cached_property
    def plugin_stamps(self) -> tuple[Any, ...]:
        """The house plugins' :class:`~qipai.core.stamps.PluginStamp` s
        (name and source SHA-256), in registration order."""
        from qipai.core.stamps import plugin_stamps

        return plugin_stamps(self.plugins)

    def with_options(self, **changes: Any) -> Ruleset:
        """A new ruleset with some options changed (same plugins)."""
        opts = {**self.options_dict(), **changes}
        rs = object.__new__(Ruleset)
        rs.__dict__.update({k: v for k, v in self.__dict__.items() if k != "spec"})
        rs.options = convert_options(self.manifest, opts)
        return rs

    # -- tables ---------------------------------------------------------------
    def table(self, **kwargs: Any):
        """A new :class:`~qipai.core.table.Table` (see its constructor)."""
        from qipai.core.table import Table

        return Table(self, **kwargs)

    # -- scoring API (used by the conformance runner) -----------------------------
    def parse(self, text: Any) -> list[int]:
        """Cards in this variant's notation → kinds (raises BadNotation)."""
        if not isinstance(text, (str, list, tuple)):
            raise BadNotation(f"not cards: {text!r} (give a string or a list)")
        return self.cards.parse(text)

    def win_check(self, claim: WinClaim, how: str, dealer: int,
                  from_seat: int | None = None) -> WinEval:
        """Is ``claim`` a win, and as what (hook ``qipai_win_check``).

        Raises:
            BadNotation: a card that is not a kind of this game.
            BadCards: an impossible hand (a fifth copy, a wrong size …).
            PluginError: a hook raised (anything but a QipaiError) or
                answered something other than a WinEval; it names the hook
                and the plugin.
        """
        self._check_claim(claim)
        return self._ask("qipai_win_check", lambda a: None if isinstance(a, WinEval) else
                         f"answered {a!r}, not a WinEval", claim=claim, how=how, dealer=dealer,
                         from_seat=from_seat, options=self.options)

    def readings(self, claim: WinClaim, how: str, dealer: int,
                 from_seat: int | None = None) -> list[WinReading]:
        """Every reading of ``claim`` the win check considers, the paid one
        marked (hook ``qipai_readings``); [] if the variant does not say.

        Raises:
            BadNotation, BadCards: as :meth:`win_check`.
            PluginError: the hook raised (anything but a QipaiError).
        """
        self._check_claim(claim)
        got = self._ask("qipai_readings", None, claim=claim, how=how, dealer=dealer,
                        from_seat=from_seat, options=self.options)
        return list(got or [])

    def waits(self, hand: Sequence[int], melds: Sequence[Meld] = ()) -> list[int]:
        """The kinds that complete ``hand`` (hook ``qipai_waits``).

        Raises:
            BadNotation: a card out of range.  BadCards: an impossible hand.
            PluginError: the hook raised (anything but a QipaiError).
        """
        return self._ask("qipai_waits", None, hand=self.parse(list(hand)), melds=list(melds),
                         options=self.options)

    def bonus_flip(self, holding: Sequence[int], tile: int | None,
                   stock: Sequence[int]) -> Flip:
        """One winner's bonus flip (hook ``qipai_bonus_flip``), checked:
        ``holding`` every card of the winning hand, melds included (kinds),
        ``tile`` the winning card or None, ``stock`` the cards left to flip,
        head first.  :meth:`settle` gives it to ``qipai_settle``.

        Raises:
            PluginError: the hook raised, or its answer is not a Flip of
                cards of this game (a tuple) with a 醒数 from 0 to
                ``MAX_AMOUNT`` and per-card 醒数, if any, adding up to it
                (:func:`~qipai.core.answers.flip_problem`); it names the hook
                and the plugin.
        """
        kinds = self.cards.n_kinds
        return self._ask("qipai_bonus_flip", lambda a: flip_problem(a, kinds),
                         holding=list(holding), tile=tile, stock=list(stock),
                         options=self.options)

    def settle(self, end: HandEnd) -> Settlement:
        """Who pays whom for the wins of ``end`` (hook ``qipai_settle``).

        Raises:
            BadNotation, BadCards: as :meth:`win_check`, or relations that are
                not pairs of seats.
            PluginError: a hook raised (anything but a QipaiError), or the
                answer is not a Settlement of valid payments (seats in
                range, payer ≠ payee, int amounts 0..``MAX_AMOUNT``), or a
                bad flip (:meth:`bonus_flip`); it names the hook and the
                plugin.
        """
        for w in end.winners:
            self._check_claim(w)
        self.parse(list(end.stock))
        checked_relations(end.relations, self.manifest.players, self.manifest.relations)
        n = self.manifest.players
        return self._ask("qipai_settle", lambda a: settlement_answer_problem(a, n),
                         end=end, options=self.options, bonus_flip=self.bonus_flip)

    def _ask(self, hook: str, problem: Any, **kwargs: Any) -> Any:
        """Hook ``hook``'s answer to ``kwargs``, checked: ``problem(answer)``
        says why it is refused, or None (``problem`` None: any answer).

        Raises:
            QipaiError: as the hook raised it (the variant refusing bad
                input, BadCards …; a PluginError of a hook it called).
            PluginError: the hook raised anything else (a bug, not the
                caller's input), naming the hook and the plugin whose
                implementation raised it; or its answer is refused, naming
                the plugin that gave it (:func:`~qipai.core.dispatch.culprit`).
        """
        try:
            answer = getattr(self.hook, hook)(**kwargs)
        except QipaiError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's bug: named
            where, plugin = raiser(self.hook, exc)
            raise PluginError(hook if where == "?" else where, plugin,
                              f"raised {type(exc).__name__}: {exc}") from exc
        why = problem(answer) if problem is not None else None
        if why:
            raise PluginError(hook, culprit(self.hook, hook, lambda a: problem(a) is not None,
                                            **kwargs), why)
        return answer

    def _check_claim(self, claim: WinClaim) -> None:
        self.parse(list(claim.hand))
        if claim.tile is not None:
            self.parse([claim.tile])
        for m in tuple(claim.melds) + tuple(claim.kong_chain):
            self.parse(list(m.cards))

    def deck(self) -> list[int]:
        """The full deck, canonical order (hook ``qipai_deck``)."""
        return self.hook.qipai_deck(options=self.options)

    def __repr__(self) -> str:
        return f"Ruleset({self.spec!r})"


def convert_options(manifest: Manifest, options: dict[str, Any]) -> Any:
    """Validate a dict of options into the variant's options Struct.

    Raises:
        BadOption: naming the unknown option and listing the valid ones, or
            naming the bad value and what the option allows
            (:func:`qipai.core.options.explain_error`).
    """
    if not isinstance(options, dict):
        raise BadOption(f"options for {manifest.name} must be a dict, not {options!r}")
    try:
        converted = msgspec.convert(options, manifest.options_type)
        _check_int_range(msgspec.to_builtins(converted), manifest.name, "")
        return converted
    except msgspec.ValidationError as exc:
        from qipai.core.options import explain_error

        raise BadOption(f"bad option for {manifest.name}: "
                        f"{explain_error(manifest.options_type, options, str(exc))}") from None
    except UnicodeError:  # a lone surrogate (an escaped "\ud800"): no text at all
        bad = next((f"{k}={v!r}" for k, v in options.items()
                    if any(_not_text(x) for x in (k, v))), repr(options))
        raise BadOption(f"bad option for {manifest.name}: {bad} is not text (a lone UTF-16 "
                        f"surrogate)") from None


def _not_text(x: Any) -> bool:
    """Whether ``x`` is a string that cannot be written as UTF-8 (it holds a
    lone surrogate)."""
    if not isinstance(x, str):
        return False
    try:
        x.encode()
    except UnicodeEncodeError:
        return True
    return False


#: Option integers must fit in 64 bits (snapshots are msgpack).
_INT_MIN, _INT_MAX = -2**63, 2**64 - 1


def _check_int_range(value: Any, variant: str, where: str) -> None:
    """BadOption if an int anywhere in ``value`` (builtins) is beyond 64 bits."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not _INT_MIN <= value <= _INT_MAX:
            raise BadOption(f"option {where or 'value'} of {variant} is out of range: {value} "
                            f"(integers must fit in 64 bits)")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_int_range(v, variant, f"{where}.{k}" if where else str(k))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _check_int_range(v, variant, where)


def load_plugin(spec: str) -> Any:
    """A plugin object from ``MODULE[:OBJECT]`` or ``FILE.py[:OBJECT]`` (a
    house-rule module, or a variant not installed as an entry point).

    Raises:
        UnknownVariant: naming what cannot be imported or found (an empty
            or relative name, a missing module, file or object, or the
            plugin's own code raising as it is imported).
    """
    import importlib
    import importlib.util
    from pathlib import Path

    target, _, attr = spec.partition(":")
    if not target or target.startswith("."):
        raise UnknownVariant(f"cannot load plugin {spec!r}: give a module name (house_rules, "
                             f"my_pkg.rules) or a file (rules.py), not a relative or empty name")
    try:
        if target.endswith(".py"):
            path = Path(target)
            mspec = importlib.util.spec_from_file_location(path.stem, path)
            if mspec is None or mspec.loader is None or not path.is_file():
                raise ImportError(f"no file {target}")
            module = importlib.util.module_from_spec(mspec)
            mspec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ImportError as exc:
        raise UnknownVariant(f"cannot load plugin {spec}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the plugin's own code failed as it was imported
        raise UnknownVariant(f"cannot load plugin {spec}: importing it raised "
                             f"{type(exc).__name__}: {exc}") from None
    if not attr:
        return module
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UnknownVariant(f"cannot load plugin {spec}: {target} has no {attr!r}") from None


def load(spec: str, options: dict[str, Any] | None = None,
         plugins: Iterable[Any] = ()) -> Ruleset:
    """Load a ruleset by registered name.

    Args:
        spec: ``"name"`` or ``"name(key=value, …)"``; the variant's title
            (its Chinese name, ``"桂林麻将(hubao=false)"``) is an alias of
            its name.
        options: more options (they win over those in ``spec``).
        plugins: house-rule plugins registered over the variant (their hook
            implementations are called first).

    Raises:
        UnknownVariant: no variant of that name or title; the message
            suggests the nearest name and lists those there are.
        BadOption: an unknown option or a bad value, ``options`` that is
            not a dict, a spec that is not a str.
    """
    if not isinstance(spec, str):
        raise BadOption(f"a ruleset spec is a str (name or name(key=value, …)), not {spec!r}")
    if options is not None and not isinstance(options, dict):
        raise BadOption(f"options must be a dict of option name to value, not {options!r}")
    name, spec_opts = parse_spec(spec)
    eps = available()
    if name not in eps:
        name = _by_title(name, eps)
    return Ruleset(load_entry_point(name, eps[name]), {**spec_opts, **(options or {})},
                   plugins=list(plugins))


def load_entry_point(name: str, ep: Any) -> Any:
    """The plugin variant ``name``'s entry point ``ep`` names, imported.

    Raises:
        UnknownVariant: two installed packages register ``name`` (for
            different objects: which one runs would depend on the install
            order), or importing the plugin failed (a missing module, the
            module's own code raising); the message names the entry point.
    """
    others = sorted({e.value for e in entry_points(group=ENTRY_POINT_GROUP)
                     if e.name == name and e.value != ep.value})
    if others:
        raise UnknownVariant(f"two installed packages register variant {name!r}: "
                             f"{', '.join([ep.value, *others])}; uninstall one of them")
    try:
        return ep.load()
    except Exception as exc:  # noqa: BLE001 - the plugin's own import failed
        raise UnknownVariant(f"cannot load variant {name!r} ({ep.value}): importing it raised "
                             f"{type(exc).__name__}: {' '.join(str(exc).split())}") from None


def _by_title(name: str, eps: dict[str, Any]) -> str:
    """The registered name of the variant whose title (its Chinese name,
    ``桂林麻将``) is ``name``: a title is an alias of the name.

    Raises:
        UnknownVariant: no variant has that name or title; the message
            suggests the nearest name and lists every name with its title.
    """
    import difflib

    titles: dict[str, str] = {}
    for vname in sorted(eps):
        try:
            titles[vname] = Ruleset(eps[vname].load()).manifest.title
        except Exception:  # noqa: BLE001 - a broken plugin does not hide the others
            titles[vname] = ""
    for vname, title in titles.items():
        if title and title == name:
            return vname
    near = difflib.get_close_matches(name, list(titles), n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    known = ", ".join(f"{v} ({t})" if t else v for v, t in titles.items()) or "none"
    raise UnknownVariant(f"unknown variant {name!r}; {hint}registered variants: {known}")


_LOADED: dict[tuple[Any, ...], Ruleset] = {}
_LOADED_LOCK = threading.Lock()
_LOADED_MAX = 64


def load_cached(spec: str, options: dict[str, Any] | None = None,
                plugins: Iterable[Any] = ()) -> Ruleset:
    """:func:`load`, but a ruleset already loaded with the same ``spec``,
    options and plugin objects is returned again instead of built anew
    (loading costs tens of ms; :func:`~qipai.core.records.replay` loads one
    per record).  Thread-safe: the cache is read and written under a lock,
    and a ruleset is only stored once fully loaded.  At most 64 are kept.

    A ruleset is shared by every table made from it, so sharing it between
    callers is safe.  Options that cannot be made a key (not JSON-like) and
    unhashable plugins are loaded without the cache.

    Raises:
        UnknownVariant, BadOption: as :func:`load` (a failure is not cached).
    """
    plugins = tuple(plugins)
    try:
        key = (spec, msgspec.json.encode(options or {}, order="sorted"), plugins)
        hash(key)
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.EncodeError):
        return load(spec, options, plugins)
    with _LOADED_LOCK:
        got = _LOADED.get(key)
    if got is not None:
        return got
    rs = load(spec, options, plugins)
    with _LOADED_LOCK:
        if len(_LOADED) >= _LOADED_MAX:
            _LOADED.clear()
        return _LOADED.setdefault(key, rs)
