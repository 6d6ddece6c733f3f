"""The command line of the server: the extra's message, the protocol schema."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from qipai.cli import cli


def test_serve_without_the_extra_names_it_in_one_line():
    code = ("import sys; sys.modules['starlette'] = None\n"
            "from qipai.cli import main; main(['serve'])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'qipai[serve]'" in lines[0], p.stderr


def test_schema_protocol_lists_every_message():
    out = CliRunner().invoke(cli, ["schema", "--protocol"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert set(doc["properties"]) == {"ClientMessage", "ServerMessage", "ServerFrame",
                                      "SeatView"}
    defs = doc["$defs"]
    for name in ("Act", "Resync", "Ping", "Welcome", "Events", "Decide", "Ack", "HandEnded",
                 "Closed", "Pong", "Error", "Batch", "SeatView"):
        assert name in defs, name
    # a frame is one message or a batch; a batch holds messages, never a batch
    frame = {d["$ref"].rsplit("/", 1)[1] for d in doc["properties"]["ServerFrame"]["anyOf"]}
    server = {d["$ref"].rsplit("/", 1)[1] for d in doc["properties"]["ServerMessage"]["anyOf"]}
    assert frame == server | {"Batch"} and "Batch" not in server
    inner = defs["Batch"]["properties"]["messages"]["items"]["anyOf"]
    assert {d["$ref"].rsplit("/", 1)[1] for d in inner} == server
    codes = set(defs["Error"]["properties"]["code"]["enum"])
    assert {"IllegalAction", "NotYourTurn", "StaleSeq", "BadToken", "BadMessage", "HandOver",
            "TooLarge", "Throttled"} <= codes


def test_a_bad_database_url_is_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--db", "nosuchdb://x"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.startswith("error: cannot use database") and p.stderr.count("\n") == 1
