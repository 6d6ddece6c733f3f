"""Joint deals on the page (issue 36 item 3), in a real headless Chromium
(as test_page): the page makes its value, commits and reveals it without
the player doing anything, shows "your value: …" and plays the dealt hand;
the record carries that value and verifies."""

# ruff: noqa: F811 - the browser fixtures are test_page's, imported by name
from __future__ import annotations

import re

import httpx
import pytest
from hostkit import PATIENCE, start_server
from test_page import artifacts, driver, wait  # noqa: F401 - the browser fixtures

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def joint(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("joint")
    s = start_server(f"sqlite:///{tmp / 'qipai.db'}", tmp, "--seed", "11", "--seat-values",
                     "--seat-value-timeout", "900", "--turn-timeout", "900")
    try:
        yield s
    finally:
        s.stop()


def test_the_page_commits_reveals_and_shows_its_value(driver, joint, artifacts):
    with httpx.Client(base_url=joint.url, timeout=PATIENCE) as http:
        r = http.post("/tables", json={"variant": "guilin-mahjong", "bots": [1, 2, 3]})
        assert r.status_code == 201, r.text
        t = r.json()
    driver.get("about:blank")
    driver.get(f"{joint.url}/#play/{t['id']}/{t['seats']['0']}")
    wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile")
         and d.find_elements("id", "your-value"))
    text = driver.find_element("id", "your-value").text
    found = re.search(r"[0-9a-f]{64}", text)
    assert found and ("随机值" in text or "your value" in text), text
    driver.save_screenshot(str(artifacts / "joint-your-value.png"))
    with httpx.Client(base_url=joint.url, timeout=PATIENCE) as http:
        r = http.post(f"/tables/{t['id']}/close", headers={"Authorization": f"Bearer {t['admin']}"})
        assert r.status_code == 200, r.text
    import sqlalchemy as sa

    from qipai.host.store.schema import seat_values

    eng = sa.create_engine(joint.db)
    with eng.connect() as c:
        row = c.execute(sa.select(seat_values).where(seat_values.c.table_id == t["id"])).first()
    eng.dispose()
    assert row is not None and row.value == found.group(0)


def test_the_page_says_it_waits_for_the_other_players(driver, joint, artifacts):
    """Seat 1 not sat down yet: the first hand's step waits for it without
    a clock, and the page says whom it waits for; once seat 1 has come and
    taken part the hand is dealt and the notice is gone."""
    import hashlib
    import secrets

    from hostkit import SyncSeat

    with httpx.Client(base_url=joint.url, timeout=PATIENCE) as http:
        r = http.post("/tables", json={"variant": "guilin-mahjong", "bots": [2, 3]})
        assert r.status_code == 201, r.text
        t = r.json()
    driver.get("about:blank")
    driver.get(f"{joint.url}/#play/{t['id']}/{t['seats']['0']}")
    el = wait(driver, lambda d: d.find_elements("id", "joint-waits"))[0]
    assert ("座位 1" in el.text or "seat 1" in el.text), el.text
    driver.save_screenshot(str(artifacts / "joint-waits-for-players.png"))
    b = SyncSeat(joint, t["id"], t["seats"]["1"])
    try:
        raw = secrets.token_bytes(32)
        b.until("seat_values", lambda m: m["phase"] == "commit")
        b.send({"type": "seat_commit", "hand": 0, "commitment": hashlib.sha256(raw).hexdigest()})
        b.until("seat_values", lambda m: m["phase"] == "reveal")
        b.send({"type": "seat_reveal", "hand": 0, "value": raw.hex()})
        b.until("welcome")
        wait(driver, lambda d: d.find_elements("css selector", ".seat.me .hand .tile")
             and not d.find_elements("id", "joint-waits"))
    finally:
        b.close()
    with httpx.Client(base_url=joint.url, timeout=PATIENCE) as http:
        r = http.post(f"/tables/{t['id']}/close", headers={"Authorization": f"Bearer {t['admin']}"})
        assert r.status_code == 200, r.text
