"""A throwaway PostgreSQL 15 cluster for the hub's tests: a real server, no mocks.

One cluster per pytest process (each xdist worker starts its own, in its own temp
dir): ``initdb`` into a temp dir, ``postgres`` listening only on a unix socket in
another temp dir (``listen_addresses=''``: no TCP), durability off (a test cluster
is thrown away), stopped and removed when the session ends. PostgreSQL refuses to
run as root, and CI runs as root: then the cluster belongs to an unprivileged user
(``postgres``, or ``LOCALMEM_PG_USER``) and every server command runs through
``runuser -u USER --``; its dirs are chowned to that user, the socket dir left
reachable. Each test gets a fresh schema in the cluster's one database
(:func:`fresh_dsn`), which is far cheaper than a database per test.

Nothing here skips: binaries that are missing, or a cluster that does not start,
fail the test that asked for it, with the server's log.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Where the Debian package puts the server binaries (override with LOCALMEM_PG_BIN).
PG_BIN = Path(os.environ.get("LOCALMEM_PG_BIN", "/usr/lib/postgresql/15/bin"))
#: The role the tests connect as (a superuser, created by initdb; trust auth on the socket).
ROLE = "localmem"


class ClusterError(RuntimeError):
    """The test cluster could not be made or started (the message says why, with its log)."""


@dataclass
class Cluster:
    """A running cluster: its dirs and how to connect."""

    root: Path
    data: Path
    socket_dir: Path
    port: int
    owner: str | None  # the unprivileged user it runs as when the tests run as root
    kept: bool = False  # data lies outside root and outlives the cluster (start(data=...))

    @property
    def dsn(self) -> str:
        """A libpq connection string for the cluster's ``postgres`` database."""
        return f"host={self.socket_dir} port={self.port} user={ROLE} dbname=postgres"

    def stop(self) -> None:
        """Stop the server and remove its dirs: immediately, its data thrown away, unless it is
        kept (then a clean shutdown, and only the socket and log dirs go)."""
        try:
            _run(self.owner, [str(PG_BIN / "pg_ctl"), "stop", "-D", str(self.data), "-m",
                              "fast" if self.kept else "immediate", "-w"], check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def _run(owner: str | None, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = ["runuser", "-u", owner, "--", *argv] if owner else argv
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if check and done.returncode != 0:
        raise ClusterError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def _owner() -> str | None:
    """Who runs the server: None (this user) unless we are root, then an unprivileged user."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("LOCALMEM_PG_USER", "postgres")
    try:
        pwd.getpwnam(name)
    except KeyError:
        raise ClusterError(
            f"the tests run as root, which PostgreSQL refuses, and there is no user {name!r} to run the "
            "test cluster as: create one (useradd --system postgres) or set LOCALMEM_PG_USER") from None
    if shutil.which("runuser") is None:
        raise ClusterError("the tests run as root and `runuser` (util-linux) is missing: cannot start "
                           "PostgreSQL as an unprivileged user")
    return name


def start(port: int = 5432, data: Path | None = None) -> Cluster:
    """initdb a cluster into a temp dir and start it on a unix socket; see the module docstring.

    With ``data``, the cluster's data directory is that one (made by initdb if it does not exist
    yet, else started as it is) and outlives :meth:`Cluster.stop`: a benchmark's ingested hub,
    reused by its next run.

    Raises:
        ClusterError: the binaries are missing, or initdb or the server failed (with its log).
    """
    missing = [b for b in ("initdb", "pg_ctl", "postgres") if not (PG_BIN / b).is_file()]
    if missing:
        raise ClusterError(
            f"PostgreSQL server binaries {missing} are missing from {PG_BIN}: install them "
            "(apt-get install -y postgresql-15) or set LOCALMEM_PG_BIN; the hub's tests need a real server")
    owner = _owner()
    root = Path(tempfile.mkdtemp(prefix="localmem-pg-"))
    kept = data is not None
    data = root / "data" if data is None else data
    socket_dir, log = root / "sock", root / "server.log"
    socket_dir.mkdir()
    fresh = not (data / "PG_VERSION").exists()
    if kept and fresh:
        data.mkdir(mode=0o700, parents=True, exist_ok=True)
    if owner is not None:
        info = pwd.getpwnam(owner)
        for p in (root, socket_dir, *([data] if kept and fresh else [])):
            os.chown(p, info.pw_uid, info.pw_gid)
    root.chmod(0o755)  # the socket dir inside must be reachable by whoever connects
    socket_dir.chmod(0o755)
    cluster = Cluster(root, data, socket_dir, port, owner, kept)
    try:
        if fresh:
            _run(owner, [str(PG_BIN / "initdb"), "-D", str(data), "-U", ROLE, "--auth=trust",
                         "--encoding=UTF8", "--locale=C", "--no-sync"])
        opts = (f"-c listen_addresses='' -k {socket_dir} -p {port} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60")
        started = _run(owner, [str(PG_BIN / "pg_ctl"), "start", "-D", str(data), "-w", "-t", "60",
                               "-l", str(log), "-o", opts], check=False)
        if started.returncode != 0:
            text = log.read_text(errors="replace") if log.exists() else "(no log)"
            raise ClusterError(f"the test PostgreSQL cluster did not start:\n{started.stderr}\n{text}")
    except BaseException:
        cluster.stop()
        raise
    return cluster


def fresh_dsn(cluster: Cluster) -> str:
    """A DSN whose search_path is a new, empty schema of the cluster: one test's own hub."""
    import psycopg

    schema = "t_" + secrets.token_hex(6)
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{cluster.dsn} options='-c search_path={schema}'"
