"""Generated compactions written as each agent's session file derive back exactly.

A generated Chat session and its compaction (`sessiongen`) are written as a Codex rollout, a
Claude Code transcript and a Gemini CLI session (`sessiongen.agent_logs`, with the traps each
agent's files hold); the source must find exactly one compaction, at the marker's line, whose
before and after are the written pair in the neutral model (the same identities, message by
message) and get the same `check` verdict as that plain pair.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit import InputError, check
from frayproof_audit.snapshot import load_list
from frayproof_audit.sources import Compaction, derive
from sessiongen import agent_logs, small, strategies
from sessiongen.source import RandomSource
from tests.helpers import make_contract

WRITERS: dict[str, Callable[..., agent_logs.Written | None]] = {
    "codex": agent_logs.as_codex,
    "claude-code": agent_logs.as_claude_code,
    "gemini-cli": agent_logs.as_gemini_cli,
}
EVENTS = {"codex": "summarize", "claude-code": "summarize", "gemini-cli": "summarize"}


def _identities(messages: list[Any], fmt: str) -> list[bytes]:
    loaded = load_list(messages, fmt)
    return [loaded.identity(i) for i in range(len(loaded))]


def _verdict(before: list[Any], after: list[Any], contract: Any, fmt: str) -> Any:
    try:
        report = check(before, after, contract, input_format=fmt)
    except InputError as error:
        return str(error)
    return [(v.code, v.snapshot, v.message_index, v.tool_call_id) for v in report.violations]


def _derives_back(source: str, written: agent_logs.Written, contract: Any,
                  event: str = "summarize") -> None:
    found = derive(source, "generated", [line.encode() + b"\n" for line in written.lines])
    [row] = found.rows
    assert isinstance(row, Compaction) and row.problem is None, row
    assert (row.source_row, row.ordinal, row.session_id, row.event) == (
        written.marker_row, 1, written.session_id, event)
    assert found.counts.events == 1 and found.counts.problems == 0
    assert found.counts.lines == len(written.lines)
    assert row.before is not None and row.after is not None
    assert _identities(row.before, row.format) == _identities(written.before, written.format)
    assert _identities(row.after, row.format) == _identities(written.after, written.format)
    assert _verdict(row.before, row.after, contract, row.format) == _verdict(
        written.before, written.after, contract, written.format)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.mutation_cases(), st.sampled_from(sorted(WRITERS)))
def test_a_written_compaction_derives_back(case: small.MutationCase, source: str) -> None:
    before, after, contract_yaml = case
    written = WRITERS[source](before, after)
    assume(written is not None)
    assert written is not None
    _derives_back(source, written, make_contract(contract_yaml))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.clean_mutation_cases())
def test_a_remote_codex_compaction_derives_back(case: small.MutationCase) -> None:
    before, after, contract_yaml = case
    written = agent_logs.as_codex(before, after, remote=True)
    assume(written is not None)
    assert written is not None
    _derives_back("codex", written, make_contract(contract_yaml), event="remote_opaque")


@pytest.mark.parametrize("source", sorted(WRITERS))
def test_most_generated_cases_can_be_written(source: str) -> None:
    """The property above is not vacuous: the writers say most generated pairs."""
    src = RandomSource(7)
    written = sum(WRITERS[source](*small.clean_mutation_case(src)[:2]) is not None
                  for _ in range(60))
    assert written >= 12, written
