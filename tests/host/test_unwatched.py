"""A table plays only while a connection watches it: an all-bot table nobody
watches, or a table whose players are all gone, pauses — no bot moves, no
default action is played, nothing is written — and the first connection
resumes it.  (A pause is checked as rows that stay the same while the
server is left alone: a still table can never fail it.)"""

from __future__ import annotations

import time

import pytest

from hostile import Conn, Server, db_rows

pytestmark = pytest.mark.slow   # two server starts per database

#: How long the server is left alone before the rows are compared again: an
#: all-bot table that played would write hundreds of actions meanwhile, a
#: 0.02 s turn timeout dozens of defaults.
ALONE_S = 1.0


def actions_of(db_url: str, tid: str) -> list[tuple]:
    return [r for r in db_rows(db_url)["qipai_actions"] if r[0] == tid]


def test_an_unwatched_table_pauses_and_a_connection_resumes_it(db_url, tmp_path):
    server = Server(db_url, tmp_path, "--seed", "4", "--turn-timeout", "0.02",
                    "--claim-timeout", "0.02")
    try:
        bots = server.create("guilin-mahjong", bots=[0, 1, 2, 3])
        absent = server.create("guilin-mahjong", bots=[1, 2, 3])  # seat 0 never connects
        time.sleep(ALONE_S)
        assert actions_of(db_url, bots["id"]) == []
        assert actions_of(db_url, absent["id"]) == []
        info = server.info(bots["id"])
        assert info["hand"] == 0 and info["watched"] is False
        # a spectator watches: the bots play, hand after hand
        c = Conn(server, bots["id"], bots["spectator_token"])
        c.until("hand_ended")
        assert server.info(bots["id"])["watched"] is True
        c.close()
    finally:
        server.stop()
    before = db_rows(db_url)
    again = Server(db_url, tmp_path, "--seed", "4", "--turn-timeout", "0.02",
                   "--claim-timeout", "0.02")
    try:
        time.sleep(ALONE_S)   # restored, nobody connected: still
        assert db_rows(db_url) == before
        assert again.info(bots["id"])["watched"] is False
        # the absent seat comes: its decisions time out (it never answers)
        seat = Conn(again, absent["id"], absent["seats"]["0"])
        seat.until("welcome")
        seat.until("hand_ended")
        seat.close()
    finally:
        again.stop()
    assert len(actions_of(db_url, absent["id"])) > 0
