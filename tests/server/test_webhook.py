"""Issue 36, item 1: the operator's events — a transactional outbox
delivered to a webhook at least once, in order per table, signed; dead
events and their retry; ``GET /events``; a server SIGKILLed at random
moments loses none.  A real server process and a real receiver process
(tests/helpers/receiver.py) that fails at random: 500s, hangs, dropped
connections."""

from __future__ import annotations

import random
import threading
import time

import httpx
import pytest

from hostkit import PATIENCE, start_server
from webhooks import (
    SECRET, Receiver, Watcher, check_nets, check_received, db_events, make_room, wait_delivered,
    watch,
)

FAST = ("--webhook-backoff", "0.02", "--webhook-timeout", "0.5")


@pytest.fixture(autouse=True)
def _secret(monkeypatch):
    monkeypatch.setenv("QIPAI_WEBHOOK_SECRET", SECRET)


def test_every_event_is_delivered_in_order_signed_despite_a_failing_receiver(db_url, tmp_path):
    rx = Receiver(tmp_path, "--fail", "0.2", "--hang", "0.05", "--drop", "0.1",
                  "--hang-seconds", "1", "--fail-first", "1")
    served = start_server(db_url, tmp_path, "--webhook", rx.url, *FAST,
                          "--webhook-max-attempts", "100")
    try:
        tables = [make_room(served, hands=2, money=True) for _ in range(3)]
        threads = [threading.Thread(target=watch, args=(served, t)) for t in tables]
        for th in threads:
            th.start()
        for th in threads:
            th.join(3 * PATIENCE)
        wait_delivered(db_url, rx)
        delivered = check_received(db_url, rx)
        kinds = [g["kind"] for g in delivered if g["table"] == tables[0]["id"]]
        assert kinds == ["table_created", "hand_started", "hand_ended", "hand_started",
                         "hand_ended", "table_closed"]
        closed = [g for g in delivered if g["kind"] == "table_closed"]
        assert all(g["data"]["ended"] == "finished" and g["data"]["tally"]["hands_done"] == 2
                   for g in closed)
        ended = next(g for g in delivered if g["kind"] == "hand_ended")
        assert set(ended["data"]) >= {"hand", "end", "winners", "payments", "net", "totals",
                                      "reveal", "records"}
        assert len(ended["data"]["reveal"]["salt"]) == 64
        check_nets(db_url, delivered)
        assert any(g["status"] != 200 for g in rx.got())   # it did fail, and was retried
        with served.http() as h:
            text = h.get("/metrics").text
        assert "qipai_events_delivered_total" in text and "qipai_event_lag_seconds" in text
    finally:
        served.stop()
        rx.stop()


def test_a_dead_event_holds_its_table_until_retried(tmp_path):
    db = f"sqlite:///{tmp_path}/q.db"
    rx = Receiver(tmp_path, "--fail", "1")
    served = start_server(db, tmp_path, "--webhook", rx.url, *FAST,
                          "--webhook-max-attempts", "2")
    try:
        t = make_room(served, hands=1)   # table_created, hand_started: nobody plays
        with served.http() as h:
            end = time.monotonic() + PATIENCE
            while True:
                dead = h.get("/admin/events", params={"dead": "1"}).json()
                if dead["dead"]:
                    break
                assert time.monotonic() < end
                time.sleep(0.05)
            assert [e["kind"] for e in dead["events"]] == ["table_created"]
            assert dead["events"][0]["attempts"] == 2 and dead["events"][0]["error"] == "HTTP 500"
            assert dead["pending"] == 1     # hand_started waits behind it
            assert {r["kind"] for r in rx.got()} == {"table_created"}
            assert "qipai_events_dead" in h.get("/metrics").text   # (counted every 2 s)
            rx.stop()
            rx = Receiver(tmp_path, port=rx.port)   # now it takes everything
            assert h.post("/admin/events/retry").json() == {"retried": 1}
            wait_delivered(db, rx)
            assert h.get("/admin/events").json() == {"pending": 0, "dead": 0, "events": []}
        got = [g for g in rx.got() if g["status"] == 200]
        assert [g["kind"] for g in got] == ["table_created", "hand_started"]
        assert got[0]["table"] == t["id"]
    finally:
        served.stop()
        rx.stop()


def test_events_long_poll_and_bad_ids(tmp_path):
    db = f"sqlite:///{tmp_path}/q.db"
    served = start_server(db, tmp_path)   # no webhook: the events are still written
    try:
        with served.http() as h:
            r = h.get("/events", params={"after": "abc"})
            assert r.status_code == 400 and r.json()["error"] == "BadMessage"
            assert "after" in r.json()["message"]
            r = h.get("/events", params={"after": "-1"})
            assert r.status_code == 400
            for name, value, what in (("wait", "x", "seconds"), ("limit", "1" * 19, "events"),
                                      ("after", "007", "an event id")):
                r = h.get("/events", params={name: value})   # each named as what it is
                assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text
                m = r.json()["message"]
                assert m.startswith(f"{name} must be") and what in m and value in m, m
            assert h.get("/events").json() == {"events": [], "last": 0}
            answer: dict = {}

            def poll() -> None:
                with served.http() as h2:
                    answer.update(h2.get("/events", params={"after": 0, "wait": 30}).json())

            th = threading.Thread(target=poll)
            th.start()
            t = make_room(served, hands=1)
            th.join(PATIENCE)
            assert answer["events"] and answer["events"][0]["kind"] == "table_created"
            assert answer["events"][0]["table"] == t["id"]
            last = answer["last"]
            rest = h.get("/events", params={"after": last}).json()
            assert [e["kind"] for e in rest["events"]] == (
                ["hand_started"] if len(answer["events"]) == 1 else [])
            every = h.get("/events", params={"after": 0}).json()
            assert [e["id"] for e in every["events"]] == sorted(e["id"] for e in every["events"])
            # a webhook that is not http(s), or no secret: refused at start, one line
        bad = start_server_fails(db, tmp_path, "--webhook", "ftp://example.com/x")
        assert "http://" in bad and len(bad.strip().splitlines()) == 1
    finally:
        served.stop()


def start_server_fails(db: str, tmp_path, *args: str) -> str:
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--port", "0", "--db", db,
                        *args], capture_output=True, text=True, timeout=PATIENCE)
    assert p.returncode != 0
    return p.stderr


@pytest.mark.parametrize("url, words", [
    ("http://127.0.0.1:99999/hook", "Port out of range"),
    ("http://127.0.0.1:abc/hook", "Port could not be cast"),
    ("http://127.0.0.1:0/hook", "port must be 1 to 65535"),
    ("http://user:hunter2@127.0.0.1:99999/hook", "Port out of range"),
])
def test_a_webhook_url_with_a_bad_port_is_refused_at_start(tmp_path, url, words):
    """A URL no POST can ever reach is refused at start, one line naming
    --webhook (not accepted, then failed at every attempt of every event
    until each is dead); a password in it is not repeated."""
    err = start_server_fails(f"sqlite:///{tmp_path}/q.db", tmp_path, "--webhook", url)
    assert "--webhook" in err and words in err and len(err.strip().splitlines()) == 1, err
    assert "hunter2" not in err
    assert not (tmp_path / "q.db").exists()


def test_a_webhook_without_a_secret_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("QIPAI_WEBHOOK_SECRET")
    err = start_server_fails(f"sqlite:///{tmp_path}/q.db", tmp_path,
                             "--webhook", "http://127.0.0.1:9/x")
    assert "QIPAI_WEBHOOK_SECRET" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_event(db_url, tmp_path):
    rng = random.Random()
    rx = Receiver(tmp_path, "--fail", "0.1", "--hang", "0.02", "--drop", "0.05",
                  "--hang-seconds", "1")
    args = ("--webhook", rx.url, *FAST, "--webhook-max-attempts", "1000")
    served = start_server(db_url, tmp_path, *args)
    tables = [make_room(served, hands=6, money=i != 0) for i in range(3)]
    kills = 0
    try:
        while kills < 22:
            if kills % 3 == 0:
                try:
                    tables.append(make_room(served, hands=3, money=True))
                except (httpx.HTTPError, AssertionError):
                    pass
            w = Watcher(served, tables)
            time.sleep(rng.uniform(0.05, 0.6))   # a random moment, not a wait for anything
            served.kill()
            kills += 1
            w.stop()
            served.log.close()
            served = start_server(db_url, tmp_path, *args)
        threads = [threading.Thread(target=watch, args=(served, t)) for t in tables]
        for th in threads:
            th.start()
        for th in threads:
            th.join(3 * PATIENCE)
        wait_delivered(db_url, rx)
        delivered = check_received(db_url, rx)
        check_nets(db_url, delivered)
        closed = {g["table"] for g in delivered if g["kind"] == "table_closed"}
        assert closed == {t["id"] for t in tables}
        assert len(db_events(db_url)) > 4 * len(tables)
    finally:
        served.stop()
        rx.stop()


def test_timeouts_and_tuoguan_are_events_and_a_key_sees_its_own(tmp_path):
    from hostkit import SyncSeat
    from test_keys import bearer, new_key

    f = tmp_path / "keys.json"
    alice, bob = new_key(f, "alice"), new_key(f, "bob")
    served = start_server(f"sqlite:///{tmp_path}/q.db", tmp_path, "--keys", str(f),
                          "--turn-timeout", "0.3", "--seed", "5")
    try:
        with served.http() as h:
            r = h.post("/tables", json={"bots": [0, 2, 3], "hands": 1}, headers=bearer(alice))
            assert r.status_code == 201, r.text
            t = r.json()
            r = h.post("/tables", json={"bots": [0, 1, 2, 3]}, headers=bearer(bob))
            assert r.status_code == 201, r.text
            theirs = r.json()["id"]
            assert h.get("/events").status_code == 401
            seat = SyncSeat(served, t["id"], t["seats"]["1"], strict=False)
            seat.until("welcome")   # seat 1 never answers: two timeouts, then 托管
            got: list = []
            after = 0
            end = time.monotonic() + PATIENCE
            while not any(e["kind"] == "tuoguan" for e in got):
                assert time.monotonic() < end
                ans = h.get("/events", params={"after": after, "wait": 10},
                            headers=bearer(alice)).json()
                got += ans["events"]
                after = ans["last"]
            seat.close()
            assert {e["table"] for e in got} == {t["id"]}
            kinds = [e["kind"] for e in got]
            assert kinds[:2] == ["table_created", "hand_started"]
            assert kinds[2:5] == ["timeout", "timeout", "tuoguan"], kinds
            assert got[4]["data"] == {"hand": 0, "seat": 1, "on": True, "why": "timeouts"}
            assert [e["data"]["seat"] for e in got[2:4]] == [1, 1]
            mine = h.get("/events", params={"after": 0}, headers=bearer(bob)).json()
            assert {e["table"] for e in mine["events"]} == {theirs}
    finally:
        served.stop()
