"""Stakes and rake on the page (issue 36, item 2): a room of one hand with a
stake and a rake, played by 托管, shows each seat's money and the rake as a
line of its own to the house in the settlement, and the money and the
house's take in the 大结算 — as the server's records say, in 元 with two
decimals (the stake in 分).  In a real headless Chromium (as test_page).
"""

# ruff: noqa: F811 - the browser fixtures are test_page's, imported by name
from __future__ import annotations

import httpx
import pytest
from hostkit import PATIENCE, start_server
from test_page import artifacts, driver, wait  # noqa: F401 - the browser fixtures
from test_page_table import sized

pytestmark = pytest.mark.slow


def yuan(x: int, signed: bool = True) -> str:
    a = abs(x)
    sign = "-" if x < 0 else "+" if signed and x > 0 else ""
    return f"{sign}{a // 100}.{a % 100:02d} 元"


def test_the_settlement_and_the_tally_show_the_money_and_the_rake(driver, artifacts, tmp_path):
    served = start_server(f"sqlite:///{tmp_path / 'qipai.db'}", tmp_path, "--seed", "11",
                          "--turn-timeout", "900", "--ready-timeout", "900",
                          "--tuoguan-delay", "0")
    try:
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
            r = http.post("/tables", json={"variant": "guilin-mahjong", "bots": [1, 2, 3],
                                           "hands": 1, "stake": 50,
                                           "rake": {"percent": 10, "cap": 120}})
        assert r.status_code == 201, r.text
        t = r.json()
        sized(driver, (390, 844))
        driver.get("about:blank")
        driver.get(f"{served.url}/#play/{t['id']}/{t['seats']['0']}")
        wait(driver, lambda d: d.find_elements("id", "tuoguan"))[0].click()
        shown = wait(driver, lambda d: d.execute_script(
            "const t = document.getElementById('tally'), s = document.getElementById('settlement');"
            "if (!t || !s) return null;"
            "return {money: [...s.querySelectorAll('[data-money-seat]')].map((e) => e.textContent),"
            " rake: [...s.querySelectorAll('.payment.rake')].map((e) => [+e.dataset.payer, +e.dataset.rake]),"
            " house: s.querySelector('[data-house]').textContent,"
            " pays: [...s.querySelectorAll('.payment [data-money]')].map((e) => +e.dataset.money),"
            " stake: (document.getElementById('stake') || {}).textContent,"
            " tally: [...t.querySelectorAll('[data-tally-money]')].map((e) => e.textContent),"
            " tallyHouse: t.querySelector('[data-tally-house]').textContent}"),
            timeout=20 * PATIENCE)
        with httpx.Client(base_url=served.url, timeout=PATIENCE) as http:
            rec = http.get(f"/tables/{t['id']}/records").json()["hands"][0]["record"]
            info = http.get(f"/tables/{t['id']}").json()
        money = rec["money"]
        assert shown["money"] == [yuan(x) for x in money["net"]]
        assert shown["rake"] == [[x["payer"], x["amount"]] for x in money["rake_lines"]]
        assert shown["house"] == yuan(money["house"])
        assert shown["pays"] == [p["amount"] for p in money["payments"]]
        assert "每子 0.50 元" in shown["stake"] and "10%" in shown["stake"]
        assert shown["tally"] == [yuan(x) for x in info["money_totals"]]
        assert shown["tallyHouse"] == yuan(info["house"])
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(artifacts / "money-tally-390.png"))
    finally:
        served.stop()
