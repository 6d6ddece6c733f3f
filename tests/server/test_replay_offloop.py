"""A large ``POST /replay`` is parsed and replayed in a worker thread: while
the server works on it, another table's WebSocket is still answered.

No timing is asserted.  The server runs the house plugin ``gated_rules.py``,
so the replay's ruleset load (the record names every option, a spec no
table has loaded) blocks while the test holds the gate: the replay is
provably under way, and the other table's seat must get its pong then.
Were the replay run on the event loop, no pong could come until the gate
is opened, and the test would fail at the ping.
"""

from __future__ import annotations

import json
import socket
import time

from hostkit import HERE, PATIENCE, SyncSeat, create, start_server


def test_a_big_replay_does_not_stall_another_tables_websocket(tmp_path, monkeypatch):
    gate = tmp_path / "gate"
    monkeypatch.setenv("QIPAI_TEST_GATE", str(gate))
    s = start_server(f"sqlite:///{tmp_path / 'qipai.db'}", tmp_path, "--seed", "3",
                     "--max-replay-bytes", str(8 * 1024 * 1024),
                     "--plugin", str(HERE / "gated_rules.py"))
    try:
        made = create(s, "guilin-zipai", [1, 2])
        seat = SyncSeat(s, made["id"], made["seats"]["0"])
        seat.until("welcome")
        with s.http() as http:   # a finished hand to post, made bigger: ~4 MB of events
            solo = create(s, "guilin-zipai", [0, 1, 2])
            watch = SyncSeat(s, solo["id"], solo["spectator_token"])
            watch.until("hand_ended")
            watch.close()
            record = http.get(f"/tables/{solo['id']}/records").json()["hands"][0]["record"]
        events = record["events"] * (4_000_000 // len(json.dumps(record["events"])))
        body = json.dumps({**record, "events": events}).encode()
        head = (f"POST /replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        gate.touch()
        with socket.create_connection(("127.0.0.1", s.port), timeout=PATIENCE) as sock:
            sock.sendall(head + body)
            end = time.monotonic() + PATIENCE   # a bound on a hang, not a timing
            while not (tmp_path / "gate.entered").exists():
                assert time.monotonic() < end, "the replay never loaded its ruleset"
                time.sleep(0.01)
            # the replay is held inside its ruleset load: the loop still answers
            seat.send({"type": "ping"})
            assert seat.until("pong")["type"] == "pong"
            gate.unlink()
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status, _, rest = answer.partition(b"\r\n")
        assert status.startswith(b"HTTP/1.1 400"), status
        got = json.loads(rest.partition(b"\r\n\r\n")[2])
        assert got["error"] == "ReplayDiverged" and "events" in got["message"]
        # the table itself went on: it still answers and plays
        seat.send({"type": "resync"})
        assert seat.until("welcome")["type"] == "welcome"
        seat.close()
    finally:
        if gate.exists():
            gate.unlink()
        s.stop()
