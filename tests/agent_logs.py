"""Agent session fixtures (`tests/data/agent_logs/<agent>/`) and their derived rows as JSON.

Each session fixture `X.jsonl` has `X.expected.json`: the counts and every row its source
derives, field by field (before and after in full), written once from a reviewed run and
compared exactly by `tests/test_sources.py`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from frayproof_audit.sources import Compaction, Derived, derive, file_siblings, open_lines

ROOT = Path(__file__).resolve().parent / "data" / "agent_logs"
FIXTURES = {
    "codex": ["rollout-2026-08-01T10-00-00-0199a1b2-0000-7000-8000-000000000001.jsonl",
              "rollout-2025-10-02T09-30-00-0199a1b2-0000-7000-8000-000000000002.jsonl"],
    "claude-code": ["11111111-1111-4111-8111-111111111111.jsonl",
                    "22222222-2222-4222-8222-222222222222.jsonl",
                    "33333333-3333-4333-8333-333333333333.jsonl"],
    "gemini-cli": ["session-2026-08-01T10-00-b1f00000.jsonl"],
}


def derived(source: str, path: Path) -> Derived:
    return derive(source, path.name, open_lines(path), file_siblings(path))


def as_json(found: Derived) -> dict[str, Any]:
    rows = []
    for row in found.rows:
        fields = asdict(row)
        fields["kind"] = "compaction" if isinstance(row, Compaction) else "line_problem"
        if isinstance(row, Compaction):
            fields["notes"] = list(row.notes)
            if row.diff is None:  # only request-log (diffed) rows have one
                del fields["diff"]
        rows.append(fields)
    counts = asdict(found.counts)
    if not counts["calls"]:  # only request logs count model calls
        del counts["calls"]
    return {"counts": counts, "notes": list(found.notes), "rows": rows}


def expected_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".jsonl") + ".expected.json")
