"""Operator keys: ``qipai keys new/list/revoke`` and ``qipai serve --keys FILE``
(a real server process; SQLite and PostgreSQL)."""

import os
import signal
import stat
import subprocess
import sys


from hostkit import PATIENCE, SyncSeat, start_server


def qipai(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", *args], capture_output=True,
                          text=True, timeout=PATIENCE)


def new_key(path, name: str) -> str:
    r = qipai("keys", "new", name, "--file", str(path))
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()
    assert key.startswith("qk_") and len(key) > 40
    return key


def test_keys_new_list_revoke(tmp_path):
    f = tmp_path / "keys.json"
    key = new_key(f, "alice")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    assert key not in f.read_text()   # only its hash
    r = qipai("keys", "new", "alice", "--file", str(f))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "already" in r.stderr
    new_key(f, "bob")
    assert qipai("keys", "list", "--file", str(f)).stdout.split() == ["alice", "bob"]
    assert qipai("keys", "revoke", "alice", "--file", str(f)).returncode == 0
    assert qipai("keys", "list", "--file", str(f)).stdout.split() == ["bob"]
    r = qipai("keys", "revoke", "alice", "--file", str(f))
    assert r.returncode == 2 and "no key named" in r.stderr
    r = qipai("keys", "new", "bad name", "--file", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def wait_log(s, text: str) -> None:
    """Wait until the server's log says ``text`` (an event, bounded by PATIENCE)."""
    import time

    end = time.monotonic() + PATIENCE
    while text not in s.log_path.read_text():
        assert time.monotonic() < end, f"never logged: {text!r}"
        time.sleep(0.05)


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


def test_keyed_server(db_url, tmp_path):
    f = tmp_path / "keys.json"
    alice, bob = new_key(f, "alice"), new_key(f, "bob")
    s = start_server(db_url, tmp_path, "--keys", str(f))
    try:
        with s.http() as h:
            # creating: no key, a wrong key, a key
            r = h.post("/tables", json={"bots": [1, 2, 3]})
            assert r.status_code == 401 and r.json()["error"] == "NoKey", r.text
            assert r.headers["www-authenticate"].startswith("Bearer")
            r = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer("qk_nope"))
            assert r.status_code == 401 and r.json()["error"] == "BadKey", r.text
            assert "invalid_token" in r.headers["www-authenticate"]
            r = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(alice))
            assert r.status_code == 201, r.text
            t = r.json()
            u = h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(bob)).json()
            # listing, records, the metrics
            for path in ("/tables", "/records", "/metrics"):
                assert h.get(path).json()["error"] == "NoKey"
                assert h.get(path, headers=bearer("x")).status_code == 401
                assert h.get(path, headers=bearer(alice)).status_code == 200
            assert {x["id"] for x in h.get("/tables", headers=bearer(bob)).json()} == \
                {t["id"], u["id"]}
            # a table's records and replays: a key, or a seat token of that table
            for path in (f"/tables/{t['id']}/records", f"/tables/{t['id']}/records/0/replay"):
                assert h.get(path).json()["error"] == "NoKey", path
                r = h.get(path, headers=bearer(u["seats"]["0"]))
                assert r.status_code == 403 and r.json()["error"] == "WrongTable", r.text
                r = h.get(path, headers=bearer(t["spectator_token"]))
                assert r.status_code == 401 and r.json()["error"] == "BadKey", r.text
            for auth in (alice, t["seats"]["0"]):
                r = h.get(f"/tables/{t['id']}/records", headers=bearer(auth))
                assert r.status_code == 200 and r.json()["hands"] == [], r.text
                r = h.get(f"/tables/{t['id']}/records/0/replay", headers=bearer(auth))
                assert r.json()["error"] == "UnknownHand", r.text   # let in; no hand yet
            # the WebSocket still takes the seat token
            seat = SyncSeat(s, t["id"], t["seats"]["0"])
            assert seat.until("welcome")["type"] == "welcome"
            seat.close()
            # closing: no key refused; the admin token, or any key
            r = h.post(f"/tables/{t['id']}/close")
            assert r.status_code == 401 and r.json()["error"] == "NoKey"
            r = h.post(f"/tables/{t['id']}/close", headers=bearer("qk_x"))
            assert r.status_code == 401 and r.json()["error"] == "BadKey"
            assert h.get(f"/tables/{t['id']}").json()["open"] is True
            r = h.post(f"/tables/{t['id']}/close", headers=bearer(t["admin"]))
            assert r.status_code == 200, r.text
            r = h.post(f"/tables/{u['id']}/close", headers=bearer(alice))
            assert r.status_code == 200 and r.json()["open"] is False, r.text

            # SIGHUP: alice revoked, carol added
            assert qipai("keys", "revoke", "alice", "--file", str(f)).returncode == 0
            carol = new_key(f, "carol")
            s.proc.send_signal(signal.SIGHUP)
            wait_log(s, "keys reloaded")
            assert h.get("/tables", headers=bearer(alice)).json()["error"] == "BadKey"
            assert h.get("/tables", headers=bearer(carol)).status_code == 200
            assert h.get("/tables", headers=bearer(bob)).status_code == 200
            # a file that no longer parses: the keys held stay, one line says so
            f.write_text("{not json")
            s.proc.send_signal(signal.SIGHUP)
            wait_log(s, "keys not reloaded")
            assert h.get("/tables", headers=bearer(carol)).status_code == 200
            assert h.get("/tables", headers=bearer(alice)).status_code == 401
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log
    assert "key 'alice' used" in log and "key 'bob' used" in log
    for key in (alice, bob, carol):
        assert key not in log
    assert "open demo" not in log


def test_serve_refuses_what_it_cannot_serve(tmp_path):
    db = f"sqlite:///{tmp_path / 'q.db'}"
    bad = tmp_path / "keys.json"
    bad.write_text('{"keys": [{"name": "a"}]}')
    for args in (["--keys", str(bad)], ["--keys", str(tmp_path / "missing.json")],
                 ["--host", "0.0.0.0", "--port", "0"], ["--host", "192.0.2.1"]):
        r = qipai("serve", "--db", db, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert "--open" in r.stderr


def test_open_demo_says_so(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path)
    try:
        s.create(bots=[1, 2, 3])   # no key needed
        with s.http() as h:
            assert h.get("/tables").status_code == 200
    finally:
        s.stop()
    assert "open demo: no keys; anyone who reaches it may create tables" in \
        s.log_path.read_text()
