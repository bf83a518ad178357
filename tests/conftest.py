"""Shared fixtures: a store on a frozen clock, in memory or in a file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pg
import pytest
from hypothesis import HealthCheck, settings

import localmem
from localmem.testing import FrozenClock

# CI: fixed examples, no flakes, bounded time. `thorough`: many more examples,
# for local runs before a semantic change lands (HYPOTHESIS_PROFILE=thorough).
# These are the only example counts in the suite: a property that wants another
# count than the profile's writes max_examples=examples(n) (helpers.py), which
# scales its ci count n by thorough's factor (2000 / 60, about 33x); a guard in
# test_hypothesis_profiles.py refuses a literal count anywhere else.
settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def clock() -> FrozenClock:
    """A clock that stands still until a test moves it."""
    return FrozenClock("2026-03-02T08:00:00Z")


@pytest.fixture
def store(clock: FrozenClock) -> Iterator[localmem.Store]:
    """An in-memory store on the frozen clock."""
    s = localmem.open(":memory:", clock=clock)
    yield s
    s.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a database file that does not exist yet."""
    return tmp_path / "mem.db"


@pytest.fixture
def file_store(db_path: Path, clock: FrozenClock) -> Iterator[localmem.Store]:
    """A store in a file on the frozen clock."""
    s = localmem.open(db_path, clock=clock)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _no_default_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test away from the user's real data dir."""
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("LOCALMEM_DB", raising=False)


@pytest.fixture(scope="session")
def pg_cluster(worker_id: str) -> Iterator[pg.Cluster]:
    """A real PostgreSQL 15 cluster for this pytest process (one per xdist worker), stopped at the end.

    Never skipped: missing binaries or a cluster that cannot start fail the test (tests/pg.py).
    """
    number = 0 if worker_id == "master" else int(worker_id.removeprefix("gw"))
    try:
        cluster = pg.start(port=54320 + number)
    except pg.ClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield cluster
    cluster.stop()


@pytest.fixture
def hub_dsn(pg_cluster: pg.Cluster) -> str:
    """A DSN on the test cluster whose search_path is a fresh schema: an empty hub of this test's own."""
    return pg.fresh_dsn(pg_cluster)


@pytest.fixture
def phone(tmp_path: Path) -> Iterator[localmem.Store]:
    """The first of two devices the sync tests pair, on a clock stopped on a Monday."""
    with localmem.open(tmp_path / "phone.db", clock=FrozenClock("2026-03-02T09:00:00Z")) as s:
        yield s


@pytest.fixture
def laptop(tmp_path: Path) -> Iterator[localmem.Store]:
    """The second device, its clock stopped on the Wednesday after."""
    with localmem.open(tmp_path / "laptop.db", clock=FrozenClock("2026-03-04T09:00:00Z")) as s:
        yield s
