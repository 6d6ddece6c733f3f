"""``qipai serve --max-connections N``: the WebSocket connections a server
holds at once.  One more is told ``TooManyConnections`` (naming the limit)
and closed with code 4429, before its path or token is looked at; once one
closes a new one is welcomed; ``/health`` counts them and the log says when
the limit is reached and when it is left.

Before, nothing bounded them server-wide (8 a seat and 64 spectators a
table, and anyone may create tables): 250 spectator connections took every
file descriptor of a server limited to 256, after which it accepted
nothing — no player, not even ``GET /health`` — while they lasted."""

from __future__ import annotations

import resource

import pytest
from websockets.exceptions import ConnectionClosed

from hostkit import SyncSeat, refusal, start_server
from qipai.host import app


def test_connections_beyond_the_limit_are_refused(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "3",
                     "--max-connections", "3")
    try:
        t = s.create(bots=[2, 3])
        held = [SyncSeat(s, t["id"], token, strict=False)
                for token in (t["seats"]["0"], t["seats"]["1"], t["spectator_token"])]
        for c in held:
            assert c.until("welcome")
        with s.http() as h:
            assert h.get("/health").json()["connections"] == 3
        # one more — whatever its table or token — is refused and closed
        for table, token in ((t["id"], t["seats"]["0"]), ("nosuchtable", "x")):
            extra = SyncSeat(s, table, token, strict=False)
            try:
                msg = extra.recv()
                assert msg["type"] == "error" and msg["code"] == "TooManyConnections", msg
                assert "--max-connections 3" in msg["message"]
                with pytest.raises(ConnectionClosed) as closed:
                    extra.recv()
                assert closed.value.rcvd.code == 4429
            finally:
                extra.close()
        with s.http() as h:   # HTTP is served all the while
            assert h.get("/health").json() == {"status": "ok", "tables": 1, "refused": 0,
                                               "connections": 3, "db": "sqlite"}
        held.pop().close()    # the spectator leaves: room for one
        again = SyncSeat(s, t["id"], t["spectator_token"], strict=False)
        assert again.until("welcome")
        again.close()
        for c in held:
            c.close()
        # and the connections refused were never counted
        assert refusal(s, "nosuchtable", "x")["code"] == "UnknownTable"
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "the limit (--max-connections 3): new ones are refused" in log, log
    assert "below --max-connections 3 again" in log, log


@pytest.mark.parametrize("soft, expected", [
    (1024, 1024 - app.FD_RESERVE),            # a common default ulimit -n
    (260, 16),                                # hardly any: at least 16
    (1 << 20, app.MAX_CONNECTIONS),           # plenty: the default cap
    (resource.RLIM_INFINITY, app.MAX_CONNECTIONS),
])
def test_the_default_limit_keeps_descriptors_for_the_rest(monkeypatch, soft, expected):
    monkeypatch.setattr(resource, "getrlimit", lambda what: (soft, resource.RLIM_INFINITY))
    assert app.default_max_connections() == expected
