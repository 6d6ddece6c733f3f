"""A ruleset spec the server has not loaded yet is loaded in a worker
thread, never in the event loop: while one load is held (the house plugin
``gated_rules.py`` blocks it), ``GET /health`` and the other tables are
answered; one load runs and 16 wait, the next is answered 503 ``Busy``; a
bad spec is still its typed error.

Loaded in the event loop (a few ms each), a stream of distinct specs to
``POST /tables`` and ``GET /variants/{name}`` would slow every table
(another table's median ping from 0.7 to 68 ms at 150 a second)."""

from __future__ import annotations

import threading
import time

import httpx

from hostkit import HERE, PATIENCE, SyncSeat, start_server
from qipai.server.state import SPEC_WAITING, SPEC_WORKERS


def test_a_spec_loads_off_the_event_loop(tmp_path, monkeypatch):
    gate = tmp_path / "gate"
    monkeypatch.setenv("QIPAI_TEST_GATE", str(gate))
    served = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3",
                          "--plugin", str(HERE / "gated_rules.py"))
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def create() -> None:
        with served.http() as h:
            r = h.post("/tables", json={"variant": "guangxi-mahjong(fenghu_count=3)",
                                        "bots": [1, 2, 3]})
        with lock:
            answers.append(r)

    threads: list[threading.Thread] = []
    try:
        other = served.create(bots=[1, 2, 3])   # a table playing meanwhile (gate open)
        seat = SyncSeat(served, other["id"], other["seats"]["0"])
        seat.until("welcome")
        gate.touch()
        accepted = SPEC_WORKERS + SPEC_WAITING
        for _ in range(accepted + 4):
            threads.append(threading.Thread(target=create))
            threads[-1].start()
        end = time.monotonic() + PATIENCE
        while not (tmp_path / "gate.entered").exists():   # a load is held
            assert time.monotonic() < end, "no load began"
            time.sleep(0.01)
        while True:   # 17 taken (1 loading, 16 waiting), the 4 more refused at once
            with lock:
                busy = [r for r in answers if r.status_code == 503]
            if len(busy) == 4:
                break
            assert time.monotonic() < end, [r.text for r in answers]
            time.sleep(0.01)
        assert all(r.json()["error"] == "Busy" for r in busy), [r.text for r in busy]
        assert "1 ruleset load runs and 16 wait already" in busy[0].json()["message"]
        # the loop is free meanwhile: health, a cached spec's table, a seat's ping
        with served.http() as h:
            assert h.get("/health").json()["status"] == "ok"
            r = h.get("/variants/guangxi-mahjong(fenghu_count=4)")   # would wait: refused
            assert r.status_code == 503 and r.json()["error"] == "Busy", r.text
        seat.send({"type": "ping"})
        seat.until("pong")
        more = served.create(bots=[1, 2, 3])   # guilin-mahjong: loaded already, not waiting
        assert more["id"]
        gate.unlink()
        for th in threads:
            th.join(PATIENCE)
        made = [r for r in answers if r.status_code == 201]
        assert len(made) == accepted and len(answers) == accepted + 4, \
            [r.text for r in answers if r.status_code != 201]
        with served.http() as h:   # a bad option is still its typed error
            r = h.post("/tables", json={"variant": "guangxi-mahjong(fenghu_count=banana)"})
            assert r.status_code == 400 and r.json()["error"] == "BadOption", r.text
            r = h.get("/variants/guangxi-mahjong(fenghu_count=banana)")
            assert r.status_code == 404 and r.json()["error"] == "BadOption", r.text
            r = h.get("/variants/no-such-game")
            assert r.status_code == 404 and r.json()["error"] == "UnknownVariant", r.text
            assert h.get("/variants/guangxi-mahjong(fenghu_count=4)").status_code == 200
        seat.close()
    finally:
        if gate.exists():
            gate.unlink()
        for th in threads:
            th.join(PATIENCE)
        served.stop()
