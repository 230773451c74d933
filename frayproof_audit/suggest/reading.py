"""`read_pairs`: plain JSON Lines and JSON pair files (optionally gzipped) into records.

The corpus readers (Parquet, zstd, object stores, agents' own session files) belong to the
audit; this reader is the small, self-contained one `suggest` needs from Python and in tests.
Parsing is strict (a duplicate key, `NaN`, bytes that are not UTF-8 are problems), and a bad
line is a `ReadProblem` naming its file and line, never the end of the read.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frayproof_audit.suggest.config import SuggestError

SUFFIXES = (".jsonl", ".ndjson", ".json")
"""Recognized file names, each also with `.gz`."""


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """A line (or file) that held no usable record."""

    source: str
    line: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "reason": self.reason}

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class PairFiles:
    """What `read_pairs` found: the records in file order, and every line it could not read."""

    records: tuple[dict[str, Any], ...]
    problems: tuple[ReadProblem, ...]
    files: tuple[str, ...]


def read_pairs(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> PairFiles:
    """Read pair records from files and folders (searched recursively, sorted; names starting
    with `.` or `_` skipped). A missing path or one with no pair file is a `SuggestError`."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    files = list(_expand([Path(p) for p in paths]))
    records: list[dict[str, Any]] = []
    problems: list[ReadProblem] = []
    for path in files:
        for line, value, problem in _read_file(path):
            if problem is not None:
                problems.append(ReadProblem(str(path), line, problem))
            elif isinstance(value, dict):
                records.append(value)
            else:
                problems.append(ReadProblem(str(path), line, "not a JSON object"))
    return PairFiles(tuple(records), tuple(problems), tuple(str(path) for path in files))


def _expand(paths: list[Path]) -> Iterator[Path]:
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and _wanted(p)
                           and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts))
            if not found:
                raise SuggestError(f"'{path}': no pair files (*{', *'.join(SUFFIXES)}, optionally .gz) in it")
        elif path.is_file():
            found = [path]
        else:
            raise SuggestError(f"'{path}': no such file or folder")
        for file in found:
            resolved = file.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield file


def _wanted(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith(SUFFIXES)


def _read_file(path: Path) -> Iterator[tuple[int | None, Any, str | None]]:
    try:
        data = path.read_bytes()
        if path.name.lower().endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile) as unreadable:
        yield None, None, f"cannot read: {unreadable}"
        return
    data = data.removeprefix(b"\xef\xbb\xbf")
    if path.name.lower().removesuffix(".gz").endswith(".json"):
        value, whole = _parse(data)
        if whole is not None:
            yield None, None, whole
        elif isinstance(value, list):
            for position, item in enumerate(value):
                yield position, item, None
        else:
            yield None, value, None
        return
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        value, reason = _parse(raw)
        yield number, value, reason


def _parse(raw: bytes) -> tuple[Any, str | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as problem:
        return None, f"not UTF-8 (byte {problem.start})"
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                          parse_float=_finite), None
    except _Refused as problem:
        return None, str(problem)
    except json.JSONDecodeError as problem:
        return None, f"invalid JSON: {problem.msg} (column {problem.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"


class _Refused(ValueError):
    pass


def _no_duplicates(items: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in items:
        if name in found:
            raise _Refused(f"invalid JSON: duplicate key {name!r}")
        found[name] = value
    return found


def _no_constant(name: str) -> Any:
    raise _Refused(f"invalid JSON: {name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"invalid JSON: {text} is too large for a number")
    return value
