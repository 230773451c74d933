"""Properties of repair and compaction over generated transcripts in every format: damaged
`sessiongen` sessions (messages dropped, repeated and moved, as broken compactors do)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit.transcript import (
    CompactionRefused,
    IrreparableError,
    compact,
    inspect,
    repair,
)
from frayproof_audit.transcript.loading import read_transcript
from frayproof_audit.transcript.repair import repair_transcript
from sessiongen import small
from sessiongen.strategies import DrawSource
from tests.transcript_formats import FORMATS, in_format

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def damaged(draw: st.DrawFn) -> tuple[Any, str]:
    """A well-formed session, damaged, in a drawn format."""
    messages = small.well_formed(DrawSource(draw))
    for _ in range(draw(st.integers(0, 3))):
        if not messages:
            break
        index = draw(st.integers(0, len(messages) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "move"]))
        if action == "drop":
            del messages[index]
        elif action == "repeat":
            messages.insert(index, copy.deepcopy(messages[index]))
        else:
            messages.insert(draw(st.integers(0, len(messages) - 1)), messages.pop(index))
    fmt = draw(st.sampled_from(FORMATS))
    snapshot = in_format(messages, fmt)
    assume(snapshot is not None)
    if fmt in ("anthropic", "otel-genai") and draw(st.booleans()):
        snapshot = _merged(draw, snapshot, "content" if fmt == "anthropic" else "parts")
    return snapshot, fmt


def _merged(draw: st.DrawFn, messages: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Some neighbours merged into one message (results and text together, as clients write
    them); Anthropic merges only user messages, whose blocks may then be in any order."""
    out: list[dict[str, Any]] = []
    for message in messages:
        previous = out[-1] if out else None
        if (previous is not None and draw(st.booleans())
                and (key == "parts" or previous["role"] == message["role"] == "user")):
            blocks = [*_blocks(previous[key]), *_blocks(message[key])]
            out[-1] = {**previous, key: draw(st.permutations(blocks)) if key == "content" else blocks}
        else:
            out.append(message)
    return out


def _blocks(content: Any) -> list[Any]:
    return list(content) if isinstance(content, list) else [{"type": "text", "text": content}]


def _objects(value: Any) -> set[int]:
    found = {id(value)} if isinstance(value, dict | list) else set()
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        found |= _objects(item)
    return found


@SETTINGS
@given(damaged())
def test_repair_is_valid_idempotent_and_leaves_its_input_alone(case: tuple[Any, str]) -> None:
    snapshot, fmt = case
    original = copy.deepcopy(snapshot)
    try:
        repaired = repair(snapshot, fmt)
    except IrreparableError:
        assert not inspect(snapshot, fmt).repairable
        return
    assert snapshot == original
    assert inspect(repaired.transcript, fmt).fatal == ()
    assert not _objects(repaired.transcript) & _objects(snapshot)
    again = repair(repaired.transcript, fmt)
    assert again.changes == () and again.transcript == repaired.transcript
    assert len(repaired.changes) >= len(repaired.before.defects)


@SETTINGS
@given(damaged())
def test_repair_without_detaching_the_output_is_the_same_repair(case: tuple[Any, str]) -> None:
    """The corpus audit repairs with `detach=False` (the output shares the input's message
    objects instead of a JSON copy): same output, changes and verdicts, and its `output`
    reading is what a fresh read of the output gives, for every format."""
    snapshot, fmt = case
    transcript = read_transcript(snapshot, fmt)
    try:
        copied = repair_transcript(read_transcript(snapshot, fmt))
    except IrreparableError:
        return
    shared = repair_transcript(transcript, detach=False)
    assert shared.transcript == copied.transcript
    assert (shared.changes, shared.before, shared.after, shared.synthesized) == (
        copied.changes, copied.before, copied.after, copied.synthesized)
    if shared.output is None:
        assert not shared.changes
        return
    fresh = read_transcript(shared.transcript, transcript.format).loaded
    assert shared.output.views == fresh.views and shared.output.wire == fresh.wire


@SETTINGS
@given(damaged(), st.integers(1, 400), st.integers(0, 3))
def test_compact_fits_or_refuses_and_never_splits_a_pair(case: tuple[Any, str], budget: int,
                                                         keep: int) -> None:
    snapshot, fmt = case
    try:
        valid = repair(snapshot, fmt).transcript
    except IrreparableError:
        return
    original = copy.deepcopy(valid)
    try:
        done = compact(valid, fmt, max_tokens=budget, keep=keep)
    except CompactionRefused as refused:
        assert refused.reason
        assert valid == original
        return
    assert valid == original
    assert done.tokens_after <= budget
    assert inspect(done.transcript, fmt).fatal == ()


@st.composite
def noisy(draw: st.DrawFn) -> list[dict[str, Any]]:
    """`sessiongen.small.noisy_session`: odd roles, blank ids, null content, misplaced results."""
    return small.noisy_session(DrawSource(draw))


@SETTINGS
@given(noisy())
def test_repair_of_noisy_chat_sessions_is_valid_or_refused(messages: list[dict[str, Any]]) -> None:
    try:
        repaired = repair(messages, "openai")
    except IrreparableError as refused:
        assert refused.defects and all(not d.repairable for d in refused.defects)
        return
    assert inspect(repaired.transcript, "openai").fatal == ()
    assert repair(repaired.transcript, "openai").changes == ()
