"""Which source reads each input file (`--source`): the audit's own pair records, or a registered
source (`frayproof_audit.sources.SOURCES`: agents' session files, checkpoint databases, request
logs), whose compactions are the file's rows.

`--source pairs` is the record shape of `docs/audit.md`: every file is read as it always was.
A named source reads every file it is given, except the ones its agent's own names say are no
session (a summarizer's transcript, a legacy file that records no compaction: left out, and
said once in the summary's notes). `auto` (the default) decides **per file**, before any work,
from evidence only (`sources.detect` on the file's first lines, `sources.detect_file` for a
database or a Parquet export): evidence of exactly one source is that source, evidence of none
is a file of pair records (today's shape, and the one a field mapping maps), evidence of two is
refused, never guessed: the file is one input-error row naming both pieces of evidence.

Reading the first lines is bounded (`SNIFF_BYTES`), so a file of giant pair records costs a few
megabytes here, not a record: lines past the budget are no evidence.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import TYPE_CHECKING

from frayproof_audit import database_uri
from frayproof_audit.corpus.inputs.expansion import Accepts, InputFile
from frayproof_audit.corpus.inputs.field_map import ConfigError
from frayproof_audit.errors import InputError

if TYPE_CHECKING:
    from frayproof_audit.sources import FileRole

AUTO = "auto"
PAIRS = "pairs"
SNIFF_BYTES = 4 * 1024 * 1024
"""Bytes of a file's first lines `auto` reads at most (a line past them is no evidence)."""
LINE_KINDS = frozenset({"jsonl", "jsonl.gz", "jsonl.zst"})


def source_names() -> tuple[str, ...]:
    """`auto`, `pairs` and every registered source, read from the registry when asked."""
    from frayproof_audit.sources import source_names as registered

    return (AUTO, *registered())


def check_source(name: str) -> str:
    """`name` if it is `auto`, `pairs` or a registered source, else a `ConfigError`."""
    names = source_names()
    if name not in names:
        raise ConfigError(f"unknown source {name!r} (choose {', '.join(names)})")
    return name


def accepts(source: str) -> Accepts | None:
    """Which files of a source-only kind (`expansion.SOURCE_KINDS`) are inputs under `source`:
    a database some source has evidence of (a LangGraph checkpoint database); a legacy file its
    agent's names say records nothing (kept to be noted, never read). None under `pairs`."""
    if source == PAIRS:
        return None

    def accept(path: str, kind: str) -> bool:
        if kind == database_uri.KIND:  # a connection URI: the source's own evidence (it connects)
            return bool(_file_evidence(source, path))
        if not _regular(path):  # never open a FIFO or a device to look at it
            return False
        if kind == "json":
            found = _role(source, path)
            return found is not None and found[1].kind == "legacy"
        return bool(_file_evidence(source, path))

    return accept


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _role(source: str, path: str) -> tuple[str, FileRole] | None:
    from frayproof_audit.sources import get_source, role_of

    if source == AUTO:
        return role_of(PurePath(path))
    found = get_source(source).role(PurePath(path))
    return None if found is None else (source, found)


def _file_evidence(source: str, path: str) -> dict[str, str]:
    """Evidence from a file that is no JSON lines (a database, a Parquet export), of `source`
    (every source under `auto`)."""
    from frayproof_audit.sources import SOURCES

    chosen = SOURCES.items() if source == AUTO else [(source, SOURCES[source])]
    found: dict[str, str] = {}
    for name, candidate in chosen:
        if candidate.sniff_file is not None:
            seen = candidate.sniff_file(path)
            if seen is not None:
                found[name] = seen
    return found


@dataclass(frozen=True, slots=True)
class Sourced:
    """The inputs with their sources, and the files left out because of what their names say."""

    files: tuple[InputFile, ...]
    left_out: tuple[tuple[str, str], ...] = ()
    """(path, why): a summarizer's transcript, a legacy file that records no compaction."""
    misread: tuple[tuple[str, str], ...] = ()
    """(path, what): files read as `--source` names, whose first lines are evidence of another."""

    def notes(self) -> tuple[str, ...]:
        """One line per reason files were left out (or read against their evidence), with how
        many and the first of them."""
        found: list[str] = []
        for saying, items in (("left out", self.left_out), ("", self.misread)):
            by_reason: dict[str, list[str]] = {}
            for path, why in items:
                by_reason.setdefault(why, []).append(path)
            for why, paths in by_reason.items():
                more = f" and {len(paths) - 1:,} more" if len(paths) > 1 else ""
                found.append(f"{len(paths):,} file(s) {saying + ', ' if saying else ''}{why}:"
                             f" {paths[0]}{more}")
        return tuple(found)


def choose_sources(files: tuple[InputFile, ...], source: str,
                   evidence: Callable[[InputFile], dict[str, str]] | None = None) -> Sourced:
    """Each file with the source that reads it (`InputFile.source`), or the reason none can
    (`InputFile.source_problem`); the files names say are no input left out."""
    check_source(source)
    if source == PAIRS:
        return Sourced(files)
    from frayproof_audit.sources import SOURCES

    sniffed = evidence or file_evidence
    kept: list[InputFile] = []
    left_out: list[tuple[str, str]] = []
    misread: list[tuple[str, str]] = []
    for file in files:
        role = _role(source, file.path)
        if role is not None and role[1].kind != "session":
            left_out.append((file.path, role[1].note or f"a {role[0]} {role[1].kind} file"))
            continue
        if file.kind == "json":  # accepted only to be noted (a legacy name), never read
            left_out.append((file.path, "no file a source reads"))
            continue
        chosen = source
        problem = None
        if source != AUTO:
            found = sniffed(file)
            if found and source not in found:  # the user's word, and what the file says
                name, seen = next(iter(found.items()))
                misread.append((file.path, f"read as {source} as --source says, though {seen}"
                                           f" ({name})"))
        else:
            found = sniffed(file)
            if len(found) > 1:
                named = " but ".join(f"{seen} ({name})" for name, seen in found.items())
                problem = (f"cannot tell the source of this file: {named}. Name the source "
                           f"(--source {'|'.join(source_names()[1:])})")
                chosen = AUTO  # read by no source: the file is one input-error row
            else:
                chosen = next(iter(found), PAIRS)
        if chosen != PAIRS and file.remote and file.kind not in LINE_KINDS \
                and SOURCES[chosen].sniff_file is not None:
            problem = (f"a {chosen} file that is not JSON lines is read from a local path only"
                       " (copy it from the object store first)")
        kept.append(replace(file, source=chosen, source_problem=problem))
    return Sourced(tuple(kept), tuple(left_out), tuple(misread))


def file_evidence(file: InputFile) -> dict[str, str]:
    """Each candidate source's evidence about one input (`pairs` among them): a database's or a
    Parquet export's own (local files), else its first lines', bounded by `SNIFF_BYTES`."""
    from frayproof_audit.corpus.inputs.shard_reader import head_lines  # Arrow: only when reading
    from frayproof_audit.sources import evidence

    if file.kind not in LINE_KINDS:
        return {} if file.remote else _file_evidence(AUTO, file.local)
    try:
        lines = head_lines(file, _sniff_lines(), SNIFF_BYTES)
    except (OSError, InputError):
        return {}  # unreadable: its reader says why, as a row
    return evidence(lines)


def _sniff_lines() -> int:
    from frayproof_audit.sources import SNIFF_LINES

    return SNIFF_LINES
