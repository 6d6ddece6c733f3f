"""The page on a server with operator keys (``qipai serve --keys``): a seat
link plays; the lobby says a key is needed to create and list tables; its
finished-hands list shows the hands of the tables this tab sat at, read with
their seat tokens, and replays them.  Chromium + chromedriver, as test_page."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from hostkit import PATIENCE, start_server
from test_page import driver, wait  # noqa: F401 - the browser fixture

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
