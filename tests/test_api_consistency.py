"""One shape for the API and the command line: keyword-only options, one name per thing (issue 17)."""

from __future__ import annotations

import argparse

import pytest

import localmem
from localmem.cli.app import build_parser
from localmem.testing import FrozenClock

CHAT = [{"role": "user", "content": "hello", "sent_at": "2026-03-01T08:00:00Z"}]


def test_add_messages_takes_user_and_zone_by_keyword(store: localmem.Store) -> None:
    """user_id= and tz= by keyword; by position they still work, with a DeprecationWarning."""
    [new] = store.add_messages(CHAT, user_id="sam", tz="Europe/Berlin")
    with pytest.deprecated_call(match="by keyword"):
        [old] = store.add_messages(CHAT, "ann", "Europe/Berlin")
    assert (new.user_id, new.tz, old.user_id, old.tz) == ("sam", "Europe/Berlin", "ann", "Europe/Berlin")
    with pytest.raises(localmem.InvalidInputError, match="needs user_id"):
        store.add_messages(CHAT)
    with pytest.raises(localmem.InvalidInputError, match="given twice"), pytest.deprecated_call():
        store.add_messages(CHAT, "sam", user_id="sam")


def test_expire_names_its_date_like_add(store: localmem.Store) -> None:
    """expire(memory_id, expires) as add(expires=) names it; the old on= still works, deprecated."""
    m = store.add("goal", user_id="sam")
    assert store.expire(m.memory_id, "2026-04-01").expires_at is not None
    assert store.expire(m.memory_id, expires="2026-05-01").version == 3
    with pytest.deprecated_call(match="expires="):
        assert store.expire(m.memory_id, on="2026-06-01").version == 4
    with pytest.raises(localmem.InvalidInputError, match="needs expires"):
        store.expire(m.memory_id)


def test_read_takes_a_limit(store: localmem.Store, clock: FrozenClock) -> None:
    """read(limit=N) keeps the first N memories in valid_from order; a limit below 1 is refused."""
    for day in ("2026-01-03", "2026-01-01", "2026-01-02"):
        store.add(f"day {day}", user_id="sam", valid_from=day)
    assert [r.text for r in store.read(user_id="sam", limit=2)] == ["day 2026-01-01", "day 2026-01-02"]
    assert len(store.read("sam")) == 3
    with pytest.raises(localmem.InvalidInputError, match="limit=0"):
        store.read("sam", limit=0)


def test_a_hit_names_its_score_parts_unmistakably(store: localmem.Store) -> None:
    """Hit.to_dict() gives text_score/time_score/usage_score beside the memory, as search --json prints."""
    store.add("Struggled with hill repeats", user_id="sam")
    [hit] = store.search("hill repeats", user_id="sam", log=False)
    data = hit.to_dict()
    assert set(data) == {"score", "text_score", "time_score", "usage_score", "bm25", "semantic", "revision"}
    assert data["text_score"] == hit.text_score == hit.text and hit.time_score is None
    assert data["revision"]["text"] == "Struggled with hill repeats"


def _actions(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.Action]]:
    out: list[tuple[str, argparse.Action]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _actions(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            out.append((path, action))
    return out


def test_every_option_and_argument_has_help() -> None:
    """Every option and positional of every command says what it is in --help."""
    missing = sorted({f"{path} {a.dest}" for path, a in _actions(build_parser(), "localmem") if not a.help})
    assert missing == []


def test_precision_options_list_their_values() -> None:
    """Every --precision offers exactly the precisions the library knows."""
    found = [a for _, a in _actions(build_parser(), "localmem") if "--precision" in a.option_strings]
    assert found and all(tuple(a.choices or ()) == localmem.PRECISIONS for a in found)
