"""Properties of repair and compaction over generated transcripts in every format: damaged
`sessiongen` sessions (messages dropped, repeated, moved, and results repeated later, as broken
compactors do; in the block formats, results messages split in two and notes among results,
as clients write them). Repair and compaction return every message they do not name exactly
as it was, and their account of changes explains every difference; the linear cut finder
equals the plain reference one."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit.transcript import (
    INTERRUPTED,
    CompactionRefused,
    IrreparableError,
    compact,
    inspect,
    repair,
)
from frayproof_audit.transcript.compact import compact_transcript, cuts, reference_cuts
from frayproof_audit.transcript.loading import read_transcript
from frayproof_audit.transcript.repair import RepairResult, repair_transcript, writer_for
from sessiongen import small
from sessiongen.strategies import DrawSource
from tests.transcript_formats import FORMATS, in_format

BLOCK_KEYS = {"anthropic": "content", "otel-genai": "parts"}

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def damaged(draw: st.DrawFn) -> tuple[Any, str]:
    """A well-formed session, damaged, in a drawn format."""
    messages = small.well_formed(DrawSource(draw))
    for _ in range(draw(st.integers(0, 3))):
        if not messages:
            break
        index = draw(st.integers(0, len(messages) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "move", "dup_result_later"]))
        if action == "drop":
            del messages[index]
        elif action == "repeat":
            messages.insert(index, copy.deepcopy(messages[index]))
        elif action == "move":
            messages.insert(draw(st.integers(0, len(messages) - 1)), messages.pop(index))
        elif messages[index]["role"] == "tool":  # a second answer, turns later
            later = draw(st.integers(index + 1, len(messages)))
            messages.insert(later, copy.deepcopy(messages[index]))
    fmt = draw(st.sampled_from(FORMATS))
    snapshot = in_format(messages, fmt)
    assume(snapshot is not None)
    if fmt in ("anthropic", "otel-genai"):
        key = "content" if fmt == "anthropic" else "parts"
        edits = ["none", "merged", "split_results", *(["note"] if fmt == "anthropic" else [])]
        edit = draw(st.sampled_from(edits))
        if edit == "merged":
            snapshot = _merged(draw, snapshot, key)
        elif edit == "split_results":
            snapshot = _split_results(draw, snapshot, key)
        elif edit == "note":
            snapshot = _noted(draw, snapshot, key)
    return snapshot, fmt


RESULT_TYPES = ("tool_result", "tool_call_response")


def _results_messages(messages: list[dict[str, Any]], key: str) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m[key], list)
            and any(block.get("type") in RESULT_TYPES for block in m[key])]


def _split_results(draw: st.DrawFn, messages: list[dict[str, Any]],
                   key: str) -> list[dict[str, Any]]:
    """One message of several results split into two consecutive messages (the results of one
    batch in two user messages, or two OTel `tool` messages)."""
    several = [i for i in _results_messages(messages, key) if len(messages[i][key]) > 1]
    if not several:
        return messages
    index = draw(st.sampled_from(several))
    blocks = messages[index][key]
    at = draw(st.integers(1, len(blocks) - 1))
    return [*messages[:index], {**messages[index], key: blocks[:at]},
            {**messages[index], key: blocks[at:]}, *messages[index + 1:]]


def _noted(draw: st.DrawFn, messages: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """A text block somewhere among the results of a results message."""
    found = _results_messages(messages, key)
    if not found:
        return messages
    index = draw(st.sampled_from(found))
    blocks = list(messages[index][key])
    note = ({"type": "text", "text": "see the results"} if key == "content"
            else {"type": "text", "content": "see the results"})
    blocks.insert(draw(st.integers(0, len(blocks))), note)
    return [*messages[:index], {**messages[index], key: blocks}, *messages[index + 1:]]


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


# --------------------------------------------------------------------------- nothing unlisted


def _wire(value: Any) -> str:
    """A message (or block) as wire data: its JSON text, key order and all."""
    return json.dumps(value, ensure_ascii=False)


def _messages(transcript: Any, fmt: str) -> list[Any]:
    if isinstance(transcript, dict):
        return list(transcript["input" if fmt == "openai-responses" else "messages"])
    return list(transcript)


def _units(message: Any, fmt: str) -> list[Any]:
    """What a message is made of: its blocks (anthropic, otel) or itself."""
    blocks = message.get(BLOCK_KEYS[fmt]) if fmt in BLOCK_KEYS else None
    return list(blocks) if isinstance(blocks, list) else [message]


def _neutral(snapshot: Any, fmt: str, repaired: RepairResult) -> list[int | None]:
    """For each change, the neutral message it is about (None for `synthesize`, which is about
    a call). Sites name neutral messages, but two runs of parts of one OTel message share
    theirs, so the k-th change at a site is the k-th neutral message there."""
    loaded = read_transcript(snapshot, fmt).loaded
    at: dict[str, list[int]] = {}
    for index in range(len(loaded)):
        at.setdefault(loaded.site("transcript", index), []).append(index)
    return [None if change.action == "synthesize" else at[change.site].pop(0)
            for change in repaired.changes]


def _named(snapshot: Any, fmt: str, repaired: RepairResult) -> set[int]:
    """The input wire messages the changes say were edited: where a dropped or moved result
    was (all the items of a Responses run), and the message a result was added to."""
    loaded = read_transcript(snapshot, fmt).loaded
    named: set[int] = set()
    for change, index in zip(repaired.changes, _neutral(snapshot, fmt, repaired), strict=True):
        if change.into is not None:
            named.add(change.into)
        if index is None:
            continue  # a synthesized result: the call's own message is never touched
        origin = loaded.origin(index)
        named.update(range(getattr(origin, "start", origin.message),
                           getattr(origin, "stop", origin.message + 1)))
    return named


def _is_subsequence(wanted: list[str], found: list[str]) -> bool:
    remaining = iter(found)
    return all(any(item == other for other in remaining) for item in wanted)


@SETTINGS
@given(damaged())
def test_repair_returns_every_message_it_does_not_name_exactly(case: tuple[Any, str]) -> None:
    """Every input message no change names comes back byte-identical, in order; the changes
    account for every block that went or came; and a named message keeps its other blocks in
    their order (nothing merged, nothing reordered unlisted)."""
    snapshot, fmt = case
    try:
        repaired = repair(snapshot, fmt)
    except IrreparableError:
        return
    before, after = _messages(snapshot, fmt), _messages(repaired.transcript, fmt)
    named = _named(snapshot, fmt, repaired)
    untouched = [_wire(m) for i, m in enumerate(before) if i not in named]
    assert _is_subsequence(untouched, [_wire(m) for m in after]), (repaired.changes, named)

    transcript = read_transcript(snapshot, fmt)
    pieces = writer_for(transcript).pieces(transcript)
    gone: Counter[str] = Counter()
    came: Counter[str] = Counter()
    for change, index in zip(repaired.changes, _neutral(snapshot, fmt, repaired), strict=True):
        if change.action == "drop":
            assert index is not None
            piece = pieces[index]
            assert piece is not None
            wire_index = transcript.loaded.wire_index(index)
            assert wire_index is not None
            units = _units(before[wire_index], fmt) if piece.whole else list(piece.units)
            gone.update(_wire(unit) for unit in units)
        elif change.action == "synthesize":
            assert change.call_id is not None
            new = writer_for(transcript).result(change.call_id, INTERRUPTED)
            came.update(_wire(unit) for unit in new.units)
    had = Counter(_wire(u) for m in before for u in _units(m, fmt))
    has = Counter(_wire(u) for m in after for u in _units(m, fmt))
    assert has + gone == had + came, (repaired.changes,)  # as multisets: nothing else went or came

    if fmt in BLOCK_KEYS:  # the blocks that stay in their message keep their order there
        moving = set()
        for change, index in zip(repaired.changes, _neutral(snapshot, fmt, repaired),
                                 strict=True):
            piece = None if index is None else pieces[index]
            if piece is not None and change.action in ("drop", "move"):
                moving |= {(piece.source, position) for position in piece.positions}
        where: dict[str, list[tuple[int, int]]] = {}
        for number, message in enumerate(before):
            for position, unit in enumerate(_units(message, fmt)):
                if (number, position) not in moving:
                    where.setdefault(_wire(unit), []).append((number, position))
        for message in after:
            seen: dict[int, int] = {}
            for unit in _units(message, fmt):
                places = where.get(_wire(unit))
                if not places:
                    continue  # a synthesized or moved result
                number, position = places.pop(0)
                assert seen.get(number, -1) < position, (message, repaired.changes)
                seen[number] = position


@SETTINGS
@given(damaged(), st.integers(1, 400), st.integers(0, 3))
def test_compact_keeps_an_exact_suffix_and_counts_it(case: tuple[Any, str], budget: int,
                                                     keep: int) -> None:
    snapshot, fmt = case
    try:
        valid = repair(snapshot, fmt).transcript
    except IrreparableError:
        return
    try:
        done = compact(valid, fmt, max_tokens=budget, keep=keep)
    except CompactionRefused:
        return
    before, after = _messages(valid, fmt), _messages(done.transcript, fmt)
    pinned = len(after) - (len(before) - done.kept_from)
    assert done.dropped == done.kept_from - pinned == len(before) - len(after)
    assert [_wire(m) for m in after] == [_wire(m) for m in before[:pinned] + before[done.kept_from:]]
    assert all(m.get("role") in ("system", "developer") for m in before[:pinned])


@SETTINGS
@given(damaged())
def test_the_linear_cuts_equal_the_reference_cuts(case: tuple[Any, str]) -> None:
    snapshot, fmt = case
    transcript = read_transcript(snapshot, fmt)
    assert cuts(transcript) == reference_cuts(transcript)


@SETTINGS
@given(damaged(), st.integers(1, 400), st.integers(0, 3))
def test_compact_by_the_linear_cuts_is_compact_by_the_reference(case: tuple[Any, str],
                                                               budget: int, keep: int) -> None:
    snapshot, fmt = case
    try:
        valid = repair(snapshot, fmt).transcript
    except IrreparableError:
        return
    outcomes = []
    for where in (cuts, reference_cuts):
        try:
            outcomes.append(compact_transcript(read_transcript(valid, fmt), max_tokens=budget,
                                               keep=keep, where=where))
        except CompactionRefused as refused:
            outcomes.append(refused.reason)
    assert outcomes[0] == outcomes[1]
