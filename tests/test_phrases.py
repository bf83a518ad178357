"""Reader processes for a big batch's time phrases: the same reads as here, in order, or none at all."""

from __future__ import annotations

import stat
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import localmem
from localmem.core import phrases
from localmem.core.phrases import POOLED_FROM, Readers, Task, check_workers, read_chunk
from localmem.time.clock import to_micros

_SAID = to_micros(datetime.fromisoformat("2026-03-04T10:00:00+00:00"))
_LINES = [
    "I went to the dentist yesterday", "no time in this one", "dinner next Friday at 7pm",
    "we moved to Lisbon on Sept 1", "from Monday to Wednesday I am away", "ok",
]
TASKS: list[Task] = [
    (f"{_LINES[i % len(_LINES)]} #{i}", _SAID + i * 3_600_000_000, ZoneInfo(("UTC", "Asia/Tokyo")[i % 2]),
     i % 5 == 0)
    for i in range(4 * POOLED_FROM)
]


@pytest.fixture
def readers() -> Iterator[Readers]:
    r = Readers()
    yield r
    r.close()


def _until_shared(readers: Readers, workers: int) -> list[object]:
    """Read TASKS until the reader has taken part (it starts in the background: a second or more)."""
    deadline = time.monotonic() + 30
    while True:
        got: list[object] = list(readers.read(TASKS, workers))
        if readers.shared or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def test_a_reader_gives_the_reads_this_process_gives_in_order(readers: Readers) -> None:
    """Same function, same arguments (the instant and the zone passed in): the same results, item by item."""
    here = read_chunk(TASKS)
    assert sum(r is not None for r in here) > len(TASKS) // 3  # the lines do say times
    assert _until_shared(readers, 1) == here
    assert 0 < readers.shared < len(TASKS)  # both sides read: they met in the middle


def test_small_batches_and_workers_0_never_start_a_reader(readers: Readers) -> None:
    """Below POOLED_FROM items, or with workers=0, everything is read here."""
    assert readers.read(TASKS[: POOLED_FROM - 1], 2) == read_chunk(TASKS[: POOLED_FROM - 1])
    assert readers.read(TASKS, 0) == read_chunk(TASKS)
    assert readers.shared == 0


def test_a_reader_that_fails_is_dropped_and_its_share_read_here(
    readers: Readers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that says it is ready and then dies: the batch is still read whole, here."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nprintf '\\000\\000\\000\\005ready'\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sys, "executable", str(fake))
    deadline = time.monotonic() + 2  # a few readers started, each failing at its first chunk
    while time.monotonic() < deadline:
        assert readers.read(TASKS, 1) == read_chunk(TASKS)
    assert readers.shared == 0
    assert readers.read(TASKS, None) == read_chunk(TASKS)  # automatic: no new reader after a failure


def test_a_batch_cut_short_leaves_no_stale_read_behind(
    readers: Readers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error half way through a batch (here, in this process's share): a reader still reading for
    it is stopped, so the next batch never takes that batch's reads for its own."""
    _until_shared(readers, 1)
    def failing(tasks: list[Task]) -> list[phrases.Read]:
        raise RuntimeError("interrupted")  # just after the reader was handed its first chunk

    monkeypatch.setattr(phrases, "read_chunk", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        readers.read(TASKS, 1)
    monkeypatch.undo()
    other = TASKS[::-1][:POOLED_FROM]  # shorter: a stale read would land past its end
    assert readers.read(other, 1) == read_chunk(other)


def test_workers_must_be_none_or_a_count() -> None:
    assert check_workers(None) is None and check_workers(0) == 0 and check_workers(3) == 3
    for bad in (-1, "2", True, 1.5):
        with pytest.raises(localmem.InvalidInputError, match="workers="):
            check_workers(bad)
