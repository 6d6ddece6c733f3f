"""A large ``POST /replay`` is parsed and replayed in a worker thread: while
the server works on it, another table's WebSocket is still answered.

No timing is asserted: the test waits until the server process has read the
whole body off its socket (the kernel's receive queue of that connection,
``/proc/net/tcp``, is empty), then counts ping → pong round trips completed
before the replay's answer came.  Replayed on the event loop (as before),
the server answers nothing else until the replay is done, so at most one
pong (sent after the answer) would be counted.
"""

from __future__ import annotations

import json
import select
import socket
import time
from pathlib import Path

from hostkit import PATIENCE, SyncSeat, create, start_server


def _queues(local: int, remote: int) -> tuple[int, int] | None:
    """(send queue, receive queue) in bytes of the IPv4 TCP socket from port
    ``local`` to port ``remote`` on 127.0.0.1, or None when there is none."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if (int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)) == (local, remote):
            tx, rx = fields[4].split(":")
            return int(tx, 16), int(rx, 16)
    return None


def _wait_read(server_port: int, client_port: int) -> None:
    """Until every byte the client sent has been read by the server process."""
    end = time.monotonic() + PATIENCE
    while time.monotonic() < end:
        mine, theirs = _queues(client_port, server_port), _queues(server_port, client_port)
        if mine is not None and theirs is not None and mine[0] == 0 and theirs[1] == 0:
            return
        time.sleep(0.005)
    raise AssertionError("the server did not read the body")


def test_a_big_replay_does_not_stall_another_tables_websocket(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'qipai.db'}", tmp_path, "--seed", "3",
                     "--max-replay-bytes", str(8 * 1024 * 1024))
    try:
        made = create(s, "guilin-zipai", [1, 2])
        seat = SyncSeat(s, made["id"], made["seats"]["0"])
        seat.until("welcome")
        with s.http() as http:   # a finished hand to post, made bigger: ~4 MB of events
            solo = create(s, "guilin-zipai", [0, 1, 2])
            record = None
            watch = SyncSeat(s, solo["id"], solo["spectator_token"])
            watch.until("hand_ended")
            watch.close()
            record = http.get(f"/tables/{solo['id']}/records").json()["hands"][0]["record"]
        events = record["events"] * (4_000_000 // len(json.dumps(record["events"])))
        body = json.dumps({**record, "events": events}).encode()
        head = (f"POST /replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        with socket.create_connection(("127.0.0.1", s.port), timeout=PATIENCE) as sock:
            sock.sendall(head + body)
            _wait_read(s.port, sock.getsockname()[1])   # the server is replaying it now
            pongs = 0
            while pongs < 40:
                seat.send({"type": "ping"})
                seat.until("pong")
                pongs += 1
                if select.select([sock], [], [], 0.01)[0]:
                    break   # the replay's answer has come
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        status, _, rest = answer.partition(b"\r\n")
        assert status.startswith(b"HTTP/1.1 400"), status
        got = json.loads(rest.partition(b"\r\n\r\n")[2])
        assert got["error"] == "ReplayDiverged" and "events" in got["message"]
        assert pongs >= 3, f"only {pongs} pong(s) while the replay ran: it blocked the loop"
        # the table itself went on: it still answers and plays
        seat.send({"type": "resync"})
        assert seat.until("welcome")["type"] == "welcome"
        seat.close()
    finally:
        s.stop()
