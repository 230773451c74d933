"""Input expansion: files, globs, folders (recursive) and Hive datasets → an ordered list of sources.

Expansion happens in the parent before any work, so a typo in a path is exit 2 within a second,
not a run that silently audited nothing. The list is sorted by path, so the same inputs in any
order give the same shards, the same part numbers and the same tables.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from urllib.parse import unquote

from frayproof_audit.errors import InputError

KINDS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".jsonl.gz": "jsonl.gz",
    ".ndjson.gz": "jsonl.gz",
    ".jsonl.zst": "jsonl.zst",
    ".ndjson.zst": "jsonl.zst",
    ".parquet": "parquet",
}
"""File name endings we read, and the reader each one needs."""


class SourceError(InputError):
    """An input path does not exist, matches nothing, or cannot be read (exit 2)."""


@dataclass(frozen=True, slots=True)
class Source:
    """One input file. `hive` holds `key=value` folder names above it (values URL-decoded)."""

    path: str
    kind: str
    size: int
    hive: tuple[tuple[str, str], ...] = ()


def kind_of(path: str) -> str | None:
    lowered = path.lower()
    for ending in sorted(KINDS, key=len, reverse=True):
        if lowered.endswith(ending):
            return KINDS[ending]
    return None


def _hidden(name: str) -> bool:
    # Hive/Spark convention: `_SUCCESS`, `_staging`, `.crc` files are never data.
    return name.startswith((".", "_"))


def _walk(folder: str) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        found.extend(
            os.path.join(root, name)
            for name in sorted(files)
            if not _hidden(name) and kind_of(name) is not None
        )
    return found


def _hive_values(path: str) -> tuple[tuple[str, str], ...]:
    values: list[tuple[str, str]] = []
    for part in os.path.dirname(path).split(os.sep):
        key, sep, value = part.partition("=")
        if sep and key:
            values.append((key, unquote(value)))
    return tuple(values)


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def expand_inputs(inputs: tuple[str, ...] | list[str]) -> tuple[Source, ...]:
    """Every input file, once, sorted by path; raises `SourceError` for anything unusable."""
    chosen: dict[str, str] = {}  # realpath -> path as spelled
    for given in inputs:
        matches = sorted(glob.glob(given, recursive=True)) if _is_glob(given) else [given]
        if _is_glob(given) and not matches:
            raise SourceError(f"input '{given}' matches no files")
        for match in matches:
            if os.path.isdir(match):
                files = _walk(match)
                if not files and not _is_glob(given):
                    raise SourceError(
                        f"input folder '{match}' holds no .jsonl, .jsonl.gz, .jsonl.zst"
                        " or .parquet files"
                    )
            elif os.path.exists(match):
                if kind_of(match) is None:
                    if _is_glob(given):
                        continue
                    raise SourceError(
                        f"input '{match}' is not .jsonl, .ndjson, .jsonl.gz, .jsonl.zst or .parquet"
                    )
                files = [match]
            else:
                raise SourceError(f"input '{match}' does not exist")
            for path in files:
                chosen.setdefault(os.path.realpath(path), os.path.normpath(path))
    if not chosen:
        raise SourceError("the inputs hold no .jsonl, .jsonl.gz, .jsonl.zst or .parquet files")
    sources = []
    for path in sorted(chosen.values()):
        kind = kind_of(path)
        assert kind is not None
        try:
            with open(path, "rb"):
                size = os.path.getsize(path)
        except OSError as exc:
            raise SourceError(f"cannot read input '{path}': {exc.strerror or exc}") from None
        sources.append(Source(path, kind, size, _hive_values(path)))
    return tuple(sources)
