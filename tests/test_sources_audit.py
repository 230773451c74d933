"""`audit` and `pairs` over the logs agents already write, through the real command line.

The bundled agent logs (`examples/agent-logs/`) audit with no input error and every compaction
one row; the fixtures' traps (`tests/data/agent_logs/`: several compactions per file, a broken
chain, a missing summary, lines that are not JSON, a `.jsonl.zst` rollout) are one row each,
and nothing else is; `pairs -o` then `audit` of what it wrote gives the rows of auditing the
logs, row for row; `auto` decides per file in a folder that mixes pair records and three
agents' files, and refuses a file with evidence of two, naming both; an incremental night
audits exactly the compactions a session gained; generated sessions written as each agent's
files audit to the verdicts of the plain pairs (a property).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from frayproof_audit.corpus import read_table
from frayproof_audit.sources import Compaction, derive, file_siblings, open_lines
from sessiongen import agent_logs, small, strategies
from tests.agent_logs import FIXTURES
from tests.agent_logs import ROOT as FIXTURE_ROOT
from tests.helpers import EXAMPLES, REPO, run_cli

LOGS = EXAMPLES / "agent-logs"
CONTRACTS = EXAMPLES / "contracts"
AGENT_FOLDERS = {
    "codex": LOGS / "codex" / "sessions",
    "claude-code": LOGS / "claude-code" / "projects",
    "gemini-cli": LOGS / "gemini-cli" / "tmp",
}
VERDICT = ["pair_id", "session_id", "compactor", "logged_at", "format", "status", "errors",
           "warnings", "messages_before", "messages_after", "bytes_before", "bytes_after",
           "mutants_applicable", "mutants_caught", "mutants_survived", "mutants_skipped",
           "source_kind", "fidelity", "event", "trigger", "tokens_before", "tokens_after",
           "classification", "evidence"]
FINDING = ["pair_id", "compactor", "logged_at", "check", "code", "severity", "snapshot",
           "message_index", "tool_call_id", "pin", "rule", "message", "repairable"]


def _audit(*args: Any, expect: int | None = 0, real: bool = False) -> dict[str, Any]:
    result = run_cli("audit", *args, "-j", "1", "--format", "json", expect=expect, real=real)
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def _rows(out: Path, table: str = "pairs") -> pl.DataFrame:
    return read_table(out, table).collect()


def _marker_rows(path: Path, source: str) -> list[tuple[int, bool]]:
    """(source_row, is an input error) of every row the source derives from `path`."""
    found = derive(source, str(path), open_lines(path), file_siblings(path))
    return [(row.source_row, not isinstance(row, Compaction) or row.problem is not None)
            for row in found.rows]


# --------------------------------------------------------------------------- the bundled logs


@pytest.mark.parametrize("agent", sorted(AGENT_FOLDERS))
def test_an_agents_own_folder_audits_every_compaction_with_no_input_error(
        agent: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = _audit(AGENT_FOLDERS[agent].relative_to(REPO), "--contract", CONTRACTS / f"{agent}.yaml",
                     "--out", out, "--run-id", "night")
    assert (summary["pairs"], summary["passed"], summary["input_errors"]) == (1, 1, 0)
    assert summary["sources"][agent]["events"] == 1 and summary["sources"][agent]["problems"] == 0
    [path] = [p for p in AGENT_FOLDERS[agent].rglob("*.jsonl")]
    [expected] = derive(agent, str(path), open_lines(path)).rows
    assert isinstance(expected, Compaction)
    [row] = _rows(out).to_dicts()
    assert (row["pair_id"], row["source_row"], row["session_id"], row["compactor"], row["format"],
            row["source_kind"], row["fidelity"], row["event"], row["tokens_before"]) == (
        expected.pair_id, expected.source_row, expected.session_id, expected.compactor,
        expected.format, agent, expected.fidelity, expected.event, expected.tokens_before)
    assert row["source"] == str(path.relative_to(REPO))


def test_the_bundled_logs_audit_in_a_real_process_each_file_by_its_own_source(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = _audit("examples/agent-logs", "--out", out, "--run-id", "night", "--no-mutate",
                     real=True)
    assert (summary["pairs"], summary["input_errors"], summary["exit_code"]) == (3, 0, 0)
    assert {name: line["files"] for name, line in summary["sources"].items()} == {
        "codex": 1, "claude-code": 1, "gemini-cli": 1}
    kinds = dict(zip(_rows(out)["source_kind"], _rows(out)["format"], strict=True))
    assert kinds == {"codex": "openai-responses", "claude-code": "anthropic", "gemini-cli": "gemini"}
    runs = _rows(out, "runs").to_dicts()
    assert json.loads(runs[0]["source_counts"])["codex"]["events"] == 1


def test_audit_source_refuses_a_field_mapping_and_unknown_names() -> None:
    refused = run_cli("audit", AGENT_FOLDERS["codex"], "--source", "codex", "--out", "unused",
                      "--field", "before=request.messages", expect=2)
    assert "map the fields of pair records only" in refused.stderr
    unknown = run_cli("audit", AGENT_FOLDERS["codex"], "--source", "cursor", "--out", "unused",
                      expect=2)
    assert "'cursor' is not one of 'auto', 'pairs', 'codex'" in unknown.stderr


# --------------------------------------------------------------------------- accounting


FIXTURE_CASES = [(source, name) for source, names in FIXTURES.items() for name in names]


@pytest.mark.parametrize(("source", "name"), FIXTURE_CASES, ids=[n for _, n in FIXTURE_CASES])
def test_every_marker_is_one_row_and_nothing_else_is(source: str, name: str, tmp_path: Path) -> None:
    path = FIXTURE_ROOT / source / name
    out = tmp_path / "out"
    summary = _audit(path, "--source", source, "--out", out, "--no-mutate", "--fail-on", "none")
    rows = _rows(out).sort("source_row")
    expected = _marker_rows(path, source)
    assert list(zip(rows["source_row"], rows["status"] == "input_error", strict=True)) == expected
    line = summary["sources"][source]
    assert line["lines"] == line["events"] + line["other"] + line["problems"] + line["blank"]
    assert summary["pairs"] == len(expected) == line["events"] + line["problems"]


def test_a_broken_chain_and_a_missing_summary_are_one_input_error_row_each(tmp_path: Path) -> None:
    path = FIXTURE_ROOT / "claude-code" / "22222222-2222-4222-8222-222222222222.jsonl"
    out = tmp_path / "out"
    _audit(path.relative_to(REPO), "--out", out, "--no-mutate", "--fail-on", "none")
    errors = _rows(out).filter(pl.col("status") == "input_error").sort("source_row")
    shown = str(path.relative_to(REPO))
    assert errors["input_error"].to_list() == [
        f"{shown} line 11: after: the compact summary of the boundary at line 11 was never written"
        " (no isCompactSummary entry names it, and no summarizer transcript holds it:"
        " anthropics/claude-code#43053)",
        f"{shown} line 14: before: the parentUuid chain breaks at line 12: it names"
        " 's-never-written', which no earlier line of the file is",
        f"{shown} line 16: is not JSON: invalid JSON: Expecting property name enclosed in double"
        " quotes (line 1, column 2)",
        f"{shown} line 17: before: the parentUuid chain breaks at line 17: it names 'zz-nowhere',"
        " which no earlier line of the file is",
    ]
    assert errors["pair_id"].to_list()[:2] == ["22222222-2222-4222-8222-222222222222:2",
                                               "22222222-2222-4222-8222-222222222222:3"]
    assert set(errors["source_kind"]) == {"claude-code"}


def test_a_zstd_rollout_audits_as_the_plain_one(tmp_path: Path) -> None:
    plain = FIXTURE_ROOT / "codex" / FIXTURES["codex"][0]
    packed = FIXTURE_ROOT / "codex" / "archived_sessions" / f"{plain.name}.zst"
    frames = []
    for number, path in enumerate((plain, packed)):
        out = tmp_path / f"out-{number}"
        _audit(path, "--out", out, "--run-id", "night")
        frames.append(_rows(out).select(VERDICT, "source_row", "record_sha256"))
    assert frames[0].height == 2
    assert_frame_equal(frames[0], frames[1])


# --------------------------------------------------------------------------- pairs ↔ audit


def _comparable(out: Path, via: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The rows of a run, the place a pairs file read them from taken off the reasons."""
    pairs = _rows(out)
    reason = pl.col("input_error")
    if via is not None:
        reason = reason.str.replace(rf"^{re.escape(via)} line \d+: ", "")
    pairs = pairs.sort("pair_id").select(*VERDICT, reason)
    findings = _rows(out, "findings").select(FINDING).sort(FINDING, nulls_last=True)
    mutants = _rows(out, "mutants").drop("run_id", "log_date").sort(
        "pair_id", "operator", "message_index", nulls_last=True)
    return pairs, findings, mutants


def test_pairs_then_audit_gives_the_rows_of_auditing_the_logs(tmp_path: Path) -> None:
    written = tmp_path / "pairs.jsonl"
    said = run_cli("pairs", "tests/data/agent_logs", "-o", written, expect=2)  # it holds traps
    assert said.stdout == (f"wrote 14 pair(s) and 7 input error(s) from 7 file(s) to {written}\n")
    contract = CONTRACTS / "claude-code.yaml"
    _audit("tests/data/agent_logs", "--contract", contract, "--out", tmp_path / "direct",
           "--fail-on", "none")
    _audit(written, "--contract", contract, "--out", tmp_path / "kept", "--fail-on", "none")
    direct = _comparable(tmp_path / "direct")
    kept = _comparable(tmp_path / "kept", via=str(written))
    assert direct[0].height == 21 and direct[1].height > 0 and direct[2].height > 0
    for mine, theirs in zip(direct, kept, strict=True):
        assert_frame_equal(mine, theirs)


def test_pairs_shows_the_compactions_in_a_real_process() -> None:
    shown = run_cli("pairs", "examples/agent-logs/claude-code", real=True)
    lines = shown.stdout.splitlines()
    assert lines[0].endswith("6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f.jsonl (claude-code): 22"
                             " line(s), 1 pair(s)")
    assert lines[1].split() == ["pair", "line", "event", "trigger", "messages", "tokens",
                                "fidelity", "compactor"]
    assert lines[2].split() == ["6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f:1", "20", "summarize",
                                "manual", "10", "→", "2", "9,000", "→", "-", "replayed",
                                "claude-code/manual"]
    assert lines[-1] == "1 pair(s), 0 input error(s) in 1 file(s)"
    as_json = json.loads(run_cli("pairs", "examples/agent-logs", "--format", "json").stdout)
    assert [len(file["pairs"]) for file in as_json["files"]] == [1, 1, 1]
    assert all("before" not in row for file in as_json["files"] for row in file["pairs"])


def test_pairs_of_a_request_log_shows_every_transition_and_its_classification(
        tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"".join(_span(n, messages, answer) + b"\n" for n, messages, answer in (
        (1, [("user", "q1")], "a1"),
        (2, [("user", "q1"), ("assistant", "a1"), ("user", "q2")], "a2"),
        (3, [("user", "q2"), ("assistant", "a2"), ("user", "q3")], "a3"))))
    shown = run_cli("pairs", "--source", "otel", path).stdout.splitlines()
    assert shown[0] == f"{path} (otel): 3 line(s), 1 pair(s) from 3 model call(s)"
    assert shown[3] == "  lineage conv-1 (by gen_ai.conversation.id): append 1 · truncate 1"
    assert [line.split()[:4] for line in shown[4:7]] == [
        ["line", "1", "main", "-"], ["line", "2", "main", "append"],
        ["line", "3", "main", "truncate"]]
    assert shown[6].endswith("→ pair conv-1:1")
    summary = _audit(path, "--out", tmp_path / "out", "--no-mutate")
    assert summary["sources"]["otel"]["classifications"]["truncate"] == 1
    assert summary["lineages"] == [{"source": str(path), "session_id": "conv-1",
                                    "grouped_by": "gen_ai.conversation.id",
                                    "counts": {"append": 1, "summarize": 0, "truncate": 1,
                                               "clear": 0, "rewind": 0, "stateful": 0,
                                               "unrelated": 0}}]
    [row] = _rows(tmp_path / "out").to_dicts()
    assert (row["classification"], row["fidelity"], row["source_row"]) == ("truncate", "diffed", 3)
    assert row["evidence"] is not None and "diffed against the call of row 2" in row["evidence"]


def _span(n: int, messages: list[tuple[str, str]], answer: str) -> bytes:
    def text(role: str, content: str) -> dict[str, Any]:
        return {"role": role, "parts": [{"type": "text", "content": content}]}

    attributes = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "conv-1",
                  "gen_ai.input.messages": json.dumps([text(*m) for m in messages]),
                  "gen_ai.output.messages": json.dumps([text("assistant", answer)])}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": f"{n:016x}", "name": "chat m",
        "startTimeUnixNano": str(n), "attributes": [
            {"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]}]}]}]}).encode()


# --------------------------------------------------------------------------- auto, per file


def _mixed_folder(root: Path) -> Path:
    logs = root / "logs"
    (logs / "codex").mkdir(parents=True)
    (logs / "claude").mkdir()
    shutil.copy(FIXTURE_ROOT / "codex" / FIXTURES["codex"][0], logs / "codex")
    shutil.copy(FIXTURE_ROOT / "claude-code" / FIXTURES["claude-code"][0], logs / "claude")
    records = (EXAMPLES / "corpus" / "2025-06-02" / "compactions.jsonl").read_bytes().splitlines(True)
    (logs / "pairs.jsonl").write_bytes(b"".join(records[:5]))
    return logs


def test_auto_decides_per_file_in_a_mixed_folder(tmp_path: Path) -> None:
    logs = _mixed_folder(tmp_path)
    out = tmp_path / "out"
    summary = _audit(logs, "--out", out, "--no-mutate", "--fail-on", "none")
    rows = _rows(out)
    by_file = {Path(source).name: sorted(set(kinds)) for source, kinds in
               rows.group_by("source").agg("source_kind").iter_rows()}
    assert by_file == {FIXTURES["codex"][0]: ["codex"], FIXTURES["claude-code"][0]: ["claude-code"],
                       "pairs.jsonl": ["pairs"]}
    assert summary["sources"]["pairs"]["files"] == 1 and summary["sources"]["pairs"]["lines"] == 5
    assert summary["input_errors"] == 0


def test_a_file_with_evidence_of_two_sources_is_refused_naming_both(tmp_path: Path) -> None:
    logs = _mixed_folder(tmp_path)
    both = {"type": "response_item", "payload": {"type": "message"}, "before": [], "after": []}
    (logs / "both.jsonl").write_text(json.dumps(both) + "\n" + json.dumps(both) + "\n")
    out = tmp_path / "out"
    summary = _audit(logs, "--out", out, "--no-mutate", "--fail-on", "none")
    refused = _rows(out).filter(pl.col("source").str.ends_with("both.jsonl"))
    [reason] = refused["input_error"].to_list()
    assert reason == (
        f"{logs / 'both.jsonl'} line 1: cannot tell the source of this file: line 1 is a pair"
        " record (before and after) (pairs) but line 1 is a Codex rollout line (type"
        " 'response_item' with a payload) (codex). Name the source (--source pairs|codex|"
        "claude-code|gemini-cli|langgraph|otel|langfuse|langsmith)")
    assert refused["source_kind"].to_list() == [None]
    assert summary["input_errors"] == 1 and summary["passed"] + summary["failed"] == 5 + 2 + 3
    listing = run_cli("pairs", logs / "both.jsonl", expect=2)
    assert "input error: cannot tell the source of this file" in listing.stdout


def test_files_whose_names_say_they_are_no_session_are_left_out_and_said_once(
        tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE_ROOT / "claude-code", logs / "claude-code",
                    ignore=shutil.ignore_patterns("*.expected.json"))
    legacy = logs / "gemini" / "chats"
    legacy.mkdir(parents=True)
    for name in ("session-2026-03-01T10-00-b1f00000.json", "session-2026-03-02T10-00-b1f00001.json"):
        (legacy / name).write_text('{"sessionId": "x", "messages": []}')
    (legacy / "logs.json").write_text("[]")  # no session file of any agent: not an input at all
    result = run_cli("audit", logs, "--out", tmp_path / "out", "-j", "1", "--no-mutate",
                     "--fail-on", "none")
    notes = result.stdout.split("Notes:\n", 1)[1].splitlines()
    assert notes[0] == (
        "  1 file(s) left out, summarizer transcript (agent-acompact-*): not a session; read for"
        f" a summary its session file lacks: {logs}/claude-code/33333333-3333-4333-8333-"
        "333333333333/subagents/agent-acompact-7f.jsonl")
    assert notes[1] == (
        "  2 file(s) left out, old Gemini CLI session files (session-*.json, before 2026-04)"
        f" record no compression: nothing in them to audit: {legacy}/session-2026-03-01T10-00-"
        "b1f00000.json and 1 more")
    rows = _rows(tmp_path / "out")
    assert not rows["source"].str.contains("acompact|gemini").any()
    # the summarizer's transcript is still read for the summary its session lacks
    assert rows.filter(pl.col("session_id") == "33333333-3333-4333-8333-333333333333")[
        "fidelity"].to_list() == ["rebuilt", "replayed"]


def test_sessions_that_never_compacted_are_read_not_nothing_audited(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    lines = (LOGS / "claude-code" / "projects" / "-home-dev-shop" /
             "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f.jsonl").read_text().splitlines(True)
    path.write_text("".join(line for line in lines if "compact" not in line.lower()))
    result = run_cli("audit", path, "--out", tmp_path / "out", "-j", "1")
    assert "claude-code 1 file(s), 20 line(s): 0 with a compaction, 20 other, 0 bad" in result.stdout
    assert result.stdout.rstrip().endswith("PASS")


# --------------------------------------------------------------------------- incremental


def test_an_incremental_night_audits_exactly_the_compactions_a_session_gained(
        tmp_path: Path) -> None:
    source = FIXTURE_ROOT / "claude-code" / FIXTURES["claude-code"][0]  # markers at 18, 23, 25
    lines = source.read_bytes().splitlines(True)
    path = tmp_path / "logs" / source.name
    path.parent.mkdir()
    out = tmp_path / "out"
    whole = tmp_path / "whole"
    _audit(source, "--out", whole, "--run-id", "whole", "--no-mutate", "--fail-on", "none")
    expected = {row["source_row"]: row for row in _rows(whole).select(VERDICT, "source_row").to_dicts()}
    late = b'{"type": "file-history-snapshot", "messageId": "m-late", "snapshot": {}}\n'
    # night 2 ends while a line is being written (it waits for its newline); night 3 has it
    nights = ((lines[:20], [18]), ([*lines, late[:30]], [23, 25]), ([*lines, late], []))
    for night, (written, audited) in enumerate(nights, 1):
        path.write_bytes(b"".join(written))
        summary = _audit(path.parent, "--out", out, "--run-id", f"night-{night}", "--incremental",
                         "--no-mutate", "--fail-on", "none")
        rows = read_table(out, "pairs").filter(pl.col("run_id") == f"night-{night}").collect()
        assert sorted(rows["source_row"]) == audited, night
        for row in rows.select(VERDICT, "source_row").to_dicts():
            assert row == expected[row["source_row"]]
        assert summary["exit_code"] == 0
        held = [item["line"] for item in summary["incremental"]["held_back"]]
        assert held == ([29] if night == 2 else [])
    assert _rows(out)["pair_id"].to_list() == [f"{source.stem}:{n}" for n in (1, 2, 3)]


# --------------------------------------------------------------------------- generated sessions


WRITERS = {"codex": agent_logs.as_codex, "claude-code": agent_logs.as_claude_code,
           "gemini-cli": agent_logs.as_gemini_cli}


def _session_id(agent: str, number: int) -> str:
    return {"codex": f"0199a1b2-0000-7000-8000-{number:012d}",
            "claude-code": f"11111111-2222-4333-8444-{number:012d}",
            "gemini-cli": f"b1f00000-1111-4222-8333-{number:012d}"}[agent]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(cases=st.lists(st.tuples(strategies.mutation_cases(), st.sampled_from(sorted(WRITERS))),
                      min_size=1, max_size=4), contract=strategies.contract_documents())
def test_generated_sessions_audit_to_the_verdicts_of_their_plain_pairs(
        cases: list[tuple[small.MutationCase, str]], contract: dict[str, Any],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("generated")
    (root / "logs").mkdir()
    (root / "plain").mkdir()
    (root / "contract.yaml").write_text(small.to_yaml(contract), encoding="utf-8")
    plain: list[str] = []
    for number, ((before, after, _), agent) in enumerate(cases):
        session = _session_id(agent, number)
        written = WRITERS[agent](before, after, session)
        if written is None:
            continue
        (root / "logs" / f"{agent}-{number}.jsonl").write_text(
            "".join(line + "\n" for line in written.lines), encoding="utf-8")
        plain.append(json.dumps({"pair_id": f"{session}:1", "session_id": session,
                                 "format": written.format, "before": written.before,
                                 "after": written.after}))
    assume(plain)
    (root / "plain" / "pairs.jsonl").write_text("".join(line + "\n" for line in plain))
    frames = []
    for name in ("logs", "plain"):
        _audit(root / name, "--contract", root / "contract.yaml", "--out", root / f"out-{name}",
               "--no-mutate", "--fail-on", "none")
        pairs = _rows(root / f"out-{name}").sort("pair_id").select(
            "pair_id", "session_id", "format", "status", "errors", "warnings", "messages_before",
            "messages_after", "input_error")
        findings = _rows(root / f"out-{name}", "findings").select(
            "pair_id", "check", "code", "severity", "snapshot", "message_index",
            "tool_call_id").sort("pair_id", "check", "code", "snapshot", "message_index",
                                 "tool_call_id", nulls_last=True)
        frames.append((pairs, findings))
    assert frames[0][0]["input_error"].null_count() == len(plain)
    assert_frame_equal(frames[0][0], frames[1][0])
    assert_frame_equal(frames[0][1], frames[1][1])
