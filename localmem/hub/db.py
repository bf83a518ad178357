"""The hub's database: connecting to PostgreSQL, creating the hub schema, knowing the hub's id.

A hub is a PostgreSQL schema (whatever the connection's search_path names first) holding
the tables of :file:`localmem/hub/schema.sql`. ``init`` creates them once; every other
operation checks first that the schema is a hub of this version (``hub_meta``), so a
mistyped DSN is an error naming it, never a half-made hub.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from importlib.resources import files

import psycopg

from ..core.db import SCHEMA_VERSION
from ..errors import HubError

__all__ = ["HUB_VERSION", "schema_sql", "connect", "init", "hub_id", "errors"]

#: The version of the hub's schema (hub_meta 'hub_version'). 2: revisions.seq BY DEFAULT (an ingest
#: numbers a file's revisions itself), no revisions_memory index. 3: revisions keyed (rev_id, user_id)
#: (no revisions_id index), no content_memory index (an erasure finds content through revisions).
#: 4: no GIN index on content (a search matches one user's texts) and no revisions_user_arrived.
HUB_VERSION = 4


def schema_sql() -> str:
    """The hub schema's DDL (localmem/hub/schema.sql)."""
    return files("localmem.hub").joinpath("schema.sql").read_text(encoding="utf-8")


@contextlib.contextmanager
def errors(what: str) -> Iterator[None]:
    """PostgreSQL's errors (a refused connection, a broken rule) as HubError, naming ``what``."""
    try:
        yield
    except psycopg.Error as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HubError(f"{what}: {detail}") from exc


def connect(dsn: str) -> psycopg.Connection[tuple[object, ...]]:
    """A connection to the hub's database (not checked to be a hub: see :func:`hub_id`)."""
    if not isinstance(dsn, str) or not dsn.strip():
        raise HubError(f"dsn={dsn!r} is not a PostgreSQL connection string")
    with errors(f"cannot connect to the hub at {dsn!r}"):
        return psycopg.connect(dsn, autocommit=True)


def init(conn: psycopg.Connection[tuple[object, ...]]) -> str:
    """Create the hub schema in the connection's current schema; returns the new hub's id.

    Raises:
        HubError: the schema already holds a hub (or any of its tables), or PostgreSQL refused.
    """
    with errors("cannot create the hub schema"):
        found = conn.execute("SELECT to_regclass('hub_meta') IS NOT NULL").fetchone()
        if found is not None and found[0]:
            raise HubError("this schema already holds a hub (hub_meta exists): nothing was changed")
        ident = secrets.token_hex(8)
        with conn.transaction():
            conn.execute(schema_sql().encode())
            conn.execute("INSERT INTO hub_meta (name, value) VALUES ('hub_id', %s), ('hub_version', %s),"
                         " ('schema_version', %s)", (ident, str(HUB_VERSION), str(SCHEMA_VERSION)))
    return ident


def hub_id(conn: psycopg.Connection[tuple[object, ...]]) -> str:
    """The hub's id, checking that the connection's schema is a hub of this version.

    Raises:
        HubError: no hub there (run ``localmem hub init``), or one of another version.
    """
    with errors("cannot read the hub"):
        there = conn.execute("SELECT to_regclass('hub_meta') IS NOT NULL").fetchone()
        if there is None or not there[0]:
            raise HubError("no hub in this database schema: create one with `localmem hub init --dsn DSN`")
        meta = {str(r[0]): str(r[1]) for r in conn.execute("SELECT name, value FROM hub_meta")}
    if meta.get("hub_version") != str(HUB_VERSION):
        raise HubError(f"the hub has version {meta.get('hub_version')!r}; this localmem reads version "
                       f"{HUB_VERSION}")
    return str(meta["hub_id"])
