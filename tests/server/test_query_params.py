"""A query parameter given twice (``?token=bad&token=GOOD``) is refused 400
``BadMessage`` naming it — on HTTP routes and on the WebSocket upgrade, which
is never accepted — and changes nothing; asked of a real ``qipai serve``."""

import json

import pytest
from websockets.exceptions import InvalidStatus

from hostkit import SyncSeat, start_server


def test_repeated_query_parameters_are_refused(db_url, tmp_path):
    s = start_server(db_url, tmp_path)
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
    finally:
        s.stop()
    assert "Traceback" not in s.log_path.read_text()
