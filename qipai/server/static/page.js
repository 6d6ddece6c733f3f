// qipai page: lobby, play (a seat link), watch (the spectator link), replay.
// It speaks only the protocol of `qipai serve` (docs/reference/protocol.md) and
// draws only what the server sends this connection.  No build step, no framework.

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
const py = (text) => h("span", { class: "py" }, text);
const setStatus = (text) => { statusEl.textContent = text; };

async function getJSON(url, opts) {
  const r = await fetch(url, opts);
  const body = await r.json().catch(() => ({ error: "BadAnswer", message: `HTTP ${r.status}` }));
  if (!r.ok) throw Object.assign(new Error(`${body.error}: ${body.message}`), { body });
  return body;
}

// A pass-only decision is answered after a random pause of 0.8–2.2 s (within
// half the time left), like a player glancing at the card: an instant answer
// would let everyone time the window and learn that nobody here could claim.
function autoPassMs(d) {
  const left = d.deadline ? (d.deadline - Date.now() / 1000) * 1000 : Infinity;
  return Math.max(0, Math.min(800 + Math.random() * 1400, left / 2));
}

// ------------------------------------------------------------------ cards
// The words of ids (melds, actions, ways of winning, ends, payment reasons) are
// the command line's: GET /vocabulary (qipai.text), a variant's `names` over them.
let vocabulary = null;
function words() {
  if (!vocabulary) vocabulary = getJSON("/vocabulary?lang=zh");
  return vocabulary;
}
function flatWords(v) {
  return { ...v.reasons, ...v.bonus, ...v.ends, ...v.ways, ...v.melds, ...v.actions };
}
const variantCache = new Map();

async function variantInfo(spec) {
  const name = spec.split("(")[0];
  if (!variantCache.has(name)) {
    variantCache.set(name, Promise.all([getJSON(`/variants/${encodeURIComponent(name)}`), words()])
      .then(([v, w]) => new Cards(v, w)));
  }
  return variantCache.get(name);
}

class Cards {
  constructor(info, vocab) {
    this.info = info;
    this.family = info.family;
    this.kinds = info.cards.kinds;
    this.names = { ...flatWords(vocab), ...(info.names || {}) };
  }
  name(id) { return this.names[id] || ""; }
  label(id) { const n = this.name(id); return n ? `${n} ${id}` : id; }
  chinese(k) { return k === null || k === undefined ? "?" : this.kinds[k].chinese; }
  notation(k) { return k === null || k === undefined ? "?" : this.kinds[k].notation; }
  text(cards) { return cards.map((k) => this.chinese(k)).join(" "); }
  // one card as an element: its face drawn (tiles.js, inline SVG), its name as aria-label
  // (a screen reader's text), the name and notation on hover
  tile(k, { size = "", tag = "span", extra = "", attrs = {} } = {}) {
    const role = tag === "button" ? null : "img";   // a button stays a button
    if (k === null || k === undefined) {
      return h(tag, { class: `tile back ${this.family === "zipai" ? "zp" : ""} ${size} ${extra}`, title: "暗牌 face down", role,
        "aria-label": "暗牌", ...attrs });
    }
    const info = this.kinds[k];
    const title = `${info.chinese} ${info.notation}`;
    const base = { title, role, "aria-label": tileLabel(this.family, info.notation, info.chinese),
      dataset: { kind: String(k) }, ...attrs };
    if (this.family === "zipai") {
      const big = info.notation.startsWith("d"), red = isRed(this.family, info.notation);
      const cls = `tile zp ${big ? "big" : "small-case"} ${red ? "red" : ""} ${size} ${extra}`;
      return h(tag, { class: cls, ...base, title: `${title} ${big ? "大写" : "小写"}${red ? " 红牌" : ""}` },
        tileFace(this.family, info.notation));
    }
    const suit = info.notation.slice(-1);
    const cls = info.chinese.length === 2 && "mps".includes(suit) ? `s-${suit}` : `honor h-${info.notation}`;
    return h(tag, { class: `tile mj ${cls} ${size} ${extra}`, ...base }, tileFace(this.family, info.notation));
  }
  tiles(cards, opts) { return cards.map((k) => this.tile(k, opts)); }
  // a payment breakdown (qipai.core.model.format_why, with tiles)
  why(terms, parent = "") {
    const out = [];
    terms.forEach((t, i) => {
      if (i) out.push(` ${t.op === "*" ? "×" : (t.op || "+")} `);
      const label = t.id === parent ? "" : this.label(t.id);
      const span = h("span", { class: "term", dataset: { id: t.id, kind: t.kind } }, label);
      if (t.cards && t.cards.length) span.append(" ", ...this.tiles(t.cards, { size: "tiny" }));
      if (t.of && t.of.length) span.append(label ? ` ${t.value} (` : "(", ...this.why(t.of, t.id), ")");
      else span.append(label ? ` ${t.value}` : String(t.value));
      if (t.basis && t.basis.length) span.append(" [", ...this.why(t.basis), "]");
      out.push(span);
    });
    return out;
  }
}

// ------------------------------------------------------------------ board (shared by play, watch, replay)
// The named players' names at the table shown (the welcome's `names`, a
// stored table's GET /tables/{id}): seat → name; a seat absent is shown by number.
let NAMES = {};
function seatName(s) { return NAMES[s] ? NAMES[s] : `座位 ${s}`; }

function seatPanel(cards, b, s) {
  const st = b.seats[s];
  const tags = [];
  if (s === b.dealer) tags.push(h("span", { class: "tag dealer" }, "庄 dealer"));
  if (b.me === s) tags.push(h("span", { class: "tag you" }, "你 you"));
  if ((b.bots || []).includes(s)) tags.push(h("span", { class: "tag" }, "机器人 bot"));
  if (b.totals) tags.push(h("span", { class: "tag" }, `总 ${b.totals[s] > 0 ? "+" : ""}${b.totals[s] ?? 0}`));
  let hand;
  if (st.hand) {
    hand = h("div", { class: "tiles hand", dataset: { seat: String(s) } },
      st.hand.map((k, i) => {
        const legal = b.discardable ? b.discardable.get(k) : undefined;
        if (b.me === s && b.discardable) {
          return cards.tile(k, { tag: "button", extra: legal ? "can" : "",
            attrs: { disabled: !legal, onclick: legal ? () => b.onAct(legal) : null,
                     "aria-label": `打 ${cards.chinese(k)}` } });
        }
        return cards.tile(k, {});
      }));
  } else {
    hand = h("div", { class: "tiles hand concealed", dataset: { seat: String(s), size: String(st.size) } },
      Array.from({ length: Math.min(st.size, 21) }, () => cards.tile(null, { size: "tiny" })),
      h("span", { class: "backs" }, ` ${st.size} 张`));
  }
  const melds = h("div", { class: "tiles melds" }, st.melds.map((m) =>
    h("span", { class: "meld", dataset: { kind: m.kind }, title: cards.label(m.kind) },
      h("span", { class: "mk" }, cards.name(m.kind) || m.kind),
      m.cards.map((k, i) => cards.tile(k, { size: "small",
        extra: m.hidden && i < m.hidden ? "facedown-seen" : "" })))));
  const discards = h("div", { class: "tiles discards" },
    st.discards.map((k) => cards.tile(k, { size: "small" })));
  return h("div", { class: `seat ${b.turn === s ? "turn" : ""} ${b.me === s ? "me" : ""}`, dataset: { seat: String(s) } },
    h("h3", {}, NAMES[s] ? [h("span", { class: "pname", dataset: { seat: String(s) } }, NAMES[s]), h("span", { class: "py" }, ` 座位 ${s} `)] : seatName(s), tags),
    h("div", { class: "part" }, h("span", { class: "lbl" }, "手牌"), hand),
    h("div", { class: "part" }, h("span", { class: "lbl" }, "牌组"), melds),
    h("div", { class: "part" }, h("span", { class: "lbl" }, "弃牌"), discards));
}

function boardEl(cards, b) {
  const order = [];
  for (let i = 0; i < b.n; i++) order.push(b.me === null || b.me === undefined ? i : (b.me + 1 + i) % b.n);
  const others = order.filter((s) => s !== b.me);
  const grid = h("div", { class: `board n${others.length === 2 || b.n === 2 ? 2 : 3}` },
    others.map((s) => seatPanel(cards, b, s)));
  if (b.me !== null && b.me !== undefined) grid.append(seatPanel(cards, b, b.me));
  return grid;
}

function infoBar(cards, b, extra = []) {
  const w = b.window;
  return h("div", { class: "bar" },
    h("span", {}, "余牌 ", h("span", { class: "big", id: "stock" }, String(b.stock)), py(" stock")),
    h("span", {}, "轮到 ", h("span", { class: "big", id: "turn" }, b.turn === null || b.turn === undefined ? "—" : seatName(b.turn))),
    w ? h("span", { id: "window" }, "在打 ", cards.tile(w[0], { size: "small" }),
      ` ${seatName(w[1])} · ${{ discard: "打出", draw: "摸出" }[w[2]] || cards.name(w[2]) || w[2]}`) : null,
    extra);
}

function settlementEl(cards, result, n, totals, title = "结算 settlement") {
  const rows = result.payments.map((p) => h("tr", { class: "payment",
      dataset: { payer: String(p.payer), payee: String(p.payee), amount: String(p.amount), reason: p.reason || "" } },
    h("td", {}, `${seatName(p.payer)} → ${seatName(p.payee)}`),
    h("td", { class: "num" }, String(p.amount)),
    h("td", {}, cards.label(p.reason || "")),
    h("td", { class: "why" }, p.why && p.why.length ? cards.why(p.why) : "")));
  const seats = Array.from({ length: n }, (_, i) => i);
  const sign = (x) => (x > 0 ? `+${x}` : String(x));
  const how = result.end === "hu"
    ? `胡 hu · 赢家 ${result.winners.map(seatName).join("、")}` +
      Object.entries(result.patterns || {}).map(([s, ps]) => ` · ${seatName(+s)}: ${ps.map((p) => cards.label(p)).join(" ")}`).join("") +
      (result.flipped && result.flipped.length ? " · 翻醒 " : "")
    : "荒庄 huangzhuang";
  return h("section", { class: "card settle", id: "settlement", dataset: { end: result.end } },
    h("h2", {}, title),
    h("p", {}, how, result.flipped && result.flipped.length ? cards.tiles(result.flipped, { size: "tiny" }) : null,
      Object.keys(result.xing || {}).length ? ` 醒 xing ${Object.entries(result.xing).map(([s, x]) => `${seatName(+s)} ${x}`).join(", ")}` : ""),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "谁付给谁 payer → payee"), h("th", { class: "num" }, "子"),
        h("th", {}, "原因 reason"), h("th", {}, "明细 why"))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: 4 }, "无支付 no payments")))),
    h("table", { class: "nets" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), seats.map((s) => h("th", { class: "num" }, seatName(s))))),
      h("tbody", {},
        h("tr", { class: "net" }, h("td", {}, "本手 net"), seats.map((s) =>
          h("td", { class: `num ${result.net[s] > 0 ? "pos" : result.net[s] < 0 ? "neg" : ""}`, dataset: { netSeat: String(s) } }, sign(result.net[s])))),
        totals ? h("tr", { class: "tot" }, h("td", {}, "累计 totals"), seats.map((s) =>
          h("td", { class: "num", dataset: { totalSeat: String(s) } }, sign(totals[s])))) : null)));
}

function eventText(cards, e, me) {
  const who = e.seat !== undefined ? (e.seat === me ? "你" : seatName(e.seat)) : "";
  switch (e.type) {
    case "dealt": return `发牌，庄 ${seatName(e.dealer)}` + (e.shown && e.shown.length ? `，亮张 ${cards.text(e.shown)}` : "");
    case "drew": return `${who} 摸牌${e.card !== null ? " " + cards.chinese(e.card) : ""}${e.shown ? "（示众）" : ""}${e.tail ? "（杠后）" : ""}`;
    case "discarded": return `${who} 打出 ${cards.chinese(e.card)}`;
    case "melded": return `${who} ${cards.name(e.meld.kind) || e.meld.kind} ${cards.text(e.meld.cards)}`;
    case "paid": return "支付 " + e.payments.map((p) => `${seatName(p.payer)}→${seatName(p.payee)} ${p.amount}（${cards.label(p.reason || "")}）`).join("；");
    case "marked": return `${cards.label(e.what)}${e.seats && e.seats.length ? " " + e.seats.map(seatName).join("、") : ""}${e.card !== null && e.card !== undefined ? " " + cards.chinese(e.card) : ""}`;
    // A win with no winning card (桂林字牌 三笼五坎 on the deal …) is no 自摸,
    // though its how is "zimo" (each other seat pays): it reads 无胡牌.
    case "won": return `${who} 胡（${e.card !== null ? cards.label(e.how) + "）" + cards.chinese(e.card) : "无胡牌）"} ${e.patterns.map((p) => cards.name(p) || p).join(" ")}`;
    case "flipped": return `翻醒 ${cards.text(e.cards)}`;
    case "ended": return `本手结束：${e.end === "hu" ? "胡" : "荒庄"}，${e.net.join(" / ")}`;
    default: return `${e.type}`;
  }
}

function actionLabel(cards, a) {
  const name = cards.name(a.type) || a.type;
  return [name, " ", py(a.type)];
}

// ------------------------------------------------------------------ play and watch
class Seat {
  constructor(table, token) {
    this.table = table; this.token = token;
    rememberSeat(table, token);
    this.welcome = null; this.cards = null; this.decide = null; this.log = [];
    this.error = null; this.ended = null; this.choosing = false; this.resyncing = false;
    this.dirty = false; this.timer = null; this.closed = false;
    this.connect();
    this.tick = setInterval(() => this.countdown(), 250);
  }
  connect() {
    this.seatConns = 1;  // a new connection: the count it is told after its welcome
    const proto = location.protocol === "https:" ? "wss" : "ws";
    this.ws = new WebSocket(`${proto}://${location.host}/tables/${encodeURIComponent(this.table)}/ws?token=${encodeURIComponent(this.token)}`);
    setStatus("连接中 connecting…");
    let opened = false;
    this.ws.onopen = () => { opened = true; setStatus("已连接 connected"); };
    // one message at a time, in order (a welcome may wait for the card table)
    this.chain = Promise.resolve();
    this.ws.onmessage = (m) => {
      const frame = JSON.parse(m.data);  // one message, or a batch of them in order (protocol: Frames)
      for (const msg of frame.type === "batch" ? frame.messages : [frame]) {
        this.chain = this.chain.then(() => this.onMessage(msg));
      }
    };
    this.ws.onclose = (ev) => {
      // refused before it opened (the server full, or not reachable): a browser
      // is not shown why, so say what it may be
      setStatus(opened ? `连接已断开 disconnected (${ev.code})`
        : "无法连接 cannot connect (the server may be full or unreachable): retrying…");
      // a token refused (4401: bad or expired; 4403: another table's, seat's or
      // player's) or no such table (4404) is final: its error says why, and
      // trying again would be refused again, every 1.5 s for as long as the tab is open
      if (!this.closed && ![4401, 4403, 4404].includes(ev.code) && !this.stopped) setTimeout(() => this.connect(), 1500);
    };
  }
  stop() { this.stopped = true; clearInterval(this.tick); try { this.ws.close(); } catch (e) { /* closed */ } }
  send(obj) { this.ws.send(JSON.stringify(obj)); }
  async onMessage(m) {
    if (this.stopped) return;
    switch (m.type) {
      case "welcome":
        this.cards = await variantInfo(m.spec);
        NAMES = m.names || {};
        if (!this.welcome || this.welcome.hand !== m.hand) this.log = m.view.events.map((e) => eventText(this.cards, e, m.seat));
        this.welcome = m; this.resyncing = false; NAMES = m.names || {};
        if (this.decide && (this.decide.hand !== m.hand)) this.decide = null;
        if (this.dirty) { this.dirty = false; this.requestResync(); }
        break;
      case "events":
        if (!this.welcome || m.hand !== this.welcome.hand) return;
        for (const e of m.events) this.log.push(eventText(this.cards, e, this.welcome.seat));
        // the board is drawn from the seat's full view: ask for it again (the
        // deltas feed the log; the page never infers the rules' state changes)
        this.requestResync();
        break;
      case "decide":
        // a resync offers the open decision again: one already answered stays answered
        if (this.sent && this.sent.hand === m.hand && this.sent.seq === m.seq) return;
        this.decide = { ...m, got: performance.now() };
        this.choosing = false;
        if (m.legal.length === 1 && m.legal[0].type === "pass") {
          // Nothing to claim: answered by itself, but after a pause like a
          // player's (autoPassMs), never at once — how soon a claim window
          // closes would tell the other seats that this seat had no claim.
          const d = this.decide, pass = m.legal[0];
          d.legal = []; d.auto = true;  // shown as waiting meanwhile
          setTimeout(() => { if (this.decide === d) { d.legal = [pass]; this.act(pass); } },
                     autoPassMs(d));
        }
        break;
      case "seat_conns":  // connections open on this seat: more than this tab's may be someone else's
        this.seatConns = m.count;
        break;
      case "ack":
        if (this.decide && this.decide.seq === m.seq) this.decide = null;
        this.error = null;
        break;
      case "hand_ended":
        this.ended = m;
        this.decide = null;
        break;
      case "closed":
        this.closed = true; this.decide = null;
        this.error = { code: "closed", message: `桌已关闭 the table is closed · 累计 ${m.totals.join(" / ")}` };
        break;
      case "error":
        this.error = m;
        if (m.code === "StaleSeq" || m.code === "NotYourTurn") this.requestResync();
        break;
      default: break;
    }
    this.render();
  }
  requestResync() {
    if (this.resyncing) { this.dirty = true; return; }
    this.resyncing = true;
    this.send({ type: "resync" });
  }
  act(action) {
    if (!this.decide) return;
    this.send({ type: "act", hand: this.decide.hand, seq: this.decide.seq, action });
    this.sent = { hand: this.decide.hand, seq: this.decide.seq };
    this.decide = { ...this.decide, legal: [], sentAt: performance.now() };
    this.choosing = false;
    this.render();
  }
  countdown() {
    const el = document.getElementById("countdown");
    if (!el) return;
    if (!this.decide || !this.decide.legal.length) { el.textContent = ""; return; }
    const left = Math.max(0, Math.min(this.decide.timeout, this.decide.deadline - Date.now() / 1000));
    el.textContent = `倒计时 ${left.toFixed(0)} 秒`;
    el.classList.toggle("low", left < 8);
  }
  board() {
    const w = this.welcome, v = w.view;
    const seats = v.hand_sizes.map((size, s) => ({
      hand: s === w.seat ? v.hand : null, size,
      melds: v.melds[s], discards: v.discards[s] }));
    const b = { n: w.players, me: w.seat, dealer: v.dealer, turn: v.turn, stock: v.stock,
      window: v.window, seats, bots: w.bots, totals: w.totals };
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
      el.append(h("span", { class: "hint" }, this.decide && !this.decide.auto ? "已发送 sent…" : "等待 waiting…"));
      return el;
    }
    const groups = new Map();
    for (const a of legal) if (a.type !== "discard") { if (!groups.has(a.type)) groups.set(a.type, []); groups.get(a.type).push(a); }
    if (legal.some((a) => a.type === "discard")) el.append(h("span", { class: "hint" }, "点一张亮起的牌打出 click a lit tile to discard"));
    const order = ["hu", "zimo", "angang", "jiagang", "minggang", "peng", "chi", "pass"];
    const types = [...groups.keys()].sort((x, y) => order.indexOf(x) - order.indexOf(y));
    for (const t of types) {
      const as = groups.get(t);
      if (t === "chi") {
        if (as.length === 1) el.append(this.chiButton(as[0], "btn", `chi`));
        else el.append(h("button", { class: "btn", dataset: { action: "chi" }, onclick: () => { this.choosing = true; this.render(); } },
          actionLabel(cards, as[0]), ` (${as.length})…`));
      } else if (as.length > 1 || as[0].card !== undefined) {
        for (const a of as) el.append(h("button", { class: "btn", dataset: { action: t }, onclick: () => this.act(a) },
          actionLabel(cards, a), a.card !== undefined ? cards.tile(a.card, { size: "tiny" }) : null));
      } else {
        el.append(h("button", { class: `btn ${t === "pass" ? "secondary" : ""}`, dataset: { action: t }, onclick: () => this.act(as[0]) },
          actionLabel(cards, as[0])));
      }
    }
    if (this.choosing && groups.has("chi")) {
      el.append(h("div", { class: "choices", id: "chi-choices" }, h("span", { class: "hint" }, "吃哪一组 which run:"),
        groups.get("chi").map((a, i) => this.chiButton(a, "btn", "chi-choice", i))));
    }
    return el;
  }
  chiButton(a, cls, action, i) {
    const cards = this.cards;
    // zipai 下伙: the further groups laid with the 吃 are part of the one action
    const extra = (a.extra || []).map((g) => [h("span", { class: "xiahuo" }, "下伙 xiahuo"), cards.tiles(g, { size: "tiny" })]);
    return h("button", { class: cls, dataset: { action, choice: i === undefined ? "0" : String(i) }, onclick: () => this.act(a) },
      actionLabel(cards, a), cards.tiles(a.cards, { size: "tiny" }), extra);
  }
  render() {
    if (this.stopped) return;
    if (!this.welcome || !this.cards) {
      // refused before any welcome (an expired or wrong seat link, a closed table):
      // the server's words say why and what to do (ask the operator for a new link)
      if (this.error) {
        app.replaceChildren(h("div", { class: "notice error", id: "refusal" },
          `服务器拒绝 refused: ${this.error.code} — ${this.error.message}`), h("a", { href: "#" }, "回大厅 lobby"));
      }
      return;
    }
    const w = this.welcome, cards = this.cards;
    const { b, legal } = this.board();
    whereEl.textContent = `${cards.info.title} ${w.spec} · 桌 ${w.table} · 第 ${w.hand + 1} 手` +
      (w.seeded ? " · 种子发牌（演示）seeded" : "") + (w.seat === null ? " · 观战 watching" : ` · ${NAMES[w.seat] ? NAMES[w.seat] + " " : ""}座位 ${w.seat}`);
    const extra = [h("span", { class: "countdown", id: "countdown" })];
    const parts = [];
    if (this.ended) {
      const e = this.ended;
      parts.push(settlementEl(cards, e.result, w.players, e.totals, `第 ${e.hand + 1} 手结算 settlement of hand ${e.hand + 1}`));
      parts.push(h("button", { class: "btn secondary", id: "dismiss", onclick: () => { this.ended = null; this.render(); } }, "收起 hide · 继续下一手 next hand"));
    }
    if (this.seatConns > 1) parts.push(h("div", { class: "notice error", id: "seat-conns" },
      `本座位有 ${this.seatConns} 个连接 this seat has ${this.seatConns} connections open — ` +
      "若其他不是你开的，别人持有你的链接 if you did not open the others, someone else has your link"));
    if (this.error) parts.push(h("div", { class: "notice error", id: "refusal" }, `服务器拒绝 refused: ${this.error.code} — ${this.error.message}`));
    parts.push(infoBar(cards, b, extra));
    if (w.seat !== null) parts.push(this.actionsEl(legal));
    parts.push(boardEl(cards, b));
    parts.push(h("section", { class: "card" }, h("h2", {}, "记录 events"),
      h("ol", { class: "log", start: String(Math.max(1, this.log.length - 59)) }, this.log.slice(-60).map((t) => h("li", {}, t)))));
    app.replaceChildren(...parts);
    const log = app.querySelector(".log"); if (log) log.scrollTop = log.scrollHeight;
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
    setStatus("回放 replay · ← → 键 keys");
    variantInfo(data.spec).then((c) => { this.cards = c; this.render(); });
  }
  stop() { document.removeEventListener("keydown", this.keys); }
  go(i) { this.i = Math.max(0, Math.min(this.data.steps.length - 1, i)); this.render(); }
  render() {
    const d = this.data, cards = this.cards, step = d.steps[this.i], last = d.steps.length - 1;
    whereEl.textContent = `回放 replay · ${cards.info.title} ${d.spec}` + (d.table ? ` · 桌 ${d.table} 第 ${d.hand + 1} 手` : " · 文件 file");
    const b = { n: d.players, me: null, dealer: d.dealer, turn: step.turn, stock: step.stock, window: step.window,
      seats: step.seats.map((s) => ({ hand: s.hand, size: s.hand.length, melds: s.melds, discards: s.discards })) };
    const controls = h("div", { class: "steps" },
      h("button", { class: "btn secondary", id: "first", onclick: () => this.go(0) }, "|◀ 开始 start"),
      h("button", { class: "btn", id: "prev", disabled: this.i === 0, onclick: () => this.go(this.i - 1) }, "◀ 上一步 back"),
      h("button", { class: "btn", id: "next", disabled: this.i === last, onclick: () => this.go(this.i + 1) }, "下一步 forward ▶"),
      h("button", { class: "btn secondary", id: "last", onclick: () => this.go(last) }, "最后 end ▶|"),
      h("input", { type: "range", min: "0", max: String(last), value: String(this.i), "aria-label": "step",
        oninput: (ev) => this.go(+ev.target.value) }),
      h("span", { id: "stepno", dataset: { step: String(this.i), actions: String(step.first_action + step.actions.length) } },
        `步 ${this.i} / ${last}`));
    const info = h("div", { class: "stepinfo", id: "stepinfo" },
      this.i === 0 ? "发牌 the deal" : null,
      h("ul", { class: "log" }, step.events.map((e) => h("li", {}, eventText(cards, e, null)))));
    const parts = [controls, info, infoBar(cards, b), boardEl(cards, b)];
    if (this.i === last) parts.push(settlementEl(cards, d.result, d.players, null));
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
      [h("a", { href: link(id, tok), dataset: { seat: s } }, `入座 ${s}`), " "]),
      h("a", { href: link(id, entry.spectator) }, "观战"));
  }
  return h("div", { class: "links" },
    Object.entries(entry.seats).map(([s, tok]) => h("div", { class: "row" },
      h("a", { href: link(id, tok), class: "seat-link", dataset: { seat: s } }, `入座 ${seatName(+s)} play`),
      h("input", { type: "text", readonly: true, value: link(id, tok), onfocus: (ev) => ev.target.select() }))),
    h("div", { class: "row" },
      h("a", { href: link(id, entry.spectator), class: "spectator-link" }, "观战 watch"),
      h("input", { type: "text", readonly: true, value: link(id, entry.spectator), onfocus: (ev) => ev.target.select() })));
}

async function lobby() {
  whereEl.textContent = "大厅 lobby";
  setStatus("");
  const variants = await getJSON("/variants");
  const form = h("section", { class: "card", id: "create" }, h("h2", {}, "开桌 new table"));
  const sel = h("select", { id: "variant" }, variants.map((v) => h("option", { value: v.name, selected: v.name === "guilin-mahjong" }, `${v.title} ${v.name}`)));
  const opts = h("input", { type: "text", id: "options", placeholder: "选项 options, e.g. hubao=false", size: "28" });
  const botsBox = h("span", { id: "bots" });
  const result = h("div", { id: "created" });
  const fillBots = () => {
    const v = variants.find((x) => x.name === sel.value);
    botsBox.replaceChildren("机器人 bots: ", ...Array.from({ length: v.players }, (_, s) =>
      h("label", {}, h("input", { type: "checkbox", value: String(s), checked: s !== 0, dataset: { seat: String(s) } }), ` ${s} `)));
    opts.title = Object.entries(v.options).map(([k, x]) => `${k}=${JSON.stringify(x)}`).join(", ");
  };
  sel.addEventListener("change", fillBots); fillBots();
  const create = async () => {
    const o = opts.value.trim();
    const spec = o ? `${sel.value}(${o.replace(/^\(|\)$/g, "")})` : sel.value;
    const bots = [...botsBox.querySelectorAll("input:checked")].map((x) => +x.value);
    try {
      const c = await getJSON("/tables", { method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ variant: spec, bots }) });
      save(c, spec);
      result.replaceChildren(h("p", {}, `桌 ${c.id} 已开 created · ${spec}`), linksEl(c.id, saved()[c.id]));
      refresh();
    } catch (e) {
      result.replaceChildren(h("div", { class: "notice error", id: "refusal" }, `服务器拒绝 refused: ${e.message}`));
    }
  };
  form.append(h("div", { class: "row" }, sel, opts, botsBox,
    h("button", { class: "btn", id: "create-table", onclick: create }, "开桌 create")), result);

  const tablesEl = h("section", { class: "card", id: "tables" }, h("h2", {}, "开放的桌 open tables"));
  const recordsEl = h("section", { class: "card", id: "records" }, h("h2", {}, "已完成的手 finished hands"));
  const drop = h("div", { class: "drop", id: "drop" }, "把记录 JSON 文件拖到这里回放 drop a record file here to replay · ",
    h("input", { type: "file", id: "record-file", accept: ".json,application/json", onchange: (ev) => ev.target.files[0] && replayFile(ev.target.files[0]) }));
  drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (ev) => { ev.preventDefault(); drop.classList.remove("over"); if (ev.dataTransfer.files[0]) replayFile(ev.dataTransfer.files[0]); });
  app.replaceChildren(form, tablesEl, recordsEl, h("section", { class: "card" }, h("h2", {}, "回放文件 replay a file"), drop));

  async function refresh() {
    let tables = null, records = null;
    const [tl, rl] = await Promise.allSettled([getJSON("/tables"), getJSON("/records")]);
    for (const r of [tl, rl]) if (r.status === "rejected" && !needsKey(r.reason)) throw r.reason;
    if (tl.status === "fulfilled") tables = tl.value;
    if (rl.status === "fulfilled") records = rl.value;
    const keyed = records === null;
    if (keyed) {
      // a server with operator keys: no list without a key (the tables, with
      // --lobby); the finished hands of the tables this tab played at, read with
      // their seat tokens
      records = [];
      form.replaceChildren(h("h2", {}, "开桌 new table"), h("div", { class: "notice", id: "ask-operator" },
        "这个服务器由运营者开桌：请向运营者要一个入座链接 tables here are made by the operator: ask the operator for a seat link"));
      for (const id of Object.keys(seatTokens())) {
        try {
          const got = await getJSON(`/tables/${encodeURIComponent(id)}/records`, asSeat(id));
          for (const x of got.hands) records.push({ table: id, hand: x.hand, spec: x.record.spec || "", net: (x.record.result && x.record.result.net) || [] });
        } catch (err) { /* closed here, or refused: not listed */ }
      }
    }
    if (tables === null) {
      tablesEl.replaceChildren(h("h2", {}, "开放的桌 open tables"), h("div", { class: "notice", id: "keyed" },
        "列桌需要运营者密钥 listing the tables needs the operator's key"));
    }
    const mine = saved();
    if (tables !== null) tablesEl.replaceChildren(h("h2", {}, "开放的桌 open tables"), tables.length ? h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "桌 table"), h("th", {}, "规则 rules"), h("th", {}, "玩家 players"), h("th", {}, "手 hand"), h("th", {}, "累计 totals"), h("th", {}, ""))),
      h("tbody", {}, tables.map((t) => h("tr", {},
        h("td", {}, t.id), h("td", {}, t.spec),
        h("td", { class: "names" }, Object.entries(t.names || {}).map(([s, n]) => `${s}: ${n}`).join("、") || "—"),
        h("td", { class: "num" }, String(t.hand + 1)),
        h("td", {}, t.totals.join(" / ")),
        h("td", {}, mine[t.id] ? linksEl(t.id, mine[t.id], true) : h("span", { class: "py" }, "（链接在开桌的浏览器 links are with whoever opened it）")))))) : h("p", {}, "没有 none"));
    recordsEl.replaceChildren(h("h2", {}, "已完成的手 finished hands"), records.length ? h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "桌 table"), h("th", {}, "手 hand"), h("th", {}, "规则 rules"), h("th", {}, "输赢 net"), h("th", {}, ""))),
      h("tbody", {}, records.map((r) => h("tr", {},
        h("td", {}, r.table), h("td", { class: "num" }, String(r.hand + 1)), h("td", {}, r.spec), h("td", {}, r.net.join(" / ")),
        h("td", {}, h("a", { href: `#replay/${r.table}/${r.hand}`, class: "replay-link", dataset: { table: r.table, hand: String(r.hand) } }, "回放 replay")))))) : h("p", {}, "没有 none"));
  }
  await refresh();
}

async function replayFile(file) {
  try {
    const data = await getJSON("/replay", { method: "POST", headers: { "content-type": "application/json" }, body: await file.text() });
    location.hash = "#replay-file";
    start(() => new Replay(data));
  } catch (e) {
    app.prepend(h("div", { class: "notice error", id: "refusal" }, `回放失败 cannot replay: ${e.message}`));
  }
}

// ------------------------------------------------------------------ routing (the token stays in the fragment: never sent over HTTP)
let current = null;
function start(make) { if (current && current.stop) current.stop(); NAMES = {}; current = make(); }
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
    app.replaceChildren(h("div", { class: "notice error", id: "refusal" }, `出错 error: ${e.message}`), h("a", { href: "#" }, "回大厅 lobby"));
  }
}
window.addEventListener("hashchange", route);
route();
