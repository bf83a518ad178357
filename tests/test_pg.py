"""The test cluster itself: a real PostgreSQL server on a unix socket, never over TCP."""

from __future__ import annotations

import pg
import psycopg


def test_the_cluster_is_a_real_postgresql_15_on_a_unix_socket_only(pg_cluster: pg.Cluster) -> None:
    with psycopg.connect(pg_cluster.dsn) as conn:
        version = conn.execute("SHOW server_version_num").fetchone()
        listen = conn.execute("SHOW listen_addresses").fetchone()
        user = conn.execute("SELECT current_user").fetchone()
    assert version is not None and int(version[0]) // 10000 == 15
    assert listen == ("",)
    assert user == (pg.ROLE,)
    assert (pg_cluster.socket_dir / f".s.PGSQL.{pg_cluster.port}").is_socket()


def test_each_test_gets_an_empty_schema_of_its_own(hub_dsn: str, pg_cluster: pg.Cluster) -> None:
    with psycopg.connect(hub_dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        schema = conn.execute("SELECT current_schema()").fetchone()
    other = pg.fresh_dsn(pg_cluster)
    with psycopg.connect(other) as conn:
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
                            ).fetchone() == (0,)
        assert conn.execute("SELECT current_schema()").fetchone() != schema
