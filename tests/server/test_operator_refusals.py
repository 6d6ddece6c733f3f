"""Refusals of a keyed server (``qipai serve --keys``) found by the review of
issue 34, each against a real server process: typed, counted, logged with
the client's address and never the key or token sent, and changing nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hostkit import PATIENCE, start_server


def new_key(path, name: str) -> str:
    r = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", name, "--file", str(path)],
                       capture_output=True, text=True, timeout=PATIENCE)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def keyed(module_db_url, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("refusals")
    f = tmp / "keys.json"
    key = new_key(f, "shop")
    s = start_server(module_db_url, tmp, "--keys", str(f), "--log-format", "json")
    s.key, s.keys_file = key, f
    yield s
    s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log and key not in log
    assert json.loads(f.read_text())["keys"][0]["secret"] not in log


def events(s, event: str) -> list[dict]:
    out = []
    for line in s.log_path.read_text().splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("event") == event:
                out.append(rec)
    return out


def refusals(s) -> dict[str, float]:
    with s.http() as h:
        text = h.get("/metrics", headers=bearer(s.key)).text
    out = {}
    for line in text.splitlines():
        if line.startswith("qipai_refusals_total{"):
            out[line.split('"')[1]] = float(line.rsplit(" ", 1)[1])
    return out


def test_a_missing_or_wrong_key_is_a_counted_refused_event_with_the_client(keyed):
    before = refusals(keyed)
    wrong = "qk_" + "x" * 43
    with keyed.http() as h:
        assert h.get("/tables").json()["error"] == "NoKey"
        assert h.get("/admin/tables", headers=bearer(wrong)).json()["error"] == "BadKey"
    after = refusals(keyed)
    assert after.get("NoKey", 0) == before.get("NoKey", 0) + 1
    assert after.get("BadKey", 0) == before.get("BadKey", 0) + 1
    got = {e["reason"]: e for e in events(keyed, "refused")}
    assert got["NoKey"]["client"] == "127.0.0.1" and got["NoKey"]["path"] == "/tables"
    assert got["BadKey"]["client"] == "127.0.0.1" and got["BadKey"]["path"] == "/admin/tables"
    assert wrong not in keyed.log_path.read_text()


def test_one_player_at_two_seats_is_refused_and_makes_nothing(keyed):
    with keyed.http() as h:
        before = h.get("/admin/tables", headers=bearer(keyed.key)).json()
        r = h.post("/tables", headers=bearer(keyed.key), json={"bots": [2, 3], "players": [
            {"seat": 0, "player": "u-1", "name": "阿明"},
            {"seat": 1, "player": "u-1", "name": "阿明2"}]})
        assert r.status_code == 400, r.text
        assert r.json()["error"] == "BadPlayers" and "seat 0" in r.json()["message"]
        assert h.get("/admin/tables", headers=bearer(keyed.key)).json() == before


def test_two_authorization_headers_are_refused_whatever_their_order(keyed):
    import httpx

    for first, second in ((keyed.key, "qk_wrong"), ("qk_wrong", keyed.key)):
        headers = httpx.Headers([("Authorization", f"Bearer {first}"),
                                 ("Authorization", f"Bearer {second}")])
        with keyed.http() as h:
            r = h.get("/tables", headers=headers)
            assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text
            assert "Authorization" in r.json()["message"]
            r = h.post("/tables", headers=headers, json={"bots": [1, 2, 3]})
            assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text


def test_qipai_connect_plays_the_pages_seat_link_and_never_echoes_a_token(keyed):
    import time

    import jwt

    secret = json.loads(keyed.keys_file.read_text())["keys"][0]["secret"]
    with keyed.http() as h:
        t = h.post("/tables", headers=bearer(keyed.key), json={
            "bots": [1, 2, 3], "players": [{"seat": 0, "player": "u-7", "name": "阿明"}]}).json()
    token = jwt.encode({"table": t["id"], "seat": 0, "player": "u-7",
                        "exp": int(time.time()) + 600}, secret, algorithm="HS256",
                       headers={"kid": "shop"})
    # the link an operator hands a player (docs/howto/integrate.md)
    r = subprocess.run([sys.executable, "-m", "qipai", "connect", "--auto", "--hands", "1",
                        f"{keyed.url}/#play/{t['id']}/{token}"],
                       capture_output=True, text=True, timeout=PATIENCE * 4)
    assert r.returncode == 0, r.stderr
    assert "seat 0 (阿明)" in r.stdout and "hand 1 over" in r.stdout
    # a link that is no seat's: refused, the fragment (a token, maybe) not echoed
    r = subprocess.run([sys.executable, "-m", "qipai", "connect",
                        f"{keyed.url}/#watch/{t['id']}/{token}"],
                       capture_output=True, text=True, timeout=PATIENCE)
    assert r.returncode != 0 and "seat link" in r.stderr and token not in r.stderr + r.stdout


def test_an_open_demo_behind_a_proxy_keeps_its_admin_routes_to_itself(db_url, tmp_path):
    """A proxy on the same host forwards every request from loopback: the
    open demo's admin routes (list and close every table) refused a
    forwarded request (they listed and closed every table for anyone)."""
    s = start_server(db_url, tmp_path)
    try:
        with s.http() as h:
            t = h.post("/tables", json={"bots": [1, 2, 3]}).json()
            for header in ({"X-Forwarded-For": "203.0.113.9"},
                           {"Forwarded": "for=203.0.113.9"}, {"X-Real-IP": "203.0.113.9"}):
                r = h.get("/admin/tables", headers=header)
                assert r.status_code == 403 and r.json()["error"] == "NotLoopback", r.text
                r = h.post("/admin/tables/close", json={"all": True}, headers=header)
                assert r.status_code == 403 and r.json()["error"] == "NotLoopback", r.text
            assert h.get(f"/tables/{t['id']}").json()["open"]
            # asked directly on the machine: served
            assert [x["id"] for x in h.get("/admin/tables").json()] == [t["id"]]
    finally:
        s.stop()


def test_a_keys_file_others_may_read_is_warned_of_at_start(db_url, tmp_path):
    """The keys file holds the HS256 secrets that sign seat tokens: readable
    by other users of the machine, the server says so at start (it did not)."""
    import os

    f = tmp_path / "keys.json"
    key = new_key(f, "shop")
    os.chmod(f, 0o644)
    s = start_server(db_url, tmp_path, "--keys", str(f))
    s.stop()
    log = s.log_path.read_text()
    assert f"keys file {f} is readable by other users (mode 0644)" in log
    assert f"chmod 600 {f}" in log and key not in log
    os.chmod(f, 0o600)
    s = start_server(db_url, tmp_path, "--keys", str(f))
    s.stop()
    assert "readable by other users" not in s.log_path.read_text()


def test_signed_tokens_with_nbf_iat_or_aud_as_documented(keyed):
    """protocol.md, "Signed seat tokens": ``nbf``/``iat`` in the future
    (beyond 30 s of skew) and any ``aud`` are refused 401 ``BadToken``."""
    import time

    import jwt

    secret = json.loads(keyed.keys_file.read_text())["keys"][0]["secret"]
    with keyed.http() as h:
        t = h.post("/tables", headers=bearer(keyed.key), json={"bots": [1, 2, 3]}).json()
    now = int(time.time())
    base = {"table": t["id"], "seat": 0, "player": "u-1", "exp": now + 600}

    def status(**more) -> tuple[int, str | None]:
        tok = jwt.encode({**base, **more}, secret, algorithm="HS256", headers={"kid": "shop"})
        with keyed.http() as h:
            r = h.get(f"/tables/{t['id']}/records", headers=bearer(tok))
        return r.status_code, r.json().get("error")

    assert status(nbf=now + 3600) == (401, "BadToken")
    assert status(iat=now + 3600) == (401, "BadToken")
    assert status(aud="qipai") == (401, "BadToken")
    assert status(nbf=now + 5, iat=now + 5) == (200, None)   # within the skew


def test_another_tables_seat_token_on_the_records_is_a_counted_refused_event(keyed):
    # a seat token of one table sent for another's records: 403 WrongTable, counted
    # and logged like every other refused token (it was answered, not counted)
    with keyed.http() as h:
        t, u = (h.post("/tables", headers=bearer(keyed.key), json={"bots": [1, 2, 3]}).json()
                for _ in range(2))
        before = refusals(keyed)
        for path in (f"/tables/{t['id']}/records", f"/tables/{t['id']}/records/0/replay"):
            r = h.get(path, headers=bearer(u["seats"]["0"]))
            assert r.status_code == 403 and r.json()["error"] == "WrongTable", (path, r.text)
        assert refusals(keyed).get("WrongTable", 0) == before.get("WrongTable", 0) + 2
        got = [e for e in events(keyed, "refused") if e["reason"] == "WrongTable"]
        assert got and got[0]["table"] == t["id"] and got[0]["client"] == "127.0.0.1", got
        for x in (t, u):
            assert h.post(f"/tables/{x['id']}/close", headers=bearer(keyed.key)).status_code \
                == 200
    assert u["seats"]["0"] not in keyed.log_path.read_text()
