"""Helpers of the outbox tests (tests/server/test_webhook.py): a receiver
process (:mod:`receiver`) that fails at random, all-bot rooms played by a
spectator's connection, and the checks of what the receiver got against the
database."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from websockets.sync.client import connect

from hostkit import PATIENCE, Served
from pgcluster import sqlalchemy_url

HERE = Path(__file__).parent
SECRET = "test-webhook-secret-0123456789"


class Receiver:
    """A running :mod:`receiver` process (``secret``: the one it checks the
    signatures with; ``name``: its file's, ``NAME.jsonl``, one per receiver)."""

    def __init__(self, tmp_path: Path, *args: str, port: int = 0, secret: str = SECRET,
                 name: str = "received") -> None:
        self.out = Path(tmp_path) / f"{name}.jsonl"
        env = {"QIPAI_WEBHOOK_SECRET": secret, "PATH": "/usr/bin:/bin"}
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "receiver.py"), str(self.out), "--port", str(port),
             *args], stdout=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()   # type: ignore[union-attr]
        assert line.startswith("listening "), line
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/hook"

    def got(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        return [json.loads(x) for x in self.out.read_text().splitlines() if x.strip()]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


#: The stake and rake of the money tables (``make_room(money=True)``).
MONEY = {"stake": 10, "rake": {"percent": 5, "cap": 200}}


def make_room(served: Served, hands: int, money: bool = False,
              key: str | None = None) -> dict[str, Any]:
    """A room of ``hands`` hands, every seat a bot; ``money``: with
    :data:`MONEY`; ``key``: created with this operator key."""
    with served.http() as h:
        r = h.post("/tables", json={"variant": "guilin-mahjong", "bots": [0, 1, 2, 3],
                                    "hands": hands, **(MONEY if money else {})},
                   headers={"Authorization": f"Bearer {key}"} if key is not None else {})
        assert r.status_code == 201, r.text
        return r.json()


def watch(served: Served, t: dict[str, Any], until_closed: bool = True) -> Any:
    """A spectator connection (the bots play while someone watches): read
    until the table closes (``until_closed``), else return it open."""
    ws = connect(served.ws(t["spectator"]), open_timeout=PATIENCE, max_size=None,
                 compression=None, legacy=True)
    if not until_closed:
        return ws
    try:
        while True:
            raw = ws.recv(timeout=PATIENCE)
            if '"type":"closed"' in raw:
                return None
    except Exception:  # noqa: BLE001 - closed by the server after "closed"
        return None
    finally:
        ws.close()


class Watcher:
    """Spectators of tables in threads, reading everything until closed
    (:meth:`stop`), so that the bots play."""

    def __init__(self, served: Served, tables: list[dict[str, Any]]) -> None:
        self.socks: list[Any] = []
        self.threads: list[threading.Thread] = []
        for t in tables:
            try:
                ws = watch(served, t, until_closed=False)
            except Exception:  # noqa: BLE001 - a table closed already
                continue
            self.socks.append(ws)
            th = threading.Thread(target=self._drain, args=(ws,), daemon=True)
            th.start()
            self.threads.append(th)

    @staticmethod
    def _drain(ws: Any) -> None:
        try:
            while True:
                ws.recv()
        except Exception:  # noqa: BLE001 - closed
            pass

    def stop(self) -> None:
        for ws in self.socks:
            try:
                ws.close()
            except Exception:  # noqa: BLE001
                pass
        for th in self.threads:
            th.join(PATIENCE)


def db_events(db: str) -> list[dict[str, Any]]:
    engine = sa.create_engine(sqlalchemy_url(db))
    try:
        with engine.connect() as c:
            return [dict(r) for r in c.execute(sa.text(
                "select * from qipai_events order by id")).mappings()]
    finally:
        engine.dispose()


def db_nets(db: str) -> dict[tuple[str, int], int]:
    """(table, seat) → the sum of the stored nets of its finished hands."""
    engine = sa.create_engine(sqlalchemy_url(db))
    out: dict[tuple[str, int], int] = defaultdict(int)
    try:
        with engine.connect() as c:
            for tid, net in c.execute(sa.text(
                    "select table_id, net from qipai_hands where net is not null")):
                for seat, n in enumerate(json.loads(net)):
                    out[tid, seat] += n
    finally:
        engine.dispose()
    return dict(out)


def db_events_of(db: str, tables: set[str] | None = None) -> list[dict[str, Any]]:
    """:func:`db_events`, of the tables ``tables`` only (None: every table's)."""
    rows = db_events(db)
    return rows if tables is None else [r for r in rows if r["table_id"] in tables]


def wait_delivered(db: str, receiver: Receiver, what: str = "every event delivered",
                   tables: set[str] | None = None) -> None:
    """Wait (polling the database) until no event is pending (of ``tables``
    only, when given)."""
    end = time.monotonic() + 3 * PATIENCE
    while time.monotonic() < end:
        rows = db_events_of(db, tables)
        if rows and all(r["delivered"] is not None for r in rows):
            return
        time.sleep(0.05)
    pending = [r["id"] for r in db_events_of(db, tables) if r["delivered"] is None]
    raise AssertionError(f"{what}: still pending {pending[:20]}")


def check_received(db: str, receiver: Receiver,
                   tables: set[str] | None = None) -> list[dict[str, Any]]:
    """Every event of the database (of ``tables`` only, when given: and
    none of another table's) reached the receiver with a 200, signed (with
    its secret); a duplicate only with the same id and data; in order per
    table (no request for an event before every earlier event of its table
    had its 200).  Answers the delivered events, one per id, in id order."""
    rows = db_events_of(db, tables)
    got = receiver.got()
    assert got, "the receiver got nothing"
    assert all(g["signed"] for g in got), [g for g in got if not g["signed"]][:3]
    first: dict[int, dict[str, Any]] = {}
    ok_at: dict[int, int] = {}          # id → index of its first 200
    for i, g in enumerate(got):
        if g["id"] in first:
            assert g["data"] == first[g["id"]]["data"] and g["kind"] == first[g["id"]]["kind"]
        else:
            first[g["id"]] = g
        if g["status"] == 200 and g["id"] not in ok_at:
            ok_at[g["id"]] = i
    ids = [r["id"] for r in rows]
    missing = [i for i in ids if i not in ok_at]
    assert not missing, f"never delivered: {missing[:20]}"
    assert set(first) == set(ids), "the receiver got events the database does not have"
    by_table: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        by_table[r["table_id"]].append(r["id"])
    for tid, tids in by_table.items():
        assert tids == sorted(tids)
        for i, g in enumerate(got):
            if g["table"] != tid:
                continue
            earlier = [x for x in tids if x < g["id"]]
            for x in earlier:
                assert ok_at[x] < i, (f"table {tid}: event {g['id']} sent before event {x} "
                                      f"was delivered")
    for r in rows:
        g = first[r["id"]]
        assert g["kind"] == r["kind"] and g["table"] == r["table_id"]
        assert g["data"] == json.loads(r["body"])
    return [first[i] for i in ids]


def db_money(db: str) -> dict[tuple[str, int | str], int]:
    """(table, seat or "house") → the sum of the money nets (and the house's
    take) of the records of its finished hands with a stake."""
    engine = sa.create_engine(sqlalchemy_url(db))
    out: dict[tuple[str, int | str], int] = defaultdict(int)
    try:
        with engine.connect() as c:
            for tid, rec in c.execute(sa.text(
                    "select table_id, record from qipai_hands where record is not null")):
                money = json.loads(rec).get("money")
                if money:
                    for seat, n in enumerate(money["net"]):
                        out[tid, seat] += n
                    out[tid, "house"] += money["house"]
    finally:
        engine.dispose()
    return dict(out)


def check_nets(db: str, delivered: list[dict[str, Any]]) -> None:
    """The receiver's sum of ``hand_ended`` nets per (table, seat) equals
    the records' (the stored hands'); and its money balances (a table with
    a stake: each seat's money net, the house's take) the records' money."""
    sums: dict[tuple[str, int], int] = defaultdict(int)
    money: dict[tuple[str, int | str], int] = defaultdict(int)
    hands: set[tuple[str, int]] = set()
    for g in delivered:
        if g["kind"] == "hand_ended":
            key = (g["table"], g["data"]["hand"])
            assert key not in hands, f"two hand_ended events of {key}"
            hands.add(key)
            for seat, n in enumerate(g["data"]["net"]):
                sums[g["table"], seat] += n
            m = g["data"].get("money")
            if m:
                assert sum(m["net"]) + m["house"] == 0, m
                for seat, n in enumerate(m["net"]):
                    money[g["table"], seat] += n
                money[g["table"], "house"] += m["house"]
    stored = db_nets(db)
    assert stored, "no hand finished"
    assert dict(sums) == stored
    assert dict(money) == db_money(db)
