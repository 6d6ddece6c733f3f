"""The browser page of ``qipai serve``, driven in a real headless Chromium.

The distribution's ``chromium`` and ``chromium-driver`` (``/usr/bin/chromium``,
``/usr/bin/chromedriver``) through Selenium; nothing downloads a browser and
nothing leaves 127.0.0.1.  Without them the tests skip with one line naming
the packages; under ``QIPAI_CI=1`` (``.ci/run``) that is a failure instead.

The tests start the real server (``python -m qipai serve``, a free port, a
SQLite file), create tables through the page, play whole hands by clicking
only the buttons the page shows, and check what the page shows against the
server's stored records, replayed by the library.  Screenshots go to
``test-artifacts/<run>/`` (gitignored); copies of some are in docs/howto/img/.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

from conftest import in_ci
from hostkit import PATIENCE, SyncSeat, start_server

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _missing() -> str | None:
    absent = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if absent:
        return (f"{' and '.join(absent)} not found: the browser tests need the distribution's "
                f"Chromium (apt-get install chromium chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the browser tests need selenium (the dev dependency group: uv sync)"
    return None


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """The run's screenshot folder, ``test-artifacts/<run>`` (one per pytest session)."""
    run = os.environ.get("QIPAI_RUN") or time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    folder = ROOT / "test-artifacts" / run
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def driver():
    missing = _missing()
    if missing:
        if in_ci():
            pytest.fail(f"QIPAI_CI is set and the browser cannot run: {missing}", pytrace=False)
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-extensions",
                "--disable-component-update", "--no-first-run", "--window-size=1280,800",
                "--lang=zh-CN"):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    d.set_window_size(1280, 800)
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page")
    # seeded deals (reproducible hands) and a long turn timeout (no timeouts
    # under a loaded machine: every action is the page's click)
    s = start_server(f"sqlite:///{tmp / 'qipai.db'}", tmp, "--seed", "11",
                     "--turn-timeout", "900")
    try:
        yield s
    finally:
        s.stop()


def wait(driver, what, timeout: float = PATIENCE):
    """Poll ``what(driver)`` until truthy (an upper bound on a hang, not a timing check)."""
    from selenium.common.exceptions import StaleElementReferenceException

    end = time.monotonic() + timeout
    while True:
        try:
            got = what(driver)
        except StaleElementReferenceException:
            got = None
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"the page did not get there; it shows: "
                                 f"{driver.find_element('tag name', 'body').text[:2000]}")
        time.sleep(0.05)


# what the page shows, read in one call
READ_BOARD = """
const out = {};
for (const el of document.querySelectorAll('.seat')) {
  const s = +el.dataset.seat;
  const kinds = (sel) => [...el.querySelectorAll(sel)].map((t) => t.dataset.kind === undefined ? null : +t.dataset.kind);
  out[s] = {hand: kinds('.hand .tile'), discards: kinds('.discards .tile'),
            melds: [...el.querySelectorAll('.meld')].map((m) => ({kind: m.dataset.kind,
               cards: [...m.querySelectorAll('.tile')].map((t) => t.dataset.kind === undefined ? null : +t.dataset.kind)})),
            size: el.querySelector('.hand').dataset.size};
}
return out;
"""


def open_lobby(driver, served) -> None:
    """Load the lobby afresh (a page already at ``/#`` would not reload)."""
    driver.get("about:blank")
    driver.get(served.url + "/#")


def board(driver) -> dict[int, dict]:
    return {int(k): v for k, v in driver.execute_script(READ_BOARD).items()}


def settlement(driver) -> dict:
    return driver.execute_script("""
      const s = document.getElementById('settlement');
      if (!s) return null;
      return {payments: [...s.querySelectorAll('.payment')].map((r) => [+r.dataset.payer, +r.dataset.payee, +r.dataset.amount, r.dataset.reason]),
              net: [...s.querySelectorAll('[data-net-seat]')].map((c) => +c.textContent),
              totals: [...s.querySelectorAll('[data-total-seat]')].map((c) => +c.textContent)};""")


def create_table(driver, served, variant: str) -> tuple[str, str]:
    """Create a table through the lobby (seat 0 human, the others bots); the
    page then plays seat 0.  Returns (table id, spectator link)."""
    from selenium.webdriver.support.ui import Select

    open_lobby(driver, served)
    wait(driver, lambda d: d.find_elements("id", "variant"))
    Select(driver.find_element("id", "variant")).select_by_value(variant)
    boxes = driver.find_elements("css selector", "#bots input[type=checkbox]")
    assert [b.is_selected() for b in boxes] == [False] + [True] * (len(boxes) - 1)
    driver.find_element("id", "create-table").click()
    link = wait(driver, lambda d: d.find_elements("css selector", "#created a.seat-link"))[0]
    spectator = driver.find_element("css selector", "#created a.spectator-link").get_attribute("href")
    assert link.get_attribute("data-seat") == "0"
    link.click()
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me"))
    table = driver.current_url.split("#play/")[1].split("/")[0]
    return table, spectator


def check_spectator(driver, spectator: str) -> None:
    """Open the spectator link in a second tab: no concealed card of any seat."""
    main = driver.current_window_handle
    driver.switch_to.new_window("tab")
    try:
        driver.get(spectator)
        wait(driver, lambda d: d.find_elements("css selector", ".seat"))
        shown = board(driver)
        assert not driver.find_elements("css selector", ".seat.me"), "a spectator has no seat"
        assert not driver.find_elements("id", "actions"), "a spectator has no actions"
        for s, b in shown.items():
            assert all(k is None for k in b["hand"]), f"the spectator sees seat {s}'s hand: {b}"
            assert len(b["hand"]) == min(int(b["size"]), 21)
    finally:
        driver.close()
        driver.switch_to.window(main)


def phone(driver, path: Path) -> None:
    """A screenshot at phone size (390×844): nothing wider than the screen."""
    driver.set_window_size(390, 844)
    try:
        wait(driver, lambda d: d.execute_script("return window.innerWidth") <= 390)
        wide = driver.execute_script("return document.documentElement.scrollWidth")
        inner = driver.execute_script("return window.innerWidth")
        assert wide <= inner, f"the page is {wide}px wide on a {inner}px screen"
        driver.save_screenshot(str(path))
    finally:
        driver.set_window_size(1280, 800)


#: what the page's player clicks, first present first: a win, a claim, a pass
PREFER = ("hu", "zimo", "angang", "jiagang", "minggang", "peng", "chi", "pass")


def play_hand(driver, spectator: str, shots: Path, name: str) -> dict:
    """Play seat 0 until the hand's settlement shows, clicking only what the
    page offers; returns the settlement as shown."""
    from selenium.common.exceptions import StaleElementReferenceException

    state = {"clicks": 0, "shot": False, "claims": 0}
    for _ in range(3000):
        try:
            got = step(driver, spectator, shots, name, state)
        except StaleElementReferenceException:  # the page redrew under the click: look again
            continue
        if got is not None:
            return got
    raise AssertionError("the hand did not end")


def step(driver, spectator: str, shots: Path, name: str, state: dict) -> dict | None:
    """One look at the page and at most one click; the settlement once shown."""
    got = settlement(driver)
    if got is not None:
        return got
    seq = driver.execute_script(
        "const a = document.getElementById('actions'); return a ? a.dataset.seq + '/' + a.dataset.open : null")
    buttons = {b.get_attribute("data-action"): b
               for b in driver.find_elements("css selector", "#actions button.btn")}
    lit = driver.find_elements("css selector", ".seat.me .hand button.tile.can")
    choice = next((a for a in PREFER if a in buttons), None)
    if choice is not None:
        if choice in ("chi", "peng", "minggang") and state["claims"] >= 2:
            choice = "pass" if "pass" in buttons else choice  # claim a few, then let go
        if choice in ("chi", "peng", "minggang", "angang", "jiagang"):
            state["claims"] += 1
        buttons[choice].click()
        if choice == "chi" and driver.find_elements("id", "chi-choices"):
            # several runs: the page asks which; take the first
            driver.find_element("css selector", "#chi-choices button").click()
        state["clicks"] += 1
    elif lit:
        # an unlit tile cannot be clicked: it is disabled
        for t in driver.find_elements("css selector", ".seat.me .hand button.tile:not(.can)"):
            assert not t.is_enabled()
        if not state["shot"] and state["clicks"] >= 4:
            driver.save_screenshot(str(shots / f"{name}-in-play.png"))
            state["shot"] = True
            phone(driver, shots / f"{name}-phone.png")
            return None  # look again at full size before clicking
        if state["clicks"] % 6 == 3:
            check_spectator(driver, spectator)
        # others' hands are never shown to this seat
        for s, b in board(driver).items():
            if s != 0:
                assert all(k is None for k in b["hand"]), f"seat 0 sees seat {s}'s hand"
        lit[-1].click()
        state["clicks"] += 1
    else:
        time.sleep(0.05)
        return None
    refusal = driver.find_elements("id", "refusal")
    assert not refusal, refusal[0].text
    # the click was taken: this decision's buttons go (a new one brings new ones)
    wait(driver, lambda d: settlement(d) is not None or d.execute_script(
        "const a = document.getElementById('actions'); return a.dataset.seq + '/' + a.dataset.open")
        != seq)
    return None


def payments_of(result: dict) -> list[list]:
    return [[p["payer"], p["payee"], p["amount"], p.get("reason", "")] for p in result["payments"]]


@pytest.mark.parametrize("variant", ["guilin-mahjong", "guilin-zipai", "guangxi-mahjong"])
def test_play_a_hand_through_the_page(driver, served, artifacts, variant):
    driver.set_window_size(1280, 800)
    table, spectator = create_table(driver, served, variant)
    shown = play_hand(driver, spectator, artifacts, variant)
    driver.save_screenshot(str(artifacts / f"{variant}-settlement.png"))
    with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
        recs = http.get(f"/tables/{table}/records").json()
    result = recs["hands"][0]["record"]["result"]
    assert shown["payments"] == payments_of(result)
    assert shown["net"] == list(result["net"])
    assert shown["totals"] == list(result["net"])  # the first hand: totals = its net
    assert sum(shown["net"]) == 0
    # the next hand goes on at the same page
    wait(driver, lambda d: "第 2 手" in d.find_element("id", "where").text)


def _replayed_state(record: dict, k: int) -> list[dict]:
    """Every seat's cards after the record's first ``k`` actions (the library)."""
    from qipai.core.records import decode_record, replay

    rec = decode_record(record)
    rec.actions = rec.actions[:k]
    t = replay(rec)
    return [{"hand": sorted(s.hand), "discards": list(s.discards),
             "melds": [(m.kind, list(m.cards)) for m in s.melds]} for s in t.state.seats]


def test_replay_each_variant_step_by_step(driver, served, artifacts):
    """Replay the stored hand of each played variant: every step's tiles are
    the record's, replayed by the library; back and forward agree."""
    with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
        finished = http.get("/records", params={"limit": 500}).json()
    by_variant = {}
    for r in finished:
        by_variant.setdefault(r["variant"], r)
    if len(by_variant) < 3:
        pytest.skip("runs after test_play_a_hand_through_the_page (its stored hands)")
    driver.set_window_size(1280, 800)
    for variant, r in sorted(by_variant.items()):
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
            record = http.get(f"/tables/{r['table']}/records").json()["hands"][r["hand"]]["record"]
        open_lobby(driver, served)
        link = wait(driver, lambda d: d.find_elements(
            "css selector", f"a.replay-link[data-table='{r['table']}'][data-hand='{r['hand']}']"))[0]
        link.click()
        wait(driver, lambda d: d.find_elements("id", "stepno"))
        step = 0
        while True:
            el = driver.find_element("id", "stepno")
            assert int(el.get_attribute("data-step")) == step
            applied = int(el.get_attribute("data-actions"))
            expect = _replayed_state(record, applied)
            shown = board(driver)
            for s, want in enumerate(expect):
                assert sorted(shown[s]["hand"]) == want["hand"], (variant, step, s)
                assert shown[s]["discards"] == want["discards"], (variant, step, s)
                assert [(m["kind"], m["cards"]) for m in shown[s]["melds"]] == \
                    [(k, c) for k, c in want["melds"]], (variant, step, s)
            nxt = driver.find_element("id", "next")
            if not nxt.is_enabled():
                break
            nxt.click()
            step += 1
            wait(driver, lambda d: d.find_element("id", "stepno").get_attribute("data-step") == str(step))
        assert applied == len(record["actions"])
        shown = settlement(driver)
        assert shown["payments"] == payments_of(record["result"])
        assert shown["net"] == list(record["result"]["net"])
        driver.save_screenshot(str(artifacts / f"{variant}-replay-end.png"))
        phone(driver, artifacts / f"{variant}-replay-phone.png")
        # and back: step 1 again shows the table after its actions
        for _ in range(step - 1):
            driver.find_element("id", "prev").click()
        wait(driver, lambda d: d.find_element("id", "stepno").get_attribute("data-step") == "1")
        el = driver.find_element("id", "stepno")
        expect = _replayed_state(record, int(el.get_attribute("data-actions")))
        assert [sorted(b["hand"]) for _, b in sorted(board(driver).items())] == \
            [w["hand"] for w in expect]


def test_a_dropped_record_file_replays_and_a_bad_one_is_refused(driver, served, artifacts,
                                                                tmp_path):
    """The lobby's file input (what a drop does): a record file replays from
    its deal to its settlement; a file that is no record shows the server's
    typed refusal."""
    with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
        finished = http.get("/records").json()
        if not finished:
            pytest.skip("runs after test_play_a_hand_through_the_page (its stored hands)")
        r = finished[0]
        answer = http.get(f"/tables/{r['table']}/records").text
    good = tmp_path / "records.json"
    good.write_text(answer)  # a GET records answer: its first hand is replayed
    first = json.loads(answer)["hands"][0]["record"]
    driver.set_window_size(1280, 800)
    open_lobby(driver, served)
    wait(driver, lambda d: d.find_elements("id", "record-file"))
    driver.find_element("id", "record-file").send_keys(str(good))
    wait(driver, lambda d: d.find_elements("id", "stepno"))
    assert "文件" in driver.find_element("id", "where").text
    shown = board(driver)
    for s, dealt in enumerate(first["deal"]["hands"]):
        cards = shown[s]["hand"] + [k for m in shown[s]["melds"] for k in m["cards"]]
        assert sorted(cards) == sorted(dealt)
    driver.find_element("id", "last").click()
    wait(driver, lambda d: settlement(d) is not None)
    assert settlement(driver)["net"] == first["result"]["net"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"variant": "guilin-mahjong"}')
    open_lobby(driver, served)
    wait(driver, lambda d: d.find_elements("id", "record-file"))
    driver.find_element("id", "record-file").send_keys(str(bad))
    refusal = wait(driver, lambda d: d.find_elements("id", "refusal"))[0]
    assert "BadRecord" in refusal.text


def test_the_lobby_gives_each_bot_seat_a_level(driver, served):
    """Each bot seat's level (简单/普通/困难, easy/normal/hard in English) is
    sent with the table: a seat left at 普通 as its number, another as
    ``{"seat", "level"}``; the table keeps them."""
    from selenium.webdriver.support.ui import Select

    driver.set_window_size(1280, 800)
    for lang, words in (("en", ["easy", "normal", "hard"]), ("zh", ["简单", "普通", "困难"])):
        driver.get(served.url + "/#")
        driver.execute_script(f"localStorage.setItem('qipai-lang', '{lang}')")
        open_lobby(driver, served)
        wait(driver, lambda d: d.find_elements("css selector", "select.bot-level"))
        Select(driver.find_element("id", "variant")).select_by_value("guilin-mahjong")
        levels = driver.find_elements("css selector", "#bots select.bot-level")
        assert len(levels) == 4
        for sel in levels:
            assert [o.text for o in Select(sel).options] == words
            assert Select(sel).first_selected_option.get_attribute("value") == "normal"
    Select(levels[2]).select_by_value("easy")
    driver.find_element("id", "create-table").click()
    wait(driver, lambda d: d.find_elements("css selector", "#created a.seat-link"))
    table = driver.find_element("css selector", "#created a.seat-link").get_attribute("href") \
        .split("#play/")[1].split("/")[0]
    assert served.info(table)["levels"] == {"1": "normal", "2": "easy", "3": "normal"}


def test_a_refused_table_shows_the_servers_error(driver, served):
    """A bad option string at table creation: the page shows the typed error."""
    driver.set_window_size(1280, 800)
    open_lobby(driver, served)
    wait(driver, lambda d: d.find_elements("id", "options"))
    driver.find_element("id", "options").send_keys("nosuch=1")
    driver.find_element("id", "create-table").click()
    refusal = wait(driver, lambda d: d.find_elements("id", "refusal"))[0]
    assert "BadOption" in refusal.text and "nosuch" in refusal.text
    assert not driver.find_elements("css selector", "#created a.seat-link")


def test_a_win_with_no_winning_card_reads_as_such_on_the_page(driver, served, artifacts,
                                                              tmp_path):
    """A 三笼五坎 win on the deal (guilin-zipai §3.3 step 1, D-ZP6; §4: it is
    no 自摸, though its ``how`` is ``zimo``): the replay's log says 胡（无胡牌）
    and the pattern, never 自摸 (it read "胡（自摸 zimo）")."""
    import msgspec

    from zipai_deals import sanlong_wukan_deal

    from qipai.core.records import record_of
    from qipai.core.ruleset import load

    deal = sanlong_wukan_deal()
    table = load("guilin-zipai").table(deal=deal)
    assert table.result is not None and table.result.patterns
    path = tmp_path / "sanlong.json"
    path.write_bytes(msgspec.json.encode(record_of(table)))
    driver.set_window_size(1280, 800)
    open_lobby(driver, served)
    wait(driver, lambda d: d.find_elements("id", "record-file"))
    driver.find_element("id", "record-file").send_keys(str(path))
    wait(driver, lambda d: d.find_elements("id", "stepno"))
    won = wait(driver, lambda d: [li.text for li in d.find_elements("css selector", "ul.log li")
                                  if "胡（" in li.text])
    driver.save_screenshot(str(artifacts / "zipai-sanlong-wukan-replay.png"))
    assert len(won) == 1 and "胡（无胡牌）" in won[0] and "三笼五坎" in won[0], won
    assert "自摸" not in won[0]


@pytest.mark.parametrize("variant, jiagang", [("guilin-mahjong", "蓄杠"),
                                              ("guangxi-mahjong", "补杠")])
def test_the_kongs_read_as_the_command_line_writes_them(driver, served, artifacts, tmp_path,
                                                        variant, jiagang):
    """A replayed hand with a 点杠 and a 蓄杠 (seed 37, greedy bots): the
    page's board names them with the command line's words (``GET
    /vocabulary``), a variant's own name first (guangxi-mahjong: 补杠)."""
    import msgspec

    from qipai.bots.play import play_hand
    from qipai.core.records import record_of
    from qipai.core.ruleset import load
    from qipai.text import meld_label

    rs = load(variant)
    table = play_hand(rs, seed=37)
    kinds = [type(a).__struct_config__.tag for a in table.actions]
    assert "jiagang" in kinds and "minggang" in kinds
    path = tmp_path / f"{variant}-kongs.json"
    path.write_bytes(msgspec.json.encode(record_of(table)))
    driver.set_window_size(1280, 800)
    open_lobby(driver, served)
    wait(driver, lambda d: d.find_elements("id", "record-file"))
    driver.find_element("id", "record-file").send_keys(str(path))
    wait(driver, lambda d: d.find_elements("id", "stepno"))
    driver.find_element("id", "last").click()
    wait(driver, lambda d: settlement(d) is not None)
    shown = {m.get_attribute("data-kind"): m.find_element("css selector", ".mk").text
             for m in driver.find_elements("css selector", ".meld")}
    assert shown["jiagang"] == jiagang and shown["minggang"] == "点杠", shown
    assert meld_label("jiagang", rs.manifest.names) == f"{jiagang} jiagang"
    driver.save_screenshot(str(artifacts / f"{variant}-kongs.png"))
    phone(driver, artifacts / f"{variant}-kongs-phone.png")


def test_a_second_connection_on_the_seat_shows_a_warning(driver, served, artifacts):
    """The seat's link open in a second tab: both tabs say the seat has 2
    connections open (``seat_conns``) — if the player did not open the other,
    someone else has his link; a spectator tab adds none and is told
    nothing; once the second tab closes the warning goes."""
    driver.set_window_size(1280, 800)
    table, spectator = create_table(driver, served, "guilin-mahjong")
    link = driver.current_url
    main = driver.current_window_handle
    assert not driver.find_elements("id", "seat-conns"), "one connection: no warning"

    def notice(d):
        got = d.find_elements("id", "seat-conns")
        return got[0].text if got else None

    driver.switch_to.new_window("tab")
    driver.get(spectator)
    wait(driver, lambda d: d.find_elements("css selector", ".seat"))
    watch = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(link)
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me"))
    second = wait(driver, notice)
    assert "本座位有 2 个连接" in second, second
    assert "别人持有你的链接" in second
    driver.save_screenshot(str(artifacts / "seat-conns-second-tab.png"))
    driver.switch_to.window(watch)
    time.sleep(0.5)
    assert not driver.find_elements("id", "seat-conns"), "a spectator is told no count"
    driver.switch_to.window(main)
    first = wait(driver, notice)
    assert "本座位有 2 个连接" in first, first
    driver.save_screenshot(str(artifacts / "seat-conns-first-tab.png"))
    for handle in driver.window_handles:
        if handle != main:
            driver.switch_to.window(handle)
            driver.close()
    driver.switch_to.window(main)
    wait(driver, lambda d: not d.find_elements("id", "seat-conns"))
    assert "座位 0" in driver.find_element("id", "where").text


def test_a_full_server_is_said_so_and_the_page_gets_in_once_there_is_room(driver, artifacts,
                                                                          tmp_path):
    """At ``--max-connections`` the upgrade is refused before it opens (a
    browser is not told why): the page says it cannot connect, that the
    server may be full, and retries; once a connection closes it is in."""
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "11",
                     "--max-connections", "1", "--turn-timeout", "900")
    try:
        t = s.create(bots=[1, 2, 3])
        hold = SyncSeat(s, t["id"], t["spectator_token"], strict=False)
        hold.until("welcome")
        driver.set_window_size(1280, 800)
        driver.get(f"{s.url}/#play/{t['id']}/{t['seats']['0']}")
        status = wait(driver, lambda d: "无法连接" in d.find_element("id", "status").text
                      and d.find_element("id", "status").text)
        assert "服务器可能已满" in status and "正在重试" in status, status
        driver.save_screenshot(str(artifacts / "server-full.png"))
        hold.close()
        wait(driver, lambda d: d.find_element("id", "status").text == "已连接")
    finally:
        driver.get("about:blank")
        s.stop()
