"""A house plugin for the tests (``qipai serve --plugin tests/helpers/gated_rules.py``):
loading a ruleset blocks while the file ``$QIPAI_TEST_GATE`` exists, having
first made ``$QIPAI_TEST_GATE.entered`` — so a test holds a load as long as
it likes and sees what the server does meanwhile.  Nothing else changes."""

from __future__ import annotations

import os
import time

from qipai.core.hookspecs import hookimpl


@hookimpl(wrapper=True)
def qipai_manifest():
    manifest = yield
    gate = os.environ.get("QIPAI_TEST_GATE")
    if gate and os.path.exists(gate):
        with open(gate + ".entered", "a"):
            pass
        while os.path.exists(gate):
            time.sleep(0.01)
    return manifest
