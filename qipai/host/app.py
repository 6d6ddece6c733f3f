"""Deprecated: the server moved to :mod:`qipai.server`; this module re-exports
its public names for one release and warns when one is used."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_MOVED = {
    **dict.fromkeys(("Server", "RestoreRefused", "TooManyTables", "BadBots", "MAX_BODY_BYTES",
                     "RATE_PER_S", "RATE_BURST", "RESYNC_S", "STALL_S", "SHUTDOWN_S",
                     "REPLAY_WORKERS", "REPLAY_WAITING", "SPEC_WORKERS", "SPEC_WAITING",
                     "SPEC_CACHE", "MAX_TABLES", "MAX_CONNECTIONS", "FD_RESERVE",
                     "REFUSALS_LOG_S", "descriptor_room", "default_max_connections"),
                    "qipai.server.state"),
    **dict.fromkeys(("create_app",), "qipai.server.app"),
    **dict.fromkeys(("listen", "run", "RepeatsFilter", "BACKLOG", "MAX_FRAME_BYTES"),
                    "qipai.server.listen"),
    **dict.fromkeys(("ws_protocol", "WS_CLOSE_S", "WRITE_STALL_S"), "qipai.server.uvicorn_ws"),
    **dict.fromkeys(("table_ws",), "qipai.server.socket"),
    **dict.fromkeys(("health", "variants", "variant", "create_table", "list_tables", "get_table",
                     "records", "finished", "replay_stored", "replay_posted", "page",
                     "close_table"), "qipai.server.routes"),
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"qipai.host.app is deprecated: import {name} from {module}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), name)
