"""A PostgreSQL database that waits or stops answering while ``qipai serve``
runs: nothing of the server waits for it in the event loop, ``GET
/health`` says what waits, and SIGTERM still stops the server.

Real PostgreSQL (another session's ``LOCK TABLE`` holds the server's
statements; ``SIGSTOP`` of every PostgreSQL process is a database that
answers nothing), a real ``qipai serve``.  Waits are polls bounded by
``hostkit.PATIENCE``; the 5 s client timeouts below bound a loop that
answers nothing (before these fixes: until the database answered), they
time nothing that works."""

from __future__ import annotations

import signal
import threading

import httpx
import psycopg
import pytest

from hostkit import PATIENCE, SyncSeat, create, start_server
from test_lock_lost import _freeze, lock_holders, poll, terminate_lock

SEED = 7


@pytest.fixture
def pg_url(pg_cluster) -> str:
    return pg_cluster.create_database()


def waiting_on_locks(url: str, other_than: int, like: str = "%") -> int:
    """Sessions other than ``other_than`` whose statement (``like``) waits
    for a table lock."""
    with psycopg.connect(url, autocommit=True) as c:
        return c.execute("select count(*) from pg_stat_activity where wait_event_type = 'Lock' "
                         "and pid <> %s and query ilike %s", (other_than, like)).fetchone()[0]


@pytest.mark.slow   # a server start, the database held for a while
def test_after_a_failed_write_the_hand_is_read_back_off_the_event_loop(pg_url, tmp_path):
    """The writer's insert waits for a lock another session holds; its
    session is then ended, so the write fails and the table reads its hand
    back — a read that waits for the same lock.  Meanwhile the server
    answers (``GET /health``: the lost lock; the table list).  Before, the
    re-read ran in the event loop: the whole server answered nothing until
    the lock went.  Once it goes, the hand is read back: the spectator is
    welcomed again and told the lock is lost; nothing unacknowledged was
    shown."""
    served = start_server(pg_url, tmp_path, "--seed", str(SEED))
    blocker = psycopg.connect(pg_url)
    me = blocker.info.backend_pid
    try:
        t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])
        spectator = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
        spectator.until("events")                      # the bots play, so they write
        blocker.execute("LOCK TABLE qipai_actions, qipai_hands IN ACCESS EXCLUSIVE MODE")
        assert poll(lambda: waiting_on_locks(pg_url, me, "%qipai_actions%"),
                    lambda n: n >= 1) >= 1             # the writer's insert waits
        terminate_lock(pg_url)                         # its session ends: the write fails
        assert poll(lambda: waiting_on_locks(pg_url, me, "%from qipai_hands%"),
                    lambda n: n >= 1) >= 1             # the table's re-read waits
        with httpx.Client(base_url=served.url, timeout=5.0) as h:
            r = poll(lambda: h.get("/health"), lambda r: r.json()["status"] == "lock-lost")
            assert r.status_code == 503 and r.json()["status"] == "lock-lost", r.text
            assert t["id"] in [x["id"] for x in h.get("/tables").json()]
            assert waiting_on_locks(pg_url, me, "%from qipai_hands%") >= 1   # still waiting
        blocker.rollback()                             # the lock goes: the read answers
        spectator.until("welcome")
        err = spectator.until("error")
        assert err["code"] == "LockLost", err
        assert served.proc.poll() is None              # serving (/health: lock-lost)
    finally:
        blocker.close()
        served.stop()
    log = served.log_path.read_text()
    assert log.count("LOCK LOST") == 1 and "Traceback" not in log, log


@pytest.mark.slow   # a server start, two stalls of a second or more
def test_health_says_stalled_while_a_read_or_a_new_table_waits(pg_url, tmp_path):
    """Not only a batch of writes: a request's read, and a new table's
    write, that wait longer than ``--stall-seconds`` make ``GET /health``
    503 ``stalled``, naming what waits; the log says so, and says when the
    stall is over.  Before, ``/health`` was ``ok`` while they waited."""
    served = start_server(pg_url, tmp_path, "--stall-seconds", "1", "--seed", str(SEED))
    blocker = psycopg.connect(pg_url)
    answers: list[httpx.Response] = []

    def ask(method: str, path: str, **kw) -> threading.Thread:
        def run() -> None:
            with httpx.Client(base_url=served.url, timeout=PATIENCE) as c:
                answers.append(c.request(method, path, **kw))
        th = threading.Thread(target=run)
        th.start()
        return th

    try:
        with httpx.Client(base_url=served.url, timeout=5.0) as h:
            for lock, method, path, kw, what, status in (
                    ("qipai_hands", "GET", "/records", {}, "a read", 200),
                    ("qipai_tables", "POST", "/tables", {"json": {"variant": "guilin-mahjong"}},
                     "a new table's write", 201)):
                blocker.execute(f"LOCK TABLE {lock} IN ACCESS EXCLUSIVE MODE")
                waiting = ask(method, path, **kw)
                r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
                assert r.json()["status"] == "stalled", r.text
                assert r.json()["message"].startswith(f"{what} has waited"), r.text
                blocker.rollback()
                waiting.join(PATIENCE)
                assert answers[-1].status_code == status, answers[-1].text
                r = poll(lambda: h.get("/health"), lambda r: r.status_code == 200)
                assert r.json()["status"] == "ok", r.text
        log = poll(served.log_path.read_text, lambda t: t.count("the stall is over") == 2)
        assert "STALLED: a read has waited" in log, log
        assert "STALLED: a new table's write has waited" in log, log
        assert log.count("STALLED") == 2 and log.count("the stall is over") == 2, log
    finally:
        blocker.close()
        served.stop()
    assert "Traceback" not in served.log_path.read_text()


@pytest.mark.slow   # its own cluster; the watchdog's 10 s answer limit
def test_sigterm_stops_a_server_whose_requests_wait_on_a_database_that_answers_nothing(
        tmp_path):
    """The database stops answering while requests wait for it — a read
    (``GET /records``) and a new table (``POST /tables``) — and the lock is
    then lost.  SIGTERM stops the server: the waiting requests are given up
    after the shutdown's limit, each answered 503 saying so.  Before, uvicorn waited for their answers,
    and the store's close for the new table's write: as long as the
    database hung, SIGTERM or not."""
    from pgcluster import Cluster

    cluster = Cluster.start()
    frozen = False
    try:
        url = cluster.create_database()
        served = start_server(url, tmp_path)
        waiting: list[threading.Thread] = []
        answers: list[httpx.Response] = []

        def ask(method: str, path: str, **kw) -> None:
            with httpx.Client(base_url=served.url, timeout=PATIENCE) as c:
                answers.append(c.request(method, path, **kw))

        try:
            t = create(served, "guilin-mahjong", bots=[0, 1, 2, 3])
            spectator = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
            spectator.until("events")
            _freeze(cluster, signal.SIGSTOP)
            frozen = True
            for method, path, kw in (("GET", "/records", {}),
                                     ("POST", "/tables", {"json": {"variant": "guilin-mahjong"}})):
                waiting.append(threading.Thread(target=ask, args=(method, path), kwargs=kw))
                waiting[-1].start()
            with served.http() as h:
                r = poll(lambda: h.get("/health"), lambda r: r.json()["status"] == "lock-lost")
                assert r.status_code == 503 and r.json()["status"] == "lock-lost", r.text
            assert all(w.is_alive() for w in waiting)    # both still wait
            served.proc.terminate()
            assert served.proc.wait(PATIENCE) is not None  # (a hang bound, not a timing)
        finally:
            if frozen:
                _freeze(cluster, signal.SIGCONT)
            served.stop()
            for w in waiting:
                w.join(PATIENCE)
        # each waiting request was answered that the server stopped first
        assert len(answers) == 2, answers
        for a in answers:
            assert a.status_code == 503 and a.json()["error"] == "Unavailable", a.text
            assert "the server is stopping" in a.json()["message"], a.text
        assert poll(lambda: lock_holders(url), lambda h: h == []) == []
        log = served.log_path.read_text()
        assert "LOCK LOST" in log and "Traceback" not in log, log
    finally:
        cluster.stop()


@pytest.mark.slow   # a server start, the database held for a while
def test_an_act_during_the_hands_re_read_is_refused_unavailable_before_it_is_checked(
        pg_url, tmp_path):
    """A seat's act is written while another session holds the tables
    locked; the writer's statement is cancelled (the write fails, the lock
    is kept) and the table reads its hand back, a read that waits too.  The
    same act sent again meanwhile is refused ``Unavailable`` — before, it
    was checked against the table in memory and refused ``StaleSeq``,
    naming a decision that exists only because of actions the database
    never took; a ``resync`` is refused ``Unavailable`` too.  Once the read
    answers the seat is welcomed and offered its decision again, same seq."""
    served = start_server(pg_url, tmp_path, "--seed", str(SEED), "--turn-timeout", "600")
    blocker = psycopg.connect(pg_url)
    me = blocker.info.backend_pid
    try:
        t = create(served, "guilin-mahjong", bots=[1, 2, 3])
        s0 = SyncSeat(served, t["id"], t["seats"]["0"], strict=False)
        d = s0.next_decision()
        blocker.execute("LOCK TABLE qipai_actions, qipai_hands IN ACCESS EXCLUSIVE MODE")
        act = {"type": "act", "hand": d["hand"], "seq": d["seq"], "action": d["legal"][0]}
        s0.send(act)
        assert poll(lambda: waiting_on_locks(pg_url, me, "%qipai_actions%"),
                    lambda n: n >= 1) >= 1             # its write waits
        [writer] = lock_holders(pg_url)
        with psycopg.connect(pg_url, autocommit=True) as c:
            poll(lambda: c.execute("select pg_cancel_backend(%s)", (writer,)) and
                 "write failed" in served.log_path.read_text(), bool)
        assert "write failed, re-reading the hand" in served.log_path.read_text()
        assert poll(lambda: waiting_on_locks(pg_url, me, "%from qipai_hands%"),
                    lambda n: n >= 1) >= 1             # the re-read waits
        first = s0.until("error")
        assert first["code"] == "Unavailable" and first["seq"] == d["seq"], first
        s0.send(act)
        again = s0.until("error")
        assert again["code"] == "Unavailable" and again["seq"] == d["seq"], again
        assert "reading its hand back" in again["message"], again
        s0.send({"type": "resync"})
        r = s0.until("error")
        assert r["code"] == "Unavailable" and "welcome follows" in r["message"], r
        blocker.rollback()
        s0.until("welcome")
        s0.decide = None
        assert s0.next_decision()["seq"] == d["seq"]   # the act was not taken
    finally:
        blocker.close()
        served.stop()
    assert "Traceback" not in served.log_path.read_text()
