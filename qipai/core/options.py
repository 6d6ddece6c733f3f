"""A variant's options described from its options Struct's own metadata.

Each field of an options Struct carries what a player needs to know about
it as msgspec metadata, beside its type and default::

    zhuipai: Annotated[
        Literal["first_round", "any_round", "off"],
        Meta(description="追牌: which four same-kind discards make the first "
                         "discarder pay …",
             extra={"source": "D-GL11"}),
    ] = "first_round"

:func:`describe` turns that into one :class:`OptionInfo` per field — type,
allowed values (a ``Literal``'s choices, an integer's range), default,
meaning and source.  It is the one source of truth for ``qipai variants
NAME``, for the options tables of the docs' variant pages and for the
wording of a bad value's error (:func:`explain_error`).

Metadata keys read (all optional, so a third party's Struct without them
is described too, with empty texts):

* ``description`` — what the option means, one or two sentences;
* ``extra["source"]`` — where the rule comes from: the source document's
  rule (quoted) or the decision's number (``D-GL11``) on the variant page;
* ``extra["allowed"]`` — a text for the allowed values where the type
  alone does not say it (a dict's keys), replacing the generated one;
* ``extra["default_text"]`` — a short text for a default too long to print
  in a table (a dict of values).
"""

from __future__ import annotations

import difflib
import re
import typing
from typing import Any

import msgspec
import msgspec.inspect as mi

__all__ = ["OptionInfo", "describe", "explain_error", "markdown_table", "literal"]


class OptionInfo(msgspec.Struct, frozen=True):
    """One option of a variant, as :func:`describe` reads it.

    Attributes:
        name: the field name, as given in ``name(key=value)``.
        type: the value's type in words: ``"bool"``, ``"int"``, ``"str"``,
            ``"int or none"``, ``"dict of str → [int, int]"`` ….
        allowed: the allowed values in words: ``"first_round, any_round,
            off"``, ``"true, false"``, ``">= 0"``, ``"0..83"``, ``"any"``.
        choices: the allowed values of a ``Literal``, else None.
        minimum, maximum: an integer's inclusive bounds, else None.
        nullable: ``None`` is allowed too.
        default: the default, as plain builtins (JSON-like).
        description: what it means (the field's ``Meta(description=…)``).
        source: where the rule comes from (``Meta(extra={"source": …})``).
        default_text: a short text for the default where its value is too
            long for a table (``Meta(extra={"default_text": …})``), else "".
    """

    name: str
    type: str
    allowed: str
    default: Any
    description: str = ""
    source: str = ""
    choices: list[Any] | None = None
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False
    default_text: str = ""


def describe(options_type: type) -> list[OptionInfo]:
    """The options of ``options_type`` (a msgspec Struct class), in field order.

    Raises:
        TypeError: ``options_type`` is not a msgspec Struct class.
    """
    info = mi.type_info(options_type)
    if not isinstance(info, mi.StructType):
        raise TypeError(f"{options_type!r} is not a msgspec Struct class")
    try:
        hints = typing.get_type_hints(options_type, include_extras=True)
    except Exception:  # unresolvable annotations: msgspec's (sorted) order of choices
        hints = {}
    return [_option(f, _literal_args(hints.get(f.name))) for f in info.fields]


def _literal_args(hint: Any) -> tuple[Any, ...] | None:
    """The first ``Literal``'s values in ``hint``, in their written order
    (msgspec's inspection sorts them)."""
    if hint is None:
        return None
    if typing.get_origin(hint) is typing.Literal:
        return typing.get_args(hint)
    for arg in typing.get_args(hint):
        found = _literal_args(arg)
        if found is not None:
            return found
    return None


def _option(field: mi.Field, written: tuple[Any, ...] | None = None) -> OptionInfo:
    t, description, extra = field.type, "", {}
    while isinstance(t, mi.Metadata):  # Annotated[..., Meta(...)] (possibly nested)
        schema = t.extra_json_schema or {}
        description = schema.get("description", description)
        extra = {**(t.extra or {}), **extra}
        t = t.type
    nullable = False
    if isinstance(t, mi.UnionType) and any(isinstance(u, mi.NoneType) for u in t.types):
        rest = [u for u in t.types if not isinstance(u, mi.NoneType)]
        if len(rest) == 1:
            nullable, t = True, rest[0]
    while isinstance(t, mi.Metadata):  # Annotated[int, Meta(ge=0)] | None
        t = t.type
    if field.default is not msgspec.NODEFAULT:
        default = field.default
    elif field.default_factory is not msgspec.NODEFAULT:
        default = field.default_factory()
    else:
        default = None
    choices = None
    if isinstance(t, mi.LiteralType):
        same = written is not None and sorted(map(repr, written)) == sorted(map(repr, t.values))
        choices = list(written if same else t.values)
    lo, hi = _bounds(t)
    allowed = extra.get("allowed") or _allowed(t, lo, hi, choices)
    type_text = _type_text(t)
    if nullable:
        type_text += " or none"
        allowed += ", or none"
    return OptionInfo(
        name=field.name, type=type_text, allowed=allowed,
        default=_plain(default), description=" ".join(description.split()),
        source=" ".join(str(extra.get("source", "")).split()), choices=choices,
        minimum=lo, maximum=hi, nullable=nullable,
        default_text=str(extra.get("default_text", "")))


def _plain(value: Any) -> Any:
    """``value`` as JSON-like builtins (tuples become lists)."""
    try:
        return msgspec.json.decode(msgspec.json.encode(value))
    except (TypeError, msgspec.EncodeError):
        return msgspec.to_builtins(value)


def _bounds(t: Any) -> tuple[int | None, int | None]:
    if not isinstance(t, mi.IntType):
        return None, None
    lo = t.ge if t.ge is not None else (t.gt + 1 if t.gt is not None else None)
    hi = t.le if t.le is not None else (t.lt - 1 if t.lt is not None else None)
    return lo, hi


def _allowed(t: Any, lo: int | None, hi: int | None, choices: list[Any] | None) -> str:
    if choices is not None:
        return ", ".join(literal(v) for v in choices)
    if isinstance(t, mi.BoolType):
        return "true, false"
    if isinstance(t, mi.IntType):
        if lo is not None and hi is not None:
            return f"{lo}..{hi}"
        if lo is not None:
            return f">= {lo}"
        if hi is not None:
            return f"<= {hi}"
    return "any"


def _type_text(t: Any) -> str:
    if isinstance(t, mi.Metadata):
        return _type_text(t.type)
    if isinstance(t, mi.LiteralType):
        kinds = {type(v) for v in t.values}
        return {str: "str", int: "int"}.get(kinds.pop(), "literal") if len(kinds) == 1 \
            else "literal"
    simple = {mi.BoolType: "bool", mi.IntType: "int", mi.FloatType: "float",
              mi.StrType: "str", mi.NoneType: "none", mi.AnyType: "any"}
    for cls, name in simple.items():
        if isinstance(t, cls):
            return name
    if isinstance(t, mi.DictType):
        return f"dict of {_type_text(t.key_type)} → {_type_text(t.value_type)}"
    if isinstance(t, mi.TupleType):
        return f"[{', '.join(_type_text(i) for i in t.item_types)}]"
    if isinstance(t, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        return f"list of {_type_text(t.item_type)}"
    if isinstance(t, mi.UnionType):
        return " or ".join(_type_text(u) for u in t.types)
    return type(t).__name__.removesuffix("Type").lower()


def literal(value: Any) -> str:
    """``value`` as the ``name(key=value)`` text and the docs write it:
    ``true``, ``none``, ``2``, a string bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


_AT = re.compile(r"\s*- at `\$\.([A-Za-z_]\w*)([^`]*)`\s*$")


def explain_error(options_type: type, given: dict[str, Any], message: str) -> str:
    """A msgspec ``ValidationError`` message about ``given`` (a host's
    options dict) reworded for a player, naming the option and listing what
    it allows::

        zhuipai: 'foo' is not one of first_round, any_round, off
        max_flips: must be >= 0, got -1
        unknown option 'flips'; did you mean max_flips? options are: hubao, …

    A message that names no option is returned as it is.
    """
    infos = {o.name: o for o in describe(options_type)}
    unknown = re.search(r"unknown field `([^`]+)`", message)
    if unknown:
        name = unknown.group(1)
        near = difflib.get_close_matches(name, list(infos), n=1)
        hint = f"; did you mean {near[0]}?" if near else ";"
        return f"unknown option {name!r}{hint} options are: {', '.join(infos)}"
    m = _AT.search(message)
    if not m or m.group(1) not in infos:
        return message
    info, rest = infos[m.group(1)], m.group(2)
    value = given.get(info.name)
    if rest:  # inside a container option: msgspec's words, and what it allows
        return f"{info.name}{rest}: {message[:m.start()]} (allowed: {info.allowed})"
    none = " or none" if info.nullable else ""
    got = _shown(value)
    if info.choices is not None and value not in info.choices:
        return f"{info.name}: {got} is not one of {_choices(info.choices)}{none}"
    if info.type.startswith("bool") and not isinstance(value, bool):
        return f"{info.name}: must be true or false{none}, got {got}"
    if info.type.startswith("int"):
        lo, hi = info.minimum, info.maximum
        bound = (f"in {lo}..{hi}" if lo is not None and hi is not None
                 else f">= {lo}" if lo is not None else f"<= {hi}" if hi is not None else "")
        if isinstance(value, int) and not isinstance(value, bool) and bound:
            return f"{info.name}: must be {bound}{none}, got {got}"
        return f"{info.name}: must be an integer{' ' + bound if bound else ''}{none}, got {got}"
    return f"{info.name}: {message[:m.start()]} (allowed: {info.allowed})"


def _shown(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return literal(value)
    return repr(value)


def _choices(values: list[Any]) -> str:
    return ", ".join(literal(v) for v in values)


def markdown_table(options_type: type) -> str:
    """The options table of a variant page (Markdown), generated from
    :func:`describe`: option, type, allowed values, default, meaning, source.
    The docs' tables are this text, checked by the test suite and the docs
    build."""
    rows = ["| option | type | allowed | default | meaning | source |",
            "|---|---|---|---|---|---|"]
    for o in describe(options_type):
        default = o.default_text or f"`{_json_literal(o.default)}`"
        cells = [f"`{o.name}`", o.type, _code_list(o), default, o.description, o.source]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def _json_literal(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return literal(value) if value is None or isinstance(value, bool) else \
        msgspec.json.encode(value).decode()


def _code_list(o: OptionInfo) -> str:
    if o.choices is not None:
        text = ", ".join(f"`{literal(v)}`" for v in o.choices)
        return text + (", `none`" if o.nullable else "")
    return o.allowed
