"""Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]` and `archived_sessions/`.

Each line is a `RolloutLine {timestamp, type, payload}` (openai/codex
`codex-rs/protocol/src/protocol.rs`, `RolloutItem`: `session_meta`, `response_item`,
`compacted`, `turn_context`, `event_msg`; later builds add more, which are ignored, as every
unknown line type is). The history is replayed as Codex replays it on resume
(`codex-rs/core/src/codex/rollout_reconstruction.rs`, `reconstruct_history_from_rollout`):

* `response_item` appends its item, as `ContextManager::record_items` records it
  (`codex-rs/core/src/context_manager/history.rs`): `system` messages are never recorded, and
  `ghost_snapshot` items (undo checkpoints) are recorded but removed by `for_prompt`, so neither
  is model-visible; `compaction_trigger` items are not API messages either. Every other item
  type is kept (the build that wrote the rollout knew it);
* `compacted` replaces the history with its `replacement_history` (the after, verbatim:
  fidelity `explicit`). A `replacement_history` holding a `compaction` item (alias
  `compaction_summary`, an encrypted summary from the provider,
  `codex-rs/core/src/compact_remote.rs`) is a remote compaction: event `remote_opaque`,
  judged on structure. A legacy line without one (local compaction before late 2025 wrote
  `replacement_history: None`) is rebuilt by `build_compacted_history`
  (`codex-rs/core/src/compact.rs`): the most recent real user messages, newest first up to
  `COMPACT_USER_MESSAGE_MAX_TOKENS` = 20 000 approximate tokens (the oldest one kept cut in the
  middle), then one user message holding `message` (the summary with its prefix); fidelity
  `rebuilt`. On resume Codex also puts the session's regenerated initial context (AGENTS.md
  instructions, environment context) first; the rollout does not hold it, so the rebuilt after
  lacks it (a note says so);
* `event_msg` `thread_rolled_back {num_turns}` drops the last `num_turns` user turns
  (`ContextManager::drop_last_n_user_turns`: the history is cut at the n-th last real user
  message, contextual messages right before the cut going with it);
* everything else is metadata.

The before of a compaction is the replayed history just before its line, so several
compactions in one file chain: the before of the n-th is the after of the (n-1)-th and what
followed. `session_meta.base_instructions` is not part of either: Codex sends it as the
request's `instructions` on every request, beside the history, and compaction never touches it
(`compact.rs` passes `base_instructions` to the prompt separately). Tokens come from
`token_count` events: before = `last_token_usage.input_tokens` of the last request before the
compaction; after = the estimate Codex writes when it recomputes usage after replacing the
history (`Session::recompute_token_usage`: a `token_count` whose `last_token_usage` has no
input tokens and `total_tokens` set). Upstream rollouts do not record whether a compaction was
`/compact` or automatic, so `trigger` stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import Any

from frayproof_audit.sources.base import (
    Compaction,
    Derived,
    FileRole,
    Line,
    LineProblem,
    Row,
    Siblings,
    Source,
    Tally,
    first_objects,
    integer_of,
    parsed,
    string_of,
)

NAME = "codex"
FORMAT = "openai-responses"
LINE_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})
NOT_SENT = frozenset({"ghost_snapshot", "compaction_trigger"})
"""Item types Codex records but never sends (`history.rs`: `for_prompt` drops ghost
snapshots; `is_api_message` rejects compaction triggers)."""
REMOTE_ITEMS = frozenset({"compaction", "compaction_summary"})
"""The encrypted summary item of remote compaction (`models.rs`: `Compaction`, serde alias
`compaction_summary`)."""
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking "
    "process. You also have access to the state of the tools that were used by that language "
    "model. Use this to build on the work that has already been done and avoid duplicating work. "
    "Here is the summary produced by the other language model, use the information in this "
    "summary to  assist with your own analysis:")
"""`codex-rs/core/templates/compact/summary_prefix.md`: a user message starting with it and a
newline is a summary, not a real user message (`compact.rs`, `is_summary_message`)."""
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
APPROX_BYTES_PER_TOKEN = 4
"""`codex-rs/utils/string/src/truncate.rs`: tokens are approximated as UTF-8 bytes / 4."""
CONTEXTUAL_PREFIXES = ("# agents.md instructions", "<environment_context>", "<user_instructions>",
                       "<skill>", "<user_shell_command>", "<turn_aborted>",
                       "<subagent_notification>")
"""Text fragments Codex injects as user messages (`codex-rs/core/src/context/`,
`CONTEXTUAL_USER_FRAGMENTS`): a user message holding one is context, not a user turn
(`event_mapping.rs`, `parse_user_message`). Matched case-insensitively at the trimmed start."""
ROLLOUT_NAME = re.compile(r"rollout-.*\.jsonl(\.zst)?")
REBUILT_NOTE = (
    "after rebuilt from the summary by Codex's build_compacted_history; the initial context "
    "Codex regenerates on resume (AGENTS.md instructions, environment context) is not in the "
    "rollout, so it is missing here")
REMOTE_NOTE = "the summary is an encrypted compaction item: judged on structure only"
INSTRUCTIONS_NOTE = (
    "base_instructions are sent as the request's instructions beside the history and are not "
    "part of before or after")


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        kind = value.get("type")
        if kind in LINE_TYPES and "payload" in value:
            return f"line {row} is a Codex rollout line (type {kind!r} with a payload)"
    return None


def role(path: PurePath) -> FileRole | None:
    return FileRole("session") if ROLLOUT_NAME.fullmatch(path.name) else None


def _text(item: dict[str, Any]) -> str:
    """A message item's text as `UserMessageItem::message` joins it (`items.rs`: text inputs
    concatenated)."""
    content = item.get("content")
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    return "".join(part["text"] for part in content
                   if type(part) is dict and part.get("type") in ("input_text", "text")
                   and type(part.get("text")) is str)


def _contextual(item: dict[str, Any]) -> bool:
    content = item.get("content")
    parts = content if type(content) is list else [{"type": "input_text", "text": content}]
    return any(type(part) is dict and type(part.get("text")) is str
               and part["text"].lstrip().lower().startswith(CONTEXTUAL_PREFIXES)
               for part in parts)


def _is_user_message(item: Any) -> bool:
    """A real user turn boundary (`is_user_turn_boundary`): a user `message` that is not
    injected context. Summaries count (they parse as user messages)."""
    return (type(item) is dict and item.get("type", "message") == "message"
            and item.get("role") == "user" and not _contextual(item))


def visible(item: Any) -> bool:
    """Whether Codex records the item and sends it (see the module docstring)."""
    if type(item) is not dict:
        return False
    kind = item.get("type", "message")
    if kind in NOT_SENT:
        return False
    return not (kind == "message" and item.get("role") == "system")


def drop_last_user_turns(history: list[Any], turns: int) -> list[Any]:
    """`ContextManager::drop_last_n_user_turns`: cut at the `turns`-th last real user message
    (all of them: keep what came before the first), and let contextual messages right before
    the cut go with the turn they prefixed."""
    if turns <= 0:
        return history
    positions = [i for i, item in enumerate(history) if _is_user_message(item)]
    if not positions:
        return history
    cut = positions[0] if turns >= len(positions) else positions[-turns]
    while cut > positions[0] and _injected(history[cut - 1]):
        cut -= 1
    return history[:cut]


def _injected(item: Any) -> bool:
    return (type(item) is dict and item.get("type", "message") == "message"
            and item.get("role") in ("user", "developer") and _contextual(item))


def _summary_text(text: str, summaries: set[str]) -> bool:
    return text.startswith(f"{SUMMARY_PREFIX}\n") or text in summaries


def truncate_middle(text: str, max_tokens: int) -> str:
    """`truncate_middle_with_token_budget` (`codex-rs/utils/string/src/truncate.rs`): keep
    the first and last halves of the byte budget on character boundaries, with a marker."""
    data = text.encode("utf-8")
    budget = max_tokens * APPROX_BYTES_PER_TOKEN
    if not data or len(data) <= budget:
        return text
    left = budget // 2
    tail_start = len(data) - (budget - left)
    prefix_end = 0
    suffix_start = len(data)
    position = 0
    suffix_started = False
    for char in text:
        size = len(char.encode("utf-8"))
        if position + size <= left:
            prefix_end = position + size
        elif position >= tail_start and not suffix_started:
            suffix_start, suffix_started = position, True
        position += size
    suffix_start = max(suffix_start, prefix_end)
    removed = len(data) - budget
    marker = f"…{(removed + APPROX_BYTES_PER_TOKEN - 1) // APPROX_BYTES_PER_TOKEN} tokens truncated…"
    return (data[:prefix_end] + marker.encode("utf-8") + data[suffix_start:]).decode("utf-8")


def build_compacted_history(history: list[Any], message: str, summaries: set[str]) -> list[Any]:
    """`compact.rs` `build_compacted_history` with an empty initial context: the real user
    messages of `history` (summaries left out), newest first within the token cap, then the
    summary."""
    texts = [_text(item) for item in history if _is_user_message(item)]
    texts = [text for text in texts if not _summary_text(text, summaries)]
    selected: list[str] = []
    remaining = COMPACT_USER_MESSAGE_MAX_TOKENS
    for text in reversed(texts):
        if remaining == 0:
            break
        tokens = (len(text.encode("utf-8")) + APPROX_BYTES_PER_TOKEN - 1) // APPROX_BYTES_PER_TOKEN
        if tokens <= remaining:
            selected.append(text)
            remaining -= tokens
        else:
            selected.append(truncate_middle(text, remaining))
            break
    selected.reverse()
    rebuilt: list[Any] = [_user_item(text) for text in selected]
    rebuilt.append(_user_item(message or "(no summary available)"))
    return rebuilt


def _user_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


class _Replay:
    """The replayed history and the compactions found, line by line."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.session_id: str | None = None
        self.history: list[Any] = []
        self.rows: list[Row] = []
        self.ordinal = 0
        self.summaries: set[str] = set()
        self.last_input: int | None = None
        self.recomputed: int | None = None
        self.open: int | None = None
        """Index in `rows` of the last compaction still waiting for its recomputed tokens."""
        self.rebuilt_at: int | None = None
        self.instructions = False

    def line(self, row: int, value: dict[str, Any], tally: Tally) -> None:
        kind = value.get("type")
        payload = value.get("payload")
        if kind == "compacted":
            tally.events += 1
            self.compacted(row, value, payload)
            return
        tally.other += 1
        if kind == "session_meta" and type(payload) is dict:
            self.session_id = self.session_id or string_of(payload.get("id"))
            self.instructions = self.instructions or payload.get("base_instructions") is not None
        elif kind == "response_item":
            if type(payload) is not dict:
                tally.other -= 1
                tally.problems += 1
                self.rows.append(LineProblem(row, f"line {row}: a response_item's payload must "
                                                  "be an object"))
                return
            self.open = None
            self.recomputed = None
            if visible(payload):
                self.history.append(payload)
        elif kind == "event_msg" and type(payload) is dict:
            self.event(payload)

    def event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "thread_rolled_back":
            turns = integer_of(payload.get("num_turns"))
            if turns is not None:
                self.history = drop_last_user_turns(self.history, turns)
        elif kind == "token_count":
            info = payload.get("info")
            usage = info.get("last_token_usage") if type(info) is dict else None
            if type(usage) is not dict:
                return
            given = integer_of(usage.get("input_tokens"))
            total = integer_of(usage.get("total_tokens"))
            if given:
                self.last_input, self.recomputed, self.open = given, None, None
            elif given == 0 and total:
                self.recomputed = total
                if self.open is not None:
                    found = self.rows[self.open]
                    assert isinstance(found, Compaction)
                    self.rows[self.open] = replace(found, tokens_after=total)
                    self.open = None

    def compacted(self, row: int, value: dict[str, Any], payload: Any) -> None:
        self.ordinal += 1
        before = list(self.history)
        base = Compaction(
            source_row=row, ordinal=self.ordinal, session_id=self.session_id or self.label,
            logged_at=string_of(value.get("timestamp")), compactor="codex/local", format=FORMAT,
            event="summarize", fidelity="explicit", before=None, after=None,
            tokens_before=self.last_input, tokens_after=self.recomputed)
        if type(payload) is not dict:
            self.rows.append(replace(base, problem=f"line {row}: the compacted line has no "
                                                   "payload object"))
            return
        notes: list[str] = [INSTRUCTIONS_NOTE] if self.instructions else []
        if self.rebuilt_at is not None:
            notes.append(f"before replays the history rebuilt at line {self.rebuilt_at}, "
                         "without its initial context")
        message = payload.get("message")
        replacement = payload.get("replacement_history")
        if type(replacement) is list:
            if not all(type(item) is dict for item in replacement):
                self.rows.append(replace(base, problem=f"line {row}: replacement_history must "
                                                       "be an array of item objects"))
                return
            after = [item for item in replacement if visible(item)]
            remote = any(item.get("type") in REMOTE_ITEMS for item in after)
            if remote:
                notes.append(REMOTE_NOTE)
                base = replace(base, compactor="codex/remote", event="remote_opaque")
            found = replace(base, before=before, after=after, notes=tuple(notes))
            self.history = list(after)
        elif replacement is None and type(message) is str:
            after = build_compacted_history(before, message, self.summaries)
            notes.append(REBUILT_NOTE)
            found = replace(base, fidelity="rebuilt", before=before, after=after,
                            notes=tuple(notes))
            self.history = list(after)
            self.rebuilt_at = row
        elif replacement is not None:
            self.rows.append(replace(base, problem=f"line {row}: replacement_history must be "
                                                   "an array of items or absent"))
            return
        else:
            self.rows.append(replace(base, fidelity="rebuilt", problem=(
                f"line {row}: a legacy compacted line without replacement_history and without "
                "its summary message: the after cannot be rebuilt")))
            return
        if type(message) is str and message:
            self.summaries.add(message)
        self.rows.append(found)
        self.open = None if found.tokens_after is not None else len(self.rows) - 1
        self.last_input = None
        self.recomputed = None


def _replay(label: str, lines: Iterable[Line]) -> tuple[_Replay, Tally]:
    tally = Tally()
    replay = _Replay(label)
    for row, value in parsed(lines, tally):
        if isinstance(value, LineProblem):
            replay.rows.append(value)
        else:
            replay.line(row, value, tally)
    return replay, tally


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None = None) -> Derived:
    replay, tally = _replay(label, lines)
    return Derived(tuple(replay.rows), tally.frozen())


def history(lines: Iterable[Line]) -> list[Any]:
    """The history the next request would send (before send-time normalization)."""
    return _replay("", lines)[0].history


SOURCE = Source(
    name=NAME, format=FORMAT, sniff=sniff, derive=derive, role=role, history=history,
    cycle_free=True,  # its own replay of parsed JSON (tests/test_source_collector.py)
    notes=("encrypted summaries of remote compaction are judged on structure only",
           "legacy compacted lines are rebuilt without the initial context Codex regenerates"))
