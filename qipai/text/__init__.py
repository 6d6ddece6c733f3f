"""Every word written for people: cards, melds, ways of winning, ends, events, payments.

One vocabulary, keyed by the pinyin ids the engine uses, in one language
at a time: Chinese (``"zh"``) is the game's own; English (``"en"``) is
the gloss the command line prints beside it.  The renderers of each output
draw their words from here:

* :mod:`qipai.text.log` — a hand, event by event, as ``qipai play`` and
  ``qipai replay`` print it;
* :mod:`qipai.text.seat` — one seat's view, as the terminal player
  (``qipai play --human``) and the environments' ``render`` show it;
* :mod:`qipai.text.wire` — the game server's messages, as ``qipai connect``
  prints them;
* :mod:`qipai.text.answer` — what a player types at a decision (a number,
  a card, an action's word), read alike by both terminal clients;
* :mod:`qipai.text.score` — a hand scored by ``qipai score``;
* :mod:`qipai.text.payments` — payments with their breakdown.

A variant's own names of its ids (``Manifest.names``: patterns, payment
reasons, and the kongs its rules name otherwise, as guangxi-mahjong's 补杠)
come first wherever an id is shown, as on the page; this vocabulary holds
the words every variant of a family shares, the rules' first term where
they list several (mahjong-common.md: 点杠/明杠, 蓄杠/补杠/加杠).  :func:`vocabulary`
gives it as JSON-ready data, for a page that renders the same words.

Importing this module imports nothing else of qipai, so the command line
stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CLIENT", "LANGUAGES", "end_label", "how_label", "label", "meld_label", "role_label",
           "vocabulary", "word"]

#: The languages :func:`vocabulary` knows.
LANGUAGES = ("zh", "en")

#: Meld kinds (mahjong and zipai).  The kongs are the rules' 点杠, 蓄杠 and
#: 暗杠 (mahjong-common.md), the words of the families' payment reasons
#: (``families.mahjong.scoring_kit.NAMES``); a variant may name them
#: otherwise in its ``Manifest.names`` (guangxi-mahjong: 补杠).
MELDS = {
    "zh": {"chi": "吃", "peng": "碰", "minggang": "点杠", "jiagang": "蓄杠", "angang": "暗杠",
           "sao": "扫", "guosao": "过扫", "saochuan": "扫穿", "kaizhao": "开招"},
    "en": {"chi": "chow", "peng": "pung", "minggang": "exposed kong",
           "jiagang": "added kong", "angang": "concealed kong", "sao": "sao",
           "guosao": "guosao", "saochuan": "saochuan", "kaizhao": "kaizhao"},
}
#: How a hand was won.
WAYS = {
    "zh": {"zimo": "自摸", "dianpao": "点炮", "qianggang": "抢杠", "fangpao": "放炮",
           "pinghu": "平胡"},
    "en": {"zimo": "self-drawn", "dianpao": "on a discard", "qianggang": "robbing a kong",
           "fangpao": "on a discard", "pinghu": "on a card in play"},
}
#: How a hand ended.
ENDS = {
    "zh": {"hu": "胡", "huangzhuang": "荒庄"},
    "en": {"hu": "won", "huangzhuang": "no winner"},
}
#: What a seat does (the legal actions offered).
ACTIONS = {
    "zh": {"discard": "打", "pass": "过", "hu": "胡", "zimo": "自摸", **MELDS["zh"]},
    "en": {"discard": "discard", "pass": "pass", "hu": "win", "zimo": "win on your own draw",
           **MELDS["en"]},
}
#: A seat's part in a hand.
ROLES = {
    "zh": {"dealer": "庄", "winner": "胡", "dealt_in": "炮", "you": "你", "bot": "机器人"},
    "en": {"dealer": "dealer", "winner": "winner", "dealt_in": "dealt in", "you": "you",
           "bot": "bot"},
}
#: The bonus flip.
BONUS = {
    "zh": {"fanxing": "翻醒", "xing": "醒"},
    "en": {"fanxing": "bonus flip", "xing": "bonus"},
}
#: The terminal clients' own words (``qipai connect`` and ``qipai play
#: --human``, :mod:`qipai.text.answer`): the prompt, the time left, the
#: hints of an answer not taken, leaving.  ``{…}`` are filled in by the
#: client (``{n}``: how many actions; ``{text}``: what was typed).
CLIENT = {
    "zh": {"prompt": "请选择（1–{n}、牌或动作；q 离开）", "time_left": "剩 {s} 秒",
           "only_move": "唯一可选，已代为：{action}",
           "not_a_number": "{text} 不是可选的编号：请选 1 到 {n}",
           "unknown": "无法识别 {text!r}：请输入 1 到 {n}、要打的牌（如 {card}）或动作（{words}）",
           "ambiguous": "{text!r} 可指编号 {which}：请输入其中一个编号",
           "cannot_discard": "现在不能打 {card}：请选 1 到 {n}",
           "not_now": "现在不能{word}：请选 1 到 {n}",
           "one_card": "{text!r} 是 {k} 张牌：一次只打一张",
           "no_pass": "现在不能过：请选 1 到 {n}",
           "quit": "你离开了", "input_ended": "输入结束", "interrupted": "已中断",
           "unfinished": "{why}：本局未打完。再见。", "left_table": "{why}：已离开牌桌。"},
    "en": {"prompt": "your choice (1–{n}, a card or a word; q to leave)",
           "time_left": "{s} s left",
           "only_move": "only move: {action}",
           "not_a_number": "{text} is not one of the actions: choose 1 to {n}",
           "unknown": "{text!r} is not an action: type 1 to {n}, a card to discard (as "
                      "{card}) or a word ({words})",
           "ambiguous": "{text!r} could be {which}: type one of these numbers",
           "cannot_discard": "you may not discard {card} now: choose 1 to {n}",
           "not_now": "no {word} now: choose 1 to {n}",
           "one_card": "{text!r} is {k} cards: discard one at a time",
           "no_pass": "passing is not among the actions now: choose 1 to {n}",
           "quit": "you quit", "input_ended": "the input ended",
           "interrupted": "interrupted (Ctrl-C)",
           "unfinished": "{why}: the hand is left unfinished. Goodbye.",
           "left_table": "{why}: you left the table."},
}
_SECTIONS = {"melds": MELDS, "ways": WAYS, "ends": ENDS, "actions": ACTIONS, "roles": ROLES,
             "bonus": BONUS, "client": CLIENT}


def _lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; languages are {', '.join(LANGUAGES)}")
    return lang


def vocabulary(lang: str = "zh") -> dict[str, Any]:
    """The words of ``lang`` (``"zh"`` or ``"en"``) as JSON-ready data:
    ``{"lang", "melds", "ways", "ends", "actions", "roles", "bonus",
    "client", "reasons"}``, each section a dict from pinyin id to word
    (``client``: the terminal clients' templates, :data:`CLIENT`).

    ``reasons`` are the payment breakdown's ids every variant of a family
    shares (a variant's ``Manifest.names`` adds and may rename); they have
    no English table, and are the Chinese ones under ``"en"`` too.

    Raises:
        ValueError: an unknown language.
    """
    from qipai.families.mahjong.scoring_kit import NAMES as MAHJONG_REASONS

    lang = _lang(lang)
    out: dict[str, Any] = {"lang": lang}
    for name, table in _SECTIONS.items():
        out[name] = dict(table[lang])
    out["reasons"] = dict(MAHJONG_REASONS)
    return out


def word(section: dict[str, dict[str, str]], pid: str,
         names: Mapping[str, str] | None = None) -> str | None:
    """The Chinese word of ``pid``: the variant's (``names``, its
    ``Manifest.names``) if it has one, else the section's; None if neither."""
    return (names or {}).get(pid) or section["zh"].get(pid)


def label(section: dict[str, dict[str, str]], pid: str,
          names: Mapping[str, str] | None = None) -> str:
    """``"碰 peng"``: the Chinese word of ``pid`` (:func:`word`) and the id
    itself, as the command line prints names; ``pid`` alone if it has no word."""
    zh = word(section, pid, names)
    return f"{zh} {pid}" if zh else pid


def meld_label(kind: str, names: Mapping[str, str] | None = None) -> str:
    """A meld kind as ``"碰 peng"`` (``names``: the variant's, first)."""
    return label(MELDS, kind, names)


def how_label(how: str, names: Mapping[str, str] | None = None) -> str:
    """A way of winning as ``"自摸 zimo"`` (``names``: the variant's, first)."""
    return label(WAYS, how, names)


def role_label(role: str) -> str:
    """A seat's part in a hand as ``"庄 dealer"``: the Chinese word and the English one."""
    return f"{ROLES['zh'][role]} {ROLES['en'][role]}"


def end_label(end: str) -> str:
    """A hand's end as ``"胡 hu"`` or ``"荒庄 huangzhuang (no winner)"``."""
    if end == "hu":
        return label(ENDS, "hu")
    return f"{label(ENDS, 'huangzhuang')} ({ENDS['en']['huangzhuang']})"
