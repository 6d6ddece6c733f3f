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
