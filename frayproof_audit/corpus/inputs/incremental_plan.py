"""`--incremental`: audit only what no *other* committed run with the same contract fingerprint audited.

A nightly job pointed at an ever-growing log folder re-reads it every night; this makes it audit
only what is new. An incremental run records, in `runs.sources` (a JSON list), one entry per
range of an input it audited: the input's path, size and SHA-256 as it read them, the range
(`start_offset`/`start_line` to `resume_offset`/`resume_line`, at line starts) and the records
audited in it. What another run audited is a set of such ranges; for each input the next run:

* takes the ranges of other runs' entries for its path whose bytes it still starts with (a plain
  JSONL file: its first `size` bytes hash the same; a compressed or Parquet file: the same size
  and hash, since neither can be appended to);
* for an input with none (a new name, or its content changed), takes the entries of another
  name whose bytes it starts with, if no input of the run holds them under that name any more:
  a rotated file (renamed, or compressed: its decompressed bytes are compared) is the file that
  was audited;
* audits the rest: every part of it no range covers, up to the end of its last complete line.

The run being made never counts: a run replaces the committed run of its id, so what only that
run audited is audited again (it used to be skipped, and the replacement then deleted it).
That is also why each entry is only what its run audited, never what earlier runs did: re-running
an older night re-audits exactly its own ranges. Each entry lists in `moved_from` the ranges of
other names its input was found to start with (a moved input's, and those its own earlier
entries listed): the next run need not look for them again (nor decompress), and they still
count when the run that found them is replaced.

The bytes after the last newline of a plain JSONL file are a line being written, not a record
yet: they are held back (not audited, not an input error) and the summary names them; the next
run starts at them. A compressed input is never appended to: its last line is complete.

A database (a `postgresql://` URI) has no bytes of its own to compare: its checkpoints as its
source reads them (the JSON lines `derive` is given) are its bytes, so an unchanged database is
skipped and any change to what it holds (a checkpoint more, a thread rewritten) audits it again,
whole, as a changed SQLite database is. That reads the database twice on a night it changed.

Hashing reads every input once more (at disk or network speed, far below the cost of auditing);
a changed input is read a second time when other names' entries are left unclaimed, and a new
compressed one is then decompressed once, on its first night. A damaged `runs` file or `sources`
value is a `DatasetError` naming the file (exit 2), as it is for every reader of the dataset.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from frayproof_audit.corpus.dataset.checked_files import DatasetError, committed_runs_rows
from frayproof_audit.corpus.inputs.expansion import InputFile, InputFileError, kind_of, open_input
from frayproof_audit.corpus.inputs.newlines import count_newlines
from frayproof_audit.corpus.inputs.shard_plan import Shard, Span
from frayproof_audit.corpus.inputs.shard_reader import DECOMPRESS_ERRORS, decompressed
from frayproof_audit.corpus.run.summary import HeldBack, Skipped

_CHUNK = 4 * 1024 * 1024
_PLAIN = "jsonl"
_COMPRESSED = frozenset({"jsonl.gz", "jsonl.zst"})
"""Kinds whose bytes are a compressed stream (a rotation may have compressed a plain file)."""
_BLANK = b" \t\r\n"
_EMPTY_SHA = hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True, slots=True)
class Ref:
    """Another run's entry, by what identifies it (a `moved_from` item)."""

    run_id: str
    path: str
    size: int
    sha256: str
    start_offset: int

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "path": self.path, "size": self.size, "sha256": self.sha256,
                "start_offset": self.start_offset}


@dataclass(frozen=True, slots=True)
class Audited:
    """One `runs.sources` entry: a range of one input that one run audited.

    `size` and `sha256` are of the input's bytes as that run read them; the range is of those
    bytes (of the decompressed stream for a compressed input, where `resume_offset` None means
    "to its end"). `moved_from`: ranges other runs audited under other names that this input
    was found to start with."""

    run_id: str
    path: str
    size: int
    sha256: str
    start_offset: int
    start_line: int
    resume_offset: int | None
    resume_line: int | None
    records: int
    moved_from: tuple[Ref, ...] = ()

    @property
    def ref(self) -> Ref:
        return Ref(self.run_id, self.path, self.size, self.sha256, self.start_offset)

    @property
    def kind(self) -> str:
        return kind_of(self.path) or _PLAIN

    @property
    def stop(self) -> float:
        return float("inf") if self.resume_offset is None else self.resume_offset

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "path": self.path, "size": self.size, "sha256": self.sha256,
            "start_offset": self.start_offset, "start_line": self.start_line,
            "resume_offset": self.resume_offset, "resume_line": self.resume_line,
            "records": self.records}
        if self.moved_from:
            entry["moved_from"] = [ref.to_dict() for ref in self.moved_from]
        return entry


@dataclass(frozen=True, slots=True)
class _Scan:
    size: int
    sha256: str
    resume_offset: int
    """End of the last complete line (plain JSONL)."""
    resume_line: int
    prefixes: Mapping[int, str]
    """SHA-256 of the first N bytes, for each N asked for (and read)."""
    tail: bool
    """Plain JSONL: bytes other than whitespace after the last newline (a line being written)."""


@dataclass(frozen=True, slots=True)
class Incremental:
    """The plan of an incremental run: what to audit, which parts, and what was skipped."""

    files: tuple[InputFile, ...]
    """Inputs to plan (those with nothing to audit left out)."""
    spans: dict[str, tuple[Span, ...]]
    """JSONL path (plain or compressed) → the parts of it to audit."""
    skipped: Skipped
    scans: dict[str, _Scan] = field(default_factory=dict)
    carried: dict[str, tuple[Ref, ...]] = field(default_factory=dict)
    """Path → the ranges of other names its coverage holds (each of its entries lists them)."""
    moved: frozenset[str] = frozenset()
    """Paths recognised by this run as another name's bytes (rotated)."""
    bare: tuple[InputFile, ...] = ()
    """Inputs with nothing to audit that still get an (empty) entry: new or changed ones (an
    empty file, a line being written), moved ones (to record where they came from)."""

    def note(self) -> str | None:
        return None  # the summary prints `skipped` itself

    def audited(
        self, shards: Sequence[Shard], pairs: Mapping[int, int], failed: set[int]
    ) -> list[dict[str, Any]]:
        """`runs.sources` of this run: one entry per range of consecutive shards audited (a shard
        that could not be audited is left out, so the next run audits it), and an empty one for
        each input in `bare` or moved input with none."""
        entries: list[Audited] = []
        by_path: dict[str, list[Shard]] = {}
        for shard in shards:
            by_path.setdefault(shard.file.path, []).append(shard)
        for file in self.files:
            written = self._ranges(file, by_path.get(file.path, []), pairs, failed)
            if not written and file.path in self.moved:
                written = [self._entry(file, 0, 0, 0, 0, 0)]
            entries.extend(written)
        entries.extend(self._entry(file, 0, 0, 0, 0, 0) for file in self.bare)
        return [entry.to_dict() for entry in entries]

    def _entry(self, file: InputFile, start: int, start_line: int, stop: int | None,
               stop_line: int | None, records: int) -> Audited:
        scan = self.scans[file.path]
        return Audited("", file.path, scan.size, scan.sha256, start, start_line, stop, stop_line,
                       records, self.carried.get(file.path, ()))

    def _ranges(self, file: InputFile, shards: list[Shard], pairs: Mapping[int, int],
                failed: set[int]) -> list[Audited]:
        if file.kind == "parquet":
            if not shards or any(shard.ordinal in failed for shard in shards):
                return []
            return [self._entry(file, 0, 0, None, None, sum(pairs.get(s.ordinal, 0) for s in shards))]
        if file.kind != _PLAIN:  # one shard per span
            stops = {span.start: span.stop_line for span in self.spans.get(file.path, ())}
            return [self._entry(file, shard.start, shard.first_row - 1, shard.stream_stop,
                                stops.get(shard.start), pairs.get(shard.ordinal, 0))
                    for shard in shards if shard.ordinal not in failed]
        ranges: list[list[int]] = []  # [start, start line, stop, stop line, records]
        for shard in shards:
            if shard.ordinal in failed:
                ranges.append([])  # ends the range before it
                continue
            stop_line = shard.first_row - 1 + (shard.records or 0)
            if ranges and ranges[-1] and ranges[-1][2] == shard.start:
                ranges[-1][2:] = [shard.stop, stop_line, ranges[-1][4] + pairs.get(shard.ordinal, 0)]
            else:
                ranges.append([shard.start, shard.first_row - 1, shard.stop, stop_line,
                               pairs.get(shard.ordinal, 0)])
        return [self._entry(file, *r) for r in ranges if r]


def plan_incremental(files: tuple[InputFile, ...], out: str, fingerprint: str, run_id: str) -> Incremental:
    """Which inputs (and which parts of them) no other committed run with `fingerprint` audited.

    `run_id` is the run being made: its committed namesake, which it replaces, never counts."""
    entries = earlier_audits(out, fingerprint, run_id)
    index = {entry.ref: entry for entry in entries}
    by_path: dict[str, list[Audited]] = {}
    for entry in entries:
        by_path.setdefault(entry.path, []).append(entry)
    scans: dict[str, _Scan] = {}
    covered: dict[str, list[Audited]] = {}
    moved: set[str] = set()
    claimed: set[Ref] = set()
    direct: set[Ref] = set()
    for file in files:  # the inputs' own names first: a rotation never takes their ranges
        own = by_path.get(file.path)
        if not own:
            continue
        scan = scans[file.path] = _scan(file, {entry.size for entry in own})
        kept = [entry for entry in own if _continues(entry, file, scan)]
        if kept:
            covered[file.path] = _closure(kept, index)
            claimed.update(entry.ref for entry in covered[file.path])
            direct.update(entry.ref for entry in kept)
    for file in files:
        if file.path in covered:
            continue
        found = _moved(file, [entry for entry in entries if entry.ref not in claimed], scans)
        if found:
            covered[file.path] = _best(found, index)
            moved.add(file.path)
            claimed.update(entry.ref for entry in covered[file.path])
    carried = {path: tuple(entry.ref for entry in cover if entry.ref not in direct)
               for path, cover in covered.items()}
    plan = _plan(files, by_path, scans, covered, moved)
    return replace(plan, carried={path: refs for path, refs in carried.items() if refs},
                   moved=frozenset(moved))


def _plan(files: tuple[InputFile, ...], by_path: Mapping[str, list[Audited]], scans: dict[str, _Scan],
          covered: Mapping[str, list[Audited]], moved: set[str]) -> Incremental:
    keep: list[InputFile] = []
    bare: list[InputFile] = []
    spans: dict[str, tuple[Span, ...]] = {}
    held: list[HeldBack] = []
    counts = dict.fromkeys(("unchanged", "unchanged_records", "appended", "appended_records",
                            "changed", "new", "moved", "moved_records"), 0)
    for file in files:
        scan = scans[file.path]
        cover = covered.get(file.path, [])
        plain = file.kind == _PLAIN
        if plain and scan.tail:
            held.append(HeldBack(file.path, scan.resume_line + 1, scan.resume_offset))
        parts: tuple[Span, ...]
        if file.kind == "parquet":
            parts, records = ((), sum(entry.records for entry in cover)) if cover else ((Span(0, 0),), 0)
        else:
            parts, records = _gaps(cover, scan.resume_offset if plain else None, scan.resume_line)
        if not cover:
            counts["changed" if file.path in by_path else "new"] += 1
        elif file.path in moved:
            counts["moved"] += 1
            counts["moved_records"] += records
        else:
            kind = "appended" if parts else "unchanged"
            counts[kind] += 1
            counts[f"{kind}_records"] += records
        if parts:
            keep.append(file)
            if file.kind != "parquet":
                spans[file.path] = parts
        elif not cover or file.path in moved:
            bare.append(file)
    skipped = Skipped(
        unchanged_inputs=counts["unchanged"], unchanged_records=counts["unchanged_records"],
        appended_inputs=counts["appended"], appended_records=counts["appended_records"],
        changed_inputs=counts["changed"], new_inputs=counts["new"],
        moved_inputs=counts["moved"], moved_records=counts["moved_records"], held_back=tuple(held),
    )
    return Incremental(tuple(keep), spans, skipped, scans, bare=tuple(bare))


def _continues(entry: Audited, file: InputFile, scan: _Scan) -> bool:
    """`file` still starts with the bytes `entry`'s run read (is, for a compressed or Parquet
    file: those cannot grow)."""
    if entry.kind != file.kind:
        return False
    if file.kind == _PLAIN:
        return scan.prefixes.get(entry.size) == entry.sha256
    return entry.size == scan.size and entry.sha256 == scan.sha256


def _closure(entries: Iterable[Audited], index: Mapping[Ref, Audited]) -> list[Audited]:
    """`entries` and the committed entries their `moved_from` name (verified when recorded on
    these same bytes; one that no longer exists, its run replaced, is not coverage)."""
    found: dict[Ref, Audited] = {}
    stack = list(entries)
    while stack:
        entry = stack.pop()
        if entry.ref in found:
            continue
        found[entry.ref] = entry
        stack.extend(index[ref] for ref in entry.moved_from if ref in index)
    return sorted(found.values(), key=lambda entry: (entry.start_offset, entry.run_id))


def _moved(file: InputFile, unclaimed: list[Audited], scans: dict[str, _Scan]) -> list[Audited]:
    """The unclaimed entries of other names whose bytes `file` starts with (and scans it)."""
    plain_sizes = {entry.size for entry in unclaimed if entry.kind == _PLAIN and entry.path != file.path}
    scan = scans.get(file.path)
    if file.kind == _PLAIN:
        wanted = {size for size in plain_sizes if size <= file.size}
        if scan is None or not wanted <= scan.prefixes.keys():
            scan = scans[file.path] = _scan(file, wanted | set(scan.prefixes if scan else ()))
    elif scan is None:
        scan = scans[file.path] = _scan(file, ())
    others = [entry for entry in unclaimed if entry.path != file.path]
    found = [entry for entry in others if _continues(entry, file, scan)]
    if found or file.kind not in _COMPRESSED or not plain_sizes:
        return found
    content = _content_prefixes(file, plain_sizes)  # logrotate's compress: a.jsonl → a.jsonl.1.gz
    return [entry for entry in others if entry.kind == _PLAIN and content.get(entry.size) == entry.sha256]


def _best(found: list[Audited], index: Mapping[Ref, Audited]) -> list[Audited]:
    """The name whose ranges cover most of the input (a file holding the bytes of two names
    is counted as one of them: the other name's rows are not this file's)."""
    groups: dict[str, list[Audited]] = {}
    for entry in found:
        groups.setdefault(entry.path, []).append(entry)
    closures = [_closure(group, index) for _, group in sorted(groups.items())]
    return max(closures, key=lambda cover: (max(entry.stop for entry in cover),
                                            sum(entry.records for entry in cover)))


def _gaps(cover: list[Audited], end: int | None, end_line: int) -> tuple[tuple[Span, ...], int]:
    """The parts of the first `end` bytes (None: all of them) no entry of `cover` holds, and the
    records of the entries that hold the rest."""
    spans: list[Span] = []
    at, at_line, records = 0, 0, 0
    for entry in sorted(cover, key=lambda entry: (entry.start_offset, -entry.stop)):
        if entry.stop <= max(at, entry.start_offset):
            continue  # empty, or inside what is covered already
        if entry.start_offset > at:
            spans.append(Span(at, at_line, entry.start_offset, entry.start_line))
        records += entry.records
        if entry.resume_offset is None:
            return tuple(spans), records
        at, at_line = entry.resume_offset, entry.resume_line or 0
    if end is None:
        spans.append(Span(at, at_line))
    elif at < end:
        spans.append(Span(at, at_line, end, end_line))
    return tuple(spans), records


# --- reading what other runs audited --------------------------------------------------------------

def earlier_audits(out: str, fingerprint: str, run_id: str | None = None) -> list[Audited]:
    """The entries of every committed run with `fingerprint` but `run_id`, by run id. Each
    `runs` file is read and checked by `dataset.checked_files`, as every reader of a dataset
    reads it: a damaged one is the same `DatasetError` naming it."""
    entries: list[Audited] = []
    for owner, where, row in committed_runs_rows(out, _COLUMNS):
        if owner == run_id or "sources" not in row:  # no `sources`: written before incremental runs
            continue
        if row.get("contract_fingerprint") == fingerprint:
            entries.extend(_entries(row["sources"], owner, where))
    return entries


_COLUMNS = ("contract_fingerprint", "sources")


def _entries(value: Any, run_id: str, where: str) -> list[Audited]:
    """A `runs.sources` value as entries; anything else is a damaged dataset naming `where`."""
    def damaged(what: str) -> DatasetError:
        return DatasetError(f"damaged dataset: '{where}' (run '{run_id}'): {what}")

    if value is None:
        return []
    if not isinstance(value, str):
        raise damaged(f"its sources are not JSON text (a {type(value).__name__})")
    try:
        items = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise damaged(f"its sources are not JSON: {exc}") from None
    if not isinstance(items, list):
        raise damaged("its sources are not a list of entries")
    entries = []
    for number, item in enumerate(items, start=1):
        entry = _entry(item, run_id)
        if isinstance(entry, str):
            raise damaged(f"sources entry {number} is not an entry: {entry}")
        entries.append(entry)
    return entries


def _entry(item: Any, run_id: str) -> Audited | str:
    """One entry, or what is wrong with it. Entries written before `start_offset` existed each
    covered their file from its start (and a compressed or Parquet file whole)."""
    if not isinstance(item, dict):
        return f"a {type(item).__name__}, not an object"
    problem = _wrong(item, {"path": str, "size": int, "sha256": str, "records": int},
                     {"resume_offset": int, "resume_line": int, "start_offset": int, "start_line": int})
    if problem:
        return problem
    refs = item.get("moved_from", [])
    if not isinstance(refs, list):
        return "moved_from must be a list"
    moved: list[Ref] = []
    for ref in refs:
        if not isinstance(ref, dict):
            return "a moved_from item is not an object"
        problem = _wrong(ref, _REF_KEYS, {})
        if problem:
            return f"moved_from: {problem}"
        moved.append(Ref(ref["run_id"], ref["path"], ref["size"], ref["sha256"], ref["start_offset"]))
    legacy = "start_offset" not in item
    whole = legacy and (kind_of(item["path"]) or _PLAIN) != _PLAIN
    return Audited(run_id, item["path"], item["size"], item["sha256"], item.get("start_offset", 0),
                   item.get("start_line", 0), None if whole else item.get("resume_offset"),
                   None if whole else item.get("resume_line"), item["records"], tuple(moved))


_REF_KEYS = {"run_id": str, "path": str, "size": int, "sha256": str, "start_offset": int}


def _wrong(item: dict[str, Any], required: dict[str, type], optional: dict[str, type]) -> str | None:
    for key, kind in (*required.items(), *optional.items()):
        if key not in item:
            if key in required:
                return f"it has no {key!r}"
            continue
        value = item[key]
        if value is None and key in optional:
            continue
        if type(value) is not kind or (isinstance(value, int) and value < 0):
            wanted = "a string" if kind is str else "an integer >= 0"
            return f"{key!r} must be {wanted}, not {orjson.dumps(value).decode()[:40]}"
    return None


# --- reading the inputs ----------------------------------------------------------------------------

def _take(digest: Any, chunk: bytes, offset: int, wanted: list[int], prefixes: dict[int, str]) -> None:
    """Feed `chunk` (at `offset`) to `digest`, noting the hash at every wanted length in it."""
    view, fed = memoryview(chunk), 0
    while wanted and wanted[0] <= offset + len(chunk):
        cut = wanted.pop(0) - offset
        digest.update(view[fed:cut])
        fed = cut
        prefixes[offset + cut] = digest.hexdigest()
    digest.update(view[fed:])


def _scan(file: InputFile, prefixes: Iterable[int]) -> _Scan:
    """Size, content hash, the hash of the first N bytes for each wanted N, the end of the last
    complete line and whether a line is being written after it, reading the file once up to
    its size at expansion."""
    if file.database:
        return _database_scan(file)
    digest = hashlib.sha256()
    wanted = sorted(size for size in set(prefixes) if size <= file.size)
    found: dict[int, str] = {}
    offset = newlines = resume = 0
    tail = False
    try:
        with open_input(file) as handle:
            while offset < file.size:
                chunk = handle.read(min(_CHUNK, file.size - offset))
                if not chunk:
                    break
                _take(digest, chunk, offset, wanted, found)
                last = chunk.rfind(b"\n")
                if last >= 0:
                    resume = offset + last + 1
                    newlines += count_newlines(chunk)
                    tail = bool(chunk[last + 1 :].strip(_BLANK))
                elif chunk.strip(_BLANK):
                    tail = True
                offset += len(chunk)
    except OSError as exc:
        raise InputFileError(f"cannot read input '{file.path}': {exc}") from None
    if wanted and wanted[0] == 0:
        found[0] = _EMPTY_SHA
    return _Scan(offset, digest.hexdigest(), resume, newlines, found, tail and file.kind == _PLAIN)


def _database_scan(file: InputFile) -> _Scan:
    """A database's size and hash: of its checkpoints as the source reads them, one JSON line
    each (a database that cannot be read is the source's `InputError`, exit 2)."""
    from frayproof_audit.sources import read_source

    digest = hashlib.sha256()
    size = lines = 0
    for line in read_source(file.source, file.local):
        data = line.encode("utf-8") if isinstance(line, str) else line
        digest.update(data)
        size += len(data)
        lines += 1
    return _Scan(size, digest.hexdigest(), size, lines, {}, False)


def _content_prefixes(file: InputFile, prefixes: Iterable[int]) -> dict[int, str]:
    """The hash of the first N decompressed bytes of a compressed input, for each wanted N (as
    far as the stream can be read: a damaged one is the reader's to report)."""
    digest = hashlib.sha256()
    wanted = sorted(set(prefixes))
    found: dict[int, str] = {}
    offset = 0
    try:
        with open_input(file) as raw, decompressed(file.kind, raw) as stream:
            while wanted:
                chunk = stream.read(_CHUNK)
                if not chunk:
                    break
                _take(digest, chunk, offset, wanted, found)
                offset += len(chunk)
    except DECOMPRESS_ERRORS:
        pass
    if 0 in wanted:
        found[0] = _EMPTY_SHA
    return found
