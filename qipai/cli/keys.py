"""``qipai keys``: the operator keys of ``qipai serve --keys FILE`` (new, list,
limit, webhook, revoke)."""

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


def _limit_options(f):  # type: ignore[no-untyped-def]
    """The per-key limit options (each: absent, the server's default)."""
    for name, text in reversed((
            ("max-tables", "open tables of this key at once"),
            ("tables-per-minute", "tables this key may create in 60 s"),
            ("max-connections", "WebSocket connections to this key's tables"),
            ("max-spectators", "spectator connections to this key's tables"))):
        f = click.option(f"--{name}", type=click.IntRange(min=0), default=None,
                         help=f"Its limit of {text} (beyond: 429, or close 4429 for a "
                              f"connection).  [default: qipai serve --key-{name}]")(f)
    return f


def _given(**limits: int | None) -> dict[str, int]:
    return {k: v for k, v in limits.items() if v is not None}


@keys.command("new")
@click.argument("name")
@_FILE
@_limit_options
@click.option("--public-key", "public_key", metavar="FILE.pem", default=None,
              type=click.Path(exists=True, dir_okay=False),
              help="An Ed25519 public key (PEM): the seat tokens this key's operator signs "
                   "are EdDSA JWTs checked with it (the private key stays the operator's). "
                   "Without it a signing secret (HS256) is made and printed once.")
@click.option("--webhook", metavar="URL", default=None,
              help="This key's own webhook: its tables' events are POSTed to this http(s) "
                   "URL, signed with a secret of its own (made and printed once), instead "
                   "of to qipai serve --webhook.")
def new(name: str, path: str, max_tables: int | None, tables_per_minute: int | None,
        max_connections: int | None, max_spectators: int | None,
        public_key: str | None, webhook: str | None) -> None:
    """Add a key named NAME (the file is created, mode 0600, if missing) and
    print it once on standard output: only its hash is kept.  The signing
    secret of the seat tokens (JWT, HS256, header kid NAME) the operator may
    sign itself is printed once on standard error; the file keeps it.  The
    limit options set its own limits (the others are qipai serve's --key-…
    defaults); --webhook its own webhook (its signing secret printed once on
    standard error too)."""
    from pathlib import Path

    from qipai.server.keys import new as add

    pem = Path(public_key).read_text(encoding="utf-8") if public_key is not None else None
    key, secret, hook_secret = add(
        path, name, public_key=pem, webhook=webhook,
        limits=_given(max_tables=max_tables, tables_per_minute=tables_per_minute,
                      max_connections=max_connections, max_spectators=max_spectators))
    click.echo(key)
    click.echo(f"key {name!r} added to {path}; it is shown only this once (send SIGHUP to a "
               f"running qipai serve to use it)", err=True)
    if secret is not None:
        click.echo(f"seat-token signing secret of key {name!r} (JWT HS256, kid {name!r}): "
                   f"{secret}", err=True)
    else:
        click.echo(f"the seat tokens of key {name!r} are checked with the public key of "
                   f"{public_key} (JWT EdDSA, kid {name!r})", err=True)
    if hook_secret is not None:
        _said_secret(name, hook_secret)


def _said_secret(name: str, secret: str) -> None:
    click.echo(f"webhook signing secret of key {name!r} (X-Qipai-Signature, HMAC-SHA256): "
               f"{secret}", err=True)


def _shown(name: str, own: dict[str, int], hooks: dict[str, str]) -> str:
    """A key's line of list and limit: NAME, its limits, its webhook (a
    password in it shown as ***)."""
    from qipai.server.hookurl import shown_url

    hook = [f"webhook={shown_url(hooks[name])}"] if name in hooks else []
    return " ".join([name, *(f"{k}={v}" for k, v in own.items()), *hook])


@keys.command("list")
@_FILE
def list_(path: str) -> None:
    """The names of the keys in FILE, one a line, each followed by the
    limits its entry sets (max_tables=N …; the others: the server's defaults)
    and its own webhook (webhook=URL; none: qipai serve --webhook)."""
    from qipai.server.keys import limits, webhooks

    hooks = webhooks(path)
    for name, own in limits(path).items():
        click.echo(_shown(name, own, hooks))


@keys.command("limit")
@click.argument("name")
@_FILE
@_limit_options
@click.option("--default", "defaults", multiple=True,
              type=click.Choice(["max-tables", "tables-per-minute", "max-connections",
                                 "max-spectators"]),
              help="Clear this limit of the key: qipai serve's default again (repeatable).")
def limit(name: str, path: str, max_tables: int | None, tables_per_minute: int | None,
          max_connections: int | None, max_spectators: int | None,
          defaults: tuple[str, ...]) -> None:
    """Set the limits of the key NAME (send SIGHUP to a running qipai serve
    to apply them); prints its limits now."""
    from qipai.server.keys import set_limits, webhooks

    change: dict[str, int | None] = {d.replace("-", "_"): None for d in defaults}
    change.update(_given(max_tables=max_tables, tables_per_minute=tables_per_minute,
                         max_connections=max_connections, max_spectators=max_spectators))
    own = set_limits(path, name, change)
    click.echo(_shown(name, own, webhooks(path)))


@keys.command("webhook")
@click.argument("name")
@click.argument("url", required=False)
@_FILE
@click.option("--new-secret", is_flag=True,
              help="Make the key a new webhook signing secret (printed once), not keep "
                   "the one it has.")
@click.option("--default", "default", is_flag=True,
              help="Clear the key's webhook and its secret: its tables' events go to qipai "
                   "serve --webhook again (or are read from GET /events only).")
def webhook(name: str, url: str | None, path: str, new_secret: bool, default: bool) -> None:
    """Set the webhook of the key NAME: its tables' events are POSTed to URL
    (http or https), signed with a secret of its own — the one it has, else
    one made now and printed once on standard error (the file keeps it).
    Send SIGHUP to a running qipai serve to apply it: the events not yet
    delivered go to the new URL.  Prints the key's line as list does."""
    from qipai.server.keys import limits, set_webhook, webhooks

    if default == (url is not None):
        raise click.UsageError("give the webhook's URL, or --default to clear it (not both)")
    if default and new_secret:
        raise click.UsageError("--new-secret goes with a URL, not with --default")
    made = set_webhook(path, name, url, new_secret=new_secret)
    click.echo(_shown(name, limits(path)[name], webhooks(path)))
    if made is not None:
        _said_secret(name, made)


@keys.command("revoke")
@click.argument("name")
@_FILE
def revoke(name: str, path: str) -> None:
    """Remove the key named NAME (send SIGHUP to a running qipai serve)."""
    from qipai.server.keys import revoke as remove

    remove(path, name)
    click.echo(f"key {name!r} revoked in {path}", err=True)
