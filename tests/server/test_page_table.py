"""The page's square table, its end of a hand and its one language at a time,
in a real headless Chromium (as test_page) at phone and desktop sizes.

A human (seat 0, the page's) plays a whole hand of guilin-mahjong and of
guilin-zipai at 360×740, 390×844 and 1280×800, clicking only what the page
offers; the settlement is then checked as the player sees it: every seat's
net and total and every payment's why on screen (laid out, inside the
viewport's width: not merely in the DOM), matching the server's record.
On a server with rooms (``qipai.host.protocol.ReadyStep``) 摊牌 is asserted
too.  The language switch: English shows no Chinese outside the cards'
faces, Chinese no English words.  Screenshots go to
``test-artifacts/<run>/table-*.png``; copies of some are in docs/howto/img/.
"""

# ruff: noqa: F811 - the browser fixtures are test_page's, imported by name
from __future__ import annotations

import re
import time

import httpx
import pytest
from hostkit import PATIENCE
from test_page import artifacts, driver, served, wait  # noqa: F401 - the browser fixtures

pytestmark = pytest.mark.slow

SIZES = [(360, 740), (390, 844), (1280, 800)]
PLAYERS = {"guilin-mahjong": 4, "guilin-zipai": 3}
#: what the page's player clicks, first present first: a win, a claim, a pass
PREFER = ("hu", "zimo", "angang", "jiagang", "minggang", "peng", "chi", "pass")

# every element of the settlement and the 摊牌 that must be seen, with its box
READ_SHOWN = """
const box = (el) => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return {w: r.width, h: r.height, left: r.left, right: r.right,
          shown: el.getClientRects().length > 0 && s.visibility === 'visible' && s.display !== 'none',
          text: el.textContent}; };
const s = document.getElementById('settlement');
if (!s) return null;
const sd = document.getElementById('showdown');
return {
  net: [...s.querySelectorAll('[data-net-seat]')].map((c) => ({seat: +c.dataset.netSeat, ...box(c)})),
  totals: [...s.querySelectorAll('[data-total-seat]')].map((c) => ({seat: +c.dataset.totalSeat, ...box(c)})),
  payments: [...s.querySelectorAll('.payment')].map((p) => ({
    key: [+p.dataset.payer, +p.dataset.payee, +p.dataset.amount, p.dataset.reason],
    line: box(p.querySelector('.pline')),
    why: p.querySelector('.why') ? box(p.querySelector('.why')) : null})),
  showdown: sd ? [...sd.querySelectorAll('.shown')].map((x) => ({seat: +x.dataset.seat,
    winner: x.classList.contains('winner'), tiles: x.querySelectorAll('.tile').length,
    hand: [...x.querySelector('.tiles').querySelectorAll('.tile')].map((t) => +t.dataset.kind),
    wincard: !!x.querySelector('.wincard'), ...box(x)})) : null,
  width: window.innerWidth};
"""

# the words the page shows, outside the cards' faces (a card is a drawing)
READ_WORDS = """
const out = [];
const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n = walk.nextNode(); n; n = walk.nextNode()) {
  const el = n.parentElement;
  if (!el || el.closest('.tile, noscript, #lang, script, style')) continue;
  if (!el.getClientRects().length) continue;
  const text = n.textContent.trim();
  if (text) out.push(text);
}
return out;
"""
HAN = re.compile(r"[\u3400-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def rooms_served() -> bool:
    """The server of this checkout has rooms (ready steps, 摊牌, tallies)."""
    from qipai.host import protocol

    return hasattr(protocol, "ReadyStep")


def sized(driver, size: tuple[int, int]) -> None:
    driver.set_window_size(*size)
    wait(driver, lambda d: d.execute_script("return window.innerWidth") <= size[0])


def set_language(driver, served, lang: str) -> None:
    driver.get("about:blank")
    driver.get(served.url + "/#")
    driver.execute_script(f"localStorage.setItem('qipai-lang', '{lang}')")


def open_seat(driver, served, variant: str, lang: str = "zh") -> dict:
    """A table of ``variant`` (seat 0 human, bots at the others) open at seat 0."""
    t = served.create(variant, bots=list(range(1, PLAYERS[variant])))
    set_language(driver, served, lang)
    driver.get("about:blank")
    driver.get(f"{served.url}/#play/{t['id']}/{t['seats']['0']}")
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile"))
    return t


def click_once(driver, state: dict) -> bool:
    """At most one click of what the page offers; False if there was nothing."""
    buttons = {b.get_attribute("data-action"): b
               for b in driver.find_elements("css selector", "#actions button.btn")}
    choice = next((a for a in PREFER if a in buttons), None)
    if choice is not None:
        if choice in ("chi", "peng", "minggang") and state["claims"] >= 2 and "pass" in buttons:
            choice = "pass"  # claim a few, then let go
        if choice != "pass":
            state["claims"] += 1
        buttons[choice].click()
        if choice == "chi" and driver.find_elements("id", "chi-choices"):
            # several runs: the page asks which (drawn at the click); take the first
            driver.find_element("css selector", "#chi-choices button").click()
        return True
    lit = driver.find_elements("css selector", ".seat.me .hand button.tile.can")
    if lit:
        lit[-1].click()
        return True
    return False


def play_to_the_end(driver, shots, name: str) -> None:
    """Play seat 0 until the settlement shows, a screenshot after a few clicks."""
    from selenium.common.exceptions import StaleElementReferenceException

    state = {"claims": 0, "clicks": 0}
    end = time.monotonic() + 20 * PATIENCE
    while not driver.find_elements("id", "settlement"):
        assert time.monotonic() < end, "the hand did not end"
        seq = driver.execute_script(
            "const a = document.getElementById('actions'); return a ? a.dataset.seq + '/' + a.dataset.open : null")
        try:
            clicked = click_once(driver, state)
        except StaleElementReferenceException:
            continue
        if not clicked:
            time.sleep(0.05)
            continue
        state["clicks"] += 1
        if state["clicks"] == 6:
            driver.save_screenshot(str(shots / f"table-{name}-in-play.png"))
        refusal = driver.find_elements("id", "refusal")
        assert not refusal, refusal[0].text
        wait(driver, lambda d, seq=seq: d.find_elements("id", "settlement") or d.execute_script(
            "const a = document.getElementById('actions'); return a.dataset.seq + '/' + a.dataset.open")
            != seq)


def assert_seen(box: dict, width: int, what: str) -> None:
    assert box["shown"] and box["w"] > 0 and box["h"] > 0, f"{what} is not shown: {box}"
    assert box["left"] >= 0 and box["right"] <= width + 0.5, f"{what} is off the screen: {box}"


def check_settlement(driver, served, table: str, n: int) -> dict:
    """The settlement as seen matches the record: every seat's net and total
    and every payment's why on screen."""
    got = wait(driver, lambda d: d.execute_script(READ_SHOWN))
    with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
        record = http.get(f"/tables/{table}/records").json()["hands"][0]["record"]
    result = record["result"]
    width = got["width"]
    assert [x["seat"] for x in got["net"]] == list(range(n))
    assert [int(x["text"]) for x in got["net"]] == list(result["net"])
    assert [int(x["text"]) for x in got["totals"]] == list(result["net"])  # the first hand
    for x in got["net"] + got["totals"]:
        assert_seen(x, width, f"seat {x['seat']}'s net/total")
    assert [p["key"] for p in got["payments"]] == [
        [p["payer"], p["payee"], p["amount"], p.get("reason", "")] for p in result["payments"]]
    for p, paid in zip(got["payments"], result["payments"]):
        assert_seen(p["line"], width, f"payment {p['key']}")
        if paid.get("why"):
            assert p["why"] is not None, f"payment {p['key']} has no why shown"
            assert_seen(p["why"], width, f"the why of payment {p['key']}")
            assert p["why"]["left"] >= p["line"]["left"], "the why is under its payment"
    if rooms_served():
        assert got["showdown"] is not None, "no 摊牌"
        assert sorted(x["seat"] for x in got["showdown"]) == list(range(n))
        for x in got["showdown"]:
            assert_seen(x, width, f"seat {x['seat']}'s shown hand")
        if result["end"] == "hu":
            assert {x["seat"] for x in got["showdown"] if x["winner"]} == set(result["winners"])
        # each hand as it ended, the winning card once: apart after the hand, not in it too
        # (a winner seemed to hold a card too many); one in a meld is named apart as well
        ended = final_hands(record)
        won = {w.seat: w.card for w in ended.wins if w.card is not None}
        for x in got["showdown"]:
            want = list(ended.hands[x["seat"]].hand)
            if x["seat"] in won and won[x["seat"]] not in want:
                want.append(won[x["seat"]])
            assert sorted(x["hand"]) == sorted(want), (x["seat"], x["hand"], want)
    return got


def final_hands(record: dict):
    """The 摊牌 of a stored hand: its record replayed by the library."""
    import json

    from qipai.core.records import decode_record, replay
    from qipai.host.room import showdown_of

    return showdown_of(replay(decode_record(json.dumps(record))))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("variant", ["guilin-mahjong", "guilin-zipai"])
def test_a_whole_hand_at_phone_and_desktop_sizes(driver, served, artifacts, variant, size):
    sized(driver, size)
    t = open_seat(driver, served, variant)
    name = f"{variant}-{size[0]}"
    # the square table: you at the bottom, the others placed by where they sit
    places = driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.seat')].map("
        "(s) => [s.dataset.seat, [...s.classList].find((c) => ['bottom','right','top','left'].includes(c))]))")
    expect = {"0": "bottom", "1": "right", "2": "top", "3": "left"} if PLAYERS[variant] == 4 \
        else {"0": "bottom", "1": "right", "2": "left"}
    assert places == expect
    wide = driver.execute_script("return document.documentElement.scrollWidth")
    assert wide <= size[0], f"the table is {wide}px wide on a {size[0]}px screen"
    play_to_the_end(driver, artifacts, name)
    driver.execute_script("window.scrollTo(0, 0)")
    check_settlement(driver, served, t["id"], PLAYERS[variant])
    driver.save_screenshot(str(artifacts / f"table-{name}-settlement.png"))
    wide = driver.execute_script("return document.documentElement.scrollWidth")
    assert wide <= size[0], f"the settlement is {wide}px wide on a {size[0]}px screen"


def words_of(driver) -> list[str]:
    table_ids = set(driver.execute_script(
        "return [...document.querySelectorAll('#tables td:first-child, #records td:first-child')]"
        ".map((x) => x.textContent)"))
    where = driver.find_element("id", "where").text
    ids = table_ids | set(re.findall(r"\b[0-9a-f]{12}\b", where))
    out = []
    for text in driver.execute_script(READ_WORDS):
        for i in ids:
            text = text.replace(i, "")
        out.append(text)
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_language_at_a_time(driver, served, artifacts, lang):
    """English: no Chinese outside the cards' faces (lobby, table, settlement);
    Chinese: no English word beside the Chinese ones."""
    sized(driver, (390, 844))
    wrong = HAN if lang == "en" else LATIN_WORD
    # the words a reader may meet in Chinese too: the record format's name, the spec's
    allowed = {"JSON"}

    def bad(texts):
        return [x for x in texts if wrong.search(x) and not set(wrong.findall(x)) <= allowed]

    set_language(driver, served, lang)
    driver.get("about:blank")
    driver.get(served.url + "/#")
    wait(driver, lambda d: d.find_elements("id", "create-table"))
    assert driver.find_element("id", "lang").text == ("中文" if lang == "en" else "English")
    assert not bad(words_of(driver)), bad(words_of(driver))
    driver.save_screenshot(str(artifacts / f"table-lobby-{lang}.png"))
    t = open_seat(driver, served, "guilin-zipai", lang)
    assert not bad(words_of(driver)), bad(words_of(driver))
    play_to_the_end(driver, artifacts, f"lang-{lang}")
    check_settlement(driver, served, t["id"], 3)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(artifacts / f"table-settlement-{lang}.png"))
    assert not bad(words_of(driver)), bad(words_of(driver))


def test_the_switch_is_remembered(driver, served):
    sized(driver, (1280, 800))
    set_language(driver, served, "zh")
    driver.get("about:blank")
    driver.get(served.url + "/#")
    button = wait(driver, lambda d: d.find_elements("id", "lang"))[0]
    assert button.text == "English"
    button.click()
    wait(driver, lambda d: d.find_element("id", "lang").text == "中文")
    assert driver.execute_script("return document.documentElement.lang") == "en"
    assert driver.execute_script("return localStorage.getItem('qipai-lang')") == "en"
    driver.find_element("id", "lang").click()
    wait(driver, lambda d: d.find_element("id", "lang").text == "English")


def test_a_big_card_is_spoken_as_such(driver, served):
    """字牌 big cards are 大壹…大拾 in the hand buttons' names (it read 打 壹)."""
    sized(driver, (1280, 800))
    open_seat(driver, served, "guilin-zipai")
    labels = wait(driver, lambda d: [b.get_attribute("aria-label") for b in
                                     d.find_elements("css selector", ".seat.me .hand button.tile")])
    assert labels and all(re.fullmatch(r"打 [大小].+", x) for x in labels), labels
