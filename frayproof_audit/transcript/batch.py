"""The transcript commands over files, folders and JSONL: each reads its inputs the same way
(`sources.read_entries`), goes on past a bad one, and returns one object that owns the
verdict, the exit code and the renderings, so the CLI only prints.

Exit codes, the same for every command: 1 a FATAL defect (inspect), an irreparable transcript
(repair) or a refused compaction (compact), whatever else happened; else 2 when an input could
not be read, or nothing was; else 0. A run where every input was skipped is never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.report import EXIT_FAIL, EXIT_INPUT_ERROR, EXIT_PASS
from frayproof_audit.transcript.compact import (
    DEFAULT_KEEP,
    CompactionRefused,
    CompactionResult,
    compact,
)
from frayproof_audit.transcript.inspection import Inspection, inspect
from frayproof_audit.transcript.loading import DEFAULT_FORMAT
from frayproof_audit.transcript.repair import INTERRUPTED, IrreparableError, RepairResult, repair
from frayproof_audit.transcript.sources import AUTO, Entry, one_file, read_entries, shown_path
from frayproof_audit.transcript.tokens import TokenCounter, approximate_tokens

Paths = tuple[str, ...] | list[str]
"""Files (`.json`: one transcript; `.jsonl`: one per line) and folders, in order."""


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


def inspect_paths(paths: Paths, fmt: str | None = None, profile: str | None = None,
                  source: str = AUTO) -> InspectRun:
    """Inspect every transcript in `paths` (files, folders, JSONL) in format `fmt` (a JSONL
    record's own `format` wins; default `auto`), judged by the provider `profile` (default:
    the one for each transcript's format). An agent's session file (`source`: `auto` by its
    evidence, or a source's name) is its current model-visible history: is the next request
    valid?"""
    items: list[Inspected] = []
    for entry in read_entries(paths, source):
        if entry.problem is not None:
            items.append(Inspected(entry.label, problem=entry.problem))
            continue
        try:
            items.append(Inspected(entry.label, inspect(entry.value, _format(entry, fmt), profile)))
        except InputError as exc:
            items.append(Inspected(entry.label, problem=str(exc)))
    return InspectRun(tuple(items))


# --------------------------------------------------------------------------- repair, compact

CHANGED = "changed"
UNCHANGED = "unchanged"
REFUSED = "refused"
SKIPPED = "skipped"
STATUSES = (CHANGED, UNCHANGED, REFUSED, SKIPPED)


@dataclass(frozen=True, slots=True)
class Edited:
    """One transcript's repair or compaction: its result, or why there is none."""

    entry: Entry
    result: RepairResult | CompactionResult | None = None
    refused: str | None = None
    """Why no repair or compaction may be returned (irreparable; no cut fits)."""
    problem: str | None = None
    """Why it could not be read."""

    @property
    def label(self) -> str:
        return self.entry.label

    @property
    def status(self) -> str:
        if self.result is not None:
            return CHANGED if self.result.changed else UNCHANGED
        return REFUSED if self.refused is not None else SKIPPED

    def to_line(self) -> dict[str, Any]:
        """Its JSONL output line: where it came from (`source`, as `shown_path` spells it), and
        the new transcript (`after`, as in a corpus record, so the line reads back as one) or
        the reason there is none."""
        result = self.result
        return {"source": shown_path(self.entry.path), "line": self.entry.line,
                "pair_id": self.entry.pair_id, "status": self.status,
                "format": None if result is None else _result_format(result),
                "after": None if result is None else result.transcript,
                "reason": self.refused or self.problem}


def _result_format(result: RepairResult | CompactionResult) -> str:
    return result.before.format if isinstance(result, RepairResult) else result.format


@dataclass(frozen=True, slots=True)
class EditRun:
    """`repair PATH...` or `compact PATH...`: every transcript's outcome, in input order, the
    output to write, and the run's exit code."""

    items: tuple[Edited, ...]
    single: bool
    """The input was one `.json` file: the output is its transcript, not JSONL."""

    def count(self, status: str) -> int:
        return sum(item.status == status for item in self.items)

    @property
    def exit_code(self) -> int:
        if self.count(REFUSED):
            return EXIT_FAIL
        done = self.count(CHANGED) + self.count(UNCHANGED)
        return EXIT_INPUT_ERROR if self.count(SKIPPED) or not done else EXIT_PASS

    def payload(self) -> str | None:
        """The output's text, None when there is nothing to write. One `.json` file in: its
        new transcript as indented JSON (nothing when it was refused or unreadable). Anything
        else: one JSONL line per transcript (`Edited.to_line`), refused and skipped ones too."""
        if self.single:
            result = self.items[0].result if self.items else None
            if result is None:
                return None
            return json.dumps(result.transcript, ensure_ascii=False, indent=2) + "\n"
        return "".join(json.dumps(item.to_line(), ensure_ascii=False, separators=(",", ":"))
                       + "\n" for item in self.items) or None

    def problems(self) -> list[str]:
        """One diagnostic line per transcript that was refused or skipped."""
        return [f"skip  {item.label}: {item.problem}" if item.problem is not None
                else f"{item.label}: {item.refused}"
                for item in self.items if item.result is None]

    def summary(self) -> str:
        return ", ".join(f"{self.count(status)} {status}" for status in STATUSES)

    def to_text(self) -> str:
        lines = [f"{item.label}: {item.result.to_text()}" for item in self.items
                 if item.result is not None]
        if not self.single:
            lines.append(self.summary())
        return "\n".join(lines)

    def to_json(self) -> str:
        items = [{"input": item.label, "status": item.status, **item.result.to_dict()}
                 if item.result is not None else
                 {"input": item.label, "status": item.status,
                  "reason": item.refused or item.problem} for item in self.items]
        counts = {status: self.count(status) for status in STATUSES}
        return json.dumps({**counts, "inputs": items}, indent=2, ensure_ascii=False)


def _run(paths: Paths, action: Callable[[Entry], RepairResult | CompactionResult],
         source: str = AUTO) -> EditRun:
    items: list[Edited] = []
    for entry in read_entries(paths, source):
        if entry.problem is not None:
            items.append(Edited(entry, problem=entry.problem))
            continue
        try:
            items.append(Edited(entry, action(entry)))
        except IrreparableError as exc:
            items.append(Edited(entry, refused=str(exc)))
        except CompactionRefused as exc:
            items.append(Edited(entry, refused=f"refused: {exc.reason}"))
        except InputError as exc:
            items.append(Edited(entry, problem=str(exc)))
    return EditRun(tuple(items), one_file(paths))


def repair_paths(paths: Paths, fmt: str | None = None, *, placeholder: str = INTERRUPTED,
                 profile: str | None = None, source: str = AUTO) -> EditRun:
    """Repair every transcript in `paths` (files, folders, JSONL, session files; read as
    `inspect_paths` reads them), judged by the provider `profile` (default: the format's)."""
    return _run(paths, lambda entry: repair(entry.value, _format(entry, fmt),
                                            placeholder=placeholder, profile=profile), source)


def compact_paths(paths: Paths, max_tokens: int, fmt: str | None = None, *,
                  keep: int = DEFAULT_KEEP, counter: TokenCounter = approximate_tokens,
                  profile: str | None = None, source: str = AUTO) -> EditRun:
    """Compact every transcript in `paths` (files, folders, JSONL, session files) to
    `max_tokens`."""
    return _run(paths, lambda entry: compact(entry.value, _format(entry, fmt),
                                             max_tokens=max_tokens, keep=keep, counter=counter,
                                             profile=profile), source)
