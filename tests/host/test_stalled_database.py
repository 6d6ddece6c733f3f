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

import contextlib
import threading

import httpx
import psycopg
import pytest

from hostkit import PATIENCE, SyncSeat, create, refusal, start_server
from test_lock_lost import frozen_later, lock_holders, poll, terminate_lock

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


@contextlib.contextmanager
def bots_write_then_locked(pg_url: str, tmp_path):
    """A server (seeded) with an all-bot table writing, watched by its
    spectator; then another session takes ``LOCK TABLE`` on the actions and
    hands, and the writer's insert waits for it.  Yields ``(served, table,
    spectator, blocker, blocker's pid)``; on leaving, the blocker's session
    and the server are ended."""
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
        yield served, t, spectator, blocker, me
    finally:
        blocker.close()
        served.stop()


@contextlib.contextmanager
def seat_acts_then_locked(pg_url: str, tmp_path):
    """A server (seeded, long turns) with a table whose seat 0 is human, the
    others bots; once seat 0 has a decision, another session takes ``LOCK
    TABLE`` on the actions and hands and seat 0 acts (its first legal
    action), so the act's write waits.  Yields ``(served, seat 0, its
    decision, the act sent, blocker, blocker's pid)``; on leaving, the
    blocker's session and the server are ended."""
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
        yield served, s0, d, act, blocker, me
    finally:
        blocker.close()
        served.stop()


@contextlib.asynccontextmanager
async def writes_by_hand(tmp_path, plugins: tuple[str, ...] = ()):
    """A real table (SQLite, seeded, every seat human, house ``plugins``)
    whose writes are not committed but collected: yields ``(table, writes)``,
    each write to be answered by hand (``w.done(None)``: committed;
    ``w.done(exc)``: failed)."""
    from qipai.host import protocol as P
    from qipai.server.state import Server

    server = Server(f"sqlite:///{tmp_path}/q.db", seed=SEED, quiet=True, plugins=plugins)
    try:
        t, _ = await server.create(P.CreateTable(variant="guilin-mahjong", bots=[]))
        writes: list = []
        server.store.submit = writes.append
        yield t, writes
    finally:
        server.store.close()


def fail_the_write(pg_url: str, served) -> None:
    """Cancel the writer's statement (it waits for a lock) until the write
    has failed: the server lock is kept (the session lives), the table
    reads its hand back."""
    [writer] = lock_holders(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as c:
        poll(lambda: c.execute("select pg_cancel_backend(%s)", (writer,)) and
             "write failed" in served.log_path.read_text(), bool)
    assert "write failed, re-reading the hand" in served.log_path.read_text()


def the_reread_waits(pg_url: str, me: int) -> None:
    assert poll(lambda: waiting_on_locks(pg_url, me, "%from qipai_hands%"),
                lambda n: n >= 1) >= 1             # the table's re-read waits


@pytest.mark.slow   # a server start, the database held for a while
def test_after_a_failed_write_the_hand_is_read_back_off_the_event_loop(pg_url, tmp_path):
    """The writer's insert waits for a lock another session holds; its
    statement is then cancelled, so the write fails and the table reads its
    hand back — a read that waits for the same lock.  Meanwhile the server
    answers (``GET /health``, the table list): the re-read does not run in
    the event loop, where the whole server would answer nothing until the
    lock went.  A connection made meanwhile, which pings, gets its
    ``welcome`` first once the hand is back, then its ``pong``.
    Once the lock goes, the spectator is welcomed again."""
    with bots_write_then_locked(pg_url, tmp_path) as (served, t, spectator, blocker, me):
        fail_the_write(pg_url, served)
        the_reread_waits(pg_url, me)
        with httpx.Client(base_url=served.url, timeout=5.0) as h:
            assert h.get("/health").json()["status"] in ("ok", "stalled")
            assert t["id"] in [x["id"] for x in h.get("/tables").json()]
            assert waiting_on_locks(pg_url, me, "%from qipai_hands%") >= 1   # still waiting
        late = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
        late.send({"type": "ping"})
        spectator.received.clear()
        blocker.rollback()                             # the lock goes: the read answers
        spectator.until("welcome")
        assert [m["type"] for m in spectator.received][:1] == ["welcome"], spectator.received
        assert late.recv()["type"] == "welcome"
        late.until("pong")
        assert served.proc.poll() is None
    log = served.log_path.read_text()
    assert "LOCK LOST" not in log and "Traceback" not in log, log


@pytest.mark.slow   # a server start, the database held for a while
def test_a_hand_that_cannot_be_read_back_halts_its_table_and_says_so(pg_url, tmp_path):
    """The write fails (as above) and then the re-read fails too (its
    statement cancelled): the table is halted.  ``GET /health`` answers 503
    ``halted`` naming it, ``GET /tables`` leaves it out, ``GET
    /tables/{id}`` answers what the database holds and ``halted``, a
    connection without a token is refused ``BadToken`` (not the halt's
    message), and no message to a client holds the database's own words
    (such as the re-read's ``QueryCanceled`` text); the log has them."""
    with bots_write_then_locked(pg_url, tmp_path) as (served, t, spectator, blocker, me):
        fail_the_write(pg_url, served)
        the_reread_waits(pg_url, me)
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute("select pg_cancel_backend(pid) from pg_stat_activity where pid <> %s "
                      "and wait_event_type = 'Lock' and query ilike '%%from qipai_hands%%'",
                      (me,))
        told = spectator.until("error", lambda m: m.get("seq") is None)
        assert told["code"] == "Unavailable" and "re-read" in told["message"], told
        blocker.rollback()
        with httpx.Client(base_url=served.url, timeout=5.0) as h:
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
            body = r.json()
            assert body["status"] == "halted" and body["halted"] == 1, body
            assert t["id"] in body["message"]
            assert t["id"] not in [x["id"] for x in h.get("/tables").json()]
            got = h.get(f"/tables/{t['id']}").json()
            assert got["halted"] == "Unavailable" and got["open"] is True, got
            assert "commitment" not in got                 # the database's answer
            said = [body["message"], got["message"], told["message"]]
        assert refusal(served, t["id"], None)["code"] == "BadToken"
        halted = refusal(served, t["id"], t["spectator_token"])
        assert halted["code"] == "Unavailable"
        said.append(halted["message"])
        for text in said:
            assert "cancel" not in text.lower() and "QueryCanceled" not in text, text
    log = served.log_path.read_text()
    assert "could not be re-read" in log and "QueryCanceled" in log, log
    assert "Traceback" not in log, log


@pytest.mark.slow   # a server start, the database held for a while
def test_a_lost_lock_halts_a_table_without_reading_its_hand_back(pg_url, tmp_path):
    """The writer's insert waits for a lock; its session is then ended, so
    the server lock is lost.  The table is halted at once and its hand is
    not read back (a re-read would wait for the same lock, holding a
    reader thread, though nothing would be served from it).  The spectator is told
    ``LockLost`` once, at once, without the reason (which the log has);
    once the lock goes, ``GET /tables/{id}`` answers the database's rows
    and ``halted``."""
    with bots_write_then_locked(pg_url, tmp_path) as (served, t, spectator, blocker, me):
        terminate_lock(pg_url)                         # its session ends: the write fails
        spectator.received.clear()
        err = spectator.until("error")
        assert err["code"] == "LockLost", err
        spectator.send({"type": "ping"})
        spectator.until("pong")   # all the server said before the pong has been read
        with httpx.Client(base_url=served.url, timeout=5.0) as h:
            r = poll(lambda: h.get("/health"), lambda r: r.status_code == 503)
            assert r.json()["status"] == "lock-lost", r.text
            assert t["id"] not in [x["id"] for x in h.get("/tables").json()]
            # a re-read would have begun with the halt; none is waiting (an
            # upper bound of one second on noticing it, not a timing test)
            assert poll(lambda: waiting_on_locks(pg_url, me, "%from qipai_hands%"),
                        lambda n: n >= 1, patience=1.0) == 0
            blocker.rollback()
            got = h.get(f"/tables/{t['id']}").json()
            assert got["halted"] == "LockLost" and "lock" in got["message"], got
        spectator.send({"type": "ping"})
        spectator.until("pong")   # and since: nothing (no re-read's welcome)
        assert not [m for m in spectator.received if m["type"] == "welcome"]
        told = [m for m in spectator.received if m["type"] == "error"]
        assert [m["code"] for m in told] == ["LockLost"], told
        for text in (err["message"], r.json()["message"]):
            assert "terminat" not in text and "no longer holds" not in text, text
    log = served.log_path.read_text()
    assert log.count("LOCK LOST") == 1 and "Traceback" not in log, log


@pytest.mark.slow   # a server start, two stalls of a second or more
def test_health_says_stalled_while_a_read_or_a_new_table_waits(pg_url, tmp_path):
    """Not only a batch of writes: a request's read, and a new table's
    write, that wait longer than ``--stall-seconds`` make ``GET /health``
    503 ``stalled``, naming what waits; the log says so, and says when the
    stall is over."""
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
    after the shutdown's limit, each answered 503 saying so, rather than
    the shutdown waiting for them and for the new table's write as long as
    the database hangs."""
    waiting: list[threading.Thread] = []
    answers: list[httpx.Response] = []

    def ask(url: str, method: str, path: str, **kw) -> None:
        with httpx.Client(base_url=url, timeout=PATIENCE) as c:
            answers.append(c.request(method, path, **kw))

    try:
        with frozen_later(tmp_path) as (served, freeze, _):
            freeze()
            for method, path, kw in (("GET", "/records", {}),
                                     ("POST", "/tables", {"json": {"variant": "guilin-mahjong"}})):
                waiting.append(threading.Thread(target=ask, args=(served.url, method, path),
                                                kwargs=kw))
                waiting[-1].start()
            with served.http() as h:
                r = poll(lambda: h.get("/health"), lambda r: r.json()["status"] == "lock-lost")
                assert r.status_code == 503 and r.json()["status"] == "lock-lost", r.text
            assert all(w.is_alive() for w in waiting)    # both still wait
    finally:
        for w in waiting:
            w.join(PATIENCE)
    # each waiting request was answered that the server stopped first
    assert len(answers) == 2, answers
    for a in answers:
        assert a.status_code == 503 and a.json()["error"] == "Unavailable", a.text
        assert "the server is stopping" in a.json()["message"], a.text


@pytest.mark.slow   # a server start, the database held for a while
def test_an_act_during_the_hands_re_read_is_refused_unavailable_before_it_is_checked(
        pg_url, tmp_path):
    """A seat's act is written while another session holds the tables
    locked; the writer's statement is cancelled (the write fails, the lock
    is kept) and the table reads its hand back, a read that waits too.  The
    same act sent again meanwhile is refused ``Unavailable`` — not checked
    against the table in memory and refused ``StaleSeq``, naming a decision
    that exists only because of actions the database never took; a ``resync`` is refused ``Unavailable`` too.  Once the read
    answers the seat is welcomed and offered its decision again, same seq."""
    with seat_acts_then_locked(pg_url, tmp_path) as (served, s0, d, act, blocker, me):
        fail_the_write(pg_url, served)
        the_reread_waits(pg_url, me)
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
    assert "Traceback" not in served.log_path.read_text()


@pytest.mark.slow   # a server start, the database held for a while
def test_an_act_whose_write_waits_on_a_statement_when_the_lock_goes_is_not_applied(
        pg_url, tmp_path):
    """A seat's act waits for its write (another session holds the tables
    locked, so the insert waits) when the server lock goes.  The commit was
    never sent, so the database certainly does not have it: its answer is
    ``LockLost`` with its seq, "not applied", without the database's reason
    (not "not acknowledged … the database may have it", which is only
    true of a connection broken during the commit itself)."""
    with seat_acts_then_locked(pg_url, tmp_path) as (served, s0, d, act, blocker, me):
        terminate_lock(pg_url)
        err = s0.until("error", lambda m: m.get("seq") == d["seq"])
        assert err["code"] == "LockLost" and err["message"].startswith("not applied"), err
        assert "terminat" not in err["message"], err
        assert not [m for m in s0.received if m["type"] == "ack"]
    assert "Traceback" not in served.log_path.read_text()


#: A deferred constraint trigger runs at COMMIT: this one waits there for
#: advisory lock (7, 7), which the test holds, so a write's commit itself waits.
COMMIT_WAITS = """
create function qipai_test_commit_waits() returns trigger language plpgsql as $$
begin
    perform pg_advisory_xact_lock(7, 7);
    return null;
end $$;
create constraint trigger qipai_test_commit_waits after insert on qipai_actions
    deferrable initially deferred for each row execute function qipai_test_commit_waits();
"""


@pytest.mark.slow   # a server start, the database held for a while
def test_an_act_whose_connection_breaks_during_its_commit_is_not_acknowledged(
        pg_url, tmp_path):
    """A seat's act is being committed — the COMMIT itself waits (a deferred
    trigger waits for a lock the test holds) — when the writer's session is
    ended.  Whether the database took the action cannot be known from the
    server's side, so the answer is ``LockLost`` "not acknowledged", not
    "not applied"; the restarted server's rows show which (here: not
    taken, the session ended before its commit finished)."""
    served = start_server(pg_url, tmp_path, "--seed", str(SEED), "--turn-timeout", "600")
    holder = psycopg.connect(pg_url, autocommit=True)
    try:
        # every seat human, the dealer's first turn: no other write is in
        # flight, so the act's write is the one whose commit waits
        t = create(served, "guilin-mahjong", bots=[])
        dealer = served.info(t["id"])["dealer"]
        s0 = SyncSeat(served, t["id"], t["seats"][str(dealer)], strict=False)
        d = s0.next_decision()
        holder.execute(COMMIT_WAITS)
        holder.execute("select pg_advisory_lock(7, 7)")
        s0.send({"type": "act", "hand": d["hand"], "seq": d["seq"], "action": d["legal"][0]})
        with psycopg.connect(pg_url, autocommit=True) as c:
            assert poll(lambda: c.execute(
                "select count(*) from pg_locks where locktype = 'advisory' and not granted "
                "and classid = 7 and objid = 7").fetchone()[0], lambda n: n >= 1) >= 1
        terminate_lock(pg_url)       # the writer's session, waiting in its COMMIT
        err = s0.until("error", lambda m: m.get("seq") == d["seq"])
        assert err["code"] == "LockLost" and err["message"].startswith("not acknowledged"), err
        assert "terminat" not in err["message"], err
        assert not [m for m in s0.received if m["type"] == "ack"]
    finally:
        holder.close()
        served.stop()
    assert "Traceback" not in served.log_path.read_text()


@pytest.mark.slow   # a server start, the database held for a while
def test_a_connection_made_during_the_re_read_is_told_of_a_lost_lock_and_answered(
        pg_url, tmp_path):
    """A connection made while the table re-reads its hand pings; then the
    server lock is lost.  It is told ``LockLost``, then gets its ``pong``
    (what it was answered while it waited for its first welcome is not
    dropped with the halt)."""
    with bots_write_then_locked(pg_url, tmp_path) as (served, t, spectator, blocker, me):
        fail_the_write(pg_url, served)
        the_reread_waits(pg_url, me)
        late = SyncSeat(served, t["id"], t["spectator_token"], strict=False)
        late.send({"type": "ping"})
        late.send({"type": "ping"})   # the server has read the first once ...
        poll(lambda: "re-reading" in served.log_path.read_text(), bool)
        terminate_lock(pg_url)        # the writer's idle session: the watchdog sees it
        first = late.recv()
        assert first["type"] == "error" and first["code"] == "LockLost", first
        assert [late.recv()["type"] for _ in range(2)] == ["pong", "pong"]


def test_a_committed_action_is_acknowledged_though_a_later_write_fails(tmp_path):
    """Write 1 of a table commits while write 2 is in flight, then write 2
    fails (the lock is lost): what write 1 caused — its seat's ``ack`` — is
    sent, what write 2 caused is not: write 2's failure does not drop
    write 1's ``ack``, or after a lost lock (no re-read, no new welcome)
    that seat would never be told its action counts.  A real table on SQLite; the store's
    queue is stood in for, so that each write is answered by hand."""
    import asyncio
    import json

    from qipai.host import protocol as P
    from qipai.host.outbox import Conn
    from qipai.host.store import LockLost

    def said_to(c: Conn) -> list[dict]:
        return [m for f in c.outbox if f is not None for m in P.messages(json.loads(f))]

    async def main() -> None:
        async with writes_by_hand(tmp_path) as (t, writes):
            conns = {s: Conn(seat=s) for s in range(4)}
            for c in conns.values():
                t.attach(c)
            for c in conns.values():
                c.outbox.clear()
            first = min(t.decisions)                 # the dealer's turn
            d = t.decisions[first]
            t.play(first, d.legal[0], conn=conns[first], seq=d.seq)   # write 1
            second = min(t.decisions)                # a seat of the claim window
            d2 = t.decisions[second]
            t.play(second, d2.legal[-1], conn=conns[second], seq=d2.seq)   # write 2
            assert len(writes) == 2 and not any(c.outbox for c in conns.values())
            writes[0].done(None)                     # write 1 commits
            acks = [m for m in said_to(conns[first]) if m["type"] == "ack"]
            assert [a["seq"] for a in acks] == [d.seq], list(conns[first].outbox)
            writes[1].done(LockLost("gone"))         # write 2 fails
            told = said_to(conns[second])
            assert not [m for m in told if m["type"] == "ack"], told
            assert [m["code"] for m in told if m["type"] == "error" and m.get("seq")] == \
                ["LockLost"], told

    asyncio.run(main())


@pytest.mark.slow   # three server starts, the database held for a while
def test_a_read_that_fails_while_the_server_restores_a_table_stops_the_start(
        pg_url, tmp_path):
    """The database fails a read of an open table while a server starts
    (another session holds its hands locked; the read is cancelled).  The
    server does not start: it exits (2) with one line naming the read, and
    the lock is free, rather than serving on with the table refused until
    a restart (the database's own words in its refusals to any client,
    while ``/health`` said ``ok``).  Started again
    once the database answers, it serves the table."""
    first = start_server(pg_url, tmp_path)
    try:
        t = create(first, "guilin-mahjong", bots=[1, 2, 3])
    finally:
        first.stop()
    blocker = psycopg.connect(pg_url)
    me = blocker.info.backend_pid
    blocker.execute("LOCK TABLE qipai_hands IN ACCESS EXCLUSIVE MODE")
    failed: list[BaseException] = []

    def start() -> None:
        try:
            start_server(pg_url, tmp_path).stop()
        except RuntimeError as exc:
            failed.append(exc)

    th = threading.Thread(target=start)
    th.start()
    try:
        assert poll(lambda: waiting_on_locks(pg_url, me, "%qipai_hands%"),
                    lambda n: n >= 1) >= 1             # the start's read waits
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute("select pg_cancel_backend(pid) from pg_stat_activity where pid <> %s "
                      "and wait_event_type = 'Lock' and query ilike '%%qipai_hands%%'", (me,))
        th.join(PATIENCE)
    finally:
        blocker.close()
    assert len(failed) == 1, "the server started"
    out = str(failed[0])
    assert "exited (2): error: the database did not answer the read" in out, out
    assert "Traceback" not in out, out
    assert lock_holders(pg_url) == []
    again = start_server(pg_url, tmp_path)
    try:
        assert refusal(again, t["id"], None)["code"] == "BadToken"   # served: a token is asked
        with again.http() as h:
            assert h.get(f"/tables/{t['id']}").json()["id"] == t["id"]
    finally:
        again.stop()


def test_get_table_shows_a_finished_hand_only_once_its_write_commits(tmp_path):
    """A hand ends in a write not yet committed: ``GET /tables/{id}``
    (``info()``) still shows the hand, totals and commitment as committed,
    and the new ones once the write commits — had it failed they would
    never have been shown (they are not shown at once, from memory).
    A real table on SQLite, every seat played by hand; the store's queue
    stood in for, so that the writes are answered by hand."""
    import asyncio

    async def main() -> None:
        async with writes_by_hand(tmp_path) as (t, writes):
            before = t.info()
            assert before.hand == 0 and before.hands_done == 0
            while t.hand == 0:   # every decision: its first legal action (a hand ends)
                seat = min(t.decisions)
                t.play(seat, t.decisions[seat].legal[0])
            assert t.hands_done == 1   # in memory: the hand is over
            shown = t.info()
            assert (shown.hand, shown.hands_done, shown.totals, shown.commitment) == \
                (0, 0, (0, 0, 0, 0), before.commitment), shown
            for w in writes[:-1]:
                w.done(None)
            assert t.info().hands_done == 0     # the hand-ending write is still in flight
            writes[-1].done(None)
            after = t.info()
            assert (after.hand, after.hands_done) == (1, 1), after
            assert after.totals == tuple(t.totals) and after.commitment == t.commitment
            assert after.commitment != before.commitment

    asyncio.run(main())
