"""What a *source* is: the seam between an agent's own session files and the audit's pairs.

A source turns the lines of one session file (Codex CLI rollout, Claude Code transcript, Gemini
CLI session; or the JSON lines a source reads a database or a Parquet export into, `Source.read`)
into one row per compaction event: a `Compaction` with the wire before and after
the agent's model saw, or, for a line that is not a JSON object, a `LineProblem`. Every
compaction marker in the file is exactly one `Compaction`, whether or not its before and after
can be rebuilt (when they cannot, `problem` says exactly why: the row is an input error, never
dropped and never guessed); a line that is valid but no compaction is only counted. Sources are
pure: lines in, rows out. Reading files (`open_lines`, or a source's own `read` for a file that
is not JSON lines), another file a source needs (`Siblings`) and everything a run does with the
rows belong to the caller.

Request-log sources (traces, observability exports) hold model calls, not compactions: their
rows are *diffed* from consecutive calls of one conversation (`sources.diffing`), and their
`Derived.lineages` say how every transition was classified, and why.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, Literal

from frayproof_audit.jsonio import JSONProblem, loads_strict, strip_bom

Event = Literal["summarize", "clear", "remote_opaque", "truncate", "rewind"]
"""`summarize`: history replaced by a summary (and a kept tail); `clear`: tool output cleared
or shortened in place; `remote_opaque`: replaced by a provider-made item whose content is
encrypted, judged on structure only; `truncate`: older messages dropped, nothing new in their
place (a sliding window, a trimming step); `rewind`: the history went back to an earlier point
and went on differently (an edited or regenerated turn: no compaction, but what the model no
longer sees)."""
Fidelity = Literal["explicit", "replayed", "rebuilt", "diffed"]
"""`explicit`: the log holds the after itself; `replayed`: rebuilt by replaying the log as the
agent does on resume; `rebuilt`: reconstructed from a summary by the agent's own rules;
`diffed`: told from two consecutive logged requests of one conversation (`sources.diffing`)."""
Trigger = Literal["auto", "manual"]
Classification = Literal["append", "summarize", "truncate", "clear", "rewind", "stateful",
                         "unrelated"]
"""How a request relates to the one before it in its lineage (`sources.diffing`): `append`
(the history grew: no event), a compaction event (`summarize`, `truncate`, `clear`), a
`rewind`, `stateful` (the request carries only a delta on a server-side history:
`previous_response_id` and friends; never diffed) or `unrelated` (nothing in common: another
agent's call, set apart)."""
EVENTS: tuple[Event, ...] = ("summarize", "clear", "remote_opaque", "truncate", "rewind")
FIDELITIES: tuple[Fidelity, ...] = ("explicit", "replayed", "rebuilt", "diffed")
CLASSIFICATIONS: tuple[Classification, ...] = ("append", "summarize", "truncate", "clear",
                                               "rewind", "stateful", "unrelated")
TRIGGERS: tuple[Trigger, ...] = ("auto", "manual")

Line = bytes | str
Siblings = Callable[[str], Iterator[tuple[str, Iterable[Line]]]]
"""Another file of the same session, for a source that needs one: a glob relative to the
session file's folder → (name relative to that folder, lines) of each matching file, in name
order. Claude Code asks for
its summarizer's transcripts (`<session>/subagents/agent-acompact-*.jsonl`)."""


@dataclass(frozen=True, slots=True)
class Diff:
    """Why a diffed row is the event it is: the evidence of the classification."""

    classification: Classification
    previous_row: int
    """The line or row of the earlier call (the before is its request and its response)."""
    diverged_at: int | None
    """The index in `before` of its first message the after does not continue with (None:
    before is a prefix of after)."""
    before_item: str | None
    """That message, described (`before[3] tool result of call_7, 1 204 chars`)."""
    after_item: str | None
    """What the after holds in its place, described."""
    reasons: tuple[str, ...]
    """The rules that decided, in order (`3 messages dropped`, `a new message holds the summary
    marker 'Here is a summary of the conversation to date:'`)."""
    summarizer_row: int | None = None
    """The line or row of the summarizer's own call, when it was found."""
    summary: str | None = None
    """The summarizer's output (the summary that reappears in the after)."""


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
    diff: Diff | None = None
    """For a `diffed` row: the classification and its evidence."""

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
    """Compaction markers: one `Compaction` row each. For a request log, the lines (rows)
    holding the later call of an event: one OTLP line may hold several calls, so several
    rows."""
    other: int = 0
    """Valid log lines that are no compaction (no row)."""
    problems: int = 0
    """`LineProblem` rows."""
    blank: int = 0
    calls: int = 0
    """Request logs: the model calls read (0 for session files)."""


CallRole = Literal["main", "summarizer", "side", "retry", "incomplete"]
"""What a logged model call is to its lineage: a `main` call (diffed against the one before
it), the `summarizer`'s own call, another `side` call (a title, a guardrail, another agent's
call sharing the conversation id), a `retry` of the same request, or an `incomplete` one (its
content was not logged, or logged cut short: never read as a compaction)."""


@dataclass(frozen=True, slots=True)
class Transition:
    """One logged call of a lineage and what it is to the call before it."""

    row: int
    """The call's line or row."""
    role: CallRole
    classification: Classification | None
    """How a `main` call's request relates to the previous main call (None: the first main
    call, or a call that is not `main`)."""
    previous_row: int | None
    reason: str
    """Why, in a few words (`request starts with the previous request and its response`)."""
    ordinal: int | None = None
    """The `Compaction.ordinal` of the row this transition became, if it became one."""


@dataclass(frozen=True, slots=True)
class Lineage:
    """One conversation of a request log: its calls in order, each with its classification."""

    session_id: str
    grouped_by: str
    """The key that made it one conversation (`gen_ai.conversation.id`, `session_id`,
    `trace_id`, ...)."""
    transitions: tuple[Transition, ...]
    counts: tuple[tuple[Classification, int], ...]
    """How many main transitions got each classification (every classification listed)."""
    notes: tuple[str, ...] = ()
    """What could not be known about this conversation."""


@dataclass(frozen=True, slots=True)
class Derived:
    """A session file's rows, in line order, its counts, and notes about the whole file."""

    rows: tuple[Row, ...]
    counts: Counts
    notes: tuple[str, ...] = ()
    lineages: tuple[Lineage, ...] = ()
    """Request-log sources: every conversation found and how each of its calls was classified
    (the rows are its events; `append` transitions make none)."""


FileKind = Literal["session", "summarizer", "legacy"]


@dataclass(frozen=True, slots=True)
class FileRole:
    """What a file is to its agent, from its name: a `session` to derive, a `summarizer`
    transcript (not a session; read only through `Siblings`), or a `legacy` file that records
    no compaction (`note` says so, once per run)."""

    kind: FileKind
    note: str | None = None


def no_role(path: PurePath) -> FileRole | None:
    """No file is this source's by its name: exporters and checkpointers write where they are
    told, so only a file's contents (`sniff`, `sniff_file`) say what it is."""
    return None


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
    read: Callable[[str], Iterator[Line]] = field(default=lambda path: open_lines(path))
    """How a file (or a database URI) is read into the JSON lines `derive` reads: its lines
    for a JSON Lines file; rows of a Parquet export, checkpoints of a database, each as one JSON
    line, for a source whose files are not lines (`sniff_file` recognizes them)."""
    sniff_file: Callable[[str], str | None] | None = None
    """Evidence from the file itself (its magic bytes, tables or columns) that it is this
    source's, for files that are not JSON lines (None: the source reads JSON lines only)."""
    cycle_free: bool = False
    """Whether reading and deriving a file makes no reference cycles (its own code on parsed
    JSON only, no framework's objects): `sources.derive` then runs with the cyclic collector
    paused (`frayproof_audit/collector.py`; held for every file of such a source the tests and
    examples hold by `tests/test_source_collector.py`)."""


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


class SniffedHead(list[Line]):
    """A file's first lines, parsed once however many sources sniff them (`evidence` hands
    each source the same head; `first_objects` keeps its parse here). Each source parsing the
    lines again cost eight strict parses of every head line: on files of 270 KB pair records,
    a sixth of a check-only audit."""

    __slots__ = ("_objects",)

    def __init__(self, lines: Iterable[Line] = ()) -> None:
        super().__init__(lines)
        self._objects: dict[int, list[tuple[int, dict[str, Any]]]] = {}


def first_objects(lines: Sequence[Line], limit: int = 8) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects among a file's first lines (for `sniff`): what cannot be parsed is no
    evidence of anything. A `SniffedHead`'s lines are parsed the first time only."""
    if isinstance(lines, SniffedHead):
        kept = lines._objects.get(limit)
        if kept is None:
            kept = lines._objects[limit] = _objects(lines, limit)
        return list(kept)
    return _objects(lines, limit)


def _objects(lines: Sequence[Line], limit: int) -> list[tuple[int, dict[str, Any]]]:
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
