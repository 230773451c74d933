"""Sniffing a file's source (`--source auto`) parses its first lines once, whichever sources
ask (`sources.base.SniffedHead`), and gives the same evidence as each source reading the
lines itself; reading the head counts its newlines chunk by chunk (`head_lines`)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from frayproof_audit.corpus.inputs.expansion import expand_inputs
from frayproof_audit.corpus.inputs.shard_reader import head_lines
from frayproof_audit.sources import SNIFF_LINES, SOURCES, evidence, open_lines, pairs_evidence
from frayproof_audit.sources import base as sources_base
from tests.corpus_support import good_lines, write_jsonl
from tests.helpers import EXAMPLES, REPO

SESSION_FILES = sorted(p for p in (REPO / "tests" / "data" / "agent_logs").rglob("*.jsonl")
                       if "subagents" not in p.parts)
EXAMPLE_FILES = sorted((EXAMPLES / "agent-logs").rglob("*.jsonl"))


def _each_source_on_its_own(lines: list[bytes]) -> dict[str, str]:
    """The evidence as it was gathered before: every source handed a plain list of its own."""
    found: dict[str, str] = {}
    seen = pairs_evidence(list(lines))
    if seen is not None:
        found["pairs"] = seen
    for name, source in SOURCES.items():
        seen = source.sniff(list(lines))
        if seen is not None:
            found[name] = seen
    return found


@pytest.mark.parametrize("path", SESSION_FILES + EXAMPLE_FILES, ids=lambda p: p.name)
def test_the_evidence_is_what_each_source_finds_on_its_own(path: Path) -> None:
    lines = list(itertools.islice(open_lines(path), SNIFF_LINES))
    found = evidence(lines)
    assert found == _each_source_on_its_own(lines)


def test_a_pair_file_head_is_parsed_once_for_every_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_jsonl(tmp_path / "pairs.jsonl", good_lines(12))
    lines = list(itertools.islice(open_lines(path), SNIFF_LINES))
    parses: list[int] = []
    real = sources_base.loads_strict

    def counted(data: bytes) -> object:
        parses.append(len(data))
        return real(data)

    monkeypatch.setattr(sources_base, "loads_strict", counted)
    assert list(evidence(lines)) == ["pairs"]
    assert len(parses) == SNIFF_LINES  # once per head line, not once per source
    assert len(_each_source_on_its_own(lines)) == 1 and len(parses) > 2 * SNIFF_LINES


@pytest.mark.parametrize("line_bytes", [10, 70_000, 300_000])
def test_head_lines_stops_at_the_count_or_the_budget(tmp_path: Path, line_bytes: int) -> None:
    lines = [b'{"x": "' + b"a" * line_bytes + b'", "n": %d}\n' % n for n in range(20)]
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"".join(lines))
    (file,) = expand_inputs([str(path)]).files
    assert head_lines(file, 8, 64 * 1024 * 1024) == lines[:8]
    budget = 3 * len(lines[0]) + 5  # the fourth line is cut by the budget: left out
    assert head_lines(file, 8, budget) == lines[:3]
