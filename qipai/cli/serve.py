"""``qipai serve``: host tables (the game server, :mod:`qipai.server` over :mod:`qipai.host`)."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from qipai.cli.common import fail


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: one the system chooses, printed); taken before "
                   "the database is opened, so a port in use is one error line.")
@click.option("--db", default="sqlite:///qipai.db", show_default=True,
              help="Database URL: sqlite:///FILE (its folder must exist) or "
                   "postgresql://USER@HOST/DB.")
@click.option("--cluster", is_flag=True,
              help="Run as a node of a cluster: many qipai serve processes on one PostgreSQL "
                   "--db, each serving its own tables; a dead node's tables are taken over by "
                   "the others within seconds, and SIGTERM hands this node's tables to them "
                   "mid-hand before it exits (docs: \"Run a cluster\").")
@click.option("--node-id", default=None, metavar="ID",
              help="With --cluster: this node's id, unique among the live nodes "
                   "(default: HOSTNAME:PORT).")
@click.option("--advertise", default=None, metavar="URL",
              help="With --cluster: the address clients reach this node at, sent to them in "
                   "'moved' and table answers (default: http://HOST:PORT; needed with a "
                   "wildcard --host).")
@click.option("--turn-timeout", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="Seconds a seat has for its turn before the default "
                                      "action is played for it.")
@click.option("--claim-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds a seat has to claim or pass a card (default: --turn-timeout).")
@click.option("--seed", type=int, default=None,
              help="Deal every table's hands from this seed (tests and demos only: the "
                   "deals are predictable, and every view and record says so).")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE_OR_FILE",
              help="A house-rule plugin every table uses (repeatable).")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=100.0,
              show_default=True, help="Messages a second one connection may send on average; "
                                      "more are dropped and answered Throttled.")
@click.option("--burst", type=click.FloatRange(min=1), default=200.0, show_default=True,
              help="Messages one connection may send at once above --rate.")
@click.option("--resync-interval", "resync_s", type=click.FloatRange(min=0), default=0.1,
              show_default=True,
              help="Seconds: one connection's resync is answered (a welcome, the whole view) "
                   "at most once in this long; one sooner is answered when it is over, more "
                   "meanwhile are folded into that answer.")
@click.option("--bot-delay", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds the bots wait before answering a turn or a card in play "
                   "(one wait for all the bots asked), so people can follow a table where "
                   "bots play (an all-bot demo: 0.5).")
@click.option("--bot", "bot_options", multiple=True, metavar="LEVEL=BOT",
              help="The bot that plays a level of the bot seats, or a new level: "
                   "--bot hard=mypkg.bots:MyBot, --bot pro=mypkg:Pro (repeatable; BOT is "
                   "any bot name: greedy, random, module:Class, a qipai.bots entry point).  "
                   "Clients choose a bot seat's level among these and easy, normal, hard "
                   "only.  Each BOT is resolved at start: one that does not is refused.  "
                   "Give every node of a cluster the same --bot (docs: Bots).")
@click.option("--tuoguan-delay", type=click.FloatRange(min=0), default=1.0, show_default=True,
              metavar="SECONDS",
              help="Seconds the table's bot waits before it answers for a seat in 托管 (at "
                   "least --bot-delay): a player's pace, time for the player to take the "
                   "seat back (0: at once, for tests).")
@click.option("--ready-timeout", type=click.FloatRange(min=0), default=30.0, show_default=True,
              metavar="SECONDS",
              help="A room's ready step (准备, between the hands of a table made with "
                   "hands): seconds it waits for its players to send ready before the next "
                   "hand begins anyway.  Open-ended tables have none.")
@click.option("--seat-values/--no-seat-values", default=False, show_default=True,
              help="Deal every new table's hands as joint deals: the server's secret seed and "
                   "a random value of each human seat's client, committed before any is "
                   "revealed, so that neither the server nor a player can choose the deal "
                   "(docs: Fairness you can check).  POST /tables \"seat_values\" overrides "
                   "it per table.")
@click.option("--seat-value-timeout", type=click.FloatRange(min=0), default=5.0,
              show_default=True, metavar="SECONDS",
              help="A joint deal's seat-value step: seconds each of its two phases (commit, "
                   "reveal) waits for the human seats, online or not (not one offline in "
                   "托管), before the hand is dealt anyway (a seat that has not sent its value "
                   "then counts empty, withheld).  The clock starts once a human seat is "
                   "online and, before a table's first hand, once every one has connected.")
@click.option("--vote-timeout", type=click.FloatRange(min=0), default=60.0, show_default=True,
              metavar="SECONDS",
              help="Seconds a room's dissolve vote (解散房间) waits for every seated "
                   "player's answer before it fails.")
@click.option("--max-tables", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Open tables the server holds at most; POST /tables beyond is answered "
                   "503 TooManyTables until one is closed.")
@click.option("--max-connections", type=click.IntRange(min=1), default=None,
              help="WebSocket connections the server holds at once; one more upgrade is "
                   "answered 503 TooManyConnections.  [default: 4096, or the descriptor "
                   "limit (ulimit -n) less 256 if lower]")
@click.option("--seat-reserve", type=click.IntRange(min=0), default=None,
              help="WebSocket connections spectators leave to seated players: spectators "
                   "may hold at most --max-connections less the human seats of open tables "
                   "with no connection now, at least this many and at most half of "
                   "--max-connections.  [default: a tenth of --max-connections, rounded down]")
@click.option("--key-max-tables", type=click.IntRange(min=0), default=None,
              help="With --keys: open tables one key may hold, for a key whose entry sets "
                   "no max_tables (qipai keys new NAME --max-tables N); beyond, 429 "
                   "TooManyTables.  [default: no per-key limit]")
@click.option("--key-tables-per-minute", type=click.IntRange(min=0), default=None,
              help="With --keys: tables one key may create in 60 s (the default of its "
                   "tables_per_minute); beyond, 429 TooManyTables with Retry-After.  "
                   "[default: no per-key limit]")
@click.option("--key-max-connections", type=click.IntRange(min=0), default=None,
              help="With --keys: WebSocket connections to one key's tables, seats and "
                   "spectators (the default of its max_connections); beyond, refused "
                   "TooManyConnections (close 4429).  [default: no per-key limit]")
@click.option("--key-max-spectators", type=click.IntRange(min=0), default=None,
              help="With --keys: spectator connections to one key's tables (the default of "
                   "its max_spectators).  [default: no per-key limit]")
@click.option("--address-max-tables", type=click.IntRange(min=0), default=None,
              help="Open demo: open tables one client address may hold of those it "
                   "created; beyond, 429 TooManyTables (limit address_max_tables).  A "
                   "loopback client not forwarded by a proxy is not limited.  [default: a "
                   "tenth of --max-tables, at least 4; not with --keys]")
@click.option("--address-tables-per-minute", type=click.IntRange(min=0), default=None,
              help="Open demo: tables one client address may create in 60 s; beyond, 429 "
                   "TooManyTables with Retry-After.  [default: 10; not with --keys]")
@click.option("--address-max-connections", type=click.IntRange(min=0), default=None,
              help="WebSocket connections one client address may hold (seats and "
                   "spectators of any table); beyond, refused TooManyConnections (close "
                   "4429).  [default: open demo, a tenth of --max-connections, at least 8; "
                   "with --keys, no per-address limit]")
@click.option("--retention", metavar="DURATION", default=None,
              help="Delete a closed table's rows (its hands, actions and row) this long "
                   "after its close: 90s, 30m, 12h, 7d (a bare number: seconds).  Without "
                   "--archive nothing of it is kept: export what must be kept before (GET "
                   "/tables/{id}/records).  [default: keep closed tables for ever]")
@click.option("--archive", "archive", metavar="DIR", default=None,
              help="With --retention: before a closed table's rows are deleted, write its "
                   "records (what GET /tables/{id}/records answers, which qipai verify "
                   "checks) and its metadata to DIR/YYYY-MM-DD/TABLE.json, durably (a "
                   "temporary file, fsync, rename); a table whose file cannot be written "
                   "is kept and tried again.  DIR must exist and be writable; a cluster's "
                   "nodes share it.")
@click.option("--max-message-bytes", type=click.IntRange(min=256), default=4096,
              show_default=True, help="The largest WebSocket message read; larger ones are "
                                      "answered TooLarge.")
@click.option("--max-body-bytes", type=click.IntRange(min=256), default=64 * 1024,
              show_default=True, help="The largest HTTP request body read; larger ones are "
                                      "answered 413 TooLarge.")
@click.option("--max-replay-bytes", type=click.IntRange(min=1024), default=256 * 1024,
              show_default=True, help="The largest record POST /replay reads (a hand's "
                                      "record is under 50 KiB); larger ones are answered "
                                      "413 TooLarge.")
@click.option("--stall-seconds", "stall_s", type=click.FloatRange(min=0, min_open=True),
              default=10.0, show_default=True,
              help="Seconds a write or a read may wait for the database before GET /health "
                   "answers 503 'stalled' (PostgreSQL, or an SQLite file another program "
                   "holds locked; while a write waits nothing is acknowledged).")
@click.option("--keys", "keys_file", metavar="FILE", default=None,
              help="Operator keys (made by 'qipai keys new NAME --file FILE'): creating, "
                   "listing and closing tables and reading records and replays then need "
                   "Authorization: Bearer KEY (a seat token also reads its own table's "
                   "records).  Re-read on SIGHUP.  Without it the server is an open demo.")
@click.option("--lobby", is_flag=True,
              help="With --keys: list the open tables (GET /tables: their variant, seats "
                   "and players' names, never a token) to anyone, for the page's lobby.  "
                   "Without it the page opened without a seat link says to ask the operator "
                   "for one.  (Without keys the lobby is always on: the open demo.)")
@click.option("--open", "open_", is_flag=True,
              help="Serve the open demo (no keys) on an address other than loopback "
                   "(refused without this flag): anyone who reaches it may create tables.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True,
              help="The log on standard error: text lines, or one JSON object a line "
                   "(time, level, event and its fields: tables created and closed, hands "
                   "ended, timeouts, refusals, the server's own lines).")
@click.option("--forwarded-allow-ips", metavar="IPS", default=None,
              callback=lambda ctx, param, value: _trusted(value),
              help="Behind a reverse proxy (TLS): the proxies' addresses, comma-separated "
                   "(IP addresses or networks such as 10.0.0.0/8; * trusts any), whose "
                   "X-Forwarded-For and X-Forwarded-Proto headers are believed — the "
                   "client address logged is then the one the proxy forwards (uvicorn's "
                   "proxy headers).  [default: none; the headers are ignored]")
@click.option("--webhook", metavar="URL", default=None,
              help="POST every table event (table_created, hand_started, hand_ended, "
                   "table_closed, timeout, tuoguan) to this http(s) URL, at least once, in "
                   "order per table, signed with the secret in the environment variable "
                   "QIPAI_WEBHOOK_SECRET (X-Qipai-Signature).  With --keys, a key with a "
                   "webhook of its own (qipai keys webhook NAME URL) has its tables' events "
                   "sent there instead.")
@click.option("--webhook-max-attempts", type=click.IntRange(min=1), default=12,
              show_default=True,
              help="Attempts before an event the webhook does not take is dead (GET "
                   "/admin/events?dead=1, POST /admin/events/retry).")
@click.option("--webhook-backoff", type=click.FloatRange(min=0, min_open=True), default=1.0,
              show_default=True,
              help="Seconds of the first retry's backoff; each next one doubles (at most "
                   "600 s), with jitter.")
@click.option("--webhook-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True,
              help="Seconds the webhook has to answer an event before the attempt fails.")
@click.option("--stake", type=click.IntRange(1, 1_000_000), default=None,
              help="Money per 子 of every table made without a stake of its own, in minor "
                   "units (分: 10 is 0.10 元): each payment is shown in 子 and in money. "
                   "Default: none (no money).")
@click.option("--rake-percent", type=click.IntRange(0, 100), default=None,
              help="Rake of those tables: this percent of each winner's gain of a hand, "
                   "rounded down, to the house (needs --stake and --rake-cap).")
@click.option("--rake-cap", type=click.IntRange(0, 1_000_000_000), default=None,
              help="The most rake one winner pays in one hand, in minor units (needs "
                   "--rake-percent).")
@click.option("--allow-version-mismatch", is_flag=True,
              help="Restore open tables made under another qipai version (the variant "
                   "version, ruleset and plugins must still match).")
def serve(host: str, port: int, db: str, turn_timeout: float, claim_timeout: float | None,
          seed: int | None, plugins: tuple[str, ...], rate: float, burst: float,
          max_message_bytes: int, max_body_bytes: int, allow_version_mismatch: bool,
          max_replay_bytes: int, stall_s: float, resync_s: float, max_tables: int,
          bot_delay: float, max_connections: int | None, keys_file: str | None,
          open_: bool, log_format: str = "text", seat_reserve: int | None = None,
          key_max_tables: int | None = None, key_tables_per_minute: int | None = None,
          key_max_connections: int | None = None, key_max_spectators: int | None = None,
          retention: str | None = None, archive: str | None = None, lobby: bool = False,
          forwarded_allow_ips: str | None = None, ready_timeout: float = 30.0,
          vote_timeout: float = 60.0, tuoguan_delay: float = 1.0,
          webhook: str | None = None, webhook_max_attempts: int = 12,
          webhook_backoff: float = 1.0, webhook_timeout: float = 10.0,
          stake: int | None = None, rake_percent: int | None = None,
          rake_cap: int | None = None, seat_values: bool = False,
          seat_value_timeout: float = 5.0, cluster: bool = False, node_id: str | None = None,
          advertise: str | None = None, bot_options: tuple[str, ...] = (),
          address_max_tables: int | None = None, address_tables_per_minute: int | None = None,
          address_max_connections: int | None = None) -> None:
    """Host tables: HTTP + WebSocket game server with durable tables.

    Open the printed address in a browser (create a table, play, watch,
    replay), or create a table with POST /tables and play it over
    /tables/{id}/ws?token=… (docs: "Host a table").  Open tables are
    restored from the database when the server starts again.
    """
    try:
        from qipai.server import logs
        from qipai.server.listen import listen, run
        from qipai.server.cluster import default_node_id
        from qipai.server.state import Server
    except ModuleNotFoundError as exc:
        fail(f"qipai serve needs the 'serve' extra (missing module {exc.name!r}): "
             f"pip install 'qipai[serve]'")
    from qipai.server.keys import BadKeysFile, Keys

    from qipai.host.levels import BadLevel, BotLevels, parse_bot_options

    try:   # before anything is opened: a bot that does not resolve is one line
        bot_levels = BotLevels(parse_bot_options(bot_options))
    except BadLevel as exc:
        fail(str(exc))
    shown = f"[{host}]" if ":" in host else host
    if not cluster and (node_id is not None or advertise is not None):
        fail("--node-id and --advertise go with --cluster")
    if cluster and not db.startswith(("postgresql://", "postgres://")):
        fail(f"--cluster needs a PostgreSQL --db (postgresql://USER@HOST/DB), which the nodes "
             f"share; not {db}")
    if advertise is not None:
        from urllib.parse import urlsplit

        parts = urlsplit(advertise)
        try:
            parts.port   # (a port that is not a number raises)
            bad = False
        except ValueError:
            bad = True
        if bad or parts.scheme not in ("http", "https") or not parts.hostname \
                or parts.path not in ("", "/") or parts.query or parts.fragment \
                or parts.username is not None or parts.password is not None:
            fail(f"--advertise must be http://HOST:PORT or https://HOST (no path, no user), "
                 f"not {advertise!r}")
    elif cluster and host in ("0.0.0.0", "::", ""):
        fail(f"--cluster with --host {host} needs --advertise URL: the address the players "
             f"reach this node at (it is sent to them in 'moved'); 127.0.0.1 would send "
             f"them to their own machine")
    if node_id is not None and not (0 < len(node_id) <= 100 and node_id.isprintable()
                                    and " " not in node_id):
        fail(f"--node-id must be 1 to 100 printable characters without spaces, not {node_id!r}")
    retention_s = None
    if retention is not None:
        from qipai.server.retention import parse_duration

        try:
            retention_s = parse_duration(retention)
        except ValueError as exc:
            fail(f"--retention: {exc}")
    archive_dir = None
    if archive is not None:
        from qipai.server.archive import BadArchive, check_dir

        if retention_s is None:
            fail("--archive goes with --retention: closed tables are archived before their "
                 "prune (without --retention nothing is deleted)")
        try:
            archive_dir = check_dir(archive)
        except BadArchive as exc:
            fail(str(exc))
    if (rake_percent is None) != (rake_cap is None):
        fail("--rake-percent and --rake-cap go together: the percent of each winner's gain "
             "and the most one winner pays in a hand")
    if rake_percent is not None and stake is None:
        fail("--rake-percent needs --stake: without a stake no money is counted")
    secret = None
    if webhook is not None:
        from qipai.server.webhook import check_url

        why = check_url(webhook)
        if why is not None:
            fail(why)
        secret = os.environ.get("QIPAI_WEBHOOK_SECRET", "")
        if not secret:
            fail("--webhook needs its signing secret in the environment variable "
                 "QIPAI_WEBHOOK_SECRET (a long random string the receiver knows too)")
    keys = None
    loose = None   # a warning: the keys file is readable by other users
    if keys_file is not None and (address_max_tables is not None
                                  or address_tables_per_minute is not None):
        fail("--address-max-tables and --address-tables-per-minute limit the open demo's "
             "anonymous tables; with --keys every table is made with a key: limit it with "
             "--key-max-tables and --key-tables-per-minute")
    if keys_file is not None:
        try:
            keys = Keys(keys_file)
        except BadKeysFile as exc:
            fail(str(exc))
        loose = _loose(keys_file, keys)
    elif not _loopback(host) and not open_:
        fail(f"--host {host} is not a loopback address and no --keys FILE is given: anyone "
             f"who reaches it could create tables; serve with --keys FILE (qipai keys new "
             f"NAME --file FILE), or pass --open to serve the open demo there anyway")
    # the port first: one in use is one line, before the database is opened
    # (nothing written) or anything announced; the socket listens from here
    # on, so no other program can take the port before uvicorn serves it
    logs.setup(log_format)
    try:
        sock = listen(host, port)
    except OSError as exc:
        fail(f"cannot listen on {shown}:{port}: {_reason(exc)}")
    node = None
    if cluster:
        bound = sock.getsockname()[1]
        node = node_id or default_node_id(host, bound)
        if advertise is None:
            advertise = f"http://{shown}:{bound}"
    try:
        server = Server(db, turn_timeout=turn_timeout, claim_timeout=claim_timeout, seed=seed,
                        plugins=plugins, rate_per_s=rate, burst=burst,
                        max_message_bytes=max_message_bytes, max_body_bytes=max_body_bytes,
                        allow_version_mismatch=allow_version_mismatch,
                        max_replay_bytes=max_replay_bytes, stall_s=stall_s,
                        resync_s=resync_s, max_tables=max_tables, bot_delay=bot_delay,
                        max_connections=max_connections, keys=keys,
                        ready_timeout=ready_timeout, vote_timeout=vote_timeout,
                        tuoguan_delay=tuoguan_delay, node=node, advertise=advertise,
                        bot_levels=bot_levels)
    except BaseException:
        sock.close()
        raise
    server.seat_values = seat_values
    server.seat_value_timeout = seat_value_timeout
    from qipai.server.limits import Quota

    server.quota = Quota(server, {"max_tables": key_max_tables,
                                  "tables_per_minute": key_tables_per_minute,
                                  "max_connections": key_max_connections,
                                  "max_spectators": key_max_spectators}, seat_reserve,
                           {"address_max_tables": address_max_tables,
                            "address_tables_per_minute": address_tables_per_minute,
                            "address_max_connections": address_max_connections})
    server.retention = retention_s
    server.archive = archive_dir
    server.lobby = lobby
    if stake is not None:
        from qipai.core.money import Rake

        server.stake = stake
        server.rake = Rake(rake_percent, rake_cap) if rake_percent is not None else None
    if webhook is not None or keys is not None:
        # (with keys: a key's own webhook, from the file now or after a reload)
        from qipai.server.webhook import Deliverer

        server.webhook = Deliverer(server, webhook, None if secret is None else secret.encode(),
                                   max_attempts=webhook_max_attempts, backoff=webhook_backoff,
                                   timeout=webhook_timeout)
    port = sock.getsockname()[1]   # --port 0: the one the system chose
    dealt = f"seeded {seed} (tests and demos only)" if seed is not None else "OS CSPRNG"
    if logs.json_on():
        logs.line(f"qipai serve on http://{shown}:{port}", logging.INFO, "listening",
                  url=f"http://{shown}:{port}", db=server.store.dialect,
                  tables=len(server.tables), refused=len(server.refused), deals=dealt,
                  keys=None if keys is None else len(keys.by_hash), open_demo=keys is None,
                  address_limits=server.quota.address,
                  retention_s=retention_s, archive=archive,
                  forwarded_allow_ips=forwarded_allow_ips,
                  node=node, advertise=advertise, bot_levels=bot_levels.bot_names)
        if loose is not None:
            logs.line(loose)
        run(sock, server, forwarded_allow_ips=forwarded_allow_ips)
        _exit(server)
    click.echo(f"qipai serve on http://{shown}:{port} · database {db} · "
               f"{len(server.tables)} open table{'s' if len(server.tables) != 1 else ''} "
               f"restored"
               + (f", {len(server.refused)} refused (above)" if server.refused else "")
               + f" · deals: {dealt}", err=True)
    if server.cluster is not None:
        click.echo(f"cluster node {server.cluster.node}, reached at {server.cluster.address}: "
                   f"serves its own tables; takes over a dead node's; SIGTERM hands its tables "
                   f"to the other nodes before it exits", err=True)
    if keys is None:
        a = server.quota.address
        click.echo("open demo: no keys; anyone who reaches it may create tables", err=True)
        click.echo(f"per client address (not a loopback one): {a['address_max_tables']} open "
                   f"tables, {a['address_tables_per_minute']} created a minute, "
                   f"{a['address_max_connections']} connections (--address-max-tables, "
                   f"--address-tables-per-minute, --address-max-connections)", err=True)
        click.echo(f"open http://{shown}:{port}/ in a browser to create a table and play",
                   err=True)
    else:
        n = len(keys.by_hash)
        click.echo(f"keys: {n} from {keys_file} (SIGHUP reloads them); creating, listing and "
                   f"closing tables and reading records need Authorization: Bearer KEY"
                   + ("; --lobby: the open tables are listed to anyone" if lobby else ""),
                   err=True)
        if loose is not None:
            click.echo(f"warning: {loose}", err=True)
    if retention_s is not None and archive is None:
        click.echo(f"closed tables are deleted {retention:s} after their close (--retention)",
                   err=True)
    elif retention_s is not None:
        click.echo(f"closed tables are archived to {archive} then deleted {retention:s} after "
                   f"their close (--archive, --retention)", err=True)
    own = len(keys.webhooks) if keys is not None else 0
    if webhook is not None or own:
        click.echo("events are POSTed, signed, to "
                   + (f"the webhook of their table's key ({own} key{'s' if own != 1 else ''}"
                      f" with one)" if own else "")
                   + (" else " if own and webhook is not None else "")
                   + ("the webhook (--webhook)" if webhook is not None else "")
                   + ("; the other tables' are read from GET /events only"
                      if webhook is None else "")
                   + f"; dead after {webhook_max_attempts} attempts", err=True)
    if bot_options:
        click.echo(f"bot levels: {bot_levels.describe()} (--bot)", err=True)
    if forwarded_allow_ips is not None:
        click.echo(f"behind a proxy: X-Forwarded-For and X-Forwarded-Proto believed from "
                   f"{forwarded_allow_ips} only", err=True)
    run(sock, server, forwarded_allow_ips=forwarded_allow_ips)
    _exit(server)


def _exit(server: Any = None) -> None:
    # stopped (Ctrl-C; SIGTERM is re-raised by uvicorn and ends the process
    # here already): the shutdown is done — the store closed — but Python's
    # exit would join every worker thread, and one may still wait for a
    # database that does not answer
    sys.stdout.flush()
    sys.stderr.flush()
    if sys.getprofile() is not None:
        # run under a profiler (cProfile, pyinstrument: benchmarks/serve.py
        # --profile): a normal exit, so that it writes its file
        return
    # a cluster node that lost its lock stopped by itself: not a clean stop (status 1,
    # so its supervisor restarts it and it rejoins)
    lost = server is not None and server.cluster is not None and server.store.lost is not None
    os._exit(1 if lost else 0)


def _trusted(value: str | None) -> str | None:
    """``--forwarded-allow-ips``: ``*``, or comma-separated IP addresses and
    networks (``10.0.0.0/8``) — checked here, since uvicorn takes a
    malformed one for a literal name that never matches; the value with the
    blanks around items removed (None: not given)."""
    import ipaddress

    if value is None:
        return None
    items = [x.strip() for x in value.split(",")]
    if items == ["*"]:
        return "*"
    for item in items:
        try:
            ipaddress.ip_network(item) if "/" in item else ipaddress.ip_address(item)
        except ValueError:
            raise click.BadParameter(
                f"{item!r} is not an IP address or a network such as 10.0.0.0/8 "
                f"(or give * alone: any)") from None
    return ",".join(items)


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _reason(exc: OSError) -> str:
    """An OSError's reason as the end of a line: ``address already in use``."""
    text = exc.strerror or str(exc)
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def _loose(path: str, keys: object) -> str | None:
    """The warning to give if the keys file ``path`` holds seat-token or
    webhook signing secrets and other users may read it (``qipai keys``
    writes it 0600), else None."""
    import os
    import stat

    if not (getattr(keys, "signers", None) or getattr(keys, "webhooks", None)):
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if not mode & (stat.S_IRGRP | stat.S_IROTH):
        return None
    return (f"keys file {path} is readable by other users (mode {stat.S_IMODE(mode):04o}) and "
            f"holds the secrets that sign seat tokens or webhook events: anyone who reads it "
            f"can sit at any seat of its keys' tables, or forge their events; chmod 600 "
            f"{path}")
