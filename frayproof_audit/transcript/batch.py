"""The transcript commands' results over files: one object per command owns its verdict,
its exit code and its renderings, so the CLI only prints.

Exit codes: 0 every transcript is valid (WASTEFUL defects only warn) / repaired / compacted;
1 a FATAL defect, an irreparable transcript or a refused compaction; 2 an input that could not
be read. A run where nothing could be read is never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from frayproof_audit.errors import InputError
from frayproof_audit.report import EXIT_FAIL, EXIT_INPUT_ERROR, EXIT_PASS
from frayproof_audit.transcript.compact import CompactionRefused, CompactionResult, compact
from frayproof_audit.transcript.inspection import Inspection, inspect
from frayproof_audit.transcript.loading import DEFAULT_FORMAT
from frayproof_audit.transcript.repair import INTERRUPTED, IrreparableError, RepairResult, repair
from frayproof_audit.transcript.sources import Entry, read_entries, read_file
from frayproof_audit.transcript.tokens import TokenCounter, approximate_tokens


def _format(entry: Entry, fmt: str | None) -> str:
    return entry.format or fmt or DEFAULT_FORMAT


# --------------------------------------------------------------------------- inspect


@dataclass(frozen=True, slots=True)
class Inspected:
    label: str
    inspection: Inspection | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class InspectRun:
    """`inspect PATH...`: one verdict per transcript, and the run's exit code."""

    items: tuple[Inspected, ...]

    @property
    def checked(self) -> int:
        return sum(item.inspection is not None for item in self.items)

    @property
    def invalid(self) -> int:
        return sum(item.inspection is not None and not item.inspection.valid for item in self.items)

    @property
    def skipped(self) -> int:
        return len(self.items) - self.checked

    @property
    def exit_code(self) -> int:
        if self.invalid:
            return EXIT_FAIL
        return EXIT_INPUT_ERROR if self.skipped or not self.checked else EXIT_PASS

    def problems(self) -> list[str]:
        return [f"skip  {item.label}: {item.problem}" for item in self.items if item.problem]

    def to_text(self) -> str:
        lines: list[str] = []
        for item in self.items:
            found = item.inspection
            if found is None:
                continue
            tag = "FAIL" if not found.valid else "warn" if found.defects else "ok"
            lines.append(f"{tag:<5} {item.label} ({found.messages} messages, {found.format})")
            lines += [f"        {defect.to_text()}" for defect in found.defects]
        lines.append(f"{self.checked} checked, {self.invalid} invalid, {self.skipped} skipped")
        return "\n".join(lines)

    def to_json(self) -> str:
        items = [{"input": item.label, **item.inspection.to_dict()} if item.inspection
                 else {"input": item.label, "skipped": item.problem} for item in self.items]
        return json.dumps({"checked": self.checked, "invalid": self.invalid,
                           "skipped": self.skipped, "inputs": items}, indent=2, ensure_ascii=False)


def inspect_paths(paths: tuple[str, ...] | list[str], fmt: str | None = None) -> InspectRun:
    """Inspect every transcript in `paths` (files, folders, JSONL) in format `fmt` (a JSONL
    record's own `format` wins; default `auto`)."""
    items: list[Inspected] = []
    for entry in read_entries(paths):
        if entry.problem is not None:
            items.append(Inspected(entry.label, problem=entry.problem))
            continue
        try:
            items.append(Inspected(entry.label, inspect(entry.value, _format(entry, fmt))))
        except InputError as exc:
            items.append(Inspected(entry.label, problem=str(exc)))
    return InspectRun(tuple(items))


# --------------------------------------------------------------------------- repair, compact


@dataclass(frozen=True, slots=True)
class Done:
    """One transcript of a file: its result, or why it was left as it was."""

    label: str
    result: RepairResult | CompactionResult | None = None
    refused: str | None = None
    """Irreparable, or no compaction fits: the transcript is passed through unchanged."""
    problem: str | None = None
    """It could not be read."""
    entry: Entry | None = None


@dataclass(frozen=True, slots=True)
class FileRun:
    """`repair F` or `compact F`: the new file's text (None when nothing may be written) and
    an account of every transcript in it."""

    path: str
    items: tuple[Done, ...]
    jsonl: bool

    @property
    def exit_code(self) -> int:
        if any(item.problem for item in self.items) or not self.items:
            return EXIT_INPUT_ERROR
        return EXIT_FAIL if any(item.refused for item in self.items) else EXIT_PASS

    def payload(self) -> str | None:
        """The output file's text: JSON for a `.json` file, one line per transcript for
        JSONL (a corpus record keeps its other fields). None when nothing may be written."""
        if self.exit_code == EXIT_INPUT_ERROR or (not self.jsonl and self.items[0].refused):
            return None
        if not self.jsonl:
            result = self.items[0].result
            assert result is not None
            return json.dumps(result.transcript, ensure_ascii=False, indent=2) + "\n"
        lines = []
        for item in self.items:
            assert item.entry is not None
            value = item.entry.value if item.result is None else item.result.transcript
            record = item.entry.record
            line = value if record is None else {**record, "after": value}
            lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        return "\n".join(lines) + "\n"

    def problems(self) -> list[str]:
        return [f"{item.label}: {item.problem or item.refused}" for item in self.items
                if item.problem or item.refused]

    def to_text(self) -> str:
        lines: list[str] = []
        for item in self.items:
            if item.result is not None:
                lines.append(f"{item.label}: {item.result.to_text()}")
        return "\n".join(lines)

    def to_json(self) -> str:
        found = [{"input": item.label, **item.result.to_dict()} if item.result is not None
                 else {"input": item.label, "refused": item.refused, "problem": item.problem}
                 for item in self.items]
        return json.dumps({"file": self.path, "transcripts": found}, indent=2, ensure_ascii=False)


def _run(path: str, action: Callable[[Entry], RepairResult | CompactionResult]) -> FileRun:
    items: list[Done] = []
    for entry in read_file(path):
        if entry.problem is not None:
            items.append(Done(entry.label, problem=entry.problem, entry=entry))
            continue
        try:
            items.append(Done(entry.label, action(entry), entry=entry))
        except (IrreparableError, CompactionRefused) as exc:
            items.append(Done(entry.label, refused=str(exc), entry=entry))
        except InputError as exc:
            items.append(Done(entry.label, problem=str(exc), entry=entry))
    return FileRun(path, tuple(items), path.endswith(".jsonl"))


def repair_file(path: str, fmt: str | None = None, placeholder: str = INTERRUPTED) -> FileRun:
    """Repair the transcript of a `.json` file, or each one of a `.jsonl` file."""
    return _run(path, lambda entry: repair(entry.value, _format(entry, fmt), placeholder=placeholder))


def compact_file(path: str, max_tokens: int, fmt: str | None = None, keep: int = 2,
                 counter: TokenCounter = approximate_tokens) -> FileRun:
    """Compact the transcript of a `.json` file, or each one of a `.jsonl` file."""
    return _run(path, lambda entry: compact(entry.value, _format(entry, fmt), max_tokens=max_tokens,
                                            keep=keep, counter=counter))


