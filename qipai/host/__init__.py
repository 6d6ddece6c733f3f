"""The authority of ``qipai serve``: hosted tables, the journal, no network code.

Rooms: :mod:`qipai.host.protocol` (the messages, msgspec only: importable
without the server's dependencies), :mod:`qipai.host.store` (the database),
:mod:`qipai.host.game` (a hosted table: hands, seats, bots, timeouts).  The
HTTP and WebSocket server over it is :mod:`qipai.server`.  The core never
imports this package.  Install its dependencies with ``pip install
'qipai[serve]'`` (``uv run`` in a clone has them).  See
docs/howto/host-a-table.md and docs/reference/protocol.md.
"""
