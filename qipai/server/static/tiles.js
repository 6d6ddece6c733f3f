// qipai page: the faces of the cards, drawn here as inline SVG (no image files).
//
//   face(family, notation) -> a fresh <svg> element (cached per face, cloned per use)
//   label(family, notation, chinese) -> the card's name for aria-label ("三万", "大拾（红）")
//   isRed(family, notation) -> a 字牌 red card (二七十 / 贰柒拾)
//
// Mahjong (viewBox 60×80): 筒 as coloured circles, 条 as bamboo sticks (一条 the bird, 幺鸡),
// 万 as the numeral over a red 萬, the winds 東南西北 in dark ink, 中 red, 發 green, 白 an
// empty blue frame — the faces of a real set.  字牌 (viewBox 50×80): the paper card, its
// character at the top and again upside down at the bottom; 小写 一…十 in one frame, 大写
// 壹…拾 in a double frame; 二七十 / 贰柒拾 printed red (at the smallest sizes one larger
// character instead).
//
// Characters are <text> in "qipai faces", bold: a subset of Noto Sans CJK SC Bold (OFL)
// holding only the characters drawn here, served by qipai (static/fonts/, declared in
// page.css), so the faces read alike on every device; a character drawn here must be in
// static/fonts/faces.txt and the subset made again (fonts/README.md).  Until it loads, or if
// it fails, the reader's own CJK fonts.  The drawings are this file's own (qipai's MIT
// licence), no third-party art.

const FONT = `'qipai faces','Noto Sans CJK SC','Source Han Sans SC','PingFang SC',` +
  `'Microsoft YaHei','WenQuanYi Micro Hei',sans-serif`;
const INK = "#1a2238", RED = "#c4261d", GREEN = "#137a3c", BLUE = "#1f4fa3";
const NUM = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十"];
const HONOR = { E: ["東", INK], S: ["南", INK], W: ["西", INK], N: ["北", INK], C: ["中", RED], F: ["發", GREEN] };
// zipai: 二七十 / 贰柒拾 are the red cards (printed red on the paper cards)
const ZP_RED = new Set(["x2", "x7", "x10", "d2", "d7", "d10"]);
export const isRed = (family, notation) => family === "zipai" && ZP_RED.has(notation);

const f = (x) => +x.toFixed(2);
const txt = (x, y, size, fill, ch, extra = "") =>
  `<text x="${x}" y="${y}" font-size="${size}" fill="${fill}" dominant-baseline="central" ${extra}>${ch}</text>`;

// ---------------------------------------------------------------- 筒: circles
function coin(x, y, r, c) {
  return `<circle cx="${x}" cy="${y}" r="${f(r)}" fill="${c}"/>` +
    `<circle cx="${x}" cy="${y}" r="${f(r * .7)}" fill="#fffdf4"/>` +
    `<circle cx="${x}" cy="${y}" r="${f(r * .52)}" fill="none" stroke="${c}" stroke-width="${f(r * .14)}" ` +
    `stroke-dasharray="${f(r * .26)} ${f(r * .14)}"/>` +
    `<circle cx="${x}" cy="${y}" r="${f(r * .26)}" fill="${c}"/>`;
}
const B = BLUE, G = GREEN, R = RED;
const PIN = {
  2: [[30, 24, G], [30, 56, B]],
  3: [[15, 17, B], [30, 40, R], [45, 63, G]],
  4: [[17, 24, B], [43, 24, G], [17, 56, G], [43, 56, B]],
  5: [[16, 18, B], [44, 18, G], [30, 40, R], [16, 62, G], [44, 62, B]],
  6: [[17, 16, G], [43, 16, G], [17, 42, R], [43, 42, R], [17, 64, R], [43, 64, R]],
  7: [[12, 11, G], [30, 19, G], [48, 27, G], [17, 48, R], [43, 48, R], [17, 67, R], [43, 67, R]],
  8: [[17, 11, B], [43, 11, B], [17, 30, B], [43, 30, B], [17, 50, B], [43, 50, B], [17, 69, B], [43, 69, B]],
  9: [[13, 16, B], [30, 16, B], [47, 16, B], [13, 40, R], [30, 40, R], [47, 40, R], [13, 64, G], [30, 64, G], [47, 64, G]],
};
const PIN_R = { 2: 13, 3: 11.5, 4: 11.5, 5: 10, 6: 9.5, 7: 8.5, 8: 8.5, 9: 8 };
function pin(n) {
  if (n === 1) {
    // the big decorated circle
    return `<circle cx="30" cy="40" r="24" fill="${GREEN}"/><circle cx="30" cy="40" r="20.5" fill="#fffdf4"/>` +
      `<circle cx="30" cy="40" r="17" fill="none" stroke="${BLUE}" stroke-width="4" stroke-dasharray="3.2 2.1"/>` +
      `<circle cx="30" cy="40" r="12" fill="${RED}"/><circle cx="30" cy="40" r="8" fill="#fffdf4"/>` +
      `<circle cx="30" cy="40" r="6" fill="none" stroke="${GREEN}" stroke-width="2" stroke-dasharray="2 1.2"/>` +
      `<circle cx="30" cy="40" r="2.6" fill="${RED}"/>`;
  }
  return PIN[n].map(([x, y, c]) => coin(x, y, PIN_R[n], c)).join("");
}

// ---------------------------------------------------------------- 条: bamboo sticks
const DARK = { [GREEN]: "#0b5227", [RED]: "#861710", [BLUE]: "#153a7a" };
function stick(x, y, c, h = 20, a = 0) {
  const w = 7.6, t = y - h / 2, d = DARK[c];
  const rot = a ? ` transform="rotate(${a} ${x} ${y})"` : "";
  const node = (yy) => `<rect x="${f(x - w / 2 - .8)}" y="${f(yy - 1.2)}" width="${f(w + 1.6)}" height="2.4" rx="1.2" fill="${d}"/>`;
  return `<g${rot}><rect x="${f(x - w / 2)}" y="${f(t)}" width="${w}" height="${h}" rx="2.4" fill="${c}"/>` +
    `<rect x="${f(x - w / 2 + 1.4)}" y="${f(t + 1.5)}" width="1.7" height="${f(h - 3)}" rx=".85" fill="#fff" opacity=".5"/>` +
    `<rect x="${f(x + w / 2 - 2.2)}" y="${f(t + 1.5)}" width="1.2" height="${f(h - 3)}" rx=".6" fill="${d}" opacity=".6"/>` +
    node(t + .6) + node(y) + node(t + h - .6) + `</g>`;
}
const SOU = {
  2: [[30, 23, G, 28], [30, 57, G, 28]],
  3: [[30, 23, G, 28], [18, 57, G, 28], [42, 57, G, 28]],
  4: [[18, 23, G, 28], [42, 23, G, 28], [18, 57, G, 28], [42, 57, G, 28]],
  5: [[14, 23, G, 28], [46, 23, G, 28], [30, 40, R, 28], [14, 57, G, 28], [46, 57, G, 28]],
  6: [[14, 23, G, 28], [30, 23, G, 28], [46, 23, G, 28], [14, 57, R, 28], [30, 57, R, 28], [46, 57, R, 28]],
  7: [[30, 15, R, 20], [14, 40, G, 20], [30, 40, G, 20], [46, 40, G, 20], [14, 63, G, 20], [30, 63, G, 20], [46, 63, G, 20]],
  8: [[10, 23, G, 28], [23, 23, G, 28, 20], [37, 23, G, 28, -20], [50, 23, G, 28],
      [10, 57, G, 28], [23, 57, G, 28, -20], [37, 57, G, 28, 20], [50, 57, G, 28]],
  9: [[14, 16, G, 20], [30, 16, R, 20], [46, 16, G, 20], [14, 40, G, 20], [30, 40, R, 20], [46, 40, G, 20],
      [14, 64, G, 20], [30, 64, R, 20], [46, 64, G, 20]],
};
// 一条: the bird (幺鸡) on its bamboo
const BIRD =
  // the tail behind, three feathers with their eyes
  `<path d="M33 44 Q47 56 55 74 Q43 67 30 50 Z" fill="${GREEN}"/>` +
  `<path d="M31 48 Q37 62 38 78 Q30 67 27 52 Z" fill="${BLUE}"/>` +
  `<path d="M36 41 Q50 45 57 57 Q46 54 34 46 Z" fill="${GREEN}"/>` +
  `<circle cx="52" cy="70" r="2.6" fill="${RED}"/><circle cx="37" cy="74" r="2.4" fill="${RED}"/>` +
  `<circle cx="54.5" cy="55.5" r="2.2" fill="${RED}"/>` +
  // the perch, legs, body, breast, wing
  `<rect x="9" y="59" width="30" height="4.4" rx="2.2" fill="${GREEN}"/>` +
  `<rect x="21" y="58.2" width="2.4" height="6" rx="1" fill="${DARK[GREEN]}"/>` +
  `<path d="M23 51 L21 60 M29 51 L30 60" stroke="${RED}" stroke-width="1.8" stroke-linecap="round"/>` +
  `<ellipse cx="27" cy="42" rx="13.5" ry="10.5" fill="${GREEN}" transform="rotate(-22 27 42)"/>` +
  `<ellipse cx="19.5" cy="43" rx="5.5" ry="7.5" fill="${RED}" transform="rotate(10 19.5 43)"/>` +
  `<path d="M23 38 C29 30 41 31 43 37 C39 45 31 49 25 46 Z" fill="${BLUE}"/>` +
  `<path d="M27 41 C31 37 37 36 40 37 M28 44 C32 41 36 40 38 41" stroke="#fffdf4" stroke-width="1" fill="none"/>` +
  // neck, head, crest, beak, eye
  `<path d="M24 35 L18 22" stroke="${GREEN}" stroke-width="7.5" stroke-linecap="round"/>` +
  `<circle cx="17" cy="19" r="6.8" fill="${GREEN}"/>` +
  `<path d="M13.5 13.5 C11 8 14 4 18 5 C16.5 7.5 17.5 10 19.5 12.5 Z" fill="${RED}"/>` +
  `<path d="M11 17.5 L3.5 20.5 L11.2 22 Z" fill="#e39a2d"/>` +
  `<circle cx="15.5" cy="17.8" r="2" fill="#fffdf4"/><circle cx="15.2" cy="17.8" r="1" fill="${INK}"/>`;
function sou(n) {
  if (n === 1) return BIRD;
  return SOU[n].map(([x, y, c, hgt, a]) => stick(x, y, c, hgt, a)).join("");
}

// ---------------------------------------------------------------- the faces
function mahjongFace(n) {
  const suit = n.slice(-1), v = +n.slice(0, -1);
  if (suit === "m") {
    return txt(30, 25, 34, INK, NUM[v], `font-weight="bold"`) + txt(30, 61, 32, RED, "萬", `font-weight="bold"`);
  }
  if (suit === "p") return pin(v);
  if (suit === "s") return sou(v);
  if (n === "P") {
    return `<rect x="10" y="12" width="40" height="56" rx="3" fill="none" stroke="${BLUE}" stroke-width="3.2"/>` +
      `<rect x="15" y="17" width="30" height="46" rx="1.5" fill="none" stroke="${BLUE}" stroke-width="1.2"/>`;
  }
  const [ch, c] = HONOR[n] || [n, INK];
  return txt(30, 42, 40, c, ch, `font-weight="bold"`);
}

function zipaiFace(n) {
  const big = n[0] === "d", v = +n.slice(1);
  const ch = (big ? " 壹贰叁肆伍陆柒捌玖拾" : " 一二三四五六七八九十")[v];
  const c = ZP_RED.has(n) ? RED : INK;
  const frame = big
    ? `<rect x="3" y="3" width="44" height="74" rx="2.5" fill="none" stroke="${c}" stroke-width="1.6"/>` +
      `<rect x="5.6" y="5.6" width="38.8" height="68.8" rx="1.5" fill="none" stroke="${c}" stroke-width=".7"/>`
    : `<rect x="3.5" y="3.5" width="43" height="73" rx="2.5" fill="none" stroke="${c}" stroke-width="1"/>`;
  // .full: the character and its upside-down copy; .solo: one larger character, for the
  // smallest sizes (page.css chooses)
  return frame + `<g class="full">${txt(25, 27, 34, c, ch, `font-weight="bold"`)}` +
    `<g transform="rotate(180 25 60)">${txt(25, 60, 19, c, ch, `font-weight="bold" opacity=".85"`)}</g></g>` +
    `<g class="solo">${txt(25, 40, 40, c, ch, `font-weight="bold"`)}</g>`;
}

const cache = new Map();
export function face(family, notation) {
  const key = `${family}:${notation}`;
  let el = cache.get(key);
  if (!el) {
    const zp = family === "zipai";
    const body = zp ? zipaiFace(notation) : mahjongFace(notation);
    const t = document.createElement("template");
    t.innerHTML = `<svg xmlns="http://www.w3.org/2000/svg" class="face" viewBox="0 0 ${zp ? 50 : 60} 80" ` +
      `aria-hidden="true" focusable="false" font-family="${FONT}" text-anchor="middle">${body}</svg>`;
    el = t.content.firstChild;
    cache.set(key, el);
  }
  return el.cloneNode(true);
}

// what a screen reader says: the variant's own name ("三万", "东"); a 字牌 card with its
// case (一 and 壹 sound alike) and its colour: "小一", "大壹", "小二（红）", "大拾（红）"
export function label(family, notation, chinese) {
  if (family !== "zipai") return chinese;
  return `${notation[0] === "d" ? "大" : "小"}${chinese}${ZP_RED.has(notation) ? "（红）" : ""}`;
}
