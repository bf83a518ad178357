"""The kept JSON encoder gives json.JSONEncoder's text exactly, and recovers after a failure."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from localmem.core.jsontext import CompactEncoder

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_ARGS = [(a, n, c) for a in (False, True) for n in (False, True) for c in (False, True)]


def _reference(value: Any, ascii_only: bool, nan: bool, circular: bool) -> str | type[Exception]:
    try:
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=ascii_only, allow_nan=nan,
                                check_circular=circular).encode(value)
    except (TypeError, ValueError) as exc:
        return type(exc)


@settings(max_examples=examples(200))
@given(value=_JSON)
def test_every_value_encodes_to_the_standard_encoders_text_under_every_setting(value: Any) -> None:
    for ascii_only, nan, circular in _ARGS:
        enc = CompactEncoder(ensure_ascii=ascii_only, allow_nan=nan, check_circular=circular)
        expected = _reference(value, ascii_only, nan, circular)
        if isinstance(expected, str):
            assert enc(value) == expected
            assert enc(value) == expected  # the kept encoder gives it again
        else:
            with pytest.raises(expected):
                enc(value)


def test_a_circular_value_is_refused_and_the_encoder_then_works_as_before() -> None:
    enc = CompactEncoder(ensure_ascii=False, allow_nan=False)
    loop: dict[str, Any] = {"a": [1]}
    loop["a"].append(loop)
    for _ in range(2):
        with pytest.raises(ValueError, match="Circular"):
            enc(loop)
    shared = [1, 2]
    # A list seen twice, not inside itself, is no loop: a stale table would call it one.
    assert enc({"x": shared, "y": shared}) == '{"x":[1,2],"y":[1,2]}'


def test_nan_and_sets_are_refused_as_the_standard_encoder_refuses_them_and_leave_it_working() -> None:
    enc = CompactEncoder(ensure_ascii=False, allow_nan=False)
    with pytest.raises(ValueError, match="Out of range"):
        enc({"a": [math.nan]})
    with pytest.raises(TypeError, match="set"):
        enc({"a": [{1}]})
    assert enc({"café": "ok"}) == '{"café":"ok"}'
    assert CompactEncoder(ensure_ascii=True, allow_nan=False)("café") == '"caf\\u00e9"'


def test_threads_encoding_one_shared_value_at_once_never_see_a_loop() -> None:
    """Each thread has its own encoder: a dict shared by eight threads is never "inside itself"."""
    class Yielding(dict[str, Any]):
        """A dict whose items() lets the other threads run, mid-encode."""

        def items(self) -> Any:
            time.sleep(0)
            return super().items()

    enc = CompactEncoder(ensure_ascii=False, allow_nan=False)
    shared = {"turns": [Yielding(n=i, said="x" * (i % 7)) for i in range(20)]}
    expected = json.dumps(shared, separators=(",", ":"), ensure_ascii=False)
    failures: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(100):
                assert enc(shared) == expected
        except BaseException as exc:  # noqa: BLE001  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
