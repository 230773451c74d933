"""The transcripts a command is pointed at: files, folders and JSONL, each read on its own.

A `.json` file holds one transcript. A `.jsonl` file holds one per line: a transcript, or a
corpus record (an object with `after`, as are the lines `repair` and `compact` write), whose
`after` is the transcript and whose `format` field, when it has one, names its format. A
folder stands for every `.json` and `.jsonl` file under it, in path order. What cannot be
read is an `Entry` with a `problem`, never an exception: one bad file must not hide the
verdict on the others.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frayproof_audit.errors import InputError
from frayproof_audit.files import UnreadableFile, read_regular_file
from frayproof_audit.jsonio import JSONProblem, loads_strict, strip_bom
from frayproof_audit.snapshot import MAX_SNAPSHOT_BYTES

SUFFIXES = (".json", ".jsonl")
COMPRESSED = (".jsonl.gz", ".jsonl.zst")
"""Session files an agent compresses (Codex's `rollout-*.jsonl.zst`), read when named."""
AUTO = "auto"
PAIRS = "pairs"


@dataclass(frozen=True, slots=True)
class Entry:
    """One transcript (or why it could not be read) and where it came from."""

    path: str
    line: int | None = None
    """Its line in a JSONL file (from 1); None for a whole file."""
    value: Any = None
    format: str | None = None
    """The record's own `format` field (JSONL records only)."""
    record: dict[str, Any] | None = None
    """The whole corpus record the transcript is the `after` of."""
    problem: str | None = None

    @property
    def label(self) -> str:
        """`path`, or `path:line` for a JSONL line, as valid text (`shown_path`)."""
        shown = shown_path(self.path)
        return shown if self.line is None else f"{shown}:{self.line}"

    @property
    def pair_id(self) -> Any:
        """The corpus record's `pair_id` (None for a bare transcript)."""
        return None if self.record is None else self.record.get("pair_id")


def expand(paths: tuple[str, ...] | list[str]) -> Iterator[str | tuple[str, str]]:
    """Files to read, in order; a path that is neither a file nor a folder, and a folder that
    cannot be listed, comes back as (path, problem)."""
    for path in paths:
        if os.path.isdir(path):
            found = _under(Path(path))
            if not found:
                yield path, "no .json or .jsonl files in this folder"
            for _, item in found:
                yield item
        elif os.path.exists(path):
            yield path
        else:
            yield path, "no such file or folder"


def _under(root: Path) -> list[tuple[str, str | tuple[str, str]]]:
    """Every `.json` and `.jsonl` file under `root` and every folder under it that cannot be
    listed (as (folder, problem)), in path order. Links to files are followed, links to
    folders are not (so a loop of links ends)."""
    found: list[tuple[str, str | tuple[str, str]]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            name = str(folder)
            found.append((name, (name, f"cannot list this folder: {exc.strerror or exc}")))
            continue
        for entry in entries:
            path = folder / entry.name
            if _is(entry.is_dir, follow_symlinks=False):
                pending.append(path)
            elif path.suffix in SUFFIXES and _is(entry.is_file):
                found.append((str(path), str(path)))
    found.sort(key=lambda item: item[0])
    return found


def _is(test: Callable[..., bool], **options: bool) -> bool:
    try:
        return test(**options)
    except OSError:
        return False


def one_file(paths: tuple[str, ...] | list[str]) -> bool:
    """`paths` name a single file holding a single transcript (not a folder, not JSONL), so a
    command's output is that one transcript rather than a JSONL line per transcript. Decided
    by the arguments, never by how many transcripts turn up, so the output's shape is known
    before the run."""
    return len(paths) == 1 and not os.path.isdir(paths[0]) and not paths[0].endswith(".jsonl")


def read_entries(paths: tuple[str, ...] | list[str], source: str = AUTO) -> Iterator[Entry]:
    for found in expand(paths):
        if isinstance(found, tuple):
            yield Entry(found[0], problem=found[1])
        else:
            yield from read_file(found, source)


def read_file(path: str, source: str = AUTO) -> Iterator[Entry]:
    """The transcripts of one file. A JSONL file that is an agent's session file (`source`:
    `auto` by the evidence of its first lines, or a registered source's name) is one
    transcript: the agent's current model-visible history, what its next request sends
    (`frayproof_audit.sources.current_history`); `pairs` reads every file as below."""
    try:
        data = strip_bom(read_regular_file(path, MAX_SNAPSHOT_BYTES))
    except UnreadableFile as exc:
        yield Entry(path, problem=f"cannot read: {exc}")
        return
    if path.endswith(COMPRESSED):
        try:
            data = strip_bom(_decompressed(path, data))
        except (OSError, EOFError, ValueError) as exc:
            yield Entry(path, problem=f"cannot decompress: {exc}")
            return
    if source != PAIRS and path.endswith((".jsonl", *COMPRESSED)):
        history = _history(path, data, source)
        if history is not None:
            yield history
            return
    if not path.endswith(".jsonl"):
        try:
            yield Entry(path, value=loads_strict(data))
        except JSONProblem as exc:
            yield Entry(path, problem=f"not valid JSON: {exc}")
        return
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            yield _line(path, number, line)


def _line(path: str, number: int, line: bytes) -> Entry:
    try:
        value = loads_strict(line)
    except JSONProblem as exc:
        return Entry(path, number, problem=f"not valid JSON: {exc}")
    if isinstance(value, dict) and "after" in value:
        if value["after"] is None:  # e.g. a `repair` output line for a refused transcript
            why = value.get("reason")
            return Entry(path, number, record=value, problem="no transcript (`after` is null)"
                         + (f": {why}" if isinstance(why, str) else ""))
        fmt = value.get("format")
        return Entry(path, number, value["after"], fmt if isinstance(fmt, str) else None, value)
    return Entry(path, number, value)


def _decompressed(path: str, data: bytes) -> bytes:
    """A compressed session file's bytes, refused past the size a transcript may have."""
    if path.endswith(".gz"):
        stream: Any = gzip.GzipFile(fileobj=io.BytesIO(data))
    else:
        import pyarrow as pa  # zstd, as the corpus reader reads it

        stream = pa.CompressedInputStream(pa.BufferReader(data), "zstd")
    try:
        with stream:
            found = bytes(stream.read(MAX_SNAPSHOT_BYTES + 1))
    except Exception as exc:  # gzip, zlib or Arrow: the stream is damaged
        raise ValueError(str(exc) or type(exc).__name__) from None
    if len(found) > MAX_SNAPSHOT_BYTES:
        raise ValueError(f"it holds more than {MAX_SNAPSHOT_BYTES} bytes")
    return found


def _history(path: str, data: bytes, source: str) -> Entry | None:
    """The session file's current history as one entry, None when it is no session file (no
    source's evidence under `auto`, or the audit's own pair records)."""
    from frayproof_audit.sources import AmbiguousSource, current_history, detect, get_source

    lines = data.splitlines(keepends=True)
    chosen: str | None = source
    if source == AUTO:
        try:
            chosen = detect(lines, shown_path(path))
        except AmbiguousSource as exc:
            return Entry(path, problem=str(exc))
    if chosen is None or chosen == PAIRS:
        return None
    try:
        fmt, messages = current_history(get_source(chosen), lines)
    except InputError as exc:
        return Entry(path, problem=f"cannot read it as {chosen}: {exc}")
    if not messages:
        return Entry(path, problem=f"no model-visible history in it, read as {chosen} (a request "
                                   "log holds model calls: see frayproof-audit pairs)")
    return Entry(path, value=messages, format=fmt)


_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})")


def shown_path(path: str) -> str:
    """`path` as valid text that `path_of` turns back into it exactly.

    A name that is UTF-8 (and holds no backslash, `x` and two hex digits) is itself. Any other
    is spelled with each byte that is not UTF-8, and each backslash, as `\\xNN`: Python holds
    such bytes as lone surrogates (PEP 383), which no UTF-8 file, JSON line or terminal can
    hold. (The corpus audit's names spell the bytes the same way.)
    """
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a surrogate no file system gave: no path to turn back into
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _ESCAPE.search(raw):
        return text
    return raw.replace(b"\\", b"\\x5c").decode("utf-8", "backslashreplace")


def path_of(shown: str) -> str:
    """The path `shown_path` spelled as `shown`."""
    return os.fsdecode(_ESCAPE.sub(lambda match: bytes([int(match[1], 16)]),
                                   shown.encode("utf-8")))
