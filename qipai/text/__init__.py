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

__all__ = ["CLIENT", "LANGUAGES", "PAGE", "SOURCES", "end_label", "how_label", "label",
           "meld_label", "role_label", "vocabulary", "word"]

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
           "unfinished": "{why}：本局未打完。再见。", "left_table": "{why}：已离开牌桌。",
           "your_value": "你的随机值：{value}（第 {k} 手；可在记录中核对）",
           "joint_deal": "第 {k} 手共同发牌：服务器承诺 {commitment}"},
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
           "left_table": "{why}: you left the table.",
           "your_value": "your value: {value} (hand {k}; check it in the record)",
           "joint_deal": "hand {k} is a joint deal: server commitment {commitment}"},
}
#: Where a card in play came from (a view's ``window``: a claim window's source).
SOURCES = {
    "zh": {"discard": "打出", "draw": "摸出", "jiagang": "蓄杠", "dihu": "地胡"},
    "en": {"discard": "discarded", "draw": "drawn", "jiagang": "added to a kong",
           "dihu": "earthly win"},
}
#: The browser page's own words (``qipai serve``'s page, one language at a
#: time).  ``{…}`` are filled in by the page.
PAGE = {
    "zh": {"hands": "局数", "hands_open": "不限", "n_hands": "{n} 局", "ready_wait": "等待其他玩家准备",
           "tuoguan_off": "取消托管", "dissolve": "解散房间", "vote_title": "{who} 提议解散房间",
           "agree": "同意", "refuse": "拒绝", "agreed": "已同意：{list}",
           "vote_passed": "解散通过", "vote_refused": "{who} 拒绝解散，继续打", "vote_expired": "投票超时，继续打",
           "tally": "大结算", "ended_finished": "{k} 局打完", "ended_dissolved": "{k} 局后解散",
           "ended_closed": "{k} 局后关桌", "col_total": "总分", "col_wins": "胡", "col_dianpao": "点炮",
           "col_zimo": "自摸", "col_best": "最大一手",
           "brand": "棋牌", "lang_other": "English", "lobby": "大厅",
           "connecting": "连接中…", "connected": "已连接", "disconnected": "连接已断开（{code}）",
           "cannot_connect": "无法连接（服务器可能已满或无法访问），正在重试…",
           "moving": "牌桌换到另一台服务器，连接中…",
           "stock": "余牌", "your_turn": "轮到你出牌", "your_decision": "轮到你决定",
           "their_turn": "轮到{who}", "claims": "等待吃碰胡",
           "seconds": "{s} 秒",
           "seat_n": "座位 {n}", "xiajia": "下家", "duijia": "对家", "shangjia": "上家",
           "n_cards": "{n} 张", "hand_no": "第 {k} 手", "round_of": "第 {k}/{n} 局",
           "table_id": "桌 {id}", "watching": "观战", "seeded": "种子发牌（演示）",
           "offline": "离线", "tuoguan": "托管", "ready": "准备", "is_ready": "已准备",
           "settlement": "结算", "settlement_of": "第 {k} 手结算",
           "settlement_of_round": "第 {k} 局结算", "pause_ready": "等待准备",
           "pause_ended": "本手结束", "pause_closed": "桌已关闭", "status_closed": "桌已关闭",
           "no_payments": "无支付", "net": "本手", "totals": "累计",
           "tanpai": "摊牌", "winning_card": "胡牌",
           "discards": "弃牌", "hide": "收起", "next_hand": "继续",
           "hint_discard": "点一张亮起的牌打出", "sent": "已发送…", "waiting": "等待…",
           "which_run": "吃哪一组", "xiahuo": "下伙", "face_down": "暗牌",
           "seat_conns": "本座位有 {n} 个连接：若其他不是你开的，别人持有你的链接",
           "refused": "服务器拒绝：{code} — {message}", "closed": "桌已关闭 · 累计 {totals}",
           "events": "记录", "ev_dealt": "发牌，庄 {who}", "ev_shown": "，亮张 {cards}",
           "ev_drew": "{who} 摸牌", "ev_shown_draw": "（示众）", "ev_tail": "（杠后）",
           "ev_discarded": "{who} 打出 {card}", "ev_paid": "支付 {list}",
           "ev_won": "{who} 胡（{how}）{card} {patterns}", "no_winning_card": "无胡牌",
           "ev_ended": "本手结束：{end}，{net}",
           "replay": "回放", "replay_keys": "回放 · ← → 键", "file": "文件", "first": "开始",
           "prev": "上一步", "next": "下一步", "last": "最后", "step": "步 {i} / {n}",
           "the_deal": "发牌", "new_table": "开桌", "options_hint": "选项，如 hubao=false",
           "bots": "机器人", "level": "难度", "level_easy": "简单", "level_normal": "普通",
           "level_hard": "困难", "create": "开桌", "created": "桌 {id} 已开 · {spec}",
           "open_tables": "开放的桌", "finished_hands": "已完成的手", "replay_file": "回放文件",
           "drop": "把记录 JSON 文件拖到这里回放", "ask_operator":
           "这个服务器由运营者开桌：请向运营者要一个入座链接",
           "keyed": "列桌需要运营者密钥", "col_table": "桌", "col_rules": "规则",
           "col_players": "玩家", "col_hand": "手", "col_totals": "累计", "col_net": "输赢",
           "none": "没有", "links_elsewhere": "（链接在开桌的浏览器）", "sit": "入座",
           "watch": "观战", "cannot_replay": "回放失败：{message}", "error": "出错：{message}",
           "back_lobby": "回大厅", "yuan": "{v} 元", "house": "平台", "rake": "抽水",
           "col_money": "金额", "col_money_total": "累计金额", "stake_line": "每子 {v} 元",
           "rake_line": "抽水：每位赢家赢额的 {p}%（向下取整），每手封顶 {c} 元",
           "your_value": "你的随机值：{v}", "joint_step": "共同发牌：交换随机值…",
           "joint_withheld": "未公开随机值：{list}"},
    "en": {"hands": "hands", "hands_open": "no limit", "n_hands": "{n} hands",
           "ready_wait": "waiting for the others to be ready", "tuoguan_off": "stop auto-play",
           "dissolve": "end the room", "vote_title": "{who} asks to end the room",
           "agree": "agree", "refuse": "refuse", "agreed": "agreed: {list}",
           "vote_passed": "the room ends", "vote_refused": "{who} refused: play on",
           "vote_expired": "no answer in time: play on", "tally": "final tally",
           "ended_finished": "all {k} hands played", "ended_dissolved": "ended by a vote after {k} hands",
           "ended_closed": "closed after {k} hands", "col_total": "total", "col_wins": "wins",
           "col_dianpao": "dealt in", "col_zimo": "self-drawn", "col_best": "best hand",
           "brand": "Qipai", "lang_other": "中文", "lobby": "Lobby",
           "connecting": "connecting…", "connected": "connected",
           "disconnected": "disconnected ({code})",
           "cannot_connect": "cannot connect (the server may be full or unreachable): retrying…",
           "moving": "the table moved to another server: connecting…",
           "stock": "stock", "your_turn": "your turn: discard",
           "your_decision": "your decision", "their_turn": "{who} to play",
           "claims": "waiting for claims", "seconds": "{s} s",
           "seat_n": "seat {n}", "xiajia": "right", "duijia": "across", "shangjia": "left",
           "n_cards": "{n} cards", "hand_no": "hand {k}",
           "round_of": "hand {k} of {n}", "table_id": "table {id}", "watching": "watching",
           "seeded": "seeded deal (demo)", "offline": "offline", "tuoguan": "auto-play",
           "ready": "ready", "is_ready": "ready", "settlement": "settlement",
           "settlement_of": "settlement of hand {k}",
           "settlement_of_round": "settlement of hand {k}",
           "pause_ready": "waiting for everyone to be ready", "pause_ended": "the hand is over",
           "pause_closed": "the table is closed", "status_closed": "table closed",
           "no_payments": "no payments", "net": "this hand", "totals": "total", "tanpai": "the hands", "winning_card": "winning card", "discards": "discards", "hide": "hide",
           "next_hand": "continue", "hint_discard": "tap a lit tile to discard",
           "sent": "sent…", "waiting": "waiting…", "which_run": "which run",
           "xiahuo": "with", "face_down": "face down",
           "seat_conns": "this seat has {n} connections open: if you did not open the "
                         "others, someone else has your link",
           "refused": "refused: {code} — {message}",
           "closed": "the table is closed · totals {totals}", "events": "events",
           "ev_dealt": "dealt, dealer {who}", "ev_shown": ", shown {cards}",
           "ev_drew": "{who} drew", "ev_shown_draw": " (shown)", "ev_tail": " (after a kong)",
           "ev_discarded": "{who} discarded {card}", "ev_paid": "paid {list}",
           "ev_won": "{who} won ({how}) {card} {patterns}", "no_winning_card": "no winning card",
           "ev_ended": "hand over: {end}, {net}",
           "replay": "replay", "replay_keys": "replay · ← → keys", "file": "file",
           "first": "start", "prev": "back", "next": "forward", "last": "end",
           "step": "step {i} / {n}", "the_deal": "the deal", "new_table": "New table",
           "options_hint": "options, e.g. hubao=false", "bots": "bots",
           "level": "level", "level_easy": "easy",
           "level_normal": "normal", "level_hard": "hard", "create": "create",
           "created": "table {id} created · {spec}", "open_tables": "Open tables",
           "finished_hands": "Finished hands", "replay_file": "Replay a file",
           "drop": "drop a record file here to replay", "ask_operator":
           "tables here are made by the operator: ask the operator for a seat link",
           "keyed": "listing the tables needs the operator's key", "col_table": "table",
           "col_rules": "rules", "col_players": "players", "col_hand": "hand",
           "col_totals": "totals", "col_net": "net", "none": "none",
           "links_elsewhere": "(the links are with whoever opened it)", "sit": "sit",
           "watch": "watch", "cannot_replay": "cannot replay: {message}",
           "error": "error: {message}", "back_lobby": "back to the lobby",
           "yuan": "{v} yuan", "house": "house", "rake": "rake", "col_money": "money",
           "col_money_total": "money total", "stake_line": "{v} yuan a point",
           "rake_line": "rake: {p}% of each winner's gain (rounded down), at most {c} yuan a hand",
           "your_value": "your value: {v}", "joint_step": "joint deal: exchanging values…",
           "joint_withheld": "values withheld: {list}"},
}
_SECTIONS = {"melds": MELDS, "ways": WAYS, "ends": ENDS, "actions": ACTIONS, "roles": ROLES,
             "bonus": BONUS, "client": CLIENT, "sources": SOURCES, "page": PAGE}


def _lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; languages are {', '.join(LANGUAGES)}")
    return lang


def vocabulary(lang: str = "zh") -> dict[str, Any]:
    """The words of ``lang`` (``"zh"`` or ``"en"``) as JSON-ready data:
    ``{"lang", "melds", "ways", "ends", "actions", "roles", "bonus",
    "client", "sources", "page", "reasons"}``, each section a dict from
    pinyin id to word (``client``: the terminal clients' templates,
    :data:`CLIENT`; ``sources``: where a card in play came from,
    :data:`SOURCES`; ``page``: the browser page's words, :data:`PAGE`).

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
