"""What a *source* is: the seam between an agent's own session files and the audit's pairs.

A source turns the lines of one session file (Codex CLI rollout, Claude Code transcript, Gemini
CLI session) into one row per compaction event: a `Compaction` with the wire before and after
the agent's model saw, or, for a line that is not a JSON object, a `LineProblem`. Every
compaction marker in the file is exactly one `Compaction`, whether or not its before and after
can be rebuilt (when they cannot, `problem` says exactly why: the row is an input error, never
dropped and never guessed); a line that is valid but no compaction is only counted. Sources are
pure: lines in, rows out. Reading files (`open_lines`), another file a source needs
(`Siblings`) and everything a run does with the rows belong to the caller.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Literal

from frayproof_audit.jsonio import JSONProblem, loads_strict, strip_bom

Event = Literal["summarize", "clear", "remote_opaque"]
"""`summarize`: history replaced by a summary (and a kept tail); `clear`: tool output cleared
or shortened in place; `remote_opaque`: replaced by a provider-made item whose content is
encrypted, judged on structure only."""
Fidelity = Literal["explicit", "replayed", "rebuilt"]
"""`explicit`: the log holds the after itself; `replayed`: rebuilt by replaying the log as the
agent does on resume; `rebuilt`: reconstructed from a summary by the agent's own rules."""
Trigger = Literal["auto", "manual"]
EVENTS: tuple[Event, ...] = ("summarize", "clear", "remote_opaque")
FIDELITIES: tuple[Fidelity, ...] = ("explicit", "replayed", "rebuilt")
TRIGGERS: tuple[Trigger, ...] = ("auto", "manual")

Line = bytes | str
Siblings = Callable[[str], Iterator[tuple[str, Iterable[Line]]]]
"""Another file of the same session, for a source that needs one: a glob relative to the
session file's folder → (name relative to that folder, lines) of each matching file, in name
order. Claude Code asks for
its summarizer's transcripts (`<session>/subagents/agent-acompact-*.jsonl`)."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction event of one session, at the line that marks it.

    `before` and `after` are wire message lists in `format` (None, both, when `problem` says
    why they cannot be rebuilt); `pair_id` is `<session_id>:<ordinal>`.
    """

    source_row: int
    """The 1-based line of the marker (`compacted`, `compact_boundary`, the `$set` line)."""
    ordinal: int
    """The n-th compaction marker of the session (1-based), problems included."""
    session_id: str
    logged_at: str | None
    """The marker's own timestamp, as written."""
    compactor: str
    """Who compacted, as `agent/kind`: `codex/local`, `codex/remote`, `claude-code/auto`,
    `claude-code/manual`, `claude-code/micro`, `gemini-cli`."""
    format: str
    """The registered input format of `before` and `after`."""
    event: Event
    fidelity: Fidelity
    before: list[Any] | None
    after: list[Any] | None
    trigger: Trigger | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    problem: str | None = None
    """Why before or after cannot be rebuilt: the row is an input error."""
    notes: tuple[str, ...] = ()
    """Caveats of the reconstruction (what it could not know)."""

    @property
    def pair_id(self) -> str:
        return f"{self.session_id}:{self.ordinal}"


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line that is not a JSON object (or a known line the replay cannot use): one
    input-error row naming the line."""

    source_row: int
    reason: str


Row = Compaction | LineProblem


@dataclass(frozen=True, slots=True)
class Counts:
    """What a file held: `lines == events + other + problems + blank`."""

    lines: int = 0
    events: int = 0
    """Compaction markers: one `Compaction` row each."""
    other: int = 0
    """Valid log lines that are no compaction (no row)."""
    problems: int = 0
    """`LineProblem` rows."""
    blank: int = 0


@dataclass(frozen=True, slots=True)
class Derived:
    """A session file's rows, in line order, its counts, and notes about the whole file."""

    rows: tuple[Row, ...]
    counts: Counts
    notes: tuple[str, ...] = ()


FileKind = Literal["session", "summarizer", "legacy"]


@dataclass(frozen=True, slots=True)
class FileRole:
    """What a file is to its agent, from its name: a `session` to derive, a `summarizer`
    transcript (not a session; read only through `Siblings`), or a `legacy` file that records
    no compaction (`note` says so, once per run)."""

    kind: FileKind
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """A registered source: one module per agent, one line in `SOURCES`."""

    name: str
    format: str
    """The wire format of the pairs it derives."""
    sniff: Callable[[Sequence[Line]], str | None]
    """Evidence, from a file's first lines, that it is this agent's session file (a phrase
    naming the line), or None."""
    derive: Callable[[str, Iterable[Line], Siblings | None], Derived]
    """(label, lines, siblings) → the file's rows; `label` names the file in messages."""
    role: Callable[[PurePath], FileRole | None]
    """What a path is to this agent, by its name (None: not one of its files)."""
    history: Callable[[Iterable[Line]], list[Any]]
    """The agent's current model-visible history after the whole file, in `format`."""
    notes: tuple[str, ...] = field(default=())
    """What this source cannot know, for the docs and `pairs` output."""


# --------------------------------------------------------------------------- reading lines


@dataclass(slots=True)
class Tally:
    """Mutable counts while a source reads a file."""

    lines: int = 0
    events: int = 0
    other: int = 0
    problems: int = 0
    blank: int = 0

    def frozen(self) -> Counts:
        return Counts(self.lines, self.events, self.other, self.problems, self.blank)


def parsed(lines: Iterable[Line], tally: Tally) -> Iterator[tuple[int, dict[str, Any] | LineProblem]]:
    """(1-based line, its JSON object or a `LineProblem`), blank lines skipped; every line is
    counted as read, blank and problem lines as such."""
    for row, line in enumerate(lines, 1):
        tally.lines += 1
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        if row == 1:
            data = strip_bom(data)
        if not data.strip():
            tally.blank += 1
            continue
        try:
            value = loads_strict(data)
        except JSONProblem as exc:
            tally.problems += 1
            yield row, LineProblem(row, f"line {row} is not JSON: {exc}")
            continue
        if type(value) is not dict:
            tally.problems += 1
            yield row, LineProblem(row, f"line {row} is JSON but not an object")
            continue
        yield row, value


def first_objects(lines: Sequence[Line], limit: int = 8) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects among a file's first lines (for `sniff`): what cannot be parsed is no
    evidence of anything."""
    found: list[tuple[int, dict[str, Any]]] = []
    for row, value in parsed(lines[:limit], Tally()):
        if isinstance(value, dict):
            found.append((row, value))
    return found


def open_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The lines of a session file, plain, `.gz` or `.zst` (Codex writes `rollout-*.jsonl.zst`),
    decompressed as read."""
    name = os.fspath(path)
    if name.endswith(".zst"):
        import pyarrow as pa

        with pa.CompressedInputStream(pa.OSFile(name), "zstd") as stream:
            yield from _split(stream.read())
        return
    if name.endswith(".gz"):
        with gzip.open(name, "rb") as handle:
            yield from handle
        return
    with open(name, "rb") as handle:
        yield from handle


def _split(data: bytes) -> Iterator[bytes]:
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start:end + 1]
        start = end + 1


def file_siblings(path: str | os.PathLike[str]) -> Siblings:
    """`Siblings` of a session file on the local disk: globs relative to its folder, each
    named by its path relative to that folder."""
    folder = Path(path).parent

    def siblings(pattern: str) -> Iterator[tuple[str, Iterable[Line]]]:
        for found in sorted(folder.glob(pattern)):
            if found.is_file():
                yield found.relative_to(folder).as_posix(), open_lines(found)

    return siblings


def string_of(value: Any) -> str | None:
    return value if type(value) is str else None


def integer_of(value: Any) -> int | None:
    return value if type(value) is int else None
