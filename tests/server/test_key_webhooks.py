"""Issue 36, item 1: each operator key's own webhook (``qipai keys new NAME
--webhook URL``, ``qipai keys webhook NAME URL``): a table's events go to
its key's webhook, signed with its key's secret; a table of a key without
one (or of no key) to ``qipai serve --webhook``, else nowhere (``GET
/events``).  Real server and receiver processes (tests/helpers/webhooks.py),
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import signal
import threading
import time

import pytest

from hostkit import PATIENCE, start_server
from test_keys import bearer, new_key, qipai, wait_log
from test_webhook import FAST, start_server_fails
from webhooks import (
    SECRET, Receiver, check_received, db_events, make_room, wait_delivered, watch,
)


@pytest.fixture(autouse=True)
def _secret(monkeypatch):
    monkeypatch.setenv("QIPAI_WEBHOOK_SECRET", SECRET)


def hook_secret(path, name: str) -> str:
    """The webhook signing secret the keys file keeps for key ``name``."""
    entry = next(e for e in json.loads(path.read_text())["keys"] if e["name"] == name)
    return entry["webhook_secret"]


def set_hook(path, name: str, url: str) -> None:
    r = qipai("keys", "webhook", name, url, "--file", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [name, f"webhook={url}"]


def play(served, tables) -> None:
    """Watch each table until it closes (its bots play)."""
    threads = [threading.Thread(target=watch, args=(served, t)) for t in tables]
    for th in threads:
        th.start()
    for th in threads:
        th.join(3 * PATIENCE)


def test_each_key_gets_its_own_tables_events_signed_with_its_own_secret(db_url, tmp_path):
    f = tmp_path / "keys.json"
    alice, bob, carol = (new_key(f, n) for n in ("alice", "bob", "carol"))
    # a webhook made for alice and bob now (their secrets, printed once, kept by the
    # file); the receivers started with them; then the URLs set (the secret kept)
    for name in ("alice", "bob"):
        set_hook(f, name, "http://127.0.0.1:9/placeholder")
    rx_a = Receiver(tmp_path, "--fail-first", "1", "--fail", "0.2", name="alice",
                    secret=hook_secret(f, "alice"))
    rx_b = Receiver(tmp_path, "--fail", "0.2", name="bob", secret=hook_secret(f, "bob"))
    rx_g = Receiver(tmp_path, name="global")   # QIPAI_WEBHOOK_SECRET
    assert len({hook_secret(f, "alice"), hook_secret(f, "bob"), SECRET}) == 3
    set_hook(f, "alice", rx_a.url)
    set_hook(f, "bob", rx_b.url)
    served = start_server(db_url, tmp_path, "--keys", str(f), "--webhook", rx_g.url, *FAST,
                          "--webhook-max-attempts", "100")
    try:
        mine = {"alice": [make_room(served, hands=2, money=True, key=alice) for _ in range(2)],
                "bob": [make_room(served, hands=1, key=bob) for _ in range(2)],
                "carol": [make_room(served, hands=1, key=carol)]}   # no webhook of its own
        play(served, [t for ts in mine.values() for t in ts])
        for who, rx in (("alice", rx_a), ("bob", rx_b), ("carol", rx_g)):
            ids = {t["id"] for t in mine[who]}
            wait_delivered(db_url, rx, f"{who}'s events delivered", tables=ids)
            # every event of its tables, in order per table, signed with its secret — and
            # not one of another key's table
            got = check_received(db_url, rx, tables=ids)
            for tid in ids:
                kinds = [g["kind"] for g in got if g["table"] == tid]
                assert kinds[0] == "table_created" and kinds[-1] == "table_closed", kinds
        assert any(g["status"] != 200 for g in rx_a.got())   # failed, and retried
        with served.http() as h:
            # GET /events: a key reads its own tables' events only
            for who, key in (("alice", alice), ("bob", bob)):
                listed = h.get("/events", params={"after": 0}, headers=bearer(key)).json()
                assert {e["table"] for e in listed["events"]} == {t["id"] for t in mine[who]}
            answer = h.get("/admin/events", headers=bearer(carol)).json()
            assert answer == {"pending": 0, "dead": 0, "events": []}
            assert "qipai_events_delivered_total" in h.get("/metrics",
                                                           headers=bearer(bob)).text
    finally:
        served.stop()
        for rx in (rx_a, rx_b, rx_g):
            rx.stop()
    log = served.log_path.read_text()
    assert "Traceback" not in log
    for secret in (hook_secret(f, "alice"), hook_secret(f, "bob"), SECRET):
        assert secret not in log
    assert "the webhook of their table's key (2 keys with one) else the webhook" in log


def test_without_a_server_webhook_a_keys_tables_events_stay_in_get_events(tmp_path):
    """A key without a webhook, on a server without --webhook: its events
    are read from GET /events only (nothing delivers them); the key with
    one gets its own."""
    db = f"sqlite:///{tmp_path}/q.db"
    f = tmp_path / "keys.json"
    alice, bob = new_key(f, "alice"), new_key(f, "bob")
    set_hook(f, "alice", "http://127.0.0.1:9/placeholder")
    rx = Receiver(tmp_path, name="alice", secret=hook_secret(f, "alice"))
    set_hook(f, "alice", rx.url)
    served = start_server(db, tmp_path, "--keys", str(f), *FAST)
    try:
        a, b = make_room(served, hands=1, key=alice), make_room(served, hands=1, key=bob)
        play(served, [a, b])
        wait_delivered(db, rx, tables={a["id"]})
        check_received(db, rx, tables={a["id"]})
        theirs = [r for r in db_events(db) if r["table_id"] == b["id"]]
        assert theirs and all(r["delivered"] is None and r["attempts"] == 0 for r in theirs)
        with served.http() as h:
            listed = h.get("/events", params={"after": 0}, headers=bearer(bob)).json()
            assert [e["id"] for e in listed["events"]] == [r["id"] for r in theirs]
            # pending: those a webhook delivers (alice's, delivered)
            assert h.get("/admin/events", headers=bearer(bob)).json()["pending"] == 0
    finally:
        served.stop()
        rx.stop()
    assert "read from GET /events only" in served.log_path.read_text()


def test_sighup_sends_a_keys_undelivered_events_to_its_new_webhook(db_url, tmp_path):
    """A key's webhook changed in the file and SIGHUP: its tables' events not
    yet delivered go to the new one, at once (not after the old address's
    backoff: 300 s or more here); a keys file with a bad webhook then keeps
    the keys held, and their webhooks."""
    f = tmp_path / "keys.json"
    alice = new_key(f, "alice")
    set_hook(f, "alice", "http://127.0.0.1:9/placeholder")
    secret = hook_secret(f, "alice")
    old = Receiver(tmp_path, "--fail", "1", name="old", secret=secret)   # takes nothing
    set_hook(f, "alice", old.url)
    served = start_server(db_url, tmp_path, "--keys", str(f), "--webhook-backoff", "600",
                          "--webhook-timeout", "0.5")
    new = None
    try:
        t = make_room(served, hands=2, key=alice)   # table_created, hand_started: waiting
        end = time.monotonic() + PATIENCE
        while not old.got():   # its first attempt failed; the next in 300 s or more
            assert time.monotonic() < end, "the old webhook was never tried"
            time.sleep(0.05)
        new = Receiver(tmp_path, name="new", secret=secret)
        set_hook(f, "alice", new.url)
        served.proc.send_signal(signal.SIGHUP)
        wait_log(served, "webhook: key 'alice': its tables' events not yet delivered now go "
                         f"to its own webhook {new.url}")
        play(served, [t])
        wait_delivered(db_url, new, tables={t["id"]})
        got = check_received(db_url, new, tables={t["id"]})
        assert [g["kind"] for g in got] == ["table_created", "hand_started", "hand_ended",
                                            "hand_started", "hand_ended", "table_closed"]
        assert {g["id"] for g in old.got()} <= {got[0]["id"]}   # only the first, refused
        # a bad webhook in the file: refused at the reload; the keys held stay
        entries = json.loads(f.read_text())
        entries["keys"][0]["webhook"] = "ftp://example.com/x"
        f.write_text(json.dumps(entries))
        served.proc.send_signal(signal.SIGHUP)
        wait_log(served, "keys not reloaded")
        u = make_room(served, hands=1, key=alice)
        play(served, [u])
        wait_delivered(db_url, new, tables={u["id"]})
        check_received(db_url, new, tables={t["id"], u["id"]})
    finally:
        served.stop()
        old.stop()
        if new is not None:
            new.stop()
    log = served.log_path.read_text()
    assert "keys file" in log and "key 'alice': webhook must be an http:// or https://" in log
    assert secret not in log and "Traceback" not in log


@pytest.mark.parametrize("webhook, words", [
    ("ftp://example.com/x", "must be an http:// or https:// URL"),
    ("http://user:hunter2@127.0.0.1:99999/hook", "Port out of range"),
    ("/relative/path", "must be an http:// or https:// URL"),
    (42, "must be a URL"),
    (None, "needs its webhook_secret"),
])
def test_a_bad_webhook_in_the_keys_file_is_refused_at_start(tmp_path, webhook, words):
    f = tmp_path / "keys.json"
    new_key(f, "alice")
    new_key(f, "bob")
    entries = json.loads(f.read_text())
    if webhook is None:   # a webhook without its secret
        entries["keys"][1]["webhook"] = "http://127.0.0.1:9/x"
    else:
        entries["keys"][1].update(webhook=webhook, webhook_secret="s")
    f.write_text(json.dumps(entries))
    err = start_server_fails(f"sqlite:///{tmp_path}/q.db", tmp_path, "--keys", str(f))
    assert len(err.strip().splitlines()) == 1, err
    assert "key 'bob'" in err and words in err, err
    assert "hunter2" not in err and "Traceback" not in err
    assert not (tmp_path / "q.db").exists()


def test_keys_webhook_cli(tmp_path):
    f = tmp_path / "keys.json"
    r = qipai("keys", "new", "alice", "--file", str(f), "--webhook", "https://w.example/a")
    assert r.returncode == 0, r.stderr
    secret = hook_secret(f, "alice")
    assert secret not in r.stdout and r.stderr.count(secret) == 1   # shown once
    assert "webhook signing secret of key 'alice'" in r.stderr
    new_key(f, "bob")
    r = qipai("keys", "list", "--file", str(f))
    assert r.stdout.splitlines() == ["alice webhook=https://w.example/a", "bob"]
    # a new URL keeps the secret; --new-secret makes (and prints) another
    r = qipai("keys", "webhook", "alice", "http://u:pw@127.0.0.1:8080/b", "--file", str(f))
    assert r.returncode == 0 and r.stderr == "" and hook_secret(f, "alice") == secret
    assert r.stdout.strip() == "alice webhook=http://u:***@127.0.0.1:8080/b"
    r = qipai("keys", "webhook", "alice", "http://127.0.0.1:8080/b", "--new-secret",
              "--file", str(f))
    assert r.returncode == 0 and hook_secret(f, "alice") != secret
    assert r.stderr.count(hook_secret(f, "alice")) == 1
    # a key without one is given one (its secret printed)
    r = qipai("keys", "webhook", "bob", "http://127.0.0.1:8080/c", "--file", str(f))
    assert r.returncode == 0 and hook_secret(f, "bob") in r.stderr
    r = qipai("keys", "limit", "bob", "--max-tables", "3", "--file", str(f))
    assert r.stdout.strip() == "bob max_tables=3 webhook=http://127.0.0.1:8080/c"
    # cleared: the server's --webhook again, the secret gone from the file
    r = qipai("keys", "webhook", "bob", "--default", "--file", str(f))
    assert r.returncode == 0 and r.stdout.strip() == "bob max_tables=3"
    assert "webhook_secret" not in next(e for e in json.loads(f.read_text())["keys"]
                                        if e["name"] == "bob")
    # refused, one line each, nothing changed
    before = f.read_text()
    for args in (("webhook", "bob", "ftp://x/y"), ("webhook", "bob", "http://h:99999/"),
                 ("webhook", "nobody", "http://h/"), ("webhook", "bob"),
                 ("webhook", "bob", "http://h/", "--default"),
                 ("new", "carol", "--webhook", "mailto:x@y")):
        r = qipai("keys", *args, "--file", str(f))
        assert r.returncode == 2 and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stderr.strip(), args
    assert f.read_text() == before


def test_retention_keeps_a_keys_undelivered_events_and_prunes_the_unsent(db_url, tmp_path):
    """--retention with key webhooks and no --webhook: a pruned table's
    events that its key's webhook has not taken are kept (still sent); a
    table's whose key has no webhook are deleted with it (nothing sends them)."""
    f = tmp_path / "keys.json"
    alice, bob = new_key(f, "alice"), new_key(f, "bob")
    set_hook(f, "alice", "http://127.0.0.1:9/placeholder")
    rx = Receiver(tmp_path, "--fail", "1", name="alice", secret=hook_secret(f, "alice"))
    set_hook(f, "alice", rx.url)
    served = start_server(db_url, tmp_path, "--keys", str(f), "--retention", "1", *FAST,
                          "--webhook-max-attempts", "1000")
    try:
        a, b = make_room(served, hands=1, key=alice), make_room(served, hands=1, key=bob)
        play(served, [a, b])
        with served.http() as h:
            end = time.monotonic() + PATIENCE
            while any(h.get(f"/tables/{t['id']}").status_code != 404 for t in (a, b)):
                assert time.monotonic() < end, "never pruned"
                time.sleep(0.1)
        left = db_events(db_url)
        assert {r["table_id"] for r in left} == {a["id"]}
        assert [r["kind"] for r in left][-1] == "table_closed"
        assert all(r["delivered"] is None for r in left)
    finally:
        served.stop()
        rx.stop()
    assert "Traceback" not in served.log_path.read_text()
