"""What a player types at a decision, read alike by both terminal clients
(``qipai play --human`` and ``qipai connect``).

The legal actions are numbered from 1.  An answer is one of:

* an action's number (``3``);
* a card, for a discard: the card's notation or Chinese name in the
  variant's card system (``W``, ``3m``, ``东``, ``三万``; zipai ``x3``,
  ``小三``, ``壹``);
* an action's word: its id or its word in either language, or the
  variant's own name of it (``peng``, ``碰``, ``pung``; ``hu``/``胡``/
  ``win`` for either win, ``gang``/``杠``/``kong`` for any kong; ``pass``/
  ``过``), alone or followed by a card (``angang 5m``);
* Enter alone: pass, when passing is among the actions.

:func:`pick` gives the chosen action's index, or raises :class:`BadAnswer`
with a one-line hint (in the client's language, from
:data:`qipai.text.CLIENT`) naming what was wrong; nothing is chosen.
:func:`leaves` says whether a line asks to leave (``q``).

Actions are given as the protocol's JSON (``{"type": "discard", "card":
5, …}``, ``msgspec.to_builtins`` of :mod:`qipai.core.model` actions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qipai.core.errors import QipaiError
from qipai.text import ACTIONS, CLIENT

__all__ = ["LEAVE", "BadAnswer", "leaves", "pick", "say"]

#: Lines that leave (case-insensitive).
LEAVE = ("q", "quit", "exit", "退出", "离开")

#: Words that name several action types, beyond each type's own words.
_ALIASES = {
    "hu": ("hu", "zimo"), "胡": ("hu", "zimo"), "win": ("hu", "zimo"),
    "gang": ("minggang", "jiagang", "angang"), "杠": ("minggang", "jiagang", "angang"),
    "kong": ("minggang", "jiagang", "angang"), "pong": ("peng",), "chow": ("chi",),
}


class BadAnswer(QipaiError, ValueError):
    """A typed answer that is no legal action, or more than one: ``hint``
    (the message) says what was wrong in one line."""


def say(lang: str, key: str, **fields: Any) -> str:
    """The client's template ``key`` in ``lang`` (:data:`qipai.text.CLIENT`),
    filled in with ``fields``."""
    return CLIENT[lang][key].format(**fields)


def leaves(line: str) -> bool:
    """Whether ``line`` asks to leave (``q``, ``quit``, ``exit``, ``退出``)."""
    return line.strip().lower() in LEAVE


def _types(word: str, names: Mapping[str, str]) -> set[str]:
    """The action types ``word`` names (empty: not an action's word)."""
    w = word.lower()
    found = set(_ALIASES.get(w, ()))
    for t in ACTIONS["zh"]:
        if w in (t, ACTIONS["zh"][t], ACTIONS["en"][t].lower(), names.get(t)):
            found.add(t)
    return found


def _card_of(text: str, cards: Any, lang: str, n: int) -> int | None:
    """The one card ``text`` names, None if it names no card.

    Raises:
        BadAnswer: ``text`` is several cards."""
    if cards is None:
        return None
    try:
        kinds = cards.parse(text)
    except (QipaiError, ValueError):
        return None
    if len(kinds) != 1:
        if not kinds:
            return None
        raise BadAnswer(say(lang, "one_card", text=text, k=len(kinds)))
    return kinds[0]


def _card_name(cards: Any, kind: int) -> str:
    return f"{cards.token(kind)} {cards.chinese(kind)}" if cards is not None else str(kind)


def pick(line: str, legal: Sequence[Mapping[str, Any]], cards: Any = None,
         names: Mapping[str, str] | None = None, lang: str = "en") -> int:
    """The index (0-based) in ``legal`` of the action ``line`` names.

    Args:
        line: what was typed (a number from 1, a card, an action's word, or
            nothing: pass).
        legal: the legal actions, as the protocol's JSON.
        cards: the variant's card system (``Ruleset.cards``), to read a
            typed card; None reads numbers and words only.
        names: the variant's names of its ids (``Manifest.names``).
        lang: the language of the hints (``"zh"`` or ``"en"``).

    Raises:
        BadAnswer: the line names no legal action, or more than one; its
            message is the hint.
    """
    names = names or {}
    n = len(legal)
    text = line.strip()
    if not text:
        passes = [i for i, a in enumerate(legal) if a["type"] == "pass"]
        if passes:
            return passes[0]
        raise BadAnswer(say(lang, "no_pass", n=n))
    if text.isdigit():
        k = int(text)
        if 1 <= k <= n:
            return k - 1
        raise BadAnswer(say(lang, "not_a_number", text=text, n=n))
    word, _, rest = text.partition(" ")
    types = _types(word, names)
    if types:
        card = _card_of(rest.strip(), cards, lang, n) if rest.strip() else None
        found = [i for i, a in enumerate(legal) if a["type"] in types
                 and (card is None or a.get("card") == card)]
        if rest.strip() and card is None:
            found = []
        return _one(found, text, lang, n, say(lang, "not_now", word=text, n=n))
    card = _card_of(text, cards, lang, n)
    if card is not None:
        found = [i for i, a in enumerate(legal) if a["type"] == "discard" and a["card"] == card]
        return _one(found, text, lang, n,
                    say(lang, "cannot_discard", card=_card_name(cards, card), n=n))
    example = "3m"
    if cards is not None:
        example = next((cards.token(a["card"]) for a in legal if a["type"] == "discard"),
                       cards.token(2))
    # the words to type: the ids (the pinyin the English output prints), or the Chinese words
    words = dict.fromkeys(a["type"] if lang == "en" else ACTIONS[lang].get(a["type"], a["type"])
                          for a in legal)  # in order, once each
    raise BadAnswer(say(lang, "unknown", text=text, n=n, card=example,
                        words=", ".join(words)))


def _one(found: list[int], text: str, lang: str, n: int, none: str) -> int:
    if len(found) == 1:
        return found[0]
    if not found:
        raise BadAnswer(none)
    which = ", ".join(str(i + 1) for i in found)
    raise BadAnswer(say(lang, "ambiguous", text=text, which=which))
