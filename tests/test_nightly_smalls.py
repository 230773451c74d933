"""The smaller items of issue 27 (item 7 / problem 8), through the real CLI: `inspect`,
`repair` and `compact` read a user's own log layout (`--field`, `--config`), `--repair-out`
says what it wrote, JUnit lists no suite for a check never enabled, GitLab Code Quality output
beside JUnit, the Makefile's and README's install paths."""

from __future__ import annotations

import json
from pathlib import Path

from tests.corpus_support import line, record, write_contract, write_jsonl
from tests.helpers import REPO, run_cli


def _own_layout(folder: Path) -> Path:
    """Records that keep the compacted transcript at `response.messages`, the id at `trace.id`:
    two broken by dropping a tool result, one fine."""
    records = []
    for index, compactor in enumerate(("drop_result", "keep_all", "drop_result")):
        rec = record(index, compactor)
        records.append({"trace": {"id": rec["pair_id"]}, "response": {"messages": rec["after"]}})
    return write_jsonl(folder / "own.jsonl", [line(rec) for rec in records])


def test_inspect_repair_and_compact_read_a_mapped_layout(tmp_path: Path) -> None:
    logs = _own_layout(tmp_path)
    unmapped = run_cli("inspect", logs, expect=2)
    assert "Cannot tell the input format" in unmapped.stdout + unmapped.stderr
    mapped = ("--field", "after=response.messages", "--field", "pair_id=trace.id")
    inspected = run_cli("inspect", logs, *mapped, "--format", "json", expect=1, real=True)
    report = json.loads(inspected.stdout)
    assert (report["checked"], report["invalid"], report["skipped"]) == (3, 2, 0)
    config = tmp_path / "map.yaml"
    config.write_text("fields:\n  after: response.messages\n  pair_id: trace.id\n", encoding="utf-8")
    repaired = run_cli("repair", logs, "--config", config, "-o", tmp_path / "fixed.jsonl")
    lines = [json.loads(text) for text in (tmp_path / "fixed.jsonl").read_text().splitlines()]
    assert [(row["pair_id"], row["status"]) for row in lines] == [
        ("p0000", "changed"), ("p0001", "unchanged"), ("p0002", "changed")]
    assert "changed" in repaired.stdout
    again = run_cli("inspect", tmp_path / "fixed.jsonl", expect=0)  # the output reads back as is
    assert json.loads(run_cli("inspect", tmp_path / "fixed.jsonl", "--format", "json").stdout)[
        "invalid"] == 0 and again.exit_code == 0
    compacted = run_cli("compact", logs, *mapped, "--max-tokens", "100000", expect=1, real=True)
    rows = [json.loads(text) for text in compacted.stdout.splitlines()]
    assert [(row["pair_id"], row["status"]) for row in rows] == [
        ("p0000", "refused"), ("p0001", "unchanged"), ("p0002", "refused")]
    assert "already invalid (dangling_call): repair it first" in rows[0]["reason"]


def test_a_mapped_after_no_record_has_is_named_per_record(tmp_path: Path) -> None:
    logs = _own_layout(tmp_path)
    done = run_cli("inspect", logs, "--field", "after=response.mesages", expect=2)
    assert ("no transcript at `response.mesages` (--field after=response.mesages); the record has"
            " top-level keys: response, trace") in done.stdout + done.stderr
    bad = run_cli("repair", logs, "--field", "nope=x", expect=2)
    assert "unknown field 'nope'" in bad.stderr
