"""The page's drawn tiles and cards (``qipai/server/static/tiles.js``), in a
real headless Chromium as test_page: on a served table (seat 0 the page's,
bots at the others) every visible tile has a drawn SVG face and an
``aria-label`` naming the card (face-down ones: 暗牌); the 字牌 red cards
(二七十 / 贰柒拾) are printed red and no other; a dealt 14-tile hand fits a
390 px phone in one row; the faces' characters are in qipai's own font
(static/fonts/), loaded by the page, and every face of the variant draws only
characters it holds; and the page's first load, every resource it fetches
from qipai gzip'd (the vocabulary and the font included), is at most 150 KB.
Screenshots at 1280×800 and 390×844 go to ``test-artifacts/<run>/tiles-*.png``; copies of some are in
docs/howto/img/."""

from __future__ import annotations

import gzip
import time
from urllib.parse import urldefrag, urlsplit

import httpx
import pytest

from hostkit import PATIENCE
from qipai.server.routes import STATIC
from test_page import artifacts, driver, served, wait  # noqa: F401 - the browser fixtures

pytestmark = pytest.mark.slow

RED = "rgb(196, 38, 29)"
ZP_RED = {"x2", "x7", "x10", "d2", "d7", "d10"}
FIRST_LOAD_LIMIT = 150 * 1024
FACES_FONT = "/static/fonts/NotoSansCJKsc-Bold-faces.woff2"
FACES_CHARS = (STATIC / "fonts" / "faces.txt").read_text(encoding="utf-8").strip()

# the faces' font (page.css @font-face "qipai faces") loaded: Chromium fetches a web font
# only when text drawn needs it
FONT_LOADED = """
return [...document.fonts].some((f) => f.family.replace(/["']/g, '') === 'qipai faces'
                                       && f.status === 'loaded');
"""
# the characters of every face of the variant's kinds, as tiles.js draws them
FACE_CHARS = """
const [family, notations, done] = arguments;
import('/static/tiles.js').then((m) => {
  const chars = new Set();
  for (const n of notations)
    for (const t of m.face(family, n).querySelectorAll('text')) for (const c of t.textContent) chars.add(c);
  done([...chars].join(''));
}, (e) => done({error: String(e)}));
"""

# every tile the page shows (not hidden by the layout), read in one call
READ_TILES = """
const out = [];
for (const t of document.querySelectorAll('.tile')) {
  if (!t.getClientRects().length) continue;
  const svg = t.querySelector(':scope > svg.face');
  const r = svg ? svg.getBoundingClientRect() : null;
  const b = t.getBoundingClientRect();
  out.push({kind: t.dataset.kind === undefined ? null : +t.dataset.kind,
            back: t.classList.contains('back'), tag: t.tagName.toLowerCase(),
            role: t.getAttribute('role'), label: t.getAttribute('aria-label'),
            mine: !!t.closest('.seat.me .hand'), top: Math.round(b.top), width: b.width,
            svg: !!svg, w: r ? r.width : 0, h: r ? r.height : 0,
            shapes: svg ? svg.querySelectorAll('circle,rect,path,line,ellipse,text').length : 0,
            fills: svg ? [...svg.querySelectorAll('text')].map((x) => getComputedStyle(x).fill) : []});
}
return out;
"""


def spoken(family: str, kind: dict) -> str:
    """The name the page gives a card (tiles.js ``label``)."""
    if family != "zipai":
        return kind["chinese"]
    case = "大" if kind["notation"].startswith("d") else "小"
    return f"{case}{kind['chinese']}{'（红）' if kind['notation'] in ZP_RED else ''}"


def check_tiles(driver, family: str, kinds: list[dict]) -> list[dict]:
    """Every visible tile drawn and named; the 字牌 red cards red."""
    tiles = driver.execute_script(READ_TILES)
    assert tiles, "no tile shown"
    for t in tiles:
        if t["back"]:
            assert t["label"] == "暗牌" and t["kind"] is None, t
            assert not t["svg"], f"a face-down tile shows a face: {t}"
        else:
            kind = kinds[t["kind"]]
            assert t["svg"] and t["shapes"] > 0 and t["w"] > 10 and t["h"] > 10, \
                f"{kind['chinese']} has no drawn face: {t}"
            if t["tag"] == "button":   # the hand's discard buttons: "打 三万"
                assert t["role"] is None and kind["chinese"] in t["label"], t
            else:
                assert t["role"] == "img" and t["label"] == spoken(family, kind), (t, kind)
            if family == "zipai":
                red = kind["notation"] in ZP_RED
                assert t["fills"] and all((f == RED) == red for f in t["fills"]), \
                    f"{kind['chinese']} is {'not ' if red else ''}red: {t['fills']}"
        if t["role"] == "img" and t["back"]:
            assert t["tag"] == "span"
    return tiles


def first_load(driver, base: str) -> tuple[int, int, list[str]]:
    """(gzip'd bytes, raw bytes, the URLs) of everything the page fetched
    since it was loaded: the document, its CSS and modules, the JSON it asked
    for, the faces' font too; every one from qipai's own address (no CDN)."""
    urls = driver.execute_script(
        "return [performance.getEntriesByType('navigation')[0].name,"
        " ...performance.getEntriesByType('resource').map((e) => e.name)];")
    urls = list(dict.fromkeys(urldefrag(u).url for u in urls))
    origin = urlsplit(base).netloc
    foreign = [u for u in urls if urlsplit(u).netloc != origin]
    assert not foreign, f"the page loads from elsewhere: {foreign}"
    packed = raw = 0
    with httpx.Client(timeout=PATIENCE) as http:
        for u in urls:
            r = http.get(u)
            assert r.status_code == 200, (u, r.status_code)
            raw += len(r.content)
            packed += len(gzip.compress(r.content, compresslevel=6))
    return packed, raw, urls


def drawn_with(driver, selector: str) -> list[dict]:
    """The fonts Chromium drew the first ``selector`` element's text with
    (DevTools ``CSS.getPlatformFontsForNode``: family, glyphs, and whether it
    is a web font — ``isCustomFont`` — or the system's)."""
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    assert node, f"nothing matches {selector}"
    return driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]


def click_a_few(driver, times: int) -> None:
    """Play seat 0 a little (discard a lit tile, pass or claim what is
    offered) so that rivers and melds show."""
    from selenium.common.exceptions import StaleElementReferenceException

    done, end = 0, time.monotonic() + PATIENCE
    while done < times and time.monotonic() < end:
        try:
            if driver.find_elements("id", "settlement"):
                return
            buttons = {b.get_attribute("data-action"): b
                       for b in driver.find_elements("css selector", "#actions button.btn")}
            lit = driver.find_elements("css selector", ".seat.me .hand button.tile.can")
            choice = next((a for a in ("peng", "pass") if a in buttons), None)
            if choice:
                buttons[choice].click()
            elif lit:
                lit[len(lit) // 2].click()
                done += 1
            else:
                time.sleep(0.05)
                continue
            time.sleep(0.3)
        except StaleElementReferenceException:
            continue


@pytest.mark.parametrize("variant", ["guilin-mahjong", "guilin-zipai"])
def test_tiles_are_drawn_named_and_light(driver, served, artifacts, variant):  # noqa: F811
    with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
        info = http.get(f"/variants/{variant}").json()
    family, kinds = info["family"], info["cards"]["kinds"]
    t = served.create(variant, bots=list(range(1, info["players"])))
    driver.set_window_size(1280, 800)
    driver.get("about:blank")
    driver.get(f"{served.url}/#play/{t['id']}/{t['seats']['0']}")
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile"))
    wait(driver, lambda d: d.execute_script(FONT_LOADED))
    chars = driver.execute_async_script(FACE_CHARS, family, [k["notation"] for k in kinds])
    assert isinstance(chars, str) and chars, chars
    missing = set(chars) - set(FACES_CHARS)
    assert not missing, f"the faces draw {''.join(sorted(missing))}, not in the faces' font"
    used = drawn_with(driver, ".seat.me .hand .tile svg.face text")
    assert used and all(f["isCustomFont"] for f in used), \
        f"a face's character is drawn in a system font, not the served one: {used}"

    packed, raw, urls = first_load(driver, served.url)
    print(f"{variant}: first load {packed} bytes gzip'd ({raw} raw) over {len(urls)} requests")
    assert any(u.endswith("/static/tiles.js") for u in urls), urls
    assert any(u.endswith(FACES_FONT) for u in urls), f"the faces' font not loaded: {urls}"
    # the words are counted too: the page's vocabulary and the variant's names
    assert any("/vocabulary?lang=" in u for u in urls) and any("/variants/" in u for u in urls), urls
    assert packed <= FIRST_LOAD_LIMIT, f"first load {packed} bytes gzip'd: {urls}"

    # the deal: seat 0 deals, so its hand is 14 (mahjong) / 21 (zipai) and its turn
    name = "mahjong" if family == "mahjong" else "zipai"
    mine = [x for x in check_tiles(driver, family, kinds) if x["mine"]]
    assert len({x["top"] for x in mine}) == 1, "the hand is one row at 1280 px"
    assert min(x["width"] for x in mine) >= 36
    driver.save_screenshot(str(artifacts / f"tiles-{name}-deal-1280.png"))
    driver.set_window_size(390, 844)
    try:
        wait(driver, lambda d: d.execute_script("return window.innerWidth") <= 390)
        wide = driver.execute_script("return document.documentElement.scrollWidth")
        assert wide <= driver.execute_script("return window.innerWidth"), f"{wide}px wide"
        mine = [x for x in check_tiles(driver, family, kinds) if x["mine"]]
        rows = len({x["top"] for x in mine})
        if family == "mahjong":
            assert len(mine) == 14 and rows == 1, f"14 tiles in {rows} rows on a phone"
        else:
            assert rows <= 2, f"the 字牌 hand in {rows} rows on a phone"
        assert min(x["width"] for x in mine) >= 19, "too small to read on a phone"
        driver.save_screenshot(str(artifacts / f"tiles-{name}-deal-390.png"))
    finally:
        driver.set_window_size(1280, 800)

    click_a_few(driver, 5)
    tiles = check_tiles(driver, family, kinds)
    if family == "zipai":
        assert any(x["kind"] is not None and kinds[x["kind"]]["notation"] in ZP_RED for x in tiles), \
            "no red card shown"
    driver.save_screenshot(str(artifacts / f"tiles-{name}-1280.png"))
    driver.set_window_size(390, 844)
    try:
        wait(driver, lambda d: d.execute_script("return window.innerWidth") <= 390)
        check_tiles(driver, family, kinds)
        driver.save_screenshot(str(artifacts / f"tiles-{name}-390.png"))
    finally:
        driver.set_window_size(1280, 800)
