"""The old import paths of the server's modules keep working for one
release, each use warning (``DeprecationWarning``) and naming the new one."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(("old", "name", "new"), [
    ("qipai.host.app", "Server", "qipai.server.state"),
    ("qipai.host.app", "run", "qipai.server.listen"),
    ("qipai.host.app", "ws_protocol", "qipai.server.uvicorn_ws"),
    ("qipai.host.game", "HostedTable", "qipai.host.match"),
    ("qipai.host.game", "Conn", "qipai.host.outbox"),
    ("qipai.host.game", "Refused", "qipai.host.errors"),
])
def test_an_old_path_warns_and_gives_the_moved_name(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=new):
        got = getattr(module, name)
    assert got is getattr(importlib.import_module(new), name)


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        importlib.import_module("qipai.host.game").nothing_here  # noqa: B018
