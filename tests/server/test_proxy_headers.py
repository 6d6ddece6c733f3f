"""The client address behind a reverse proxy: ``qipai serve
--forwarded-allow-ips IPS`` believes ``X-Forwarded-For`` from those
proxies only (uvicorn's proxy headers); without it the header is ignored.
Seen in the ``refused`` events of the JSON log, which carry the client
address (and never a token)."""

from __future__ import annotations

import json
import subprocess
import sys

from hostkit import PATIENCE, create, start_server
from websockets.sync.client import connect


def refused_clients(tmp_path, *args: str) -> dict[str, str]:
    """Start a server with ``args``; from 127.0.0.1, connect once to a table
    that does not exist and once to a real one with a wrong token, each
    sending ``X-Forwarded-For``; the ``client`` of each ``refused`` event by
    its reason."""
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--log-format", "json", *args)
    try:
        t = create(s, "guilin-mahjong", bots=[1, 2, 3])
        for path, forwarded in (("/tables/nosuchtable/ws", "203.0.113.7"),
                                # a client's own claim first, then what the proxy saw
                                (f"/tables/{t['id']}/ws?token=wrong",
                                 "192.0.2.66, 198.51.100.9")):
            with connect(s.ws(path), open_timeout=PATIENCE,
                         additional_headers={"X-Forwarded-For": forwarded}) as ws:
                assert json.loads(ws.recv(timeout=PATIENCE))["type"] == "error"
    finally:
        s.stop()
    lines = [json.loads(x) for x in s.log_path.read_text().splitlines()]
    return {x["reason"]: x["client"] for x in lines if x["event"] == "refused"}


def test_without_the_flag_the_header_is_ignored(tmp_path):
    assert refused_clients(tmp_path) == {"UnknownTable": "127.0.0.1", "BadToken": "127.0.0.1"}


def test_from_a_trusted_proxy_the_forwarded_address_is_the_client(tmp_path):
    # the rightmost address the trusted proxy did not add itself: 198.51.100.9,
    # not the 192.0.2.66 a client could have put in the header it sent
    assert refused_clients(tmp_path, "--forwarded-allow-ips", "127.0.0.1") == {
        "UnknownTable": "203.0.113.7", "BadToken": "198.51.100.9"}


def test_from_an_address_not_trusted_the_header_is_ignored(tmp_path):
    assert refused_clients(tmp_path, "--forwarded-allow-ips", "10.0.0.0/8, 192.168.1.1") == {
        "UnknownTable": "127.0.0.1", "BadToken": "127.0.0.1"}


def test_a_malformed_proxy_address_is_refused_in_one_line():
    p = subprocess.run([sys.executable, "-m", "qipai", "serve", "--forwarded-allow-ips",
                        "10.0.0.1/8"], capture_output=True, text=True, timeout=PATIENCE)
    assert p.returncode == 2
    assert "'10.0.0.1/8' is not an IP address or a network" in p.stderr, p.stderr


def test_an_http_refusal_names_the_forwarded_client(tmp_path):
    keys = tmp_path / "keys.json"
    key = subprocess.run([sys.executable, "-m", "qipai", "keys", "new", "ops", "--file",
                          str(keys)], capture_output=True, text=True, check=True,
                         timeout=PATIENCE).stdout.strip()
    s = start_server(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "--log-format", "json",
                     "--keys", str(keys), "--key-max-tables", "0",
                     "--forwarded-allow-ips", "127.0.0.1")
    try:
        with s.http() as h:
            r = h.post("/tables", json={"bots": [1, 2, 3]},
                       headers={"Authorization": f"Bearer {key}",
                                "X-Forwarded-For": "203.0.113.8"})
        assert r.status_code == 429, r.text
    finally:
        s.stop()
    lines = [json.loads(x) for x in s.log_path.read_text().splitlines()]
    refused = [x for x in lines if x["event"] == "refused"]
    assert [(x["reason"], x["client"]) for x in refused] == [("TooManyTables", "203.0.113.8")]
