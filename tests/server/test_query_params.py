"""A query parameter given twice (``?token=bad&token=GOOD``) is refused 400
``BadMessage`` naming it — on HTTP routes and on the WebSocket upgrade, which
is never accepted — and changes nothing; each refusal is a ``refused`` event
(counted, logged), and the refused upgrade is no error line of the server's;
asked of a real ``qipai serve``."""

import json

import pytest
from websockets.exceptions import InvalidStatus

from hostkit import SyncSeat, start_server


def test_repeated_query_parameters_are_refused(db_url, tmp_path):
    s = start_server(db_url, tmp_path, "--log-format", "json")
    try:
        t = s.create(bots=[1, 2, 3])
        good = t["seats"]["0"]
        before = s.info(t["id"])
        with pytest.raises(InvalidStatus) as refused:
            SyncSeat(s, t["id"], f"bad&token={good}", strict=False)
        assert refused.value.response.status_code == 400
        body = json.loads(refused.value.response.body)
        assert body["error"] == "BadMessage" and "'token'" in body["message"], body
        # nothing of the table changed: no seat connected, the same answer
        assert s.info(t["id"]) == before
        with s.http() as h:
            for path in ("/vocabulary?lang=zh&lang=en", "/tables?x=1&x=2",
                         f"/tables/{t['id']}?a=&a=", "/health?lang=zh&lang=zh"):
                r = h.get(path)
                assert r.status_code == 400, (path, r.text)
                assert r.json()["error"] == "BadMessage", path
            r = h.post(f"/tables/{t['id']}/close?x=1&x=1",
                       headers={"Authorization": f"Bearer {t['admin']}"})
            assert r.status_code == 400 and r.json()["error"] == "BadMessage"
            assert h.get(f"/tables/{t['id']}").json()["open"] is True
            # one value each still works
            assert h.get("/vocabulary?lang=en").status_code == 200
        seat = SyncSeat(s, t["id"], good)
        assert seat.until("welcome")["type"] == "welcome"
        seat.close()
        with s.http() as h:   # the upgrade, four GETs and a POST: each counted
            assert 'qipai_refusals_total{reason="BadMessage"} 6.0' in h.get("/metrics").text
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log
    lines = [json.loads(x) for x in log.splitlines() if x.startswith("{")]
    # uvicorn (0.54) logged "ASGI callable returned without completing handshake" at
    # ERROR for every upgrade refused with an HTTP answer: a client's error, not the server's
    assert [x for x in lines if x["level"] == "error"] == [], log
    refused = [x for x in lines if x["event"] == "refused"]
    assert refused and refused[0]["reason"] == "BadMessage", refused
    assert refused[0]["path"] == f"/tables/{t['id']}/ws" and refused[0]["client"] == "127.0.0.1"
    assert good not in log
