"""Rooms on the page (issue 35): 摊牌 and 准备 at the end of a hand, the last
result shown to a player back between hands, a room of 4 hands ending in
its 大结算, the 解散房间 vote (passed and refused) and 托管 after two
timeouts, in a real headless Chromium (as test_page) at phone sizes.

The other human of a vote is a plain WebSocket client (hostkit.SyncSeat).
Skipped on a server without rooms (``qipai.host.protocol.ReadyStep``).
Screenshots go to ``test-artifacts/<run>/room-*.png``.
"""

# ruff: noqa: F811 - the browser fixtures are test_page's, imported by name
from __future__ import annotations

import httpx
import pytest
from hostkit import PATIENCE, SyncSeat, start_server
from test_page import artifacts, driver, wait  # noqa: F401 - the browser fixtures
from test_page_table import SIZES, check_settlement, play_to_the_end, rooms_served, sized

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not rooms_served(), reason="this server has no rooms yet")]


@pytest.fixture(scope="module")
def rooms(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rooms")
    s = start_server(f"sqlite:///{tmp / 'qipai.db'}", tmp, "--seed", "11",
                     "--turn-timeout", "900", "--ready-timeout", "900", "--vote-timeout", "900")
    try:
        yield s
    finally:
        s.stop()


def room(served, variant: str, hands: int, bots: list[int]) -> dict:
    with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
        r = http.post("/tables", json={"variant": variant, "bots": bots, "hands": hands})
    assert r.status_code == 201, r.text
    return r.json()


def open_link(driver, served, t: dict, seat: int = 0) -> None:
    driver.get("about:blank")
    driver.get(f"{served.url}/#play/{t['id']}/{t['seats'][str(seat)]}")
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile"))


def visible(driver, css: str) -> bool:
    return bool(driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return !!e && e.getClientRects().length > 0", css))


def nobody_to_play(driver, words: str) -> None:
    """The middle says ``words`` (the ready step, the hand over, the table
    closed) and no seat is framed as on turn, with no clock but the ready
    step's: nobody is to play (it said 轮到 the next dealer, a clock under it)."""
    wait(driver, lambda d: d.find_element("id", "turn").text == words)
    assert not driver.find_elements("css selector", ".seat.turn")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_end_of_a_hand_and_a_player_back_between_hands(driver, rooms, artifacts, size):
    """摊牌, the settlement and 继续 at the end of a hand; the page reloaded
    before 继续 shows the same result (welcome.last_result); 继续 deals on."""
    sized(driver, size)
    w = size[0]
    t = room(rooms, "guilin-zipai", 2, [1, 2])
    open_link(driver, rooms, t)
    assert "第 1/2 局" in driver.find_element("id", "where").text
    play_to_the_end(driver, artifacts, "room-zipai")
    check_settlement(driver, rooms, t["id"], 3)
    wait(driver, lambda d: visible(d, "#ready"))
    assert "第 1 局结算" in driver.find_element("id", "result").text   # a room's 局, as in the header
    nobody_to_play(driver, "等待准备")
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(artifacts / f"room-showdown-{w}.png"))
    open_link(driver, rooms, t)  # back between hands
    wait(driver, lambda d: visible(d, "#showdown") and visible(d, "#settlement"))
    check_settlement(driver, rooms, t["id"], 3)
    driver.save_screenshot(str(artifacts / f"room-rejoined-{w}.png"))
    driver.find_element("id", "ready").click()
    wait(driver, lambda d: "第 2/2 局" in d.find_element("id", "where").text
         and not d.find_elements("id", "ready"))
    wait(driver, lambda d: d.find_element("id", "turn").text != "等待准备")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_room_of_four_hands_ends_in_its_tally(driver, rooms, artifacts, size):
    """托管 on: the table's bot plays the seat through 4 hands (no ready step
    waits for a seat in 托管); the 大结算 then shows every seat."""
    sized(driver, size)
    w = size[0]
    t = room(rooms, "guilin-mahjong", 4, [1, 2, 3])
    open_link(driver, rooms, t)
    wait(driver, lambda d: d.find_elements("id", "tuoguan"))[0].click()
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .tag.tg"))
    # the page re-renders as the last messages (tally, closed) arrive, so the
    # tally is read in one script call, never through a kept element
    shown = wait(driver, lambda d: d.execute_script(
        "const t = document.getElementById('tally'); if (!t) return null;"
        "const rows = [...t.querySelectorAll('[data-tally-seat]')];"
        "return {ended: t.dataset.ended,"
        " shown: rows.every((r) => r.getClientRects().length > 0),"
        " totals: rows.map((r) => r.querySelectorAll('td')[1].textContent)}"),
        timeout=20 * PATIENCE)
    assert shown["ended"] == "finished"
    assert len(shown["totals"]) == 4 and shown["shown"]
    # 回大厅 under the tally's table, not over its last row
    assert driver.execute_script(
        "const t = document.querySelector('#tally table').getBoundingClientRect();"
        "return document.querySelector('#tally > a.btn').getBoundingClientRect().top >= t.bottom")
    with httpx.Client(base_url=rooms.url, timeout=PATIENCE) as http:
        info = http.get(f"/tables/{t['id']}").json()
    assert info.get("ended") == "finished"
    totals = [int(x) for x in shown["totals"]]
    assert totals == [x["total"] for x in sorted(info["tally"]["seats"], key=lambda x: x["seat"])]
    # the table below: closed, nobody to play, the seats' scores those of the tally
    nobody_to_play(driver, "桌已关闭")
    wait(driver, lambda d: d.find_element("id", "status").text == "桌已关闭")
    scores = driver.execute_script("return [...document.querySelectorAll('[data-score-seat]')]"
                                   ".map((x) => [+x.dataset.scoreSeat, +x.textContent])")
    assert [x for _, x in sorted(scores)] == totals
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(artifacts / f"room-tally-{w}.png"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("agree", [False, True], ids=["refused", "passed"])
def test_a_dissolve_vote(driver, rooms, artifacts, agree, size):
    """The page proposes 解散房间; the other human (a WebSocket client)
    refuses (play on; then leaves, and his seat shows 离线) or agrees (the
    room ends in its tally, dissolved)."""
    sized(driver, size)
    w = size[0]
    t = room(rooms, "guilin-mahjong", 8, [2, 3])
    other = SyncSeat(rooms, t["id"], t["seats"]["1"], strict=False)
    try:
        other.until("welcome")
        open_link(driver, rooms, t)
        wait(driver, lambda d: d.find_elements("id", "dissolve"))[0].click()
        wait(driver, lambda d: visible(d, "#vote"))
        # the vote's clock is the vote's, not under whose turn it is
        wait(driver, lambda d: d.find_element("id", "vote-countdown").text.endswith("秒"))
        driver.save_screenshot(str(artifacts / f"room-vote-{w}.png"))
        other.until("vote")
        other.send({"type": "dissolve", "agree": agree})
        if agree:
            ended = wait(driver, lambda d: d.execute_script(
                "const t = document.getElementById('tally'); return t && t.dataset.ended"))
            assert ended == "dissolved"
            assert "0 局后解散" in driver.find_element("id", "tally").text   # not 第 0 局
            nobody_to_play(driver, "桌已关闭")
            driver.save_screenshot(str(artifacts / f"room-dissolved-{w}.png"))
        else:
            wait(driver, lambda d: d.find_elements("css selector", "#vote[data-outcome=refused]"))
            assert not driver.find_elements("id", "tally")
            driver.save_screenshot(str(artifacts / f"room-vote-refused-{w}.png"))
            # the other player's connection gone: his seat is marked offline
            assert not driver.find_elements("css selector", ".seat[data-seat='1'] .tag.off")
            other.close()
            wait(driver, lambda d: d.find_elements("css selector", ".seat[data-seat='1'] .tag.off"))
            driver.save_screenshot(str(artifacts / f"room-offline-{w}.png"))
    finally:
        other.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_two_timeouts_put_a_seat_in_tuoguan_and_its_player_takes_it_back(driver, artifacts,
                                                                          tmp_path, size):
    """A player who does not answer: after two timeouts his seat shows 托管
    (the page stops passing for him once a decision ran out); his click on a
    decision offered meanwhile takes the seat back; 托管 asked with the
    toggle, then 取消托管, likewise."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    # an open-ended table (a room would play its hands out in 托管 and close),
    # paced: the bot answers for a seat in 托管 after 1 s, time for the click
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "11",
                     "--turn-timeout", "2", "--bot-delay", "1")
    mine = ".seat.me .tag.tg"
    try:
        sized(driver, size)
        t = s.create("guilin-mahjong", bots=[1, 2, 3])
        open_link(driver, s, t)
        wait(driver, lambda d: d.find_elements("css selector", mine), timeout=4 * PATIENCE)
        wait(driver, lambda d: d.find_elements("css selector", "#tuoguan.on"))
        driver.save_screenshot(str(artifacts / f"room-tuoguan-{size[0]}.png"))

        def act(d):  # a decision offered while in 托管: the player's own click
            if not d.find_elements("css selector", mine):
                return True
            try:
                for el in d.find_elements("css selector", "#actions button.btn, "
                                          ".seat.me .hand button.tile.can")[:1]:
                    el.click()
            except (StaleElementReferenceException, WebDriverException):
                pass  # redrawn, or the bot was first: the next one
            return False

        wait(driver, act, timeout=4 * PATIENCE)
        driver.find_element("id", "tuoguan").click()  # asked: 托管 on
        wait(driver, lambda d: d.find_elements("css selector", mine))
        wait(driver, lambda d: d.find_elements("css selector", "#tuoguan.on"))

        def cancel(d):  # 取消托管 — again if refused (NotNow: a switch within 1 s of the last)
            if not d.find_elements("css selector", mine):
                return True
            try:
                for el in d.find_elements("css selector", "#tuoguan.on"):
                    el.click()
            except (StaleElementReferenceException, WebDriverException):
                pass
            return False

        wait(driver, cancel)
    finally:
        driver.get("about:blank")
        s.stop()


# where 继续 and the settlement's last payment are, and the screen, in one call
READ_BAR = """
const r = (el) => { const b = el.getBoundingClientRect(); return {top: b.top, bottom: b.bottom,
  left: b.left, right: b.right}; };
const ready = document.getElementById('ready'), bar = document.getElementById('roombar');
const pays = document.querySelectorAll('#settlement .payment');
if (!ready || !bar) return null;
return {ready: r(ready), bar: r(bar), result: r(document.getElementById('result')),
        last: pays.length ? r(pays[pays.length - 1]) : null,
        h: window.innerHeight, w: window.innerWidth, y: window.scrollY,
        end: document.documentElement.scrollHeight};
"""


@pytest.mark.parametrize("size", [(360, 740), (1280, 800)], ids=["360x740", "1280x800"])
def test_an_open_ended_table_of_the_lobby_waits_for_its_players_continue(
        driver, rooms, artifacts, size):
    """The lobby's new table (局数 不限, its default) is made with a ready
    step: after a hand 继续 is asked, and kept on screen (a sticky bar)
    however long the settlement — within the viewport at the top of the
    page, and below the settlement's last payment once scrolled there;
    继续 deals the next hand."""
    from selenium.webdriver.support.ui import Select
    from test_page import open_lobby

    sized(driver, size)
    open_lobby(driver, rooms)
    wait(driver, lambda d: d.find_elements("id", "variant"))
    Select(driver.find_element("id", "variant")).select_by_value("guilin-mahjong")
    assert Select(driver.find_element("id", "hands")).first_selected_option.get_attribute(
        "value") == ""   # 不限
    driver.find_element("id", "create-table").click()
    link = wait(driver, lambda d: d.find_elements("css selector", "#created a.seat-link"))[0]
    table = link.get_attribute("href").split("#play/")[1].split("/")[0]
    with httpx.Client(base_url=rooms.url, timeout=PATIENCE) as http:
        info = http.get(f"/tables/{table}").json()
    assert info["hands"] is None and info["ready"] is True
    link.click()
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile"))
    name = f"open-{size[0]}"
    play_to_the_end(driver, artifacts, name)
    check_settlement(driver, rooms, table, 4)
    wait(driver, lambda d: visible(d, "#ready"))
    assert driver.find_element("id", "ready").text == "继续"
    assert "第 1 手结算" in driver.find_element("id", "result").text   # open-ended: 手
    nobody_to_play(driver, "等待准备")
    driver.execute_script("window.scrollTo(0, 0)")
    got = wait(driver, lambda d: d.execute_script(READ_BAR))
    # at the top of the page (the settlement first): 继续 on the screen
    assert 0 <= got["ready"]["top"] and got["ready"]["bottom"] <= got["h"], got
    assert 0 <= got["ready"]["left"] and got["ready"]["right"] <= got["w"], got
    driver.save_screenshot(str(artifacts / f"table-{name}-continue-top.png"))
    # scrolled to just past the settlement: the bar below its last payment, over nothing
    # of it (sticky: in its own place once there)
    bar_h = got["bar"]["bottom"] - got["bar"]["top"]
    driver.execute_script("window.scrollTo(0, arguments[0])",
                          max(0, got["result"]["bottom"] + got["y"] + bar_h + 24 - got["h"]))
    got = driver.execute_script(READ_BAR)
    assert got["last"] is not None
    assert got["last"]["bottom"] <= got["bar"]["top"], got
    assert 0 <= got["ready"]["top"] and got["ready"]["bottom"] <= got["h"], got
    driver.save_screenshot(str(artifacts / f"table-{name}-continue-end.png"))
    # at the end of the page too, nothing of the settlement under the bar
    driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    got = driver.execute_script(READ_BAR)
    assert got["last"]["bottom"] <= got["bar"]["top"], got
    driver.find_element("id", "ready").click()
    wait(driver, lambda d: "第 2 手" in d.find_element("id", "where").text
         and not d.find_elements("id", "ready"))
    wait(driver, lambda d: d.find_element("id", "turn").text != "等待准备")
