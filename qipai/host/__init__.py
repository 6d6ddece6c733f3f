"""The game server: ``qipai serve`` (Starlette + uvicorn, SQLAlchemy Core).

Rooms: :mod:`qipai.host.protocol` (the messages, msgspec only: importable
without the server's dependencies), :mod:`qipai.host.store` (the database),
:mod:`qipai.host.game` (a hosted table: hands, seats, bots, timeouts),
:mod:`qipai.host.app` (HTTP and WebSocket routes).  The core never imports
this package.  Install its dependencies with ``pip install 'qipai[serve]'``
(``uv run`` in a clone has them).  See docs/howto/host-a-table.md and
docs/reference/protocol.md.
"""
