"""The game server (``qipai serve``): HTTP and WebSocket over :mod:`qipai.host`.

Rooms: :mod:`qipai.server.state` (the settings, the store and the hosted
tables), :mod:`qipai.server.routes` (the HTTP routes),
:mod:`qipai.server.socket` (the WebSocket loop), :mod:`qipai.server.app`
(the Starlette app), :mod:`qipai.server.listen` (the socket and uvicorn),
:mod:`qipai.server.uvicorn_ws` (the one subclass of a uvicorn internal) and
``static/`` (the browser page).  Needs the ``serve`` extra
(``pip install qipai[serve]``).
"""
