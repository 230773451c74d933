"""The registered sources: agents' session files, framework state and request logs.

Adding an agent is one module (a `Source`: sniff, derive, role, history) and one line in
`SOURCES`. `detect` decides a file's source from its first lines by evidence and refuses
ambiguity naming each candidate's evidence (`detect_file` for a file that may not be JSON
lines: a checkpoint database, a Parquet export; `read_source` reads it into the lines `derive`
reads); `role_of` says what a path is by its name;
`current_history` is an agent's model-visible history after a whole file (for `inspect`).
The audit's own record shape (`before`/`after` records) is the `pairs` source, which lives
with the corpus reader; `detect` recognizes it too, so `auto` chooses among all of them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import PurePath
from typing import Any

from frayproof_audit.collector import collector_paused
from frayproof_audit.errors import InputError
from frayproof_audit.sources import (
    claude_code,
    codex,
    gemini_cli,
    langfuse,
    langgraph,
    langsmith,
    otel,
)
from frayproof_audit.sources.base import (
    CLASSIFICATIONS,
    EVENTS,
    FIDELITIES,
    TRIGGERS,
    CallRole,
    Classification,
    Compaction,
    Counts,
    Derived,
    Diff,
    Event,
    Fidelity,
    FileRole,
    Line,
    Lineage,
    LineProblem,
    Row,
    Siblings,
    SniffedHead,
    Source,
    Transition,
    Trigger,
    file_siblings,
    first_objects,
    open_lines,
)

SOURCES: dict[str, Source] = {
    source.name: source for source in (codex.SOURCE, claude_code.SOURCE, gemini_cli.SOURCE,
                                       langgraph.SOURCE, otel.SOURCE, langfuse.SOURCE,
                                       langsmith.SOURCE)
}
PAIRS = "pairs"
"""The audit's own records (`before`, `after`, ...): not a session source."""


def source_names() -> tuple[str, ...]:
    """`pairs` and every registered source, read from `SOURCES` when asked (a source
    registered later is offered at once)."""
    return (PAIRS, *SOURCES)

SNIFF_LINES = 8
"""How many first lines `detect` reads (blank and unparsable ones included)."""


class UnknownSource(InputError):
    """A source name no registered source has."""


class AmbiguousSource(InputError):
    """A file whose first lines carry evidence of two sources: `auto` does not guess."""


def get_source(name: str) -> Source:
    found = SOURCES.get(name)
    if found is None:
        raise UnknownSource(f"unknown source {name!r} (known: {', '.join(source_names())})")
    return found


def pairs_evidence(lines: Sequence[Line]) -> str | None:
    """Evidence that a file holds the audit's own records: an object with `before` and `after`."""
    for row, value in first_objects(lines, SNIFF_LINES):
        if "before" in value and "after" in value:
            return f"line {row} is a pair record (before and after)"
    return None


def evidence(lines: Sequence[Line]) -> dict[str, str]:
    """Each candidate source's evidence from a file's first lines (absent: none)."""
    head = SniffedHead(lines[:SNIFF_LINES])  # parsed once, whichever source asks first
    found: dict[str, str] = {}
    seen = pairs_evidence(head)
    if seen is not None:
        found[PAIRS] = seen
    for name, source in SOURCES.items():
        seen = source.sniff(head)
        if seen is not None:
            found[name] = seen
    return found


def detect(lines: Sequence[Line], label: str = "the file") -> str | None:
    """The source a file's first lines name (`pairs` or a session source), or None when no
    line is evidence of any. Evidence of two is an `AmbiguousSource` naming both."""
    found = evidence(lines)
    if len(found) > 1:
        named = " but ".join(f"{seen} ({name})" for name, seen in found.items())
        raise AmbiguousSource(f"Cannot tell the source of {label}: {named}. Name the source "
                              f"(--source {'|'.join(source_names())})")
    return next(iter(found), None)


def file_evidence(path: str | os.PathLike[str]) -> dict[str, str]:
    """Each candidate source's evidence from a file: its own (`Source.sniff_file`: a database,
    a Parquet export), else its first lines (`evidence`)."""
    name = os.fspath(path)
    found: dict[str, str] = {}
    for source_name, source in SOURCES.items():
        if source.sniff_file is not None:
            seen = source.sniff_file(name)
            if seen is not None:
                found[source_name] = seen
    if found:
        return found
    if _binary(name):
        return {}
    lines = open_lines(name)
    try:
        return evidence(list(itertools.islice(lines, SNIFF_LINES)))
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()


def _binary(name: str) -> bool:
    """A file no JSON lines reader should read (a database, Parquet): its first bytes say so."""
    try:
        with open(name, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    return head.startswith((b"SQLite format 3\x00", b"PAR1"))


def detect_file(path: str | os.PathLike[str], label: str | None = None) -> str | None:
    """`detect` for a file (or a database URI a source reads): its own evidence first."""
    found = file_evidence(path)
    if len(found) > 1:
        named = " but ".join(f"{seen} ({name})" for name, seen in found.items())
        raise AmbiguousSource(f"Cannot tell the source of {label or os.fspath(path)}: {named}. "
                              f"Name the source (--source {'|'.join(source_names())})")
    return next(iter(found), None)


def read_source(source: str | Source, path: str | os.PathLike[str]) -> Iterator[Line]:
    """The lines `derive` reads from a file of `source` (`Source.read`: a JSON Lines file's
    lines; a database's checkpoints or a Parquet file's rows as JSON lines)."""
    chosen = get_source(source) if isinstance(source, str) else source
    return chosen.read(os.fspath(path))


def role_of(path: str | PurePath) -> tuple[str, FileRole] | None:
    """Which agent's file `path` is by its name, and what it is to that agent (a session, a
    summarizer transcript, a legacy file with a note); None for no agent's."""
    pure = PurePath(path)
    for name, source in SOURCES.items():
        found = source.role(pure)
        if found is not None:
            return name, found
    return None


def current_history(source: str | Source, lines: Iterable[Line]) -> tuple[str, list[Any]]:
    """(format, messages): the agent's model-visible history after the whole file, what its
    next request would send, in the source's wire format."""
    chosen = get_source(source) if isinstance(source, str) else source
    return chosen.format, chosen.history(lines)


def derive(source: str | Source, label: str, lines: Iterable[Line],
           siblings: Siblings | None = None) -> Derived:
    """`source.derive(label, lines, siblings)`: the file's compaction rows and counts (the
    cyclic collector paused for a `cycle_free` source: its cost grew with the file)."""
    chosen = get_source(source) if isinstance(source, str) else source
    with collector_paused() if chosen.cycle_free else contextlib.nullcontext():
        return chosen.derive(label, lines, siblings)


__all__ = [
    "CLASSIFICATIONS",
    "EVENTS",
    "FIDELITIES",
    "PAIRS",
    "SNIFF_LINES",
    "SOURCES",
    "TRIGGERS",
    "AmbiguousSource",
    "CallRole",
    "Classification",
    "Compaction",
    "Counts",
    "Derived",
    "Diff",
    "Event",
    "Fidelity",
    "FileRole",
    "Line",
    "LineProblem",
    "Lineage",
    "Row",
    "Siblings",
    "Source",
    "Transition",
    "Trigger",
    "UnknownSource",
    "current_history",
    "derive",
    "detect",
    "detect_file",
    "evidence",
    "file_evidence",
    "file_siblings",
    "get_source",
    "open_lines",
    "pairs_evidence",
    "read_source",
    "role_of",
    "source_names",
]
