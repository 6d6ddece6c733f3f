"""``qipai serve --log-format json``: one JSON object a line, the table's
events in it, and no token of any kind; ``text`` (the default): one
readable line an event, and no token either."""

from __future__ import annotations

import json
import re

import pytest

from hostkit import SyncSeat, create, start_server

_TEXT_EVENT = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ([a-z_]+)( .*)?")
_FIELD = re.compile(r' ([a-z_]+)=("(?:[^"\\]|\\.)*"|[^ "]\S*)')


def _events(text: str, fmt: str) -> list[dict]:
    """The log's events as ``{"event": …, <fields>}`` (JSON mode: every line is
    one; text mode: the lines of events, ``TIME EVENT name=value …``)."""
    if fmt == "json":
        lines = [json.loads(line) for line in text.splitlines()]   # every line is JSON
        assert all({"time", "level", "event"} <= set(x) for x in lines), lines
        return lines
    out = []
    for line in text.splitlines():
        m = _TEXT_EVENT.fullmatch(line)
        if m is None:
            continue
        rest = m.group(3) or ""
        pairs = _FIELD.findall(rest)
        assert "".join(f" {k}={v}" for k, v in pairs) == rest, line   # nothing but fields
        fields = {k: json.loads(v) if v[0] in '"[{' or v in ("true", "false")
                  or re.fullmatch(r"-?\d+(\.\d+)?", v) else v for k, v in pairs}
        out.append({"event": m.group(2), **fields})
    return out


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_log_has_the_events_and_no_token(tmp_path, fmt):
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--seed", "11",
                     *(["--log-format", "json"] if fmt == "json" else []),
                     "--turn-timeout", "0.02")
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
    lines = _events(text, fmt)
    events = {x["event"] for x in lines}
    assert {"table_created", "hand_ended", "timeout", "refused",
            "table_closed"} <= events, events
    assert fmt == "text" or "listening" in events
    ended = next(x for x in lines if x["event"] == "hand_ended")
    assert ended["table"] == t["id"] and ended["hand"] == 0 and len(ended["net"]) == 4
    refused = next(x for x in lines if x["event"] == "refused")
    assert refused["reason"] == "BadMessage" and refused["table"] == t["id"], refused
    created = next(x for x in lines if x["event"] == "table_created")
    assert created["table"] == t["id"] and created["variant"] == "guilin-mahjong", created
    for secret in (*t["seats"].values(), t["admin"], t["spectator_token"]):
        assert secret not in text


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_keyed_servers_events_name_the_key_and_hold_no_secret(db_url, tmp_path, fmt):
    import sqlalchemy as sa

    from qipai.host.store import engine_url
    from test_identity import new_key, secret_of, sign

    f = tmp_path / "keys.json"
    key = new_key(f, "shop")
    secret = secret_of(f, "shop")
    s = start_server(db_url, tmp_path, "--keys", str(f), "--seed", "11", "--log-format", fmt,
                     "--turn-timeout", "0.02")
    try:
        with s.http() as h:
            r = h.post("/tables", headers={"Authorization": f"Bearer {key}"}, json={
                "bots": [1, 2, 3], "players": [{"seat": 0, "player": "u-9", "name": "阿明"}]})
            assert r.status_code == 201, r.text
            t = r.json()
        token = sign(secret, "shop", table=t["id"], seat=0, player="u-9")
        c = SyncSeat(s, t["id"], token, strict=False)
        c.until("hand_ended")          # seat 0 never answers: its decisions time out
        c.close()
        s.close(t)
        eng = sa.create_engine(engine_url(db_url))
        try:
            with eng.connect() as conn:   # every hand's salt (the next one's, never revealed)
                salts = [r[0] for r in conn.execute(sa.text("select salt from qipai_hands"))]
        finally:
            eng.dispose()
    finally:
        s.stop()
    text = s.log_path.read_text()
    lines = _events(text, fmt)
    for event in ("table_created", "timeout", "hand_ended", "table_closed"):
        got = [x for x in lines if x["event"] == event]
        assert got and all(x["key"] == "shop" for x in got), (event, got)
    assert salts
    for secret_text in (key, secret, token, *t["seats"].values(), t["admin"],
                        t["spectator_token"], *salts):
        assert secret_text not in text


def _record(event: str, **fields) -> "logging.LogRecord":
    import logging

    r = logging.LogRecord("qipai.events", logging.INFO, __file__, 1, event, None, None)
    r.event, r.fields = event, fields
    return r


def test_a_text_event_line_is_one_line_table_and_key_first():
    from qipai.server.logs import TextFormatter

    f = TextFormatter()
    line = f.format(_record("refused", reason="BadMessage", message="a\nb\u2028c \"d\"",
                            client=None, key="shop", table="ab12"))
    assert len(line.splitlines()) == 1 and "\u2028" not in line, line
    m = _TEXT_EVENT.fullmatch(line)
    assert m is not None, line
    rest = m.group(3)
    assert rest.startswith(" table=ab12 key=shop reason=BadMessage message="), line
    assert "client=" not in line   # a null field is left out
    fields = dict(_FIELD.findall(rest))
    assert json.loads(fields["message"]) == "a\nb\u2028c \"d\""


def test_refusals_are_held_back_per_reason_in_both_formats():
    from qipai.server.logs import RefusedFilter

    f = RefusedFilter(every=3600)   # (no clock involved: nothing is let through again)
    assert f.filter(_record("refused", reason="BadMessage"))
    assert not f.filter(_record("refused", reason="BadMessage"))
    assert not f.filter(_record("refused", reason="BadMessage"))
    assert f.filter(_record("refused", reason="BadToken"))   # another reason: its own
    assert f.filter(_record("hand_ended", table="x"))        # not a refusal: never held
    f.every = 0   # the next one of a reason says how many were held back
    again = _record("refused", reason="BadMessage")
    assert f.filter(again) and again.fields["held"] == 2
