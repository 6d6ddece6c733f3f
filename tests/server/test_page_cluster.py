"""The clients of a cluster (``qipai serve --cluster``) follow a table that
moves: two real nodes on a throwaway PostgreSQL, the first drained (SIGTERM)
mid-hand, its table handed to the second.

* The page, in a real headless Chromium (as test_page) at a phone's and a
  desktop's size: a seat of a table with three bots, opened on node A, plays
  a few actions; node A drains while the seat has a decision open (and its
  answer races the drain); the page reconnects to node B by itself (the
  ``moved``'s address), says so only in its status line, shows no refusal
  (an act refused ``Moving`` is not a failure), and plays on at B to the
  hand's end, its settlement the record B holds.
* ``qipai connect`` (its client, in this process): given node B's address
  for node A's table, it follows the ``moved`` B answers with to A; A drains
  while the player chooses; the act typed then is sent again at B (it was not
  applied at A) and the hand ends there.

Screenshots go to ``test-artifacts/<run>/cluster-*.png``.
"""

# ruff: noqa: F811 - the browser fixtures are test_page's, imported by name
from __future__ import annotations

import io
import json
import re

import httpx
import pytest
from hostkit import PATIENCE, start_server
from test_page import artifacts, driver, wait  # noqa: F401 - the browser fixtures
from test_page_table import check_settlement, click_once, play_to_the_end, set_language, sized

pytestmark = pytest.mark.slow

#: the status line's words (qipai.text.PAGE, Chinese: the page's default)
MOVING, CONNECTED = "牌桌换到另一台服务器，连接中…", "已连接"

# what the page showed, from now on: every status line, and whether a refusal
# (#refusal) ever appeared
WATCH = """
window.seen = {status: [], refusals: []};
const status = document.getElementById('status');
new MutationObserver(() => window.seen.status.push(status.textContent))
  .observe(status, {childList: true, characterData: true, subtree: true});
new MutationObserver(() => {
  const r = document.getElementById('refusal');
  if (r) window.seen.refusals.push(r.textContent);
}).observe(document.getElementById('app'), {childList: true, subtree: true});
"""


@pytest.fixture
def nodes(pg_cluster, tmp_path):
    """Nodes nA and nB of a cluster on a fresh PostgreSQL database (seeded
    deals; a long turn timeout: every action of the seat is the test's)."""
    db = pg_cluster.create_database()
    started = []
    try:
        for node in ("nA", "nB"):
            started.append(start_server(db, tmp_path, "--cluster", "--node-id", node,
                                        "--seed", "11", "--turn-timeout", "900"))
        yield started
    finally:
        for s in started:
            s.stop()


def drained(node) -> str:
    """SIGTERM node ``node`` and wait for it to exit; its log."""
    node.proc.terminate()
    assert node.proc.wait(PATIENCE) == 0
    return node.log_path.read_text()


def clicked(driver, state: dict) -> bool:
    """One click of what the page offers (click_once); False if the page was
    redrawn under it (nothing clicked)."""
    from selenium.common.exceptions import StaleElementReferenceException

    try:
        return click_once(driver, state)
    except StaleElementReferenceException:
        return False


def open_decision(driver) -> bool:
    return driver.execute_script(
        "const a = document.getElementById('actions'); return !!a && a.dataset.open === '1'")


def act(driver, n: int) -> dict:
    """``n`` of the seat's actions, each acknowledged (its decision gone),
    then its next decision open; the hand not over.  click_once's state."""
    state = {"claims": 0}
    for i in range(n + 1):
        wait(driver, lambda d: open_decision(d) or d.find_elements("id", "settlement"))
        assert not driver.find_elements("id", "settlement"), "the hand ended already"
        if i == n:
            return state
        seq = driver.find_element("id", "actions").get_attribute("data-seq")
        wait(driver, lambda d: clicked(d, state))   # (redrawn under the click: again)
        wait(driver, lambda d, seq=seq: d.find_elements("id", "settlement") or d.execute_script(
            "const a = document.getElementById('actions');"
            "return a.dataset.seq + '/' + a.dataset.open") != f"{seq}/1")
    return state


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_page_follows_its_table_to_another_node_mid_hand(driver, nodes, artifacts, size):
    a, b = nodes
    sized(driver, size)
    t = a.create("guilin-mahjong", bots=[1, 2, 3])
    assert (t["node"], t["address"]) == ("nA", a.url)
    set_language(driver, a, "zh")
    driver.get("about:blank")
    driver.get(f"{a.url}/#play/{t['id']}/{t['seats']['0']}")
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile"))
    driver.execute_script(WATCH)
    state = act(driver, 3)   # a few of the seat's actions at node A
    # node A drains while the seat has a decision open; its answer races the drain
    a.proc.terminate()
    clicked(driver, state)   # (or not: the page redrawn by the move under the click)
    log = drained(a)
    assert "cluster: drain: 1 of 1 table handed to nB" in log, log
    with httpx.Client(base_url=b.url, timeout=PATIENCE) as http:
        where = http.get(f"/tables/{t['id']}").json()
    assert (where["node"], where["address"]) == ("nB", b.url)
    # the page is at node B (node A is gone): it plays on to the hand's end
    wait(driver, lambda d: CONNECTED in d.execute_script("return window.seen.status")
         and d.find_element("id", "status").text == CONNECTED)
    driver.save_screenshot(str(artifacts / f"cluster-{size[0]}-moved.png"))
    play_to_the_end(driver, artifacts, f"cluster-{size[0]}")
    driver.execute_script("window.scrollTo(0, 0)")
    check_settlement(driver, b, t["id"], 4)
    driver.save_screenshot(str(artifacts / f"cluster-{size[0]}-settlement.png"))
    seen = driver.execute_script("return window.seen")
    # quiet: its status line said the move, then connected; nothing was refused
    assert MOVING in seen["status"], seen
    assert seen["status"][seen["status"].index(MOVING):][-1] == CONNECTED, seen
    assert not seen["refusals"], seen


def test_the_page_finds_its_table_again_when_its_node_is_killed(driver, nodes, artifacts):
    """The page loaded from node B, its table node A's (B answers moved: A);
    A is killed (SIGKILL: its sockets drop) mid-hand: the page tries A again,
    then its own origin, B, which has taken the table over; the hand ends there."""
    a, b = nodes
    sized(driver, (390, 844))
    t = a.create("guilin-mahjong", bots=[1, 2, 3])
    set_language(driver, b, "zh")
    driver.get("about:blank")
    driver.get(f"{b.url}/#play/{t['id']}/{t['seats']['0']}")
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile"))
    state = act(driver, 2)
    a.kill()
    clicked(driver, state)   # (into the dead socket, or not at all)
    play_to_the_end(driver, artifacts, "cluster-killed")
    driver.execute_script("window.scrollTo(0, 0)")
    check_settlement(driver, b, t["id"], 4)
    driver.save_screenshot(str(artifacts / "cluster-killed-settlement.png"))
    assert "took over 1 table of node nA (dead)" in b.log_path.read_text()
    with httpx.Client(base_url=b.url, timeout=PATIENCE) as http:
        assert http.get(f"/tables/{t['id']}").json()["node"] == "nB"


def test_connect_follows_its_table_from_node_to_node(nodes):
    from qipai.cli import connect as client

    a, b = nodes
    t = a.create("guilin-mahjong", bots=[1, 2, 3])
    prompts = []
    logs = []

    class Typist:
        """The player: answers each prompt with its first action; at the
        second, node A drains first (the table is handed to B meanwhile)."""

        def readline(self) -> str:
            prompts.append(out.getvalue().rsplit("\n", 1)[-1])
            if len(prompts) == 2:
                logs.append(drained(a))
            return "1\n"

    out = io.StringIO()
    # node B's address for node A's table: B answers moved (A's address)
    url = b.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    assert client.run(url, hands=1, out=out, inp=Typist()) == 0, out.getvalue()
    lines = out.getvalue().splitlines()
    assert len(prompts) >= 2 and logs, out.getvalue()
    assert "cluster: drain: 1 of 1 table handed to nB" in logs[0], logs[0]
    # (a line may follow a prompt: the typed answer is not echoed here)
    moves = re.findall(r"== the table moved to node .*?: reconnecting", out.getvalue())
    assert moves == [f"== the table moved to node nA ({a.url}): reconnecting",
                     f"== the table moved to node nB ({b.url}): reconnecting"], lines
    assert not [x for x in lines if x.startswith("!!")], lines
    assert lines[-1].startswith("== hand 1 over"), lines
    with httpx.Client(base_url=b.url, timeout=PATIENCE) as http:
        hands = http.get(f"/tables/{t['id']}/records").json()["hands"]
        assert http.get(f"/tables/{t['id']}").json()["node"] == "nB"
    net = hands[0]["record"]["result"]["net"]
    assert lines[-1] == f"== hand 1 over · totals {json.dumps(net)}", lines


def test_connect_finds_its_table_again_when_its_node_is_killed(nodes):
    """Given node B's address, moved to node A; A is killed (SIGKILL) while
    the player chooses: the connection drops, A is tried again, then B, which
    has taken the table over; the hand ends there."""
    from qipai.cli import connect as client

    a, b = nodes
    t = a.create("guilin-mahjong", bots=[1, 2, 3])
    prompts = []

    class Typist:
        def readline(self) -> str:
            prompts.append(out.getvalue().rsplit("\n", 1)[-1])
            if len(prompts) == 2:
                a.kill()
            return "1\n"

    out = io.StringIO()
    url = b.ws(f"/tables/{t['id']}/ws?token={t['seats']['0']}")
    assert client.run(url, hands=1, out=out, inp=Typist()) == 0, out.getvalue()
    text = out.getvalue()
    assert len(prompts) >= 2, text
    # (B may name A again until its sweep finds A dead: A is tried again then)
    moves = re.findall(r"== the table moved to node .*?: reconnecting", text)
    assert moves and set(moves) == {f"== the table moved to node nA ({a.url}): reconnecting"}, text
    assert text.count("!! the connection dropped: reconnecting") == 1, text
    assert "took over 1 table of node nA (dead)" in b.log_path.read_text()
    with httpx.Client(base_url=b.url, timeout=PATIENCE) as http:
        net = http.get(f"/tables/{t['id']}/records").json()["hands"][0]["record"]["result"]["net"]
    assert text.splitlines()[-1] == f"== hand 1 over · totals {json.dumps(net)}", text
