"""Adding a log source is one module and one registry line, shown by doing it.

A throwaway agent's log ("toy": a session line, message lines, and a compaction line that keeps
the last N messages) is read by a `Source` written into a temporary module at test time and
registered by one line, `SOURCES` gaining its entry. Nothing else is touched: `--source` on
`audit`, `pairs` and `inspect` offers it, `auto` detects its files by its evidence, `audit`
judges each compaction as one `pairs` row with its provenance, and `pairs -o` writes records
that `audit` reads back to the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from frayproof_audit import sources
from frayproof_audit.corpus import read_table
from tests.helpers import load_module, run_cli

NAME = "toy-agent"
MODULE = '''"""A throwaway agent's log: `{"toy": "message", ...}` lines and `{"toy": "compact"}` lines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import Any

from frayproof_audit.sources.base import (
    Compaction, Derived, FileRole, Line, Row, Siblings, Source, Tally, first_objects, parsed)


def sniff(lines: Sequence[Line]) -> str | None:
    for row, value in first_objects(lines):
        if value.get("toy") == "session":
            return f"line {row} is a toy session line"
    return None


def derive(label: str, lines: Iterable[Line], siblings: Siblings | None) -> Derived:
    tally = Tally()
    history: list[Any] = []
    session = "toy"
    rows: list[Row] = []
    for row, value in parsed(lines, tally):
        if not isinstance(value, dict):
            rows.append(value)
            continue
        kind = value.get("toy")
        if kind == "session":
            session = str(value["id"])
            tally.other += 1
        elif kind == "message":
            history.append(value["message"])
            tally.other += 1
        elif kind == "compact":
            tally.events += 1
            after = history[-int(value["keep"]):]
            rows.append(Compaction(row, tally.events, session, value.get("at"), "toy/keep-last",
                                   "openai", "summarize", "explicit", list(history), list(after)))
            history = list(after)
        else:
            tally.other += 1
    return Derived(tuple(rows), tally.frozen())


def role(path: PurePath) -> FileRole | None:
    return FileRole("session") if path.name.startswith("toy-") else None


def history(lines: Iterable[Line]) -> list[Any]:
    current: list[Any] = []
    for _, value in parsed(lines, Tally()):
        if isinstance(value, dict) and value.get("toy") == "message":
            current.append(value["message"])
        elif isinstance(value, dict) and value.get("toy") == "compact":
            current = current[-int(value["keep"]):]
    return current


SOURCE = Source(name="toy-agent", format="openai", sniff=sniff, derive=derive, role=role,
                history=history)
'''

SYSTEM = {"role": "system", "content": "Never write to production."}
USER = {"role": "user", "content": "What is the weather in Paris?"}
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
ANSWER = {"role": "assistant", "content": "Sunny."}
LATER = {"role": "user", "content": "And tomorrow?"}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    module = load_module(tmp_path / "toy_agent_source.py", MODULE)
    monkeypatch.setitem(sources.SOURCES, NAME, module.SOURCE)  # the one registry line
    yield module


def write_log(folder: Path) -> Path:
    """Two compactions: the first keeps the last 3 messages (the result whose call it cut off
    is stranded), the second keeps the last 2 (a clean cut after the answer)."""
    lines = [{"toy": "session", "id": "toy-session-1"}]
    lines += [{"toy": "message", "message": m} for m in (SYSTEM, USER, CALL, RESULT, ANSWER)]
    lines += [{"toy": "compact", "at": "2026-08-01T10:00:00Z", "keep": 2},
              {"toy": "message", "message": LATER},
              {"toy": "compact", "at": "2026-08-01T11:00:00Z", "keep": 1}]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "toy-session-1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


CONTRACT = "version: 1\nchecks:\n  tool_pairs: true\n"


def test_the_registry_line_is_all_it_takes(toy: ModuleType, tmp_path: Path) -> None:
    log = write_log(tmp_path / "logs")
    (tmp_path / "c.yaml").write_text(CONTRACT, encoding="utf-8")
    assert NAME in sources.source_names()
    assert NAME in run_cli("audit", "--help").stdout  # --source offers it, read when asked

    listed = run_cli("pairs", tmp_path / "logs", expect=0).stdout  # auto: by its evidence
    assert f"({NAME})" in listed and "toy-session-1:1" in listed and "toy-session-1:2" in listed

    for source in ("auto", NAME):
        out = tmp_path / f"out-{source}"
        run_cli("audit", tmp_path / "logs", "--source", source, "--contract", tmp_path / "c.yaml",
                "--out", out, "--no-mutate", "--jobs", "1", "-q", expect=1)
        pairs = read_table(out, "pairs").sort("pair_id").collect()
        assert pairs["pair_id"].to_list() == ["toy-session-1:1", "toy-session-1:2"]
        assert pairs["source_kind"].to_list() == [NAME, NAME]
        assert pairs["compactor"].to_list() == ["toy/keep-last", "toy/keep-last"]
        assert pairs["source_row"].to_list() == [7, 9]
        assert pairs["status"].to_list() == ["fail", "pass"]  # the stranded result; the clean cut
        codes = read_table(out, "findings").collect()["code"].to_list()
        assert codes == ["TP-ORPHAN"]

    written = tmp_path / "pairs.jsonl"
    run_cli("pairs", log, "-o", written, expect=0)
    again = tmp_path / "again"
    run_cli("audit", written, "--contract", tmp_path / "c.yaml", "--out", again, "--no-mutate",
            "--jobs", "1", "-q", expect=1)
    # source and source_row: the file read, here pairs.jsonl
    columns = ["pair_id", "status", "source_kind", "compactor", "logged_at", "fidelity", "event"]
    assert read_table(again, "pairs").sort("pair_id").select(columns).collect().equals(
        read_table(tmp_path / f"out-{NAME}", "pairs").sort("pair_id").select(columns).collect())

    # inspect reads the file as its next request: [LATER] alone, one user message, valid
    inspected = json.loads(run_cli("inspect", log, "--format", "json", expect=0).stdout)
    assert [(i["format"], i["messages"], i["valid"]) for i in inspected["inputs"]] == [
        ("openai", 1, True)]


def test_without_the_line_the_file_is_no_log(tmp_path: Path) -> None:
    write_log(tmp_path / "logs")
    assert NAME not in sources.source_names()
    listed = run_cli("pairs", tmp_path / "logs", expect=2).stdout
    assert "pair records" in listed and "toy-session-1:1" not in listed
