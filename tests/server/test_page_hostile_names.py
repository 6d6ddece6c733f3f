"""Names an operator passes through from its users are text on the page,
never markup, and the longest ones fit a phone's screen (issue 34 review)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import jwt
import pytest

from hostkit import start_server
from test_page import driver, wait  # noqa: F401 - the browser fixture

pytestmark = pytest.mark.slow

HTML = '<img src=x onerror=window.p=1>'   # 31 characters
LONG = "Ｗ" * 32   # 32 full-width characters: the longest name, the widest glyphs


def test_hostile_and_long_names_are_text_and_fit_a_phone(driver, tmp_path):  # noqa: F811
    f = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "op", "--file", str(f)],
                         capture_output=True, text=True, check=True).stdout.strip()
    secret = json.loads(f.read_text())["keys"][0]["secret"]
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "5", "--keys", str(f))
    try:
        t = httpx.post(s.url + "/tables", headers={"Authorization": f"Bearer {key}"}, json={
            "bots": [3], "players": [{"seat": 0, "player": "u-1", "name": LONG},
                                     {"seat": 1, "player": "u-2", "name": HTML},
                                     {"seat": 2, "player": "u-3", "name": "阿明"}]}).json()
        token = jwt.encode({"table": t["id"], "seat": 0, "player": "u-1",
                            "exp": int(time.time()) + 3600}, secret, algorithm="HS256",
                           headers={"kid": "op"})
        driver.set_window_size(390, 844)
        driver.get(f"{s.url}/#play/{t['id']}/{token}")
        wait(driver, lambda d: d.execute_script("return window.innerWidth") <= 390)
        names = wait(driver, lambda d: d.find_elements("css selector", ".seat .pname"))
        wait(driver, lambda d: len(d.find_elements("css selector", ".seat .pname")) >= 3)
        shown = [e.get_attribute("textContent") for e in
                 driver.find_elements("css selector", ".seat .pname")]
        assert HTML in shown and LONG in shown, shown
        assert not driver.find_elements("css selector", ".seat img")
        assert driver.execute_script("return window.p") is None
        driver.save_screenshot("/tmp/qipai-review34-names-phone.png")
        wide = driver.execute_script("return document.documentElement.scrollWidth")
        assert wide <= 390, f"the page is {wide}px wide on a 390px screen"
    finally:
        s.stop()


def test_a_refused_link_says_why_and_is_not_tried_again_and_again(driver, tmp_path):  # noqa: F811
    """A signed link for another player's seat (403 WrongPlayer, close 4403)
    is final: the page shows the server's reason (it showed only
    "disconnected (4403)") and does not reconnect every 1.5 s (it did)."""
    f = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "op", "--file", str(f)],
                         capture_output=True, text=True, check=True).stdout.strip()
    secret = json.loads(f.read_text())["keys"][0]["secret"]
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--keys", str(f))
    auth = {"Authorization": f"Bearer {key}"}
    try:
        t = httpx.post(s.url + "/tables", headers=auth, json={
            "bots": [1, 2, 3], "players": [{"seat": 0, "player": "u-1", "name": "阿明"}]}).json()
        token = jwt.encode({"table": t["id"], "seat": 0, "player": "u-2",
                            "exp": int(time.time()) + 3600}, secret, algorithm="HS256",
                           headers={"kid": "op"})

        def refused() -> float:
            for line in httpx.get(s.url + "/metrics", headers=auth).text.splitlines():
                if line.startswith('qipai_refusals_total{reason="WrongPlayer"}'):
                    return float(line.rsplit(" ", 1)[1])
            return 0.0

        driver.get(f"{s.url}/#play/{t['id']}/{token}")
        shown = wait(driver, lambda d: d.find_elements("id", "refusal"))[0].text
        assert "WrongPlayer" in shown and "another player" in shown, shown
        wait(driver, lambda d: "4403" in d.find_element("tag name", "body").text)
        # (an absence: two of the old retry intervals pass with no new attempt)
        end = time.monotonic() + 4
        while time.monotonic() < end:
            assert refused() == 1.0
            time.sleep(0.5)
        # an expired link: the player is told to ask for a new one
        token = jwt.encode({"table": t["id"], "seat": 0, "player": "u-1",
                            "exp": int(time.time()) - 3600}, secret, algorithm="HS256",
                           headers={"kid": "op"})
        driver.set_window_size(390, 844)
        driver.get(f"{s.url}/#play/{t['id']}/{token}")
        driver.refresh()
        shown = wait(driver, lambda d: d.find_elements("id", "refusal"))[0].text
        assert "ExpiredToken" in shown and "new seat link" in shown, shown
        driver.save_screenshot("/tmp/qipai-review34-expired-phone.png")
    finally:
        s.stop()
