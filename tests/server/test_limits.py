"""Limits per operator key (``qipai keys new NAME --max-tables N …``,
``qipai serve --key-max-… N``): tables open, tables created a minute,
connections and spectators of one key's tables — each refused 429 (or
close 4429) naming the limit, changing nothing, logged once, counted in
``/metrics``; a SIGHUP applies new limits (a real server process; SQLite
and PostgreSQL)."""

import json
import signal

from hostkit import SyncSeat, start_server
from test_keys import bearer, new_key, qipai, wait_log


def limited(s, key: str) -> dict:
    with s.http() as h:
        return h.post("/tables", json={"bots": [1, 2, 3]}, headers=bearer(key))


def ws_refusal(s, table: str, token: str) -> tuple[dict, int | None]:
    c = SyncSeat(s, table, token, strict=False)
    try:
        msg = c.recv()
        try:
            c.recv()
        except Exception:  # noqa: BLE001 - the close that follows the error
            pass
        return msg, c.ws.close_code
    finally:
        c.close()


def test_keys_file_limits(tmp_path):
    f = tmp_path / "keys.json"
    r = qipai("keys", "new", "alice", "--file", str(f), "--max-tables", "2",
              "--max-spectators", "0")
    assert r.returncode == 0, r.stderr
    new_key(f, "bob")
    assert qipai("keys", "list", "--file", str(f)).stdout.splitlines() == [
        "alice max_tables=2 max_spectators=0", "bob"]
    r = qipai("keys", "limit", "bob", "--file", str(f), "--tables-per-minute", "5")
    assert r.returncode == 0 and r.stdout.strip() == "bob tables_per_minute=5", r.stderr
    r = qipai("keys", "limit", "alice", "--file", str(f), "--default", "max-spectators")
    assert r.stdout.strip() == "alice max_tables=2"
    # a revoke keeps the others' limits
    new_key(f, "carol")
    assert qipai("keys", "revoke", "carol", "--file", str(f)).returncode == 0
    assert qipai("keys", "list", "--file", str(f)).stdout.splitlines() == [
        "alice max_tables=2", "bob tables_per_minute=5"]
    r = qipai("keys", "limit", "nobody", "--file", str(f), "--max-tables", "1")
    assert r.returncode == 2 and "no key named" in r.stderr
    # a limit that is not a whole number >= 0: refused at start in one line
    f.write_text(f.read_text().replace('"max_tables": 2', '"max_tables": -1'))
    r = qipai("serve", "--db", f"sqlite:///{tmp_path / 'q.db'}", "--keys", str(f))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "max_tables" in r.stderr
    for bad in ("0", "soon", "-3d", "1w"):
        r = qipai("serve", "--db", f"sqlite:///{tmp_path / 'q.db'}", "--retention", bad)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("error: --retention: a duration is"), r.stderr


def test_limits_per_key(db_url, tmp_path):
    f = tmp_path / "keys.json"
    r = qipai("keys", "new", "alice", "--file", str(f), "--max-tables", "2")
    alice = r.stdout.strip()
    bob = new_key(f, "bob")
    carol = qipai("keys", "new", "carol", "--file", str(f), "--max-connections", "2",
                  "--max-spectators", "5").stdout.strip()
    s = start_server(db_url, tmp_path, "--keys", str(f), "--key-tables-per-minute", "3",
                     "--key-max-spectators", "1", "--max-tables", "20", "--log-format", "json")
    try:
        with s.http() as h:
            # max_tables: alice's third is refused; bob is not blocked by her
            a = [limited(s, alice).json() for _ in range(2)]
            r = limited(s, alice)
            assert r.status_code == 429, r.text
            body = r.json()
            assert body["error"] == "TooManyTables" and body["limit"] == "max_tables"
            assert body["key"] == "alice" and body["max"] == 2
            assert "max_tables 2" in body["message"] and "retry_after" not in body
            mine = h.get("/admin/tables?key=alice", headers=bearer(bob)).json()
            assert sorted(x["id"] for x in mine) == sorted(t["id"] for t in a)   # nothing made
            # tables_per_minute (the server's default for bob): 3, then 429 + Retry-After
            for _ in range(3):
                assert limited(s, bob).status_code == 201
            r = limited(s, bob)
            assert r.status_code == 429 and r.json()["limit"] == "tables_per_minute", r.text
            assert 1 <= int(r.headers["retry-after"]) <= 60 and r.json()["max"] == 3
            assert r.json()["retry_after"] == int(r.headers["retry-after"])
            # a table closed: alice may make one again
            assert h.post(f"/tables/{a[0]['id']}/close", headers=bearer(alice)).status_code == 200
            a[0] = limited(s, alice).json()
            # max_spectators (the default: 1) on alice's table, close code 4429
            t = a[1]
            first = SyncSeat(s, t["id"], t["spectator_token"])
            first.until("welcome")
            msg, code = ws_refusal(s, t["id"], t["spectator_token"])
            assert msg["code"] == "TooManyConnections" and "max_spectators 1" in msg["message"]
            assert code == 4429
            # SIGHUP: alice's own max_spectators 3 applies at once
            assert qipai("keys", "limit", "alice", "--file", str(f),
                         "--max-spectators", "3").returncode == 0
            s.proc.send_signal(signal.SIGHUP)
            wait_log(s, "keys reloaded")
            second = SyncSeat(s, t["id"], t["spectator_token"])
            second.until("welcome")
            # max_connections: carol's seats and spectators together (2)
            c = limited(s, carol).json()
            held = [SyncSeat(s, c["id"], c["seats"]["0"]), SyncSeat(s, c["id"],
                                                                    c["spectator_token"])]
            for x in held:
                x.until("welcome")
            msg, code = ws_refusal(s, c["id"], c["seats"]["0"])
            assert msg["code"] == "TooManyConnections" and "max_connections 2" in msg["message"]
            held.pop().close()
            # the metrics: per key
            text = h.get("/metrics", headers=bearer(bob)).text
            assert 'qipai_key_tables_open{key="alice"} 2.0' in text
            assert 'qipai_key_tables_open{key="bob"} 3.0' in text
            assert 'qipai_limit_refusals_total{key="alice",limit="max_tables"} 1.0' in text
            assert 'qipai_limit_refusals_total{key="bob",limit="tables_per_minute"} 1.0' in text
            assert 'qipai_key_spectators{key="alice"} 2.0' in text
            for x in (first, second, *held):
                x.close()
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log
    assert log.count("key 'alice' reached its limit of open tables") == 1
    assert "key 'bob' reached its limit of tables created a minute" in log
    for key in (alice, bob, carol):
        assert key not in log
    # the refusals' events name the key and the limit (one per reason logged in 10 s)
    events = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    refused = [(e["reason"], e.get("key"), e.get("limit")) for e in events
               if e.get("event") == "refused"]
    assert ("TooManyTables", "alice", "max_tables") in refused, refused
    assert ("TooManyConnections", "alice", "max_spectators") in refused, refused
