"""Sources: compaction pairs derived from agents' own session files, exactly.

Each fixture in `tests/data/agent_logs/<agent>/` is hand-made in the field names the agents
write, traps included (title `summary` lines, split assistant turns, one `tool_result` per
line, several compactions per file, forks, a broken chain, a missing summary taken from the
summarizer's transcript and one nowhere to be found, rollbacks, legacy and remote Codex
compactions, upserts, rewinds and masking in Gemini CLI, unknown line types, lines that are not
JSON, a `.jsonl.zst` rollout); its `.expected.json` holds every derived row. Accounting: every
marker is exactly one `Compaction`, every bad line one `LineProblem`, nothing else is a row.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

import pytest

from frayproof_audit import validate
from frayproof_audit.snapshot import load_list
from frayproof_audit.sources import (
    SOURCES,
    AmbiguousSource,
    Compaction,
    FileRole,
    LineProblem,
    UnknownSource,
    codex,
    current_history,
    derive,
    detect,
    get_source,
    open_lines,
    role_of,
)
from frayproof_audit.sources.gemini_cli import LEGACY_NOTE
from tests.agent_logs import FIXTURES, ROOT, as_json, derived, expected_path
from tests.helpers import REPO

CASES = [(source, name) for source, names in FIXTURES.items() for name in names]
MARKERS = {
    "codex": lambda line: line.get("type") == "compacted",
    "claude-code": lambda line: line.get("subtype") in ("compact_boundary", "microcompact_boundary"),
}


@pytest.mark.parametrize("source, name", CASES, ids=[name for _, name in CASES])
def test_fixture_derives_exactly_the_expected_rows(source: str, name: str) -> None:
    path = ROOT / source / name
    expected = json.loads(expected_path(path).read_text(encoding="utf-8"))
    assert as_json(derived(source, path)) == expected


@pytest.mark.parametrize("source, name", CASES, ids=[name for _, name in CASES])
def test_every_marker_is_one_row_and_nothing_else_is(source: str, name: str) -> None:
    path = ROOT / source / name
    found = derived(source, path)
    counts = found.counts
    compactions = [row for row in found.rows if isinstance(row, Compaction)]
    problems = [row for row in found.rows if isinstance(row, LineProblem)]
    assert len(found.rows) == len(compactions) + len(problems)
    assert counts.lines == counts.events + counts.other + counts.problems + counts.blank
    assert counts.lines == len(path.read_bytes().splitlines())
    assert (len(compactions), len(problems)) == (counts.events, counts.problems)
    sessions = {row.session_id for row in compactions}
    for session in sessions:
        ordinals = [row.ordinal for row in compactions if row.session_id == session]
        assert ordinals == list(range(1, len(ordinals) + 1))
    assert [row.source_row for row in found.rows] == sorted(row.source_row for row in found.rows)
    if source in MARKERS:
        marked = []
        for row, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if isinstance(line, dict) and MARKERS[source](line):
                marked.append(row)
        assert [row.source_row for row in compactions] == marked
    for row in compactions:
        assert (row.before is None) == (row.after is None) == (row.problem is not None)
        assert row.pair_id == f"{row.session_id}:{row.ordinal}"
        assert row.format == SOURCES[source].format


@pytest.mark.parametrize("source, name", CASES, ids=[name for _, name in CASES])
def test_derived_snapshots_load_in_their_format(source: str, name: str) -> None:
    for row in derived(source, ROOT / source / name).rows:
        if isinstance(row, Compaction) and row.problem is None:
            assert row.before is not None and row.after is not None
            load_list(row.before, row.format)
            validate(row.after, input_format=row.format)


def test_a_zstd_rollout_reads_as_the_plain_one() -> None:
    plain = ROOT / "codex" / FIXTURES["codex"][0]
    packed = ROOT / "codex" / "archived_sessions" / f"{plain.name}.zst"
    assert as_json(derived("codex", packed)) == as_json(derived("codex", plain))
    assert role_of(packed) == ("codex", FileRole("session"))


def test_codex_replay_keeps_only_what_is_sent() -> None:
    rows = derived("codex", ROOT / "codex" / FIXTURES["codex"][0]).rows
    first, second = (row for row in rows if isinstance(row, Compaction))
    assert first.before is not None and first.after is not None and second.before is not None
    kinds = [(item.get("type"), item.get("role")) for item in first.before]
    assert ("ghost_snapshot", None) not in kinds and ("message", "system") not in kinds
    assert all(item.get("type") != "ghost_snapshot" for item in first.after)
    # the rolled-back turn ("try again") is gone from the second compaction's before
    texts = [codex._text(item) for item in second.before if item.get("type") == "message"]
    assert "try again" not in texts and texts[-1] == "now run the tests"
    assert (second.compactor, second.event, second.tokens_before, second.tokens_after) == (
        "codex/remote", "remote_opaque", 9000, 150)


def test_codex_legacy_rebuild_caps_the_kept_user_messages() -> None:
    old, newest = "o" * 8, "n" * (codex.COMPACT_USER_MESSAGE_MAX_TOKENS * 4 + 40)
    history = [codex._user_item(old), codex._user_item(newest)]
    rebuilt = codex.build_compacted_history(history, "SUMMARY", set())
    assert [codex._text(item) for item in rebuilt][1:] == ["SUMMARY"]
    kept = codex._text(rebuilt[0])
    assert kept.startswith("n" * 40_000) and kept.endswith("n" * 40_000)
    assert "…10 tokens truncated…" in kept
    assert codex.truncate_middle("abcdefghij", 1) == "ab…2 tokens truncated…ij"
    assert codex.truncate_middle("é" * 4, 1) == "é…1 tokens truncated…é"
    assert codex.build_compacted_history([], "", set()) == [codex._user_item("(no summary available)")]


def test_codex_rollback_cuts_at_the_nth_last_user_turn() -> None:
    user, said = codex._user_item, {"type": "message", "role": "assistant", "content": []}
    context = {"type": "message", "role": "user",
               "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]}
    history = [user("a"), said, context, user("b"), said]
    assert codex.drop_last_user_turns(history, 1) == [user("a"), said]
    assert codex.drop_last_user_turns(history, 5) == []
    assert codex.drop_last_user_turns(history, 0) == history


@pytest.mark.parametrize("source, name", CASES, ids=[name for _, name in CASES])
def test_each_fixture_is_detected_as_its_source(source: str, name: str) -> None:
    lines = list(open_lines(ROOT / source / name))
    assert detect(lines) == source


def test_detection_refuses_ambiguity_and_knows_pair_records() -> None:
    codex_line = b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n'
    claude_line = b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{}}\n'
    with pytest.raises(AmbiguousSource, match=r"line 1 is a Codex rollout line .*\(codex\) but "
                                              r"line 2 is a Claude Code entry .*\(claude-code\)"):
        detect([codex_line, claude_line], "mixed.jsonl")
    assert detect([b'{"pair_id": "p", "before": [], "after": []}\n']) == "pairs"
    assert detect([b"not json\n", b"\n", b'{"hello": 1}\n']) is None
    with pytest.raises(UnknownSource, match="known: pairs, codex, claude-code, gemini-cli"):
        get_source("cursor")


@pytest.mark.parametrize("path, expected", [
    ("~/.codex/sessions/2026/08/01/rollout-2026-08-01T10-00-00-0199.jsonl", ("codex", "session")),
    ("~/.codex/archived_sessions/rollout-2026-08-01T10-00-00-0199.jsonl.zst", ("codex", "session")),
    ("~/.claude/projects/-repo/11111111-1111-4111-8111-111111111111.jsonl", ("claude-code", "session")),
    ("~/.claude/projects/-repo/1111/subagents/agent-a1b2c3.jsonl", ("claude-code", "session")),
    ("~/.claude/projects/-repo/1111/subagents/agent-acompact-7f.jsonl", ("claude-code", "summarizer")),
    ("~/.gemini/tmp/9ac/chats/session-2026-08-01T10-00-b1f00000.jsonl", ("gemini-cli", "session")),
    ("~/.gemini/tmp/9ac/chats/session-2026-03-01T10-00-b1f00000.json", ("gemini-cli", "legacy")),
    ("~/.gemini/tmp/9ac/chats/b1f00000-1111/11111111-1111-4111-8111-111111111111.jsonl",
     ("gemini-cli", "session")),
    ("~/notes/pairs.jsonl", None),
])
def test_file_roles_by_name(path: str, expected: tuple[str, str] | None) -> None:
    found = role_of(PurePath(path))
    assert (found if found is None else (found[0], found[1].kind)) == expected
    if expected == ("gemini-cli", "legacy"):
        assert found is not None and found[1].note == LEGACY_NOTE


def _texts(format_name: str, messages: list[Any]) -> list[str]:
    loaded = load_list(messages, format_name)
    return [view.role for view in loaded.views]


def test_current_history_is_the_next_request() -> None:
    fmt, items = current_history("codex", open_lines(ROOT / "codex" / FIXTURES["codex"][0]))
    assert fmt == "openai-responses" and items[-2]["type"] == "compaction"
    assert items[-1]["content"] == [{"type": "output_text", "text": "Tests pass."}]
    fmt, messages = current_history(
        "claude-code", open_lines(ROOT / "claude-code" / FIXTURES["claude-code"][0]))
    assert fmt == "anthropic"
    assert [m["content"] for m in messages][-1] == "thanks"
    assert messages[0]["content"].endswith("Summary: login fixed, tests pass.")
    fmt, contents = current_history(
        "gemini-cli", open_lines(ROOT / "gemini-cli" / FIXTURES["gemini-cli"][0]))
    assert fmt == "gemini"
    assert _texts(fmt, contents) == ["user", "user", "assistant", "user", "assistant", "tool"]
    assert "undo that" not in json.dumps(contents)  # rewound


def test_a_forked_claude_transcript_follows_the_branch_the_boundary_names() -> None:
    path = ROOT / "claude-code" / FIXTURES["claude-code"][1]
    first = derived("claude-code", path).rows[0]
    assert isinstance(first, Compaction) and first.before is not None
    assert [m["content"] for m in first.before][:3] == ["start", [{"type": "text", "text": "A"}],
                                                         "branch two (edited)"]


def test_a_missing_summary_comes_from_the_summarizer_only_when_asked() -> None:
    path = ROOT / "claude-code" / FIXTURES["claude-code"][2]
    alone = derive("claude-code", path.name, open_lines(path))
    first = alone.rows[0]
    assert isinstance(first, Compaction) and first.problem is not None
    assert "was never written" in first.problem and "anthropics/claude-code#43053" in first.problem
    with_sibling = derived("claude-code", path).rows[0]
    assert isinstance(with_sibling, Compaction) and with_sibling.fidelity == "rebuilt"


def test_unknown_lines_and_fields_are_tolerated() -> None:
    lines = [b'{"type":"brand_new","payload":{"x":1}}\n',
             b'{"timestamp":"t","type":"response_item","payload":{"type":"future_item","x":1},'
             b'"extra":true}\n',
             b'{"timestamp":"t","type":"compacted","payload":{"message":"","replacement_history":'
             b'[{"type":"future_item","x":1}],"window_id":"w1"}}\n']
    found = derive("codex", "f", lines)
    assert found.counts.events == 1 and found.counts.problems == 0
    [row] = found.rows
    assert isinstance(row, Compaction)
    assert row.before == row.after == [{"type": "future_item", "x": 1}]


def test_a_gemini_bootstrap_or_id_sync_is_no_compaction() -> None:
    record = {"id": "e", "type": "user", "content": [{"text": "env"}]}
    lines = [json.dumps(line).encode() for line in (
        {"sessionId": "s", "projectHash": "p"}, {"$set": {"messages": [record]}},
        {"$set": {"messages": [record, {"id": "m1", "type": "user", "content": "hi"}]}})]
    found = derive("gemini-cli", "f", lines)
    assert found.rows == () and found.counts.other == 3


EXAMPLES = {
    "codex": "examples/agent-logs/codex/sessions/2026/08/01/"
             "rollout-2026-08-01T09-12-44-0199d3a2-5c1e-7b40-9a61-2f0c8e4d7a11.jsonl",
    "claude-code": "examples/agent-logs/claude-code/projects/-home-dev-shop/"
                   "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f.jsonl",
    "gemini-cli": "examples/agent-logs/gemini-cli/tmp/9ac0ffee4b1d/chats/"
                  "session-2026-08-01T09-12-b1f00000.jsonl",
}


def test_the_example_agent_logs_are_what_their_script_makes() -> None:
    import subprocess
    import sys

    completed = subprocess.run([sys.executable, "examples/make_agent_logs.py", "--check"],
                               cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.parametrize("source", sorted(EXAMPLES))
def test_each_example_is_its_agents_file_with_one_compaction(source: str) -> None:
    path = REPO / EXAMPLES[source]
    assert role_of(path) == (source, FileRole("session"))
    assert detect(list(open_lines(path))) == source
    found = derived(source, path)
    [row] = found.rows
    assert isinstance(row, Compaction) and row.problem is None
    assert row.after is not None and row.before is not None and len(row.after) < len(row.before)


def test_a_sidechain_in_the_session_file_is_a_session_of_its_own() -> None:
    def boundary(uuid: str, **more: Any) -> bytes:
        return json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": uuid,
                           "parentUuid": None, "logicalParentUuid": "u1", "sessionId": "S",
                           **more}).encode()
    lines = [json.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "S",
                         "message": {"role": "user", "content": "hi"}}).encode(),
             boundary("b1"), boundary("b2", isSidechain=True, agentId="a7")]
    rows = derive("claude-code", "f", lines).rows
    assert [(row.pair_id, row.source_row) for row in rows] == [("S:1", 2), ("S/agent-a7:1", 3)]
