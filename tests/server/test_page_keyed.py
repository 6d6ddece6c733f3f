"""The page on a server with operator keys (``qipai serve --keys``): a seat
link plays; the lobby says a key is needed to create and list tables; its
finished-hands list shows the hands of the tables this tab sat at, read with
their seat tokens, and replays them.  Chromium + chromedriver, as test_page."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hostkit import PATIENCE, start_server
from test_page import driver, phone, settlement, wait  # noqa: F401 - the browser fixture

pytestmark = pytest.mark.slow


def test_a_seat_link_plays_and_reads_its_records(driver, tmp_path):  # noqa: F811
    f = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "op", "--file", str(f)],
                         capture_output=True, text=True, check=True).stdout.strip()
    # the page's seat plays by its timeouts: short ones, so a hand ends
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "5", "--keys",
                     str(f), "--turn-timeout", "0.2")
    try:
        auth = {"Authorization": f"Bearer {key}"}
        t = httpx.post(s.url + "/tables", json={"bots": [1, 2, 3]}, headers=auth).json()
        driver.get(f"{s.url}/#play/{t['id']}/{t['seats']['0']}")
        wait(driver, lambda d: d.find_elements("css selector", ".seat"))
        end = time.monotonic() + PATIENCE * 3
        while not httpx.get(f"{s.url}/tables/{t['id']}/records", headers=auth).json()["hands"]:
            assert time.monotonic() < end, "no hand finished"
            time.sleep(0.2)
        driver.get(f"{s.url}/#")
        driver.refresh()
        wait(driver, lambda d: d.find_elements("css selector", "#keyed"))
        link = wait(driver, lambda d: d.find_elements(
            "css selector", f"a.replay-link[data-table='{t['id']}']"))[0]
        link.click()
        wait(driver, lambda d: "回放" in d.find_element("id", "where").text
             if d.find_elements("id", "where") else False)
        assert not driver.find_elements("id", "refusal")
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()


def test_a_named_player_plays_a_hand_with_his_signed_seat_link(driver, tmp_path):  # noqa: F811
    """Keyed mode: the operator makes a table for 阿明 and three bots with its
    key, signs his seat link (a JWT), and he plays the hand to its settlement
    in the page, his name shown at his seat."""
    import json

    import jwt
    from selenium.common.exceptions import StaleElementReferenceException

    f = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "op", "--file", str(f)],
                         capture_output=True, text=True, check=True).stdout.strip()
    secret = json.loads(f.read_text())["keys"][0]["secret"]
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "5", "--keys",
                     str(f))
    shots = Path("/tmp")
    try:
        auth = {"Authorization": f"Bearer {key}"}
        t = httpx.post(s.url + "/tables", headers=auth, json={
            "bots": [1, 2, 3], "players": [{"seat": 0, "player": "u-123", "name": "阿明"}]}).json()
        token = jwt.encode({"table": t["id"], "seat": 0, "player": "u-123",
                            "exp": int(time.time()) + 3600}, secret, algorithm="HS256",
                           headers={"kid": "op"})
        driver.set_window_size(1280, 800)
        driver.get(f"{s.url}/#play/{t['id']}/{token}")
        me = wait(driver, lambda d: d.find_elements("css selector", ".seat.me .pname"))[0]
        assert me.text == "阿明"
        assert "你" in driver.find_element("css selector", ".seat.me h3").text
        assert "阿明" in driver.find_element("id", "where").text
        shot = False
        for _ in range(3000):
            try:
                if settlement(driver) is not None:
                    break
                buttons = {b.get_attribute("data-action"): b for b in
                           driver.find_elements("css selector", "#actions button.btn")}
                lit = driver.find_elements("css selector", ".seat.me .hand button.tile.can")
                choice = next((a for a in ("hu", "zimo", "pass") if a in buttons), None)
                if choice is not None:
                    buttons[choice].click()
                elif lit:
                    if not shot:
                        driver.save_screenshot(str(shots / "qipai-named-desktop.png"))
                        phone(driver, shots / "qipai-named-phone.png")
                        shot = True
                        continue
                    lit[-1].click()
                else:
                    time.sleep(0.05)
                    continue
                assert not driver.find_elements("id", "refusal")
            except StaleElementReferenceException:
                continue
        else:
            raise AssertionError("the hand did not end")
        driver.save_screenshot(str(shots / "qipai-named-settlement.png"))
        heads = driver.find_element("id", "settlement").text
        assert "阿明" in heads
        recs = httpx.get(f"{s.url}/tables/{t['id']}/records",
                         headers={"Authorization": f"Bearer {token}"}).json()
        assert len(recs["hands"]) == 1 and recs["names"] == {"0": "阿明"}
        # the page opened without a seat link: ask the operator for one
        driver.get(f"{s.url}/#")
        driver.refresh()
        notice = wait(driver, lambda d: d.find_elements("id", "ask-operator"))[0]
        assert "运营者" in notice.text
        driver.save_screenshot(str(shots / "qipai-keyed-lobby.png"))
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log and token not in log and secret not in log
