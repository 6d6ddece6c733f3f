"""Player identity and private records (issue 34, points 2 and 3) against a
real ``qipai serve --keys`` process, on SQLite and PostgreSQL: the named
players of ``POST /tables``, the seat tokens an operator signs (JWT), the
names at the table and in the records, a closed table's records read with
its seat tokens, ``--lobby``, the spectator token."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import jwt
import pytest
from websockets.exceptions import ConnectionClosed

from hostkit import PATIENCE, SyncSeat, choose, start_server


def qipai(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", *args], capture_output=True,
                          text=True, timeout=PATIENCE)


def new_key(path, name: str, *more: str) -> str:
    r = qipai("keys", "new", name, "--file", str(path), *more)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def secret_of(path, name: str) -> str:
    """The HS256 signing secret ``qipai keys new`` stored for ``name``."""
    return next(e["secret"] for e in json.loads(path.read_text())["keys"] if e["name"] == name)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def sign(secret, kid: str, alg: str = "HS256", **claims) -> str:
    """A seat token as an operator signs it (PyJWT), valid a minute unless
    ``exp`` is given (``exp=None``: none)."""
    claims.setdefault("exp", int(time.time()) + 60)
    if claims["exp"] is None:
        del claims["exp"]
    return jwt.encode(claims, secret, algorithm=alg, headers={"kid": kid})


def refused(served, table: str, token: str) -> tuple[str, int]:
    """The error code and close code a connection with ``token`` is answered."""
    c = SyncSeat(served, table, token, strict=False)
    try:
        msg = c.recv()
        assert msg["type"] == "error", msg
        with pytest.raises(ConnectionClosed) as closed:
            c.recv()
        return msg["code"], closed.value.rcvd.code
    finally:
        c.close()


@pytest.fixture(scope="module")
def keyed(module_db_url, tmp_path_factory):
    """A ``qipai serve --keys`` (keys alice, bob; JSON log) shared by the module's tests."""
    tmp = tmp_path_factory.mktemp("ident")
    f = tmp / "keys.json"
    keys = {"alice": new_key(f, "alice"), "bob": new_key(f, "bob")}
    s = start_server(module_db_url, tmp, "--keys", str(f), "--seed", "7", "--log-format",
                     "json")
    s.keys, s.keys_file = keys, f
    yield s
    s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log
    for secret in [*keys.values(), secret_of(f, "alice"), secret_of(f, "bob"), "eyJ"]:
        assert secret not in log


AMING = {"seat": 0, "player": "u-123", "name": "阿明"}


def make(s, key: str = "alice", **body) -> dict:
    with s.http() as h:
        r = h.post("/tables", json=body, headers=bearer(s.keys[key]))
    assert r.status_code == 201, r.text
    return r.json()


def open_ids(s) -> set[str]:
    with s.http() as h:
        return {t["id"] for t in h.get("/tables", headers=bearer(s.keys["alice"])).json()}


@pytest.mark.parametrize(("players", "code", "says"), [
    ("u-1", "BadMessage", "players"),
    ([{"seat": 0, "player": "u-1"}], "BadMessage", "name"),
    ([{"seat": 0, "player": "u-1", "name": "a", "x": 1}], "BadMessage", "x"),
    ([{"seat": "0", "player": "u-1", "name": "a"}], "BadMessage", "seat"),
    ([{"seat": 4, "player": "u-1", "name": "a"}], "BadPlayers", "seat 4"),
    ([{"seat": -1, "player": "u-1", "name": "a"}], "BadPlayers", "seat -1"),
    ([{"seat": 1, "player": "u-1", "name": "a"}], "BadPlayers", "bot"),
    ([AMING, {"seat": 0, "player": "u-2", "name": "b"}], "BadPlayers", "twice"),
    ([{"seat": 0, "player": "", "name": "a"}], "BadPlayers", "player is empty"),
    ([{"seat": 0, "player": "u-1", "name": "  "}], "BadPlayers", "name is empty"),
    ([{"seat": 0, "player": "u-1", "name": "a" * 33}], "BadPlayers", "name is longer"),
    ([{"seat": 0, "player": "u" * 129, "name": "a"}], "BadPlayers", "player is longer"),
    ([{"seat": 0, "player": "u-1", "name": "a\nb"}], "BadPlayers", "control"),
    ([{"seat": 0, "player": "u\x001", "name": "a"}], "BadPlayers", "control"),
])
def test_bad_players_are_refused_and_make_nothing(keyed, players, code, says):
    before = open_ids(keyed)
    with keyed.http() as h:
        r = h.post("/tables", json={"bots": [1, 2, 3], "players": players},
                   headers=bearer(keyed.keys["alice"]))
    assert r.status_code == 400 and r.json()["error"] == code, r.text
    assert says in r.json()["message"], r.text
    assert open_ids(keyed) == before


def test_named_players_are_known_to_the_table(keyed):
    t = make(keyed, bots=[2, 3], players=[AMING, {"seat": 1, "player": "u-9", "name": "小红"}])
    assert set(t["seats"]) == {"0", "1"}
    assert t["players"] == {"0": {"player": "u-123", "name": "阿明"},
                            "1": {"player": "u-9", "name": "小红"}}
    names = {"0": "阿明", "1": "小红"}
    with keyed.http() as h:
        info = h.get(f"/tables/{t['id']}").json()
    assert info["names"] == names and "u-123" not in json.dumps(info)
    me = SyncSeat(keyed, t["id"], t["seats"]["0"])
    w = me.until("welcome")
    assert w["names"] == names and w["player"] == "u-123" and "u-9" not in json.dumps(w)
    watcher = SyncSeat(keyed, t["id"], t["spectator_token"])
    w = watcher.until("welcome")
    assert w["names"] == names and w["player"] is None
    assert "u-123" not in json.dumps(w) and "u-9" not in json.dumps(w)
    for c in (me, watcher):
        c.close()
    # an anonymous table: no names
    u = make(keyed, bots=[1, 2, 3])
    assert u["players"] == {}
    c = SyncSeat(keyed, u["id"], u["seats"]["0"])
    w = c.until("welcome")
    assert w["names"] == {} and w["player"] is None
    c.close()


def test_a_signed_seat_token_sits_the_player(keyed):
    t = make(keyed, bots=[1, 2, 3], players=[AMING])
    alice = secret_of(keyed.keys_file, "alice")
    token = sign(alice, "alice", table=t["id"], seat=0, player="u-123", name="阿明")
    first = SyncSeat(keyed, t["id"], token)
    w = first.until("welcome")
    assert w["seat"] == 0 and w["player"] == "u-123" and w["names"] == {"0": "阿明"}
    assert first.until("seat_conns")["count"] == 1
    # the player again, with a new token: he reconnects as himself
    again = sign(alice, "alice", table=t["id"], seat=0, player="u-123")
    second = SyncSeat(keyed, t["id"], again)
    assert second.until("welcome")["seat"] == 0
    assert first.until("seat_conns", lambda m: m["count"] == 2)
    second.close()
    assert first.until("seat_conns", lambda m: m["count"] == 1)
    first.close()
    # the table's records, read with a signed seat token
    with keyed.http() as h:
        r = h.get(f"/tables/{t['id']}/records", headers=bearer(token))
        assert r.status_code == 200 and r.json()["names"] == {"0": "阿明"}, r.text


def test_signed_seat_tokens_refused(keyed):
    t = make(keyed, bots=[1, 2, 3], players=[AMING])
    anon = make(keyed, bots=[2, 3])            # seats 0 and 1, nobody named
    other = make(keyed, bots=[1, 2, 3])
    bobs = make(keyed, "bob", bots=[1, 2, 3])
    alice, bob = secret_of(keyed.keys_file, "alice"), secret_of(keyed.keys_file, "bob")
    good = dict(table=t["id"], seat=0, player="u-123")
    now = int(time.time())
    valid = sign(alice, "alice", **good)
    head, body, sig = valid.split(".")
    forged = json.loads(jwt.utils.base64url_decode(body))
    forged["seat"] = 1
    tampered = ".".join([head, jwt.utils.base64url_encode(
        json.dumps(forged).encode()).decode(), sig])
    cases = [
        (tampered, "BadToken", 4401),
        (sign(alice, "alice", **{**good, "exp": now - 600}), "ExpiredToken", 4401),
        (jwt.encode({**good, "exp": now + 60}, None, algorithm="none",
                    headers={"kid": "alice"}), "BadToken", 4401),
        (sign(alice, "carol", **good), "BadKey", 4401),                # no such key
        (jwt.encode({**good, "exp": now + 60}, alice, algorithm="HS256"), "BadKey", 4401),
        (sign(bob, "bob", **good), "WrongTable", 4403),                # made by alice
        (sign(alice, "bob", **good), "BadToken", 4401),                # not bob's secret
        (sign("x" * 32, "alice", **good), "BadToken", 4401),
        (sign(alice, "alice", table=t["id"], seat=0, player="u-123",
              exp=None), "BadToken", 4401),
        (sign(alice, "alice", table=t["id"], seat=0), "BadToken", 4401),   # no player
        (sign(alice, "alice", **{**good, "seat": "0"}), "BadToken", 4401),
        (sign(alice, "alice", **{**good, "table": other["id"]}), "WrongTable", 4403),
        (sign(alice, "alice", **{**good, "seat": 1}), "WrongSeat", 4403),  # a bot's
        (sign(alice, "alice", **{**good, "seat": 4}), "WrongSeat", 4403),
        (sign(alice, "alice", **{**good, "player": "u-999"}), "WrongPlayer", 4403),
        ("eyJ" + "a" * 5000 + ".b.c", "BadToken", 4401),
        ("eyJ.not.ajwt", "BadToken", 4401),
    ]
    for token, code, close in cases:
        assert refused(keyed, t["id"], token) == (code, close), (token, code)
    for token, code, close in cases:
        with keyed.http() as h:
            r = h.get(f"/tables/{t['id']}/records", headers=bearer(token))
        assert r.status_code == close - 4000 and r.json()["error"] == code, (code, r.text)
    # a token of an anonymous seat names any player; of another table: WrongTable
    c = SyncSeat(keyed, anon["id"], sign(alice, "alice", table=anon["id"], seat=1,
                                         player="anyone"))
    assert c.until("welcome")["seat"] == 1
    c.close()
    assert refused(keyed, anon["id"], valid) == ("WrongTable", 4403)
    assert refused(keyed, bobs["id"], sign(bob, "bob", table=bobs["id"], seat=0,
                                             player="u-1", exp=now - 600)) == \
        ("ExpiredToken", 4401)
    with keyed.http() as h:
        r = h.get(f"/tables/{anon['id']}/records/0/replay", headers=bearer(valid))
        assert r.status_code == 403 and r.json()["error"] == "WrongTable"
    # nothing changed by the refusals: the seat is free, the table as it was
    with keyed.http() as h:
        info = h.get(f"/tables/{t['id']}").json()
    assert info["connected"] == [] and info["hands_done"] == 0 and info["open"]


def play_hand(served, tid: str, token: str) -> None:
    """The seat answers every decision with :func:`choose` until the hand ends."""
    c = SyncSeat(served, tid, token, strict=False)
    while True:
        msg = c.recv()
        if msg["type"] == "decide":
            c.send({"type": "act", "hand": msg["hand"], "seq": msg["seq"],
                    "action": choose(msg["legal"])}, paced=True)
        elif msg["type"] == "hand_ended":
            c.close()
            return


def test_records_name_players_and_a_closed_table_reads_its_own(keyed):
    t = make(keyed, bots=[1, 2, 3], players=[AMING])
    token = sign(secret_of(keyed.keys_file, "alice"), "alice", table=t["id"], seat=0,
                 player="u-123")
    play_hand(keyed, t["id"], token)
    with keyed.http() as h:
        r = h.post(f"/tables/{t['id']}/close", headers=bearer(t["admin"]))
        assert r.status_code == 200, r.text
        for auth in (t["seats"]["0"], token, keyed.keys["alice"]):
            r = h.get(f"/tables/{t['id']}/records", headers=bearer(auth))
            assert r.status_code == 200, r.text
            assert r.json()["names"] == {"0": "阿明"} and len(r.json()["hands"]) == 1
            r = h.get(f"/tables/{t['id']}/records/0/replay", headers=bearer(auth))
            assert r.status_code == 200, r.text
        assert h.get(f"/tables/{t['id']}").json()["names"] == {"0": "阿明"}
        rows = h.get("/records", headers=bearer(keyed.keys["alice"])).json()
        mine = [x for x in rows if x["table"] == t["id"]]
        assert mine and mine[0]["names"] == {"0": "阿明"}
        assert "u-123" not in json.dumps(rows)
        # the spectator's token reads no records, open or closed
        r = h.get(f"/tables/{t['id']}/records", headers=bearer(t["spectator_token"]))
        assert r.status_code == 401


def test_spectators_need_the_table_spectator_token(keyed):
    t = make(keyed, bots=[1, 2, 3], players=[AMING])
    u = make(keyed, bots=[1, 2, 3])
    assert refused(keyed, t["id"], "")[0] == "BadToken"
    assert refused(keyed, t["id"], u["spectator_token"])[0] == "BadToken"
    with keyed.http() as h:   # keys: no lobby
        r = h.get("/tables")
        assert r.status_code == 401 and r.json()["error"] == "NoKey"
    c = SyncSeat(keyed, t["id"], t["spectator_token"])
    assert c.until("welcome")["names"] == {"0": "阿明"}
    c.close()


def test_revoked_key_and_eddsa_and_the_lobby(db_url, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    f = tmp_path / "keys.json"
    # a keys file of before: no signing secret; it loads, its key signs nothing
    old = new_key(f, "old")
    data = json.loads(f.read_text())
    del data["keys"][0]["secret"]
    f.write_text(json.dumps(data))
    alice = new_key(f, "alice")
    private = Ed25519PrivateKey.generate()
    pem = tmp_path / "ed.pem"
    pem.write_bytes(private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    r = qipai("keys", "new", "ed", "--file", str(f), "--public-key", str(pem))
    assert r.returncode == 0 and "EdDSA" in r.stderr, r.stderr
    ed = r.stdout.strip()
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    r = qipai("keys", "new", "bad", "--file", str(f), "--public-key", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    s = start_server(db_url, tmp_path, "--keys", str(f), "--lobby")
    s.keys = {"old": old, "alice": alice, "ed": ed}
    try:
        t = make(s, "ed", bots=[1, 2, 3], players=[AMING])
        u = make(s, "alice", bots=[1, 2, 3], players=[AMING])
        v = make(s, "old", bots=[1, 2, 3])
        claims = dict(table=t["id"], seat=0, player="u-123")
        c = SyncSeat(s, t["id"], sign(private, "ed", "EdDSA", **claims))
        assert c.until("welcome")["player"] == "u-123"
        c.close()
        # the key's algorithm, never the token's: HS256 with the public key as secret
        as_hs = jwt.api_jws.PyJWS(algorithms=["HS256"])   # (PyJWT refuses a PEM as an
        as_hs._algorithms["HS256"].prepare_key = lambda k: k   # HMAC key: force it)
        forged = as_hs.encode(json.dumps({**claims, "exp": int(time.time()) + 60}).encode(),
                              pem.read_bytes(), algorithm="HS256", headers={"kid": "ed"})
        assert refused(s, t["id"], forged) == ("BadToken", 4401)
        # the old key (no secret) signs nothing
        assert refused(s, v["id"], sign("x" * 32, "old", table=v["id"], seat=0,
                                         player="p")) == ("BadKey", 4401)
        # --lobby: the open tables are listed to anyone, names and no tokens
        with s.http() as h:
            r = h.get("/tables")
            assert r.status_code == 200, r.text
            listed = {x["id"]: x for x in r.json()}
            assert listed[t["id"]]["names"] == {"0": "阿明"}
            text = r.text
            for secret in (*t["seats"].values(), t["spectator_token"], t["admin"], "u-123"):
                assert secret not in text
            # creating and records still need a key
            assert h.post("/tables", json={}).status_code == 401
            assert h.get("/records").status_code == 401
        # alice revoked: her signed seat tokens are refused once the server reloads
        token = sign(secret_of(f, "alice"), "alice", table=u["id"], seat=0, player="u-123")
        c = SyncSeat(s, u["id"], token)
        c.until("welcome")
        c.close()
        assert qipai("keys", "revoke", "alice", "--file", str(f)).returncode == 0
        s.proc.send_signal(signal.SIGHUP)
        end = time.monotonic() + PATIENCE
        while "keys reloaded" not in s.log_path.read_text():
            assert time.monotonic() < end
            time.sleep(0.05)
        assert refused(s, u["id"], token) == ("BadKey", 4401)
        with s.http() as h:
            r = h.get(f"/tables/{u['id']}/records", headers=bearer(token))
            assert r.status_code == 401 and r.json()["error"] == "BadKey"
            # its own seat token still plays and reads
            assert h.get(f"/tables/{u['id']}/records",
                         headers=bearer(u["seats"]["0"])).status_code == 200
    finally:
        s.stop()
    log = s.log_path.read_text()
    assert "Traceback" not in log and token not in log and ed not in log


def test_open_demo_takes_players_and_refuses_signed_tokens(db_url, tmp_path):
    s = start_server(db_url, tmp_path)
    try:
        with s.http() as h:
            r = h.post("/tables", json={"bots": [1, 2, 3], "players": [AMING]})
            assert r.status_code == 201, r.text
            t = r.json()
            assert [x["names"] for x in h.get("/tables").json()] == [{"0": "阿明"}]
        token = sign("x" * 32, "any", table=t["id"], seat=0, player="u-123")
        assert refused(s, t["id"], token) == ("BadToken", 4401)
        c = SyncSeat(s, t["id"], t["seats"]["0"])
        assert c.until("welcome")["names"] == {"0": "阿明"}
        c.close()
    finally:
        s.stop()
    # restarted: the table is restored with its named player
    s = start_server(db_url, tmp_path)
    try:
        c = SyncSeat(s, t["id"], t["seats"]["0"])
        w = c.until("welcome")
        assert w["names"] == {"0": "阿明"} and w["player"] == "u-123"
        c.close()
    finally:
        s.stop()


def test_qipai_connect_plays_with_a_signed_seat_token_and_shows_names(keyed):
    t = make(keyed, bots=[1, 2, 3], players=[AMING])
    token = sign(secret_of(keyed.keys_file, "alice"), "alice", table=t["id"], seat=0,
                 player="u-123")
    r = qipai("connect", "--auto", "--hands", "1", keyed.ws(f"/tables/{t['id']}/ws?token={token}"))
    assert r.returncode == 0, r.stderr
    assert "players: seat 0 阿明 (you)" in r.stdout and "seat 0 (阿明)" in r.stdout, r.stdout
    assert token not in r.stdout + r.stderr
