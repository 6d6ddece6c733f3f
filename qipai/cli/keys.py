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
@click.option("--public-key", "public_key", metavar="FILE.pem", default=None,
              type=click.Path(exists=True, dir_okay=False),
              help="An Ed25519 public key (PEM): the seat tokens this key's operator signs "
                   "are EdDSA JWTs checked with it (the private key stays the operator's). "
                   "Without it a signing secret (HS256) is made and printed once.")
def new(name: str, path: str, public_key: str | None) -> None:
    """Add a key named NAME (the file is created, mode 0600, if missing) and
    print it once on standard output: only its hash is kept.  The signing
    secret of the seat tokens (JWT, HS256, header kid NAME) the operator may
    sign itself is printed once on standard error; the file keeps it."""
    from pathlib import Path

    from qipai.server.keys import new as add

    pem = Path(public_key).read_text(encoding="utf-8") if public_key is not None else None
    key, secret = add(path, name, public_key=pem)
    click.echo(key)
    click.echo(f"key {name!r} added to {path}; it is shown only this once (send SIGHUP to a "
               f"running qipai serve to use it)", err=True)
    if secret is not None:
        click.echo(f"signing secret of {name!r}'s seat tokens (JWT HS256, kid {name!r}): "
                   f"{secret}", err=True)
    else:
        click.echo(f"{name!r}'s seat tokens are checked with the public key of {public_key} "
                   f"(JWT EdDSA, kid {name!r})", err=True)


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
