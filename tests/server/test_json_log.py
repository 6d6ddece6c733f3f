"""``qipai serve --log-format json``: one JSON object a line, the table's
events in it, and no token of any kind."""

from __future__ import annotations

import json

from hostkit import SyncSeat, create, start_server


def test_json_log_has_the_events_and_no_token(tmp_path):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "11",
                     "--log-format", "json", "--turn-timeout", "0.02")
    try:
        t = create(s, "guilin-mahjong", bots=[1, 2, 3])
        c = SyncSeat(s, t["id"], t["seats"]["0"], strict=False)
        c.until("hand_ended")          # seat 0 never answers: its decisions time out
        c.send("not json")
        c.until("error", lambda m: m["code"] == "BadMessage")
        c.close()
        s.close(t)
    finally:
        s.stop()
    text = s.log_path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]   # every line is JSON
    assert all({"time", "level", "event"} <= set(x) for x in lines), lines
    events = {x["event"] for x in lines}
    assert {"listening", "table_created", "hand_ended", "timeout", "refused",
            "table_closed"} <= events, events
    ended = next(x for x in lines if x["event"] == "hand_ended")
    assert ended["table"] == t["id"] and ended["hand"] == 0 and len(ended["net"]) == 4
    for secret in (*t["seats"].values(), t["admin"], t["spectator_token"]):
        assert secret not in text
