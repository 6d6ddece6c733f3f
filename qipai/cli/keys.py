"""``qipai keys``: the operator keys of ``qipai serve --keys FILE`` (new, list, revoke)."""

from __future__ import annotations

import click

_FILE = click.option("--file", "path", required=True, metavar="FILE",
                     help="The keys file (JSON; only each key's SHA-256 is stored).")


@click.group()
def keys() -> None:
    """Operator keys for qipai serve --keys FILE.

    With keys, creating, listing and closing tables and reading records and
    replays need Authorization: Bearer KEY.  Send SIGHUP to a running server
    to make it read the file again.
    """


@keys.command("new")
@click.argument("name")
@_FILE
def new(name: str, path: str) -> None:
    """Add a key named NAME (the file is created, mode 0600, if missing) and
    print it once: only its hash is kept."""
    from qipai.server.keys import new as add

    click.echo(add(path, name))
    click.echo(f"key {name!r} added to {path}; it is shown only this once (send SIGHUP to a "
               f"running qipai serve to use it)", err=True)


@keys.command("list")
@_FILE
def list_(path: str) -> None:
    """The names of the keys in FILE, one a line."""
    from qipai.server.keys import read

    for name in read(path):
        click.echo(name)


@keys.command("revoke")
@click.argument("name")
@_FILE
def revoke(name: str, path: str) -> None:
    """Remove the key named NAME (send SIGHUP to a running qipai serve)."""
    from qipai.server.keys import revoke as remove

    remove(path, name)
    click.echo(f"key {name!r} revoked in {path}", err=True)
