"""The page's server side: ``GET /``, ``GET /records``, and a finished record
replayed step by step (``GET /tables/{id}/records/{hand}/replay``, ``POST
/replay``) — never an unfinished hand, every bad record a typed error."""

from __future__ import annotations

import json

import pytest

from hostkit import SyncSeat, choose, create, start_server


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A server with one finished zipai hand (seat 0 played by the auto
    client, seats 1 and 2 bots) and its second hand in progress."""
    tmp = tmp_path_factory.mktemp("replay")
    s = start_server(f"sqlite:///{tmp / 'qipai.db'}", tmp, "--seed", "5", "--turn-timeout", "900")
    try:
        made = create(s, "guilin-zipai", [1, 2])
        seat = SyncSeat(s, made["id"], made["seats"]["0"])
        while True:
            m = seat.recv()
            if m["type"] == "decide":
                seat.send({"type": "act", "hand": m["hand"], "seq": m["seq"],
                           "action": choose(m["legal"])})
            elif m["type"] == "hand_ended":
                break
        seat.close()
        with s.http() as http:
            record = http.get(f"/tables/{made['id']}/records").json()["hands"][0]["record"]
        yield s, made["id"], record
    finally:
        s.stop()


def test_the_page_is_served(played):
    s, _, _ = played
    with s.http() as http:
        r = http.get("/")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/static/page.js">' in r.text
        js = http.get("/static/page.js")
        assert js.status_code == 200 and "javascript" in js.headers["content-type"]
        assert http.get("/static/page.css").status_code == 200
        assert http.get("/static/nothing.js").status_code == 404


def test_records_lists_finished_hands_only(played):
    s, tid, record = played
    with s.http() as http:
        rows = [r for r in http.get("/records").json() if r["table"] == tid]
        assert rows == [{"table": tid, "hand": 0, "spec": "guilin-zipai", "variant": "guilin-zipai",
                         "net": record["result"]["net"], "names": {}}]
        assert http.get("/records", params={"limit": "x"}).json()["error"] == "BadMessage"


def test_a_stored_hand_replays_step_by_step(played):
    s, tid, record = played
    with s.http() as http:
        got = http.get(f"/tables/{tid}/records/0/replay").json()
    assert (got["table"], got["hand"], got["variant"], got["players"]) == (tid, 0, "guilin-zipai", 3)
    steps = got["steps"]
    # step 0 is the deal: every seat's cards are the recorded deal's
    # (the dealer's 亮张 among them), nothing discarded yet
    first = steps[0]
    assert first["index"] == 0 and first["actions"] == []
    for seat, dealt in enumerate(record["deal"]["hands"]):
        s0 = first["seats"][seat]
        cards = list(s0["hand"]) + [c for m in s0["melds"] for c in m["cards"]]
        assert sorted(cards) == sorted(dealt) and s0["discards"] == []
    assert first["stock"] == len(record["deal"]["wall"])
    # the steps together are the record's actions and events, in order, each once
    actions = [a for st in steps for a in st["actions"]]
    events = [e for st in steps for e in st["events"]]
    assert actions == record["actions"]
    assert events == record["events"]
    for st in steps[1:]:
        assert st["events"], "a step changes the table"
    assert [st["index"] for st in steps] == list(range(len(steps)))
    assert got["result"] == record["result"]
    # 80 cards at every step: hands, melds, discards, stock (and the card in play)
    for st in steps:
        n = st["stock"] + sum(len(x["hand"]) + len(x["discards"])
                              + sum(len(m["cards"]) for m in x["melds"]) for x in st["seats"])
        assert n + (1 if st["window"] else 0) == 80, st


def test_an_unfinished_hand_is_never_replayed(played):
    s, tid, _ = played
    with s.http() as http:
        r = http.get(f"/tables/{tid}/records/1/replay")  # hand 1 is being played
        assert r.status_code == 404 and r.json()["error"] == "UnknownHand"
        assert "steps" not in r.text
        assert http.get(f"/tables/{tid}/records/x/replay").status_code == 404
        assert http.get("/tables/nosuch/records/0/replay").json()["error"] == "UnknownTable"


def test_a_posted_record_replays_and_bad_ones_are_typed_errors(played):
    s, tid, record = played
    with s.http() as http:
        stored = http.get(f"/tables/{tid}/records/0/replay").json()
        posted = http.post("/replay", content=json.dumps(record)).json()
        assert posted["steps"] == stored["steps"] and posted["table"] is None

        def error(body):
            r = http.post("/replay", content=body)
            return r.status_code, r.json()["error"]

        assert error(b"not json") == (400, "BadRecord")
        assert error(json.dumps({"variant": "guilin-zipai"})) == (400, "BadRecord")
        assert error(json.dumps({**record, "result": None})) == (400, "UnfinishedRecord")
        tampered = json.loads(json.dumps(record))
        tampered["result"]["net"] = [9, -9, 0]
        assert error(json.dumps(tampered)) == (400, "ReplayDiverged")
        reordered = json.loads(json.dumps(record))
        reordered["actions"] = reordered["actions"][1:]
        assert error(json.dumps(reordered))[1] in ("ReplayDiverged", "BadRecord")
        assert error(json.dumps({**record, "variant": "nosuch"})) == (400, "BadRecord")
        r = http.post("/replay", content=b" " * (1024 * 1024 + 1))
        assert r.status_code == 413 and r.json()["error"] == "TooLarge"


def test_hand_ids_and_limits_are_ascii_digits(played):
    """``int()`` reads ``"٣"`` (Arabic-Indic three), ``"+0"``, ``" 0"`` and
    ``"0_0"``: a hand id or ``limit`` is only ASCII digits, without sign,
    space, underscore or leading zero, else a typed JSON error."""
    s, tid, _ = played
    with s.http() as http:
        assert http.get(f"/tables/{tid}/records/0/replay").status_code == 200
        for hand in ("٠", "٣", "０", "+0", "%200", "0_0", "00", "0x0", "1e0", "-0"):
            r = http.get(f"/tables/{tid}/records/{hand}/replay")
            assert r.status_code == 404, hand
            assert r.headers["content-type"].startswith("application/json"), hand
            assert r.json()["error"] == "UnknownHand", hand
            assert "ASCII digits" in r.json()["message"], hand
        assert http.get("/records", params={"limit": "1"}).status_code == 200
        for limit in ("٥", "５", "+5", " 5", "5_0", "05", "", "9" * 40):
            r = http.get("/records", params={"limit": limit})
            assert r.status_code == 400 and r.json()["error"] == "BadMessage", limit


def test_echoed_record_strings_are_checked_and_cut(played):
    """A posted record's strings that errors name (variant, versions, spec,
    plugin names, option names) are refused when too long or unprintable —
    ``BadRecordField`` naming the field, the value cut and escaped — and no
    error message echoes megabytes or a raw control character."""
    s, _, record = played
    huge = "A" * 200_000
    with s.http() as http:
        def error(**over):
            r = http.post("/replay", content=json.dumps({**record, **over}))
            assert r.status_code == 400, r.text[:200]
            return r.json()

        for field in ("variant", "version", "qipai_version", "spec"):
            got = error(**{field: huge})
            assert got["error"] == "BadRecordField", field
            assert f"record's {field} is 200,000 characters" in got["message"]
            assert len(got["message"]) < 300
        got = error(variant="guilin-\x1b[2J\x07zipai")
        assert got["error"] == "BadRecordField" and "unprintable" in got["message"]
        assert "\x1b" not in got["message"] and "\\x1b" in got["message"]
        got = error(variant="guilin\u202ezipai")   # a right-to-left override
        assert got["error"] == "BadRecordField" and "\u202e" not in got["message"]
        got = error(plugins=[{"name": huge, "sha256": None}])
        assert got["error"] == "BadRecordField" and "plugins[0].name" in got["message"]
        got = error(options={**record["options"], huge: 1})
        assert got["error"] == "BadRecordField" and "option name" in got["message"]
        # values no field check names are still cut in the message
        got = error(options={**record["options"], "hu_scale": huge})
        assert got["error"] == "BadRecord" and len(got["message"]) < 700
        got = error(rng="\x1b" * 1000)
        assert got["error"] == "BadRecord" and "\x1b" not in got["message"]
        assert len(got["message"]) < 700
        # a real variant is answered by its registered name
        ok = http.post("/replay", content=json.dumps(record)).json()
        assert ok["variant"] == "guilin-zipai"


def test_long_names_in_paths_are_not_echoed_whole(played):
    s, _, _ = played
    with s.http() as http:
        for path in ("/tables/" + "x" * 5000, "/tables/" + "x" * 5000 + "/records",
                     "/variants/" + "x" * 5000, "/variants/%1B%5B2J"):
            r = http.get(path)
            assert r.status_code == 404, path
            got = r.json()
            assert got["error"] in ("UnknownTable", "UnknownVariant"), path
            assert len(got["message"]) < 200 and "\x1b" not in got["message"], path


def test_the_replay_cap_is_256_kib_by_default(played):
    """A hand's record is under 50 KiB even indented (the largest of 300
    random-bot hands a variant: 19 KiB compact); 256 KiB is read, more is
    413 ``TooLarge`` before any of it is parsed."""
    s, _, record = played
    text = json.dumps(record, indent=2)
    with s.http() as http:
        padded = text + " " * (256 * 1024 - len(text.encode()))
        assert len(padded.encode()) == 256 * 1024
        assert http.post("/replay", content=padded).status_code == 200
        r = http.post("/replay", content=padded + " ")
        assert r.status_code == 413 and r.json()["error"] == "TooLarge"
        assert "262144 bytes" in r.json()["message"]


def test_the_page_gets_the_command_lines_words(played):
    """``GET /vocabulary`` answers :func:`qipai.text.vocabulary`, and the
    page holds no word of its own for a kong: its words are those."""
    from qipai.server.routes import STATIC
    from qipai.text import vocabulary

    s, _, _ = played
    with s.http() as http:
        assert http.get("/vocabulary").json() == vocabulary("zh")
        assert http.get("/vocabulary", params={"lang": "en"}).json() == vocabulary("en")
        r = http.get("/vocabulary", params={"lang": "fr"})
        assert r.status_code == 400 and r.json()["error"] == "BadMessage", r.text
        assert "'fr'" in r.json()["message"]
    page = (STATIC / "page.js").read_text()
    assert "/vocabulary" in page
    for word in ("点杠", "明杠", "蓄杠", "补杠", "加杠", "暗杠"):
        assert word not in page, word
