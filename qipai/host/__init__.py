"""The authority of ``qipai serve``: hosted tables, the journal, no network code.

Rooms: :mod:`qipai.host.protocol` (the messages, msgspec only: importable
without the server's dependencies), :mod:`qipai.host.store` (the database),
:mod:`qipai.host.match` (a hosted table, hand after hand) with its parts
:mod:`qipai.host.outbox` (what connections are told),
:mod:`qipai.host.clock` (decisions and deadlines), :mod:`qipai.host.seats`
(tokens, connections, bots) and :mod:`qipai.host.journal` (its rows and
the rebuild from them); :mod:`qipai.host.errors` (refusals).  The HTTP and
WebSocket server over it is :mod:`qipai.server`.  The core never imports
this package.  Install its dependencies with ``pip install 'qipai[serve]'``
(``uv run`` in a clone has them).  See docs/howto/host-a-table.md and
docs/reference/protocol.md.
"""
