// qipai page: lobby, play (a seat link), watch (the spectator link), replay.
// It speaks only the protocol of `qipai serve` (docs/reference/protocol.md) and
// draws only what the server sends this connection.  No build step, no framework.
// One language at a time: every word comes from GET /vocabulary?lang=… (qipai.text).

import { face as tileFace, label as tileLabel, isRed } from "./tiles.js";

const app = document.getElementById("app");
const statusEl = document.getElementById("status");
const whereEl = document.getElementById("where");

// ------------------------------------------------------------------ tiny DOM helper
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const setStatus = (text) => { statusEl.textContent = text; };
const sign = (x) => (x > 0 ? `+${x}` : String(x ?? 0));
// money: integer minor units (分) shown in 元 with 2 decimals, integer arithmetic only
const yuanOf = (x) => { const a = Math.abs(x); return `${Math.floor(a / 100)}.${String(a % 100).padStart(2, "0")}`; };
const yuan = (x, signed) => t("yuan", { v: (x < 0 ? "-" : signed && x > 0 ? "+" : "") + yuanOf(x) });
const has = (x) => x !== null && x !== undefined;
// the WebSocket address of path at base: an address a server named (http(s)://host:port,
// a cluster's node), or null: the page's own origin (http → ws, https → wss)
function wsAt(base, path) {
  const u = new URL(base || location.origin);
  return `${u.protocol === "https:" ? "wss" : "ws"}://${u.host}${path}`;
}

async function getJSON(url, opts) {
  const r = await fetch(url, opts);
  const body = await r.json().catch(() => ({ error: "BadAnswer", message: `HTTP ${r.status}` }));
  if (!r.ok) throw Object.assign(new Error(`${body.error}: ${body.message}`), { body });
  return body;
}

// ------------------------------------------------------------------ words
// The language is the reader's choice (localStorage), Chinese by default; the
// words are qipai.text's (GET /vocabulary), a variant's `names` over them in Chinese.
const LANG_KEY = "qipai-lang";
let LANG = "zh";
try { if (localStorage.getItem(LANG_KEY) === "en") LANG = "en"; } catch (e) { /* storage off */ }
let V = null;
// a page word, its {fields} filled in
function t(key, vars = {}) {
  const s = (V && V.page[key]) || key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}
// The bot levels a bot seat may have (POST /tables: {"seat": S, "level": L});
// an operator's own levels (qipai serve --bot) are for its own clients.
const LEVELS = ["easy", "normal", "hard"];
const list = (xs) => xs.join(LANG === "zh" ? "、" : ", ");

// A pass-only decision is answered after a random pause of 0.8–2.2 s (within
// half the time left), like a player glancing at the card: an instant answer
// would let everyone time the window and learn that nobody here could claim.
function autoPassMs(d) {
  const left = d.deadline ? (d.deadline - Date.now() / 1000) * 1000 : Infinity;
  return Math.max(0, Math.min(800 + Math.random() * 1400, left / 2));
}

// ------------------------------------------------------------------ cards
const variantCache = new Map();
async function variantInfo(spec) {
  const name = spec.split("(")[0];
  if (!variantCache.has(name)) {
    variantCache.set(name, getJSON(`/variants/${encodeURIComponent(name)}`).then((v) => new Cards(v)));
  }
  return variantCache.get(name);
}

class Cards {
  constructor(info) {
    this.info = info;
    this.family = info.family;
    this.kinds = info.cards.kinds;
    const v = V;
    // Chinese: the variant's own names first; English: the vocabulary's, else the
    // pinyin id (the payment reasons and a variant's names are Chinese only)
    const own = { ...(LANG === "zh" ? v.reasons : {}), ...v.bonus, ...v.ends, ...v.ways, ...v.sources, ...v.melds, ...v.actions };
    this.names = LANG === "zh" ? { ...own, ...(info.names || {}) } : own;
    this.title = LANG === "zh" ? info.title : info.name;
  }
  name(id) { return this.names[id] || (LANG === "en" ? String(id).replace(/_/g, " ") : ""); }
  label(id) { return this.name(id) || id; }
  source(id) { return V.sources[id] || this.label(id); }  // where a card in play came from (打出, 摸出…)
  // a pattern or a payment's reason: in English the kongs' and the bonus's words, else
  // the pinyin id (平胡 is a plain win there, not the way of winning 'pinghu' names)
  how(id) { return (LANG === "en" && V.ways[id]) || this.label(id); }  // a way of winning (自摸, 点炮…)
  term(id) { return LANG === "zh" ? this.label(id) : ({ ...V.melds, ...V.bonus }[id] || String(id).replace(/_/g, " ")); }
  spoken(k) {
    const info = this.kinds[k];
    if (LANG === "zh") return tileLabel(this.family, info.notation, info.chinese);
    if (this.family !== "zipai") return info.notation;
    return `${info.notation[0] === "d" ? "big" : "small"} ${info.notation.slice(1)}${isRed(this.family, info.notation) ? " red" : ""}`;
  }
  text(cards) { return cards.map((k) => (has(k) ? this.spoken(k) : "?")).join(" "); }
  // one card as an element: its face drawn (tiles.js, inline SVG), its name as aria-label
  tile(k, { size = "", tag = "span", extra = "", attrs = {} } = {}) {
    const role = tag === "button" ? null : "img";   // a button stays a button
    const zp = this.family === "zipai" ? "zp" : "";
    if (!has(k)) {
      return h(tag, { class: `tile back ${zp} ${size} ${extra}`, title: t("face_down"), role,
        "aria-label": t("face_down"), ...attrs });
    }
    const info = this.kinds[k];
    const base = { title: this.spoken(k), role, "aria-label": this.spoken(k), dataset: { kind: String(k) }, ...attrs };
    if (zp) {
      const big = info.notation.startsWith("d"), red = isRed(this.family, info.notation);
      return h(tag, { class: `tile zp ${big ? "big" : "small-case"} ${red ? "red" : ""} ${size} ${extra}`, ...base },
        tileFace(this.family, info.notation));
    }
    return h(tag, { class: `tile mj ${size} ${extra}`, ...base }, tileFace(this.family, info.notation));
  }
  tiles(cards, opts) { return cards.map((k) => this.tile(k, opts)); }
  melds(melds, size = "small") {
    return melds.map((m) => h("span", { class: "meld", dataset: { kind: m.kind } },
      h("span", { class: "mk" }, this.label(m.kind)),
      m.cards.map((k, i) => this.tile(k, { size, extra: m.hidden && i < m.hidden ? "facedown-seen" : "" }))));
  }
  // a payment breakdown (qipai.core.model.format_why, with tiles)
  why(terms, parent = "") {
    const out = [];
    terms.forEach((x, i) => {
      if (i) out.push(` ${x.op === "*" ? "×" : (x.op || "+")} `);
      const label = x.id === parent ? "" : this.term(x.id);
      const span = h("span", { class: "term", dataset: { id: x.id, kind: x.kind } }, label);
      if (x.cards && x.cards.length) span.append(" ", ...this.tiles(x.cards, { size: "tiny" }));
      if (x.of && x.of.length) span.append(label ? ` ${x.value} (` : "(", ...this.why(x.of, x.id), ")");
      else span.append(label ? ` ${x.value}` : String(x.value));
      if (x.basis && x.basis.length) span.append(" [", ...this.why(x.basis), "]");
      out.push(span);
    });
    return out;
  }
}

// ------------------------------------------------------------------ seats
// The named players' names (the welcome's `names`, a stored table's GET
// /tables/{id}); else where the seat sits from the reader (下家, 对家, 上家) or,
// for a spectator, its number.
let NAMES = {};
const AT = { n: 4, me: null };
const PLACES = { 4: ["bottom", "right", "top", "left"], 3: ["bottom", "right", "left"], 2: ["bottom", "top"] };
const RELS = { 4: [null, "xiajia", "duijia", "shangjia"], 3: [null, "xiajia", "shangjia"], 2: [null, "duijia"] };
const relOf = (s) => (s - (AT.me ?? 0) + AT.n) % AT.n;
function relWord(s) { const r = (RELS[AT.n] || [])[relOf(s)]; return r ? t(r) : null; }
function seatName(s) {
  if (NAMES[s]) return NAMES[s];
  if (has(AT.me)) return s === AT.me ? V.roles.you : (relWord(s) || t("seat_n", { n: s }));
  return t("seat_n", { n: s });
}

// the seat whose river ends with the latest discard (or null: none yet, or it was claimed)
function lastDiscard(events) {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === "discarded") return e.seat;
    if (e.type === "melded" || e.type === "dealt") return null;
  }
  return null;
}

function seatBox(cards, b, s) {
  const st = b.seats[s], me = b.me === s;
  const tags = [];
  if (me && NAMES[s]) tags.push(h("span", { class: "tag you" }, V.roles.you));  // unnamed: 你 is the name
  if (s === b.dealer) tags.push(h("span", { class: "tag dealer" }, V.roles.dealer));
  if (has(b.me) && !me && NAMES[s]) tags.push(h("span", { class: "tag rel" }, relWord(s)));  // unnamed: 下家… is the name
  if ((b.bots || []).includes(s)) tags.push(h("span", { class: "tag" }, V.roles.bot));
  if (b.presence && !(b.bots || []).includes(s) && !b.presence.online.includes(s)) tags.push(h("span", { class: "tag off" }, t("offline")));
  if (b.presence && b.presence.tuoguan.includes(s)) tags.push(h("span", { class: "tag tg" }, t("tuoguan")));
  if (b.totals) tags.push(h("span", { class: `score ${b.totals[s] > 0 ? "pos" : b.totals[s] < 0 ? "neg" : ""}`, dataset: { scoreSeat: String(s) } }, sign(b.totals[s])));
  let hand;
  if (st.hand) {
    hand = h("div", { class: "tiles hand", dataset: { seat: String(s) } },
      st.hand.map((k) => {
        const legal = b.discardable ? b.discardable.get(k) : undefined;
        if (me && b.discardable) {
          return cards.tile(k, { tag: "button", extra: legal ? "can" : "",
            attrs: { disabled: !legal, onclick: legal ? () => b.onAct(legal) : null,
                     "aria-label": `${cards.name("discard")} ${cards.spoken(k)}` } });
        }
        return cards.tile(k, {});
      }));
  } else {
    hand = h("div", { class: "tiles hand concealed", dataset: { seat: String(s), size: String(st.size) } },
      Array.from({ length: Math.min(st.size, 21) }, () => cards.tile(null, { size: "tiny" })),
      h("span", { class: "backs" }, t("n_cards", { n: st.size })));
  }
  const river = st.discards.map((k, i) => cards.tile(k, { size: "small",
    extra: b.last === s && !b.window && i === st.discards.length - 1 ? "last" : "" }));  // in a window: the card in the middle
  const place = (PLACES[b.n] || [])[relOf(s)] || "top";
  const onTurn = b.turn === s && !b.window && !b.pause;
  return h("div", { class: `seat ${place} ${onTurn ? "turn" : ""} ${me ? "me" : ""}`, dataset: { seat: String(s) } },
    h("h3", {}, h("span", { class: "pname", dataset: { seat: String(s) } }, seatName(s)), tags),
    hand,
    h("div", { class: "tiles melds" }, cards.melds(st.melds)),
    h("div", { class: "tiles discards", title: t("discards") }, river));  // the river: toward the middle
}

// whose turn, or whose decision: during a claim window the decision is the
// seats' that may claim (this reader's if he has one), not the discarder's
function turnText(cards, b, d) {
  // nobody is to play: a room's ready step (the next hand dealt, no decision
  // offered, no clock running), the hand over, the table closed
  if (b.pause) return t(`pause_${b.pause}`);
  if (d && d.legal.length) return d.legal.some((a) => a.type === "discard") ? t("your_turn") : t("your_decision");
  if (b.window) return t("claims");  // the card and who played it: under the card
  return has(b.turn) ? (b.turn === b.me ? t("your_turn") : t("their_turn", { who: seatName(b.turn) })) : "—";
}

function tableEl(cards, b, d = null, middle = []) {
  AT.n = b.n; AT.me = b.me;
  const order = Array.from({ length: b.n }, (_, i) => i);
  const center = h("div", { class: "center" },
    h("div", { class: "stock" }, t("stock"), " ", h("span", { class: "big", id: "stock" }, String(b.stock))),
    b.window ? h("div", { id: "window" }, cards.tile(b.window[0], { extra: "last" }),
      h("div", { class: "from" }, `${seatName(b.window[1])} ${cards.source(b.window[2])}`)) : null,
    h("div", { id: "turn", class: "turnline" }, turnText(cards, b, d)),
    middle);
  return h("div", { class: `table n${b.n}`, id: "board" }, order.map((s) => seatBox(cards, b, s)), center);
}

// ------------------------------------------------------------------ the end of a hand
function showdownEl(cards, result, showdown, n) {
  if (!showdown) return null;
  const wins = new Map((showdown.wins || []).map((w) => [w.seat, w]));
  return h("div", { class: "showdown", id: "showdown" }, h("h3", {}, t("tanpai")),
    showdown.hands.map((x) => {
      const w = wins.get(x.seat);
      // the winning card is shown apart, after the hand: not in it as well (the hand as
      // it ended holds it; shown twice, the winner seemed to hold a card too many)
      let hand = x.hand;
      const at = w && has(w.card) ? hand.lastIndexOf(w.card) : -1;
      if (at >= 0) hand = hand.filter((_, i) => i !== at);
      return h("div", { class: `shown ${w ? "winner" : ""}`, dataset: { seat: String(x.seat) } },
        h("div", { class: "who" }, seatName(x.seat),
          w ? h("span", { class: "tag win" }, `${V.roles.winner} · ${w.card !== null ? cards.how(w.how) : t("no_winning_card")}`) : null),
        h("div", { class: "tiles" }, cards.tiles(hand, { size: "small" }),
          w && has(w.card) ? [h("span", { class: "lbl" }, t("winning_card")), cards.tile(w.card, { size: "small", extra: "last wincard" })] : null),
        x.melds.length ? h("div", { class: "tiles" }, cards.melds(x.melds, "tiny")) : null,
        w && w.patterns && w.patterns.length ? h("div", { class: "pats" }, w.patterns.map((p) => cards.term(p)).join(" ")) : null);
    }));
}

function settlementEl(cards, result, n, totals, title, money, moneyTotals) {
  const seats = Array.from({ length: n }, (_, i) => i);
  const pats = result.patterns || {};
  const how = result.end === "hu"
    ? result.winners.map((s) => `${seatName(s)} ${V.ends.hu}${(pats[s] || []).length ? (LANG === "zh" ? "：" : ": ") + pats[s].map((p) => cards.term(p)).join(" ") : ""}`).join(" · ")
    : cards.label("huangzhuang");
  const xing = Object.entries(result.xing || {});
  return h("div", { class: "settle", id: "settlement", dataset: { end: result.end } },
    title ? h("h3", {}, title) : null,
    h("p", { class: "how" }, how,
      result.flipped && result.flipped.length ? [` · ${cards.label("fanxing")} `, cards.tiles(result.flipped, { size: "tiny" })] : null,
      xing.length ? ` · ${cards.label("xing")} ${xing.map(([s, x]) => `${seatName(+s)} ${x}`).join(", ")}` : ""),
    // one block per payment, its why under it: as readable at 360 px as at 1280
    h("div", { class: "payments" }, result.payments.length ? result.payments.map((p, i) =>
      h("div", { class: "payment", dataset: { payer: String(p.payer), payee: String(p.payee), amount: String(p.amount), reason: p.reason || "" } },
        h("div", { class: "pline" }, h("span", { class: "pwho" }, `${seatName(p.payer)} → ${seatName(p.payee)}`),
          h("span", { class: "reason" }, cards.term(p.reason || "")), h("span", { class: "num amt" }, String(p.amount)),
          money && money.payments[i] ? h("span", { class: "num money", dataset: { money: String(money.payments[i].amount) } }, `· ${yuan(money.payments[i].amount)}`) : null),
        p.why && p.why.length ? h("div", { class: "why" }, cards.why(p.why)) : null))
      : h("p", {}, t("no_payments")),
      // the rake: a line of its own from each winner to the house
      money ? money.rake_lines.map((r) => h("div", { class: "payment rake", dataset: { payer: String(r.payer), rake: String(r.amount) } },
        h("div", { class: "pline" }, h("span", { class: "pwho" }, `${seatName(r.payer)} → ${t("house")}`),
          h("span", { class: "reason" }, t("rake")), h("span", { class: "num money" }, yuan(r.amount))))) : null),
    money ? h("p", { class: "stake", id: "stake" }, t("stake_line", { v: yuanOf(money.stake) }) +
      (money.rake ? ` · ${t("rake_line", { p: money.rake.percent, c: yuanOf(money.rake.cap) })}` : "")) : null,
    // one row per seat: never wider with more seats
    h("table", { class: "nets" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", { class: "num" }, t("net")), totals ? h("th", { class: "num" }, t("totals")) : null,
        money ? h("th", { class: "num" }, t("col_money")) : null, money && moneyTotals ? h("th", { class: "num" }, t("col_money_total")) : null)),
      h("tbody", {}, seats.map((s) => h("tr", {}, h("td", {}, seatName(s)),
        h("td", { class: `num ${result.net[s] > 0 ? "pos" : result.net[s] < 0 ? "neg" : ""}`, dataset: { netSeat: String(s) } }, sign(result.net[s])),
        totals ? h("td", { class: "num", dataset: { totalSeat: String(s) } }, sign(totals[s])) : null,
        money ? h("td", { class: "num", dataset: { moneySeat: String(s) } }, yuan(money.net[s], true)) : null,
        money && moneyTotals ? h("td", { class: "num", dataset: { moneyTotalSeat: String(s) } }, yuan(moneyTotals[s], true)) : null)),
      money ? h("tr", { class: "house" }, h("td", {}, t("house")), h("td", {}, ""), totals ? h("td", {}, "") : null,
        h("td", { class: "num", dataset: { house: String(money.house) } }, yuan(money.house, true)), moneyTotals ? h("td", {}, "") : null) : null)));
}

function tallyEl(tally) {
  const best = Math.max(...tally.seats.map((x) => x.total));
  const money = tally.stake !== null && tally.stake !== undefined;  // a table with a stake: 金额 too
  return h("section", { class: "card tally", id: "tally", dataset: { ended: tally.ended } },
    h("h2", {}, t("tally")),
    h("p", {}, t(`ended_${tally.ended}`, { k: tally.hands_done })),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, ""), ["total", "wins", "dianpao", "zimo", "best"].concat(money ? ["money"] : []).map((c) => h("th", { class: "num" }, t(`col_${c}`))))),
      h("tbody", {}, tally.seats.map((x) => h("tr", { class: x.total === best ? "lead" : "", dataset: { tallySeat: String(x.seat) } },
        h("td", {}, seatName(x.seat)),
        h("td", { class: `num ${x.total > 0 ? "pos" : x.total < 0 ? "neg" : ""}` }, sign(x.total)),
        [x.wins, x.dianpao, x.zimo, x.best].map((v) => h("td", { class: "num" }, String(v))),
        money ? h("td", { class: "num", dataset: { tallyMoney: String(x.money) } }, yuan(x.money, true)) : null)),
      money ? h("tr", { class: "house" }, h("td", {}, t("house")), h("td", { colspan: "5" }, ""),
        h("td", { class: "num", dataset: { tallyHouse: String(tally.house) } }, yuan(tally.house, true))) : null)),
    h("a", { class: "btn", href: "#" }, t("back_lobby")));
}

function eventText(cards, e) {
  const who = has(e.seat) ? seatName(e.seat) : "";
  switch (e.type) {
    case "dealt": return t("ev_dealt", { who: seatName(e.dealer) }) + (e.shown && e.shown.length ? t("ev_shown", { cards: cards.text(e.shown) }) : "");
    case "drew": return t("ev_drew", { who }) + (has(e.card) ? " " + cards.spoken(e.card) : "") + (e.shown ? t("ev_shown_draw") : "") + (e.tail ? t("ev_tail") : "");
    case "discarded": return t("ev_discarded", { who, card: cards.spoken(e.card) });
    case "melded": return `${who} ${cards.label(e.meld.kind)} ${cards.text(e.meld.cards)}`;
    case "paid": return t("ev_paid", { list: e.payments.map((p) => `${seatName(p.payer)} → ${seatName(p.payee)} ${p.amount} (${cards.term(p.reason || "")})`).join("; ") });
    case "marked": return `${cards.label(e.what)}${e.seats && e.seats.length ? " " + list(e.seats.map(seatName)) : ""}${has(e.card) ? " " + cards.spoken(e.card) : ""}`;
    // A win with no winning card (桂林字牌 三笼五坎 on the deal …) is no 自摸,
    // though its how is "zimo" (each other seat pays): it reads 无胡牌.
    case "won": return t("ev_won", { who, how: has(e.card) ? cards.how(e.how) : t("no_winning_card"),
      card: has(e.card) ? cards.spoken(e.card) : "", patterns: e.patterns.map((p) => cards.term(p)).join(" ") });
    case "flipped": return `${cards.label("fanxing")} ${cards.text(e.cards)}`;
    case "ended": return t("ev_ended", { end: cards.label(e.end), net: e.net.map(sign).join(" / ") });
    default: return `${e.type}`;
  }
}

// ------------------------------------------------------------------ play and watch
class Seat {
  constructor(table, token) {
    this.table = table; this.token = token;
    rememberSeat(table, token);
    this.welcome = null; this.cards = null; this.decide = null; this.events = [];
    this.error = null; this.ended = null; this.choosing = false; this.resyncing = false;
    this.dirty = false; this.closed = false; this.readyStep = null; this.vote = null;
    this.presence = null; this.tally = null; this.room = null; this.jointStep = null; this.values = {};
    // where the connection goes: an address a moved named (a cluster's node), else
    // null, the page's own origin; told: the last address a moved named
    this.base = null; this.told = null; this.moving = false;
    this.connect();
    this.tick = setInterval(() => this.countdown(), 250);
  }
  connect() {
    this.seatConns = 1;  // a new connection: the count it is told after its welcome
    this.valueSent = new Set();  // "hand:phase" sent on this connection (seatValue)
    if (this.sent) this.sent.again = true;  // not acknowledged: offered again here, it was not applied
    const path = `/tables/${encodeURIComponent(this.table)}/ws?token=${encodeURIComponent(this.token)}`;
    try {
      this.ws = new WebSocket(wsAt(this.base, path));
    } catch (e) {
      // an address the browser will not open from this page (not a URL; ws:// from an
      // https page): the page's own origin instead
      this.base = null;
      this.ws = new WebSocket(wsAt(null, path));
    }
    if (!this.moving) setStatus(t("connecting"));
    let opened = false, moved = null;
    this.ws.onopen = () => { opened = true; if (!this.moving) setStatus(t("connected")); };
    // one message at a time, in order (a welcome may wait for the card table)
    this.chain = Promise.resolve();
    this.ws.onmessage = (m) => {
      const frame = JSON.parse(m.data);  // one message, or a batch of them in order (protocol: Frames)
      const msgs = frame.type === "batch" ? frame.messages : [frame];
      // (a cluster) the table is another node's: this connection is closed next (4307)
      for (const x of msgs) if (x.type === "moved") moved = x;
      for (const msg of msgs) this.chain = this.chain.then(() => this.onMessage(msg));
      // a welcome comes with the seat's open decision, if any: none offered, none is open
      // (it ran out, or the bot played it in 托管)
      if (msgs.some((x) => x.type === "welcome") && !msgs.some((x) => x.type === "decide")) {
        this.chain = this.chain.then(() => {
          if (!this.decide) return;
          if (!this.decide.auto && this.decide.legal.length) this.away = true;
          this.decide = null;
          this.render();
        });
      }
    };
    this.ws.onclose = (ev) => {
      if (moved && !this.closed && !this.stopped) {
        // (a cluster) the table moved to another node (a drain, a takeover): there at
        // once, the same path and token; its welcome resyncs the hand.  No address
        // yet (its node died, a survivor is taking it over): this node again shortly.
        if (moved.address) this.base = this.told = moved.address;
        this.moving = true;
        setStatus(t("moving"));
        setTimeout(() => this.connect(), moved.address ? 0 : 750);
        return;
      }
      this.moving = false;
      // refused before it opened (the server full, or not reachable): a browser
      // is not shown why, so say what it may be
      setStatus(this.closed ? t("status_closed") : opened ? t("disconnected", { code: ev.code }) : t("cannot_connect"));
      // a token refused (4401: bad or expired; 4403: another table's, seat's or
      // player's) or no such table (4404) is final: its error says why, and
      // trying again would be refused again, every 1.5 s for as long as the tab is open
      if (this.closed || this.stopped || [4401, 4403, 4404].includes(ev.code)) return;
      // a node not reached (stopped, killed): the other address the page knows next —
      // its own origin, or the last one a moved named — which serves the table, or
      // says where it went
      if (!opened) this.base = this.base === null ? this.told : null;
      setTimeout(() => this.connect(), 1500);
    };
  }
  stop() { this.stopped = true; clearInterval(this.tick); try { this.ws.close(); } catch (e) { /* closed */ } }
  send(obj) { this.ws.send(JSON.stringify(obj)); }
  async onMessage(m) {
    if (this.stopped) return;
    switch (m.type) {
      case "welcome": {
        this.cards = await variantInfo(m.spec);
        NAMES = m.names || {};
        const first = !this.welcome;
        this.welcome = m; this.resyncing = false;
        if (this.moving) { this.moving = false; setStatus(t("connected")); }  // moved, and there
        if (this.jointStep && this.jointStep.hand <= m.hand) this.jointStep = null;
        this.events = m.view.events;
        if (m.room) this.room = m.room;
        if ("presence" in m) this.presence = m.presence;
        if ("vote" in m) this.vote = m.vote;
        if ("ready_step" in m) this.readyStep = m.ready_step && m.ready_step.waiting.length ? m.ready_step : null;
        // a player back between hands (or on a fresh page) sees the last hand's result
        const lr = m.last_result;
        if (lr && lr.result && (first || this.readyStep) && (!this.ended || this.ended.hand !== lr.hand) && this.dismissed !== lr.hand) {
          this.ended = { hand: lr.hand, result: lr.result, showdown: lr.showdown, totals: m.totals, money: lr.money, money_totals: m.money_totals };
        }
        if (this.decide && (this.decide.hand !== m.hand)) this.decide = null;
        if (this.dirty) { this.dirty = false; this.requestResync(); }
        break;
      }
      case "events":
        if (!this.welcome || m.hand !== this.welcome.hand) return;
        this.events = this.events.concat(m.events);
        // the board is drawn from the seat's full view: ask for it again (the
        // deltas feed the log; the page never infers the rules' state changes)
        this.requestResync();
        break;
      case "decide": {
        // a resync offers the open decision again: one already answered stays answered;
        // offered again on a new connection, the answer was not applied (an act not
        // acknowledged: the connection dropped, or the table moved to another node,
        // first): the same answer again
        if (this.sent && this.sent.hand === m.hand && this.sent.seq === m.seq) {
          if (this.sent.again) {
            this.sent.again = false;
            this.send({ type: "act", hand: m.hand, seq: m.seq, action: this.sent.action });
          }
          return;
        }
        // a decision of this seat's left unanswered (its clock ran out): the player is
        // away, and the page no longer passes for him, so that the server's count of
        // his timeouts may put him in 托管 (and a page passing for a seat in 托管
        // would take it out)
        if (this.decide && !this.decide.auto && this.decide.legal.length && this.decide.seq !== m.seq) this.away = true;
        // the same decision offered again (a resync): its clock started when first offered
        const same = this.decide && this.decide.hand === m.hand && this.decide.seq === m.seq;
        if (same && this.decide.expired) return;
        this.decide = { ...m, got: same ? this.decide.got : performance.now() };
        this.choosing = false;
        if (m.legal.length === 1 && m.legal[0].type === "pass" && !this.away && !this.inTuoguan()) {
          // Nothing to claim: answered by itself, but after a pause like a
          // player's (autoPassMs), never at once — how soon a claim window
          // closes would tell the other seats that this seat had no claim.
          const d = this.decide, pass = m.legal[0];
          d.legal = []; d.auto = true;  // shown as waiting meanwhile
          setTimeout(() => { if (this.decide === d) { d.legal = [pass]; this.act(pass); } }, autoPassMs(d));
        }
        break;
      }
      case "seat_conns":  // connections open on this seat: more than this tab's may be someone else's
        this.seatConns = m.count;
        break;
      case "ack":
        if (this.decide && this.decide.seq === m.seq) this.decide = null;
        if (this.sent && this.sent.seq === m.seq) this.sent.again = false;
        this.error = null;
        break;
      case "hand_ended":
        this.ended = m;
        this.decide = null;
        if (this.room) this.room = { ...this.room, done: m.hand + 1 };
        break;
      case "ready_step":
        this.readyStep = m.waiting.length ? m : null;
        break;
      case "seat_values":  // a joint deal: this seat's value, committed then revealed
        this.jointStep = m;
        await this.seatValue(m);
        break;
      case "vote":
        this.vote = m;
        break;
      case "presence":
        this.presence = m;
        break;
      case "tally":
        this.tally = m;
        break;
      case "closed":
        this.closed = true; this.decide = null;
        if (!this.tally) this.error = { code: "closed", message: t("closed", { totals: m.totals.join(" / ") }) };
        break;
      case "error":
        // (a cluster) the table is moving to another node: not applied, and no
        // failure — a moved follows, and the act goes again there
        if (m.code === "Moving") return;
        this.error = m;
        if (m.code === "StaleSeq" || m.code === "NotYourTurn") this.requestResync();
        break;
      default: break;
    }
    this.render();
  }
  // A joint deal (docs: "Fairness you can check"): a random 32-byte value of
  // this seat's, its SHA-256 sent first (seat_commit), the value itself once
  // every commitment is in (seat_reveal); kept in sessionStorage so that a
  // reload in between can still reveal it.  What the server has not got
  // (its commitments and revealed lists) is sent again on a new connection:
  // a message lost with a dropped connection must not mark the seat as
  // withholding.  Needs crypto.subtle (https, or this machine): without it
  // the seat sends nothing and counts empty.
  async seatValue(m) {
    if (m.seat === null || !(window.crypto && crypto.subtle)) return;
    const key = `qipai-value:${this.table}:${m.hand}`;
    let mine = this.values && this.values[m.hand];
    if (!mine) {
      try { mine = JSON.parse(sessionStorage.getItem(key) || "null"); } catch (e) { mine = null; }
    }
    const hex = (buf) => Array.from(new Uint8Array(buf), (x) => x.toString(16).padStart(2, "0")).join("");
    const sent = this.valueSent || (this.valueSent = new Set());
    if (m.phase === "commit" && !(String(m.seat) in m.commitments) && !sent.has(`${m.hand}:commit`)) {
      if (!mine) {
        const raw = crypto.getRandomValues(new Uint8Array(32));
        mine = { v: hex(raw), c: hex(await crypto.subtle.digest("SHA-256", raw)) };
      }
      sent.add(`${m.hand}:commit`);
      this.send({ type: "seat_commit", hand: m.hand, commitment: mine.c });
    } else if (m.phase === "reveal" && mine && m.commitments[String(m.seat)] === mine.c
               && !m.revealed.includes(m.seat) && !sent.has(`${m.hand}:reveal`)) {
      sent.add(`${m.hand}:reveal`);
      this.send({ type: "seat_reveal", hand: m.hand, value: mine.v });
    }
    if (mine) {
      this.values = { ...(this.values || {}), [m.hand]: mine };
      try { sessionStorage.setItem(key, JSON.stringify(mine)); } catch (e) { /* private mode */ }
    }
  }
  valueEl(hand) {
    const mine = this.values && this.values[hand];
    return mine ? h("div", { class: "notice", id: "your-value" }, t("your_value", { v: mine.v })) : null;
  }
  requestResync() {
    if (this.resyncing) { this.dirty = true; return; }
    this.resyncing = true;
    this.send({ type: "resync" });
  }
  inTuoguan() { return !!(this.presence && this.presence.tuoguan.includes(this.welcome && this.welcome.seat)); }
  act(action) {
    if (!this.decide) return;
    if (!this.decide.auto) this.away = false;  // the player's own click: he is back
    this.send({ type: "act", hand: this.decide.hand, seq: this.decide.seq, action });
    this.sent = { hand: this.decide.hand, seq: this.decide.seq, action };
    this.decide = { ...this.decide, legal: [], sentAt: performance.now() };
    this.choosing = false;
    this.render();
  }
  countdown() {
    const el = document.getElementById("countdown");
    if (!el) return;
    let d = this.decide && this.decide.legal.length ? this.decide : null;
    if (d && !d.auto && performance.now() - d.got > d.timeout * 1000 + 1000) {
      // ran out unanswered (the server played for the seat): its buttons go, and
      // the player is away (the page no longer passes for him)
      this.decide = { ...d, legal: [], expired: true }; this.away = true; d = null;
      this.render();
      return;
    }
    const until = d ? Math.min(d.deadline, Date.now() / 1000 + d.timeout)
      : this.readyStep && !this.closed ? this.readyStep.deadline : null;
    const show = (x, at) => {
      if (!x) return;
      if (!at) { x.textContent = ""; return; }
      const left = Math.max(0, at - Date.now() / 1000);
      x.textContent = t("seconds", { s: left.toFixed(0) });
      x.classList.toggle("low", left < 8);
    };
    show(el, until);
    show(document.getElementById("ready-countdown"), this.readyStep && !this.closed ? this.readyStep.deadline : null);
    show(document.getElementById("vote-countdown"), this.vote && !this.vote.outcome && !this.closed ? this.vote.deadline : null);
  }
  board() {
    const w = this.welcome, v = w.view;
    const seats = v.hand_sizes.map((size, s) => ({
      hand: s === w.seat ? v.hand : null, size, melds: v.melds[s], discards: v.discards[s] }));
    // the board's hand over (its hand_ended came, no welcome of the next yet) shows
    // the totals after it
    const over = !!(this.ended && this.ended.hand === w.hand);
    const b = { n: w.players, me: w.seat, dealer: v.dealer, turn: v.turn, stock: v.stock,
      window: v.window, seats, bots: w.bots, totals: over && this.ended.totals ? this.ended.totals : w.totals,
      presence: this.presence, last: lastDiscard(this.events),
      pause: this.closed ? "closed" : over ? "ended" : this.readyStep ? "ready" : null };
    const legal = this.decide && this.decide.hand === w.hand ? this.decide.legal : [];
    if (w.seat !== null) {
      b.discardable = new Map(legal.filter((a) => a.type === "discard").map((a) => [a.card, a]));
      b.onAct = (a) => this.act(a);
    }
    return { b, legal };
  }
  actionsEl(legal) {
    const cards = this.cards;
    const open = !!(this.decide && legal.length);
    const el = h("div", { class: "actions", id: "actions", dataset: { open: open ? "1" : "0", seq: this.decide ? String(this.decide.seq) : "" } });
    if (!open) {
      el.append(h("span", { class: "hint" }, this.decide && !this.decide.auto && !this.decide.expired ? t("sent") : t("waiting")));
      return el;
    }
    const groups = new Map();
    for (const a of legal) if (a.type !== "discard") { if (!groups.has(a.type)) groups.set(a.type, []); groups.get(a.type).push(a); }
    if (legal.some((a) => a.type === "discard")) el.append(h("span", { class: "hint" }, t("hint_discard")));
    const order = ["hu", "zimo", "angang", "jiagang", "minggang", "peng", "chi", "pass"];
    const types = [...groups.keys()].sort((x, y) => order.indexOf(x) - order.indexOf(y));
    for (const ty of types) {
      const as = groups.get(ty);
      if (ty === "chi") {
        if (as.length === 1) el.append(this.chiButton(as[0], "btn", "chi"));
        else el.append(h("button", { class: "btn", dataset: { action: "chi" }, onclick: () => { this.choosing = true; this.render(); } },
          cards.label("chi"), ` (${as.length})…`));
      } else if (as.length > 1 || as[0].card !== undefined) {
        for (const a of as) el.append(h("button", { class: "btn", dataset: { action: ty }, onclick: () => this.act(a) },
          cards.label(ty), " ", a.card !== undefined ? cards.tile(a.card, { size: "tiny" }) : null));
      } else {
        el.append(h("button", { class: `btn ${ty === "pass" ? "secondary" : ""}`, dataset: { action: ty }, onclick: () => this.act(as[0]) },
          cards.label(ty)));
      }
    }
    if (this.choosing && groups.has("chi")) {
      el.append(h("div", { class: "choices", id: "chi-choices" }, h("span", { class: "hint" }, t("which_run")),
        groups.get("chi").map((a, i) => this.chiButton(a, "btn", "chi-choice", i))));
    }
    return el;
  }
  chiButton(a, cls, action, i) {
    const cards = this.cards;
    // zipai 下伙: the further groups laid with the 吃 are part of the one action
    const extra = (a.extra || []).map((g) => [h("span", { class: "xiahuo" }, t("xiahuo")), cards.tiles(g, { size: "tiny" })]);
    return h("button", { class: cls, dataset: { action, choice: i === undefined ? "0" : String(i) }, onclick: () => this.act(a) },
      cards.label("chi"), " ", cards.tiles(a.cards, { size: "tiny" }), extra);
  }
  // 准备 / 解散房间 / 托管: shown only when the server runs rooms (welcome.room, presence)
  roomBar() {
    const w = this.welcome, me = w.seat;
    if (me === null || this.closed) return null;
    const parts = [];
    const rs = this.readyStep;
    let step = false;
    if (rs && (rs.waiting.includes(me) || rs.ready.includes(me))) {
      const done = rs.ready.includes(me);
      step = true;
      parts.push(h("button", { class: "btn", id: "ready", disabled: done, onclick: () => this.send({ type: "ready", hand: rs.hand }) },
        done ? t("is_ready") : (rs.hand > 0 ? t("next_hand") : t("ready"))),
        h("span", { class: "countdown", id: "ready-countdown" }));
      if (done) parts.push(h("span", { class: "hint" }, t("ready_wait")));
    }
    if (this.presence && !(w.bots || []).includes(me)) {
      const on = this.presence.tuoguan.includes(me);
      parts.push(h("button", { class: `btn secondary ${on ? "on" : ""}`, id: "tuoguan", onclick: () => { this.away = false; this.send({ type: "tuoguan", on: !on }); } },
        on ? t("tuoguan_off") : t("tuoguan")));
    }
    if (this.room && this.room.hands && (!this.vote || this.vote.outcome)) {
      parts.push(h("button", { class: "btn secondary", id: "dissolve", onclick: () => this.send({ type: "dissolve", agree: true }) }, t("dissolve")));
    }
    // while the ready step is under way the bar stays on screen (sticky at the bottom:
    // under a long settlement 继续 was ~1,000 px down on a phone); scrolled to its
    // place in the page, it sits below the settlement, over nothing of it
    return parts.length ? h("div", { class: step ? "roombar sticky" : "roombar", id: "roombar" }, parts) : null;
  }
  voteEl() {
    const v = this.vote, me = this.welcome.seat;
    if (!v) return null;
    const body = [h("p", {}, t("vote_title", { who: seatName(v.by) }))];
    if (v.outcome) body.push(h("p", { class: "outcome" }, t(`vote_${v.outcome}`, { who: has(v.refused_by) ? seatName(v.refused_by) : "" })));
    else {
      body.push(h("p", {}, t("agreed", { list: list(v.agreed.map(seatName)) || t("none") }), " ",
        h("span", { class: "countdown", id: "vote-countdown" })));
      if (v.waiting.includes(me)) {
        body.push(h("div", { class: "row" },
          h("button", { class: "btn", id: "vote-agree", onclick: () => this.send({ type: "dissolve", agree: true }) }, t("agree")),
          h("button", { class: "btn secondary", id: "vote-refuse", onclick: () => this.send({ type: "dissolve", agree: false }) }, t("refuse"))));
      }
    }
    if (v.outcome) body.push(h("button", { class: "btn secondary", onclick: () => { this.vote = null; this.render(); } }, t("hide")));
    return h("div", { class: "dialog", id: "vote", role: "dialog", dataset: { outcome: v.outcome || "" } }, body);
  }
  render() {
    if (this.stopped) return;
    if (this.jointStep && !this.welcome) {
      // the seat-value step before the first hand (nothing of it is dealt yet;
      // before a later hand the last one stays on the screen, its result too)
      // (no clock yet: the first hand waits until every player has sat down,
      // any hand until a player is online — the server's unseated and deadline)
      const js = this.jointStep, away = js.unseated || [];
      const waits = away.length ? t("joint_unseated", { list: list(away.map(seatName)) })
        : js.phase === "commit" && js.deadline === null ? t("joint_no_player") : null;
      app.replaceChildren(h("div", { class: "notice", id: "joint-step" }, t("joint_step")),
        waits ? h("div", { class: "notice", id: "joint-waits" }, waits) : "",
        this.valueEl(this.jointStep.hand) || "",
        this.error ? h("div", { class: "notice error", id: "refusal" }, t("refused", { code: this.error.code, message: this.error.message })) : "");
      return;
    }
    if (!this.welcome || !this.cards) {
      // refused before any welcome (an expired or wrong seat link, a closed table):
      // the server's words say why and what to do (ask the operator for a new link)
      if (this.error) {
        app.replaceChildren(h("div", { class: "notice error", id: "refusal" },
          t("refused", { code: this.error.code, message: this.error.message })), h("a", { href: "#" }, t("back_lobby")));
      }
      return;
    }
    const w = this.welcome, cards = this.cards;
    const { b, legal } = this.board();
    AT.n = b.n; AT.me = b.me;
    const no = this.room && this.room.hands ? t("round_of", { k: this.room.hand, n: this.room.hands }) : t("hand_no", { k: w.hand + 1 });
    whereEl.textContent = `${cards.title} · ${t("table_id", { id: w.table })} · ${no}` +
      (w.seeded ? ` · ${t("seeded")}` : "") + (w.seat === null ? ` · ${t("watching")}` : ` · ${NAMES[w.seat] || t("seat_n", { n: w.seat })}`);
    const parts = [];
    if (this.tally) parts.push(tallyEl(this.tally));
    if (this.vote) parts.push(this.voteEl());
    if (this.ended && this.ended.result) {
      const e = this.ended;
      parts.push(h("section", { class: "card result", id: "result" },
        h("h2", {}, t(this.room && this.room.hands ? "settlement_of_round" : "settlement_of", { k: e.hand + 1 })),
        showdownEl(cards, e.result, e.showdown, w.players),
        settlementEl(cards, e.result, w.players, e.totals, null, e.money, e.money_totals),
        this.readyStep ? null : h("button", { class: "btn secondary", id: "dismiss", onclick: () => { this.dismissed = e.hand; this.ended = null; this.render(); } }, t("hide"))));
    }
    const mine = this.valueEl(this.jointStep && this.jointStep.hand > w.hand ? this.jointStep.hand : w.hand);
    if (mine) parts.push(mine);
    if (this.seatConns > 1) parts.push(h("div", { class: "notice error", id: "seat-conns" }, t("seat_conns", { n: this.seatConns })));
    if (this.error) parts.push(h("div", { class: "notice error", id: "refusal" }, t("refused", { code: this.error.code, message: this.error.message })));
    const bar = this.roomBar();
    if (bar) parts.push(bar);
    const mid = [h("div", { class: "countdown", id: "countdown" })];
    parts.push(tableEl(cards, b, this.decide && this.decide.hand === w.hand ? this.decide : null, mid));
    if (w.seat !== null) parts.push(this.actionsEl(legal));
    parts.push(h("details", { class: "card events" }, h("summary", {}, t("events")),
      h("ol", { class: "log" }, this.events.slice(-60).map((e) => h("li", {}, eventText(cards, e))))));
    // the result first on a phone: the reader scrolls to the table
    app.replaceChildren(...parts);
    this.countdown();
  }
}

// ------------------------------------------------------------------ replay
class Replay {
  constructor(data) {
    this.data = data; this.i = 0;
    this.keys = (ev) => {
      if (ev.target.tagName === "INPUT") return;
      if (ev.key === "ArrowRight") this.go(this.i + 1);
      if (ev.key === "ArrowLeft") this.go(this.i - 1);
    };
    document.addEventListener("keydown", this.keys);
    setStatus(t("replay_keys"));
    variantInfo(data.spec).then((c) => { this.cards = c; this.render(); });
  }
  stop() { document.removeEventListener("keydown", this.keys); }
  go(i) { this.i = Math.max(0, Math.min(this.data.steps.length - 1, i)); this.render(); }
  render() {
    const d = this.data, cards = this.cards, step = d.steps[this.i], last = d.steps.length - 1;
    whereEl.textContent = `${t("replay")} · ${cards.title}` + (d.table ? ` · ${t("table_id", { id: d.table })} · ${t("hand_no", { k: d.hand + 1 })}` : ` · ${t("file")}`);
    const b = { n: d.players, me: null, dealer: d.dealer, turn: step.turn, stock: step.stock, window: step.window,
      seats: step.seats.map((s) => ({ hand: s.hand, size: s.hand.length, melds: s.melds, discards: s.discards })),
      last: lastDiscard(step.events) };
    const controls = h("div", { class: "steps" },
      h("button", { class: "btn secondary", id: "first", onclick: () => this.go(0) }, `|◀ ${t("first")}`),
      h("button", { class: "btn", id: "prev", disabled: this.i === 0, onclick: () => this.go(this.i - 1) }, `◀ ${t("prev")}`),
      h("button", { class: "btn", id: "next", disabled: this.i === last, onclick: () => this.go(this.i + 1) }, `${t("next")} ▶`),
      h("button", { class: "btn secondary", id: "last", onclick: () => this.go(last) }, `${t("last")} ▶|`),
      h("input", { type: "range", min: "0", max: String(last), value: String(this.i), "aria-label": t("step", { i: this.i, n: last }),
        oninput: (ev) => this.go(+ev.target.value) }),
      h("span", { id: "stepno", dataset: { step: String(this.i), actions: String(step.first_action + step.actions.length) } },
        t("step", { i: this.i, n: last })));
    AT.n = b.n; AT.me = null;
    const info = h("div", { class: "stepinfo", id: "stepinfo" },
      this.i === 0 ? t("the_deal") : null,
      h("ul", { class: "log" }, step.events.map((e) => h("li", {}, eventText(cards, e)))));
    const parts = [controls, info, tableEl(cards, b)];
    if (this.i === last) parts.push(h("section", { class: "card result" }, settlementEl(cards, d.result, d.players, null, t("settlement"))));
    app.replaceChildren(...parts);
  }
}

// ------------------------------------------------------------------ lobby
const SAVED = "qipai-tables";
// The seat tokens this tab played with (#play/TABLE/TOKEN): on a server with
// operator keys (qipai serve --keys) a seat token reads its own table's
// records and replays (Authorization: Bearer TOKEN), where the lobby's lists need a key.
const SEATS = "qipai-seat-tokens";
function seatTokens() { try { return JSON.parse(sessionStorage.getItem(SEATS) || "{}"); } catch (e) { return {}; } }
function rememberSeat(table, token) {
  try { const all = seatTokens(); all[table] = token; sessionStorage.setItem(SEATS, JSON.stringify(all)); } catch (e) { /* storage off */ }
}
function asSeat(table) {
  const tok = seatTokens()[table];
  return tok ? { headers: { Authorization: `Bearer ${tok}` } } : undefined;
}
const needsKey = (e) => e.body && (e.body.error === "NoKey" || e.body.error === "BadKey");
function saved() { try { return JSON.parse(localStorage.getItem(SAVED) || "{}"); } catch (e) { return {}; } }
function save(created, spec) {
  const all = saved(); all[created.id] = { seats: created.seats, spectator: created.spectator_token, spec };
  localStorage.setItem(SAVED, JSON.stringify(all));
}
const link = (table, token) => `${location.origin}/#play/${table}/${token}`;

function linksEl(id, entry, compact = false) {
  if (compact) {
    return h("span", { class: "links" }, Object.entries(entry.seats).map(([s, tok]) =>
      [h("a", { href: link(id, tok), dataset: { seat: s } }, `${t("sit")} ${s}`), " "]),
      h("a", { href: link(id, entry.spectator) }, t("watch")));
  }
  return h("div", { class: "links" },
    Object.entries(entry.seats).map(([s, tok]) => h("div", { class: "row" },
      h("a", { href: link(id, tok), class: "seat-link", dataset: { seat: s } }, `${t("sit")} · ${t("seat_n", { n: s })}`),
      h("input", { type: "text", readonly: true, value: link(id, tok), onfocus: (ev) => ev.target.select() }))),
    h("div", { class: "row" },
      h("a", { href: link(id, entry.spectator), class: "spectator-link" }, t("watch")),
      h("input", { type: "text", readonly: true, value: link(id, entry.spectator), onfocus: (ev) => ev.target.select() })));
}

async function lobby() {
  const gen = routeGen;  // a lobby answered after the reader went elsewhere draws nothing
  whereEl.textContent = t("lobby");
  setStatus("");
  const variants = await getJSON("/variants");
  if (gen !== routeGen) return;
  const form = h("section", { class: "card", id: "create" }, h("h2", {}, t("new_table")));
  const sel = h("select", { id: "variant", "aria-label": t("col_rules") },
    variants.map((v) => h("option", { value: v.name, selected: v.name === "guilin-mahjong" }, LANG === "zh" ? v.title : v.name)));
  const opts = h("input", { type: "text", id: "options", placeholder: t("options_hint"), size: "24" });
  const hands = h("select", { id: "hands", "aria-label": t("hands") },
    h("option", { value: "" }, t("hands_open")), [1, 4, 8, 16].map((n) => h("option", { value: String(n) }, t("n_hands", { n }))));
  const botsBox = h("span", { id: "bots" });
  const result = h("div", { id: "created" });
  const fillBots = () => {
    const v = variants.find((x) => x.name === sel.value);
    // each bot seat: a checkbox, and its level (the server's easy / normal / hard)
    botsBox.replaceChildren(`${t("bots")}: `, ...Array.from({ length: v.players }, (_, s) =>
      h("label", { class: "bot-seat" }, h("input", { type: "checkbox", value: String(s), checked: s !== 0, dataset: { seat: String(s) } }), ` ${s} `,
        h("select", { class: "bot-level", "aria-label": `${t("level")} ${s}`, dataset: { seat: String(s) } },
          LEVELS.map((lv) => h("option", { value: lv, selected: lv === "normal" }, t(`level_${lv}`)))))));
    opts.title = Object.entries(v.options).map(([k, x]) => `${k}=${JSON.stringify(x)}`).join(", ");
  };
  sel.addEventListener("change", fillBots); fillBots();
  const create = async () => {
    const o = opts.value.trim();
    const spec = o ? `${sel.value}(${o.replace(/^\(|\)$/g, "")})` : sel.value;
    // a seat at level normal is sent as its number (what every server takes)
    const bots = [...botsBox.querySelectorAll("input:checked")].map((x) => {
      const level = botsBox.querySelector(`select.bot-level[data-seat="${x.value}"]`).value;
      return level === "normal" ? +x.value : { seat: +x.value, level };
    });
    const body = { variant: spec, bots };
    if (hands.value) body.hands = +hands.value;  // a room of N hands (a server without rooms: none asked)
    // 准备/继续 between hands, whatever 局数: the next hand is not dealt under the
    // settlement while its reader's clock runs (an API client's open-ended table has none)
    body.ready = true;
    try {
      const c = await getJSON("/tables", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      save(c, spec);
      result.replaceChildren(h("p", {}, t("created", { id: c.id, spec })), linksEl(c.id, saved()[c.id]));
      refresh();
    } catch (e) {
      result.replaceChildren(h("div", { class: "notice error", id: "refusal" }, t("refused", { code: (e.body && e.body.error) || "", message: (e.body && e.body.message) || e.message })));
    }
  };
  form.append(h("div", { class: "row" }, sel, h("label", {}, `${t("hands")} `, hands), opts, botsBox,
    h("button", { class: "btn", id: "create-table", onclick: create }, t("create"))), result);

  const tablesEl = h("section", { class: "card", id: "tables" }, h("h2", {}, t("open_tables")));
  const recordsEl = h("section", { class: "card", id: "records" }, h("h2", {}, t("finished_hands")));
  const drop = h("div", { class: "drop", id: "drop" }, `${t("drop")} · `,
    h("input", { type: "file", id: "record-file", accept: ".json,application/json", onchange: (ev) => ev.target.files[0] && replayFile(ev.target.files[0]) }));
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => { ev.preventDefault(); drop.classList.remove("over"); if (ev.dataTransfer.files[0]) replayFile(ev.dataTransfer.files[0]); });
  app.replaceChildren(form, tablesEl, recordsEl, h("section", { class: "card" }, h("h2", {}, t("replay_file")), drop));

  const titleOf = (spec) => { const v = variants.find((x) => x.name === spec.split("(")[0]); return v && LANG === "zh" ? v.title + spec.slice(v.name.length) : spec; };
  async function refresh() {
    let tables = null, records = null;
    const [tl, rl] = await Promise.allSettled([getJSON("/tables"), getJSON("/records")]);
    for (const r of [tl, rl]) if (r.status === "rejected" && !needsKey(r.reason)) throw r.reason;
    if (tl.status === "fulfilled") tables = tl.value;
    if (rl.status === "fulfilled") records = rl.value;
    if (gen !== routeGen) return;
    if (records === null) {
      // a server with operator keys: no list without a key (the tables, with
      // --lobby); the finished hands of the tables this tab played at, read with
      // their seat tokens
      records = [];
      form.replaceChildren(h("h2", {}, t("new_table")), h("div", { class: "notice", id: "ask-operator" }, t("ask_operator")));
      for (const id of Object.keys(seatTokens())) {
        try {
          const got = await getJSON(`/tables/${encodeURIComponent(id)}/records`, asSeat(id));
          for (const x of got.hands) records.push({ table: id, hand: x.hand, spec: x.record.spec || "", net: (x.record.result && x.record.result.net) || [] });
        } catch (err) { /* closed here, or refused: not listed */ }
      }
    }
    if (tables === null) tablesEl.replaceChildren(h("h2", {}, t("open_tables")), h("div", { class: "notice", id: "keyed" }, t("keyed")));
    const mine = saved();
    if (tables !== null) tablesEl.replaceChildren(h("h2", {}, t("open_tables")), tables.length ? h("table", {},
      h("thead", {}, h("tr", {}, ["col_table", "col_rules", "col_players", "col_hand", "col_totals"].map((c) => h("th", {}, t(c))), h("th", {}, ""))),
      h("tbody", {}, tables.map((x) => h("tr", {},
        h("td", {}, x.id), h("td", {}, titleOf(x.spec)),
        h("td", { class: "names" }, list(Object.entries(x.names || {}).map(([s, n]) => `${s}: ${n}`)) || "—"),
        h("td", { class: "num" }, x.hands ? `${x.hand + 1}/${x.hands}` : String(x.hand + 1)),
        h("td", {}, x.totals.join(" / ")),
        h("td", {}, mine[x.id] ? linksEl(x.id, mine[x.id], true) : h("span", { class: "muted" }, t("links_elsewhere"))))))) : h("p", {}, t("none")));
    recordsEl.replaceChildren(h("h2", {}, t("finished_hands")), records.length ? h("table", {},
      h("thead", {}, h("tr", {}, ["col_table", "col_hand", "col_rules", "col_net"].map((c) => h("th", {}, t(c))), h("th", {}, ""))),
      h("tbody", {}, records.map((r) => h("tr", {},
        h("td", {}, r.table), h("td", { class: "num" }, String(r.hand + 1)), h("td", {}, titleOf(r.spec)), h("td", {}, r.net.join(" / ")),
        h("td", {}, h("a", { href: `#replay/${r.table}/${r.hand}`, class: "replay-link", dataset: { table: r.table, hand: String(r.hand) } }, t("replay"))))))) : h("p", {}, t("none")));
  }
  await refresh();
}

async function replayFile(file) {
  try {
    const data = await getJSON("/replay", { method: "POST", headers: { "content-type": "application/json" }, body: await file.text() });
    location.hash = "#replay-file";
    start(() => new Replay(data));
  } catch (e) {
    app.prepend(h("div", { class: "notice error", id: "refusal" }, t("cannot_replay", { message: e.message })));
  }
}

// ------------------------------------------------------------------ routing (the token stays in the fragment: never sent over HTTP)
let current = null, routeGen = 0;
function start(make) { if (current && current.stop) current.stop(); NAMES = {}; routeGen++; current = make(); }
async function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  try {
    if (parts[0] === "play" && parts.length >= 3) return start(() => new Seat(decodeURIComponent(parts[1]), decodeURIComponent(parts[2])));
    if (parts[0] === "replay" && parts.length >= 3) {
      const data = await getJSON(`/tables/${encodeURIComponent(parts[1])}/records/${encodeURIComponent(parts[2])}/replay`, asSeat(parts[1]));
      let names = {};
      try { names = (await getJSON(`/tables/${encodeURIComponent(parts[1])}`)).names || {}; } catch (e) { /* shown by seat number */ }
      return start(() => { NAMES = names; return new Replay(data); });
    }
    if (parts[0] === "replay-file") return;  // a file already shown
    start(() => null);
    await lobby();
  } catch (e) {
    app.replaceChildren(h("div", { class: "notice error", id: "refusal" }, t("error", { message: e.message })), h("a", { href: "#" }, t("back_lobby")));
  }
}

// the header: the brand, and the switch to the other language (remembered)
async function main() {
  V = await getJSON(`/vocabulary?lang=${LANG}`);
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  document.title = t("brand");
  document.getElementById("brand").textContent = t("brand");
  const sw = document.getElementById("lang");
  sw.textContent = t("lang_other");
  sw.hidden = false;
  sw.addEventListener("click", () => {
    try { localStorage.setItem(LANG_KEY, LANG === "zh" ? "en" : "zh"); } catch (e) { /* storage off */ }
    location.reload();
  });
  window.addEventListener("hashchange", route);
  route();
}
main();
