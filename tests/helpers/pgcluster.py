"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb + pg_ctl in a
temporary directory, listening only on a unix socket in that directory.

Used by the ``db_url`` fixture (``tests/conftest.py``) and by
``benchmarks/serve.py --db postgresql``.  Nothing here is mocked: it is the
distribution's own server.

- The binaries are looked up in ``$QIPAI_PG_BIN`` when it is set (only
  there), else on ``PATH``, then in Debian's ``/usr/lib/postgresql/<version>/bin`` (newest first).
- PostgreSQL refuses to run as root.  When this process is root (as CI and the
  development machines are), ``initdb``, ``pg_ctl`` and the server run as the
  unprivileged ``postgres`` user that Debian's package creates, through
  ``runuser``; the directory is handed to that user.
- The cluster trusts local connections from the ``postgres`` role; it has no
  TCP listener, so parallel runs never collide on a port.

URL shape (``url(dbname)``): ``postgresql://postgres@/DBNAME?host=SOCKETDIR`` —
the libpq form that psycopg takes as it is and SQLAlchemy takes once given a
driver (``postgresql+psycopg://…``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

PACKAGE_HINT = "PostgreSQL server not found: install the Debian package `postgresql` " \
    "(apt-get install postgresql) or set QIPAI_PG_BIN to the folder holding initdb and pg_ctl"


def sqlalchemy_url(url: str) -> str:
    """The URL with SQLAlchemy's psycopg (v3) driver named for PostgreSQL."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://"):]
    return url


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries (or no unprivileged user to run them as root)."""


def find_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``; raises :class:`PostgresMissing`."""
    env = os.environ.get("QIPAI_PG_BIN")
    if env:   # when set, the only place looked in
        d = Path(env)
        if all((d / t).is_file() for t in ("initdb", "pg_ctl", "postgres")):
            return d
        raise PostgresMissing(f"QIPAI_PG_BIN={env} holds no initdb, pg_ctl and postgres; "
                              + PACKAGE_HINT)
    candidates: list[Path] = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)

    def version(p: str) -> tuple[int, ...]:
        v = Path(p).parent.parent.name
        return tuple(int(x) for x in v.split(".") if x.isdigit())

    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        candidates.append(Path(d))
    for d in candidates:
        if (d / "initdb").is_file() and (d / "pg_ctl").is_file() and (d / "postgres").is_file():
            return d
    raise PostgresMissing(PACKAGE_HINT)


def _run_as() -> list[str]:
    """Command prefix that drops root to the ``postgres`` user (empty when not root)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresMissing(
            "running as root and no `postgres` user to run PostgreSQL as "
            "(the Debian package `postgresql` creates it)") from None
    runuser = shutil.which("runuser")
    if not runuser:
        raise PostgresMissing("running as root and `runuser` (util-linux) is missing")
    return [runuser, "-u", "postgres", "--"]


class Cluster:
    """One running throwaway cluster.  ``Cluster.start()`` … ``stop()`` (or ``with``).

    ``durable=False`` (the tests' default) turns off ``fsync`` and
    ``synchronous_commit`` inside PostgreSQL: the kill tests kill the qipai
    server, never PostgreSQL, so what they check is unaffected, and the suite
    runs faster.  The benchmark keeps PostgreSQL's defaults (``durable=True``).
    """

    def __init__(self, root: Path, bindir: Path, prefix: list[str]) -> None:
        self.root, self.bindir, self.prefix = root, bindir, prefix
        self.data = root / "data"
        self.socket_dir = root
        self.log = root / "server.log"
        self._counter = 0
        self.port: int | None = None

    @classmethod
    def start(cls, *, durable: bool = False, tcp: bool = False) -> "Cluster":
        """initdb and start a cluster.  ``tcp``: also listen on 127.0.0.1
        (a free port, :attr:`port`; :meth:`tcp_url`)."""
        bindir = find_bindir()
        prefix = _run_as()
        root = Path(tempfile.mkdtemp(prefix="qipai-pg-"))
        if prefix:
            pw = pwd.getpwnam("postgres")
            os.chown(root, pw.pw_uid, pw.pw_gid)
        os.chmod(root, 0o755)
        self = cls(root, bindir, prefix)
        try:
            self._pg("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
                     "-E", "UTF8", "--locale=C", "--no-sync")
            listen = "''"
            if tcp:
                import socket

                with socket.socket() as probe:   # a free port (taken back at once)
                    probe.bind(("127.0.0.1", 0))
                    self.port = probe.getsockname()[1]
                listen = f"127.0.0.1 -p {self.port}"
            opts = f"-k {root} -c listen_addresses={listen} -c max_connections=300"
            if not durable:
                opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
                     "-o", opts, "start")
        except BaseException:
            self.stop()
            raise
        return self

    def _pg(self, tool: str, *args: str) -> None:
        cmd = [*self.prefix, str(self.bindir / tool), *args]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root)
        if r.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({r.returncode}): {r.stderr.strip()}\n{log}")

    def url(self, dbname: str = "postgres") -> str:
        """libpq URL of database ``dbname`` over the unix socket."""
        port = f"&port={self.port}" if self.port is not None else ""
        return f"postgresql://postgres@/{dbname}?host={self.socket_dir}{port}"

    def tcp_url(self, dbname: str) -> str:
        """libpq URL of database ``dbname`` over TCP (a cluster started ``tcp=True``)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str | None = None) -> str:
        """Create a new empty database; returns its URL."""
        import psycopg

        if name is None:
            self._counter += 1
            name = f"qipai_{os.getpid()}_{self._counter}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.data.exists() and (self.data / "postmaster.pid").exists():
            subprocess.run([*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.data),
                            "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
