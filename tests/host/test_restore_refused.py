"""One open table stored under other versions does not stop the server: it
is refused alone (a typed error on its endpoints, one line in the log), the
others are served, and nothing is written; ``--allow-version-mismatch``
lets a table made under another qipai version in, never another variant
version."""

from __future__ import annotations

import msgspec
import pytest
import sqlalchemy as sa

from hostile import Conn, Server, db_rows
from pgcluster import sqlalchemy_url

pytestmark = pytest.mark.slow   # three server starts per database


def restamp(db_url: str, tid: str, **changes: str) -> None:
    """Rewrite the stored stamp of table ``tid`` (as an older server would have made it)."""
    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.begin() as c:
            stamp = c.execute(sa.text("select stamp from qipai_tables where id = :i"),
                              {"i": tid}).scalar_one()
            doc = {**msgspec.json.decode(stamp), **changes}
            c.execute(sa.text("update qipai_tables set stamp = :s where id = :i"),
                      {"s": msgspec.json.encode(doc).decode(), "i": tid})
    finally:
        engine.dispose()


def test_a_table_under_other_versions_is_refused_alone(db_url, tmp_path):
    first = Server(db_url, tmp_path, "--seed", "3")
    try:
        good, old_qipai, old_variant = (first.create("guilin-mahjong", bots=[])
                                        for _ in range(3))
    finally:
        first.stop()
    restamp(db_url, old_qipai["id"], qipai_version="0.0.1+older")
    restamp(db_url, old_variant["id"], version="0.0.1-older")
    before = db_rows(db_url)

    server = Server(db_url, tmp_path, "--seed", "3")
    try:
        with server.http() as h:
            assert h.get("/health").json()["refused"] == 2
            assert [t["id"] for t in h.get("/tables").json()] == [good["id"]]
            r = h.get(f"/tables/{old_qipai['id']}")
            assert r.status_code == 409, r.text
            err = r.json()
            assert err["error"] == "VersionMismatch"
            assert "qipai version: recorded 0.0.1+older" in err["message"]
            r = h.get(f"/tables/{old_variant['id']}")
            assert r.status_code == 409 and "variant version" in r.json()["message"]
            r = h.post(f"/tables/{old_qipai['id']}/close",
                       headers={"Authorization": f"Bearer {old_qipai['admin']}"})
            assert r.status_code == 409 and r.json()["error"] == "VersionMismatch"
        c = Conn(server, old_qipai["id"], old_qipai["seats"]["0"])
        msg = c.recv()
        assert msg["type"] == "error" and msg["code"] == "NotRestored", msg
        assert "0.0.1+older" in msg["message"]
        c.close()
        ok = Conn(server, good["id"], good["seats"]["0"])
        assert ok.until("welcome")["table"] == good["id"]
        ok.close()
    finally:
        server.stop()
    log = server.log_path.read_text().splitlines()
    for t in (old_qipai, old_variant):
        mine = [line for line in log if t["id"] in line and "not restored" in line]
        assert len(mine) == 1, log
        assert "VersionMismatch" in mine[0]
    assert db_rows(db_url) == before   # nothing written, the refused rows kept as they are

    allowed = Server(db_url, tmp_path, "--seed", "3", "--allow-version-mismatch")
    try:
        with allowed.http() as h:
            assert h.get("/health").json()["refused"] == 1
            assert h.get(f"/tables/{old_qipai['id']}").status_code == 200
            assert h.get(f"/tables/{old_variant['id']}").status_code == 409
    finally:
        allowed.stop()


def add_action(db_url: str, tid: str, action: str) -> dict:
    """Store ``action`` (a JSON text, as found in a damaged database) as
    hand 0's first action of table ``tid``; return that hand's deal."""
    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.begin() as c:
            deal = c.execute(sa.text("select deal from qipai_hands where table_id = :i "
                                     "and hand = 0"), {"i": tid}).scalar_one()
            c.execute(sa.text("insert into qipai_actions (table_id, hand, seq, action, timeout) "
                              "values (:i, 0, 0, :a, :f)"), {"i": tid, "a": action, "f": False})
    finally:
        engine.dispose()
    return msgspec.json.decode(deal)


def set_column(db_url: str, table: str, column: str, tid: str, value: str) -> None:
    """Overwrite ``column`` of table ``tid``'s rows in ``table`` (as a damaged database)."""
    key = "id" if table == "qipai_tables" else "table_id"
    engine = sa.create_engine(sqlalchemy_url(db_url))
    try:
        with engine.begin() as c:
            c.execute(sa.text(f"update {table} set {column} = :v where {key} = :i"),
                      {"v": value, "i": tid})
    finally:
        engine.dispose()


#: Damaged table rows (column, stored value) and the error each is refused with.
TABLE_ROW_DAMAGE = [
    ("bots", "nonsense", "DecodeError"),
    ("tokens", '{"a": 1}', "ValidationError"),
    ("plugins", "nonsense", "DecodeError"),
    ("stamp", "[]", "ValidationError"),
    ("seed", "x7", "ValueError"),
    ("bots", "[9]", "ValueError"),   # no such seat
]


def test_a_table_whose_rows_do_not_replay_is_refused_and_no_one_is_told_its_cards(
        db_url, tmp_path):
    """Damaged rows — an action that is not JSON, one that is not an action,
    a discard of a tile the dealer does not hold, a salt that is not what
    the hand's commitment was made of, and table rows that do not read —
    do not stop the server (no traceback out of the start; a wrong salt is
    not taken, which would break the table at the hand's last action) and
    each table is refused
    ``DamagedTable`` alone.  What a client is told names where and the kind
    of error, never the replay's own words: "seat 0 does not hold 1m"
    tells of a concealed hand (it would, in the 409 and in the WebSocket
    refusal, to a client with no token).  The log has them."""
    first = Server(db_url, tmp_path, "--seed", "3")
    try:
        good, bad_json, bad_shape, bad_card, bad_salt, *bad_rows = (
            first.create("guilin-mahjong", bots=[]) for _ in range(5 + len(TABLE_ROW_DAMAGE)))
    finally:
        first.stop()
    add_action(db_url, bad_json["id"], "nonsense")
    add_action(db_url, bad_shape["id"], '{"type": "discard", "seat": 0, "card": "x"}')
    deal = add_action(db_url, bad_card["id"], "{}")   # replaced below, once the deal is known
    dealer = deal["dealer"]
    missing = next(k for k in range(34) if k not in deal["hands"][dealer])
    set_column(db_url, "qipai_actions", "action", bad_card["id"],
               msgspec.json.encode({"type": "discard", "seat": dealer,
                                    "card": missing}).decode())
    set_column(db_url, "qipai_hands", "salt", bad_salt["id"], "00" * 32)
    for t, (column, value, _) in zip(bad_rows, TABLE_ROW_DAMAGE):
        set_column(db_url, "qipai_tables", column, t["id"], value)
    before = db_rows(db_url)

    server = Server(db_url, tmp_path, "--seed", "3")
    try:
        told = []
        with server.http() as h:
            assert h.get("/health").json()["refused"] == 4 + len(TABLE_ROW_DAMAGE)
            assert [t["id"] for t in h.get("/tables").json()] == [good["id"]]
            for t in (bad_json, bad_shape, bad_card):
                r = h.get(f"/tables/{t['id']}")
                assert r.status_code == 409 and r.json()["error"] == "DamagedTable", r.text
                assert "hand 0's action 0" in r.json()["message"], r.text
                told.append(r.json()["message"])
            r = h.get(f"/tables/{bad_salt['id']}")
            assert r.status_code == 409 and "hand 0's deal" in r.json()["message"], r.text
            for t, (column, _, error) in zip(bad_rows, TABLE_ROW_DAMAGE):
                r = h.get(f"/tables/{t['id']}")
                assert r.status_code == 409 and r.json()["error"] == "DamagedTable", r.text
                assert f"table row does not read ({error}" in r.json()["message"], (column, r.text)
        for token in (None, bad_card["seats"][str(dealer)]):
            c = Conn(server, bad_card["id"], token)
            msg = c.recv()
            assert msg["type"] == "error" and msg["code"] == "NotRestored", msg
            told.append(msg["message"])
            c.close()
        for text in told:
            assert "hold" not in text and "Expected" not in text and "malformed" not in text, text
        assert "IllegalAction" in told[2] and "DecodeError" in told[0], told
    finally:
        server.stop()
    log = server.log_path.read_text()
    assert "does not hold" in log and "JSON is malformed" in log, log
    assert "not what its commitment was made of" in log, log
    assert "Traceback" not in log, log
    assert db_rows(db_url) == before   # nothing written, the damaged rows kept as they are
