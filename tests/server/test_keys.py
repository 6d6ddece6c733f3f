"""Operator keys: ``qipai keys new/list/revoke`` and ``qipai serve --keys FILE``
(a real server process; SQLite and PostgreSQL)."""

import json
import os
import signal
import stat
import subprocess
import sys

import httpx
import pytest

from hostkit import PATIENCE, SyncSeat, start_server


def qipai(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qipai", *args], capture_output=True,
                          text=True, timeout=PATIENCE)


def new_key(path, name: str) -> str:
    r = qipai("keys", "new", name, "--file", str(path))
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()
    assert key.startswith("qk_") and len(key) > 40
    return key


def test_keys_new_list_revoke(tmp_path):
    f = tmp_path / "keys.json"
    key = new_key(f, "alice")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    assert key not in f.read_text()   # only its hash
    r = qipai("keys", "new", "alice", "--file", str(f))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "already" in r.stderr
    new_key(f, "bob")
    assert qipai("keys", "list", "--file", str(f)).stdout.split() == ["alice", "bob"]
    assert qipai("keys", "revoke", "alice", "--file", str(f)).returncode == 0
    assert qipai("keys", "list", "--file", str(f)).stdout.split() == ["bob"]
    r = qipai("keys", "revoke", "alice", "--file", str(f))
    assert r.returncode == 2 and "no key named" in r.stderr
    r = qipai("keys", "new", "bad name", "--file", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr
