"""Input expansion: files, globs, folders (recursive) and Hive datasets → an ordered list of input files.

Expansion happens in the parent before any work, so a typo in a path is exit 2 within a second,
not a run that silently audited nothing. The list is sorted by path, so the same inputs in any
order give the same shards, the same part files and the same tables.

What expansion promises, because a nightly job runs it unattended:

* An input is a URI only when it starts with `scheme://` (`s3://bucket/logs/`, `gs://…`):
  then it is read through fsspec (`corpus/inputs/location.py`), `file://` being a local path. Anything
  else, colons included (`audit:2025-06-02/`), is a local path. A database connection URI
  (`postgresql://`, `postgres://`: `frayproof_audit/database_uri.py`) is no file: it is one input
  of kind `postgres`, read by the source that has evidence of it (`accepts`: a LangGraph
  checkpointer), never by fsspec; its `path` (what every table and message shows) has its
  password redacted, the URI as given is only what the reader connects with (`local`).
* Inputs are regular files. A FIFO, a device or a socket would block or never end, so naming one
  is an error, and so is `-` (standard input is not read: save it to a file first).
* Folder walks follow symbolic links but enter every folder once (by device and inode), so links
  that loop (`a/up -> ..`) end the walk instead of running it away. A folder that cannot be
  listed is an error naming it, never a silently smaller audit, whether a walk or a glob
  (`logs/*/*.jsonl`, matched here rather than by `glob.glob`, which skips it) meets it.
* A frayproof-audit dataset is output, never input: the `--out` folder and any folder holding a
  dataset (its lock file `.frayproof-audit.lock`, a `_staging/` folder holding a run's lock, or
  `runs/` holding our part files) are skipped, and `ExpandedInputs.skipped_datasets` names them
  so the run can say so. So are repaired snapshots: the run's `--repair-out` folder, and any
  folder an earlier run's `--repair-out` marked (`REPAIRED_MARKER`), such as last night's.
* A file name that is not UTF-8 is still read; `InputFile.path` shows its undecodable bytes as
  `\\xNN` (`caf\\xe9.jsonl`), the form every table and message uses.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import IO
from urllib.parse import unquote

from frayproof_audit import database_uri
from frayproof_audit.corpus.inputs import location
from frayproof_audit.corpus.store.layout import LOCK, RUNS_FOLDER, STAGING
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
"""File name endings of pair records (and of the logs sources read as JSON lines or Parquet),
and the reader each one needs."""
SOURCE_KINDS = {
    ".sqlite": "sqlite",
    ".sqlite3": "sqlite",
    ".db": "sqlite",
    ".json": "json",
}
"""Endings only a source reads (`--source`): a checkpoint database; a legacy session file,
which a source notes rather than reads. Never an input of the `pairs` source."""
_ENDINGS = sorted({**KINDS, **SOURCE_KINDS}, key=len, reverse=True)
Accepts = Callable[[str, str], bool]
"""(path, kind) → whether a file of a `SOURCE_KINDS` kind is an input of this run."""

_NONE_FOUND = ".jsonl, .jsonl.gz, .jsonl.zst or .parquet files"
_PART = re.compile(r"part-[A-Za-z0-9][A-Za-z0-9._-]*\.parquet")
_TABLE_FOLDERS = frozenset((RUNS_FOLDER, "pairs", "findings", "mutants", STAGING))
_RUN_LOCK = re.compile(r"[^.].*\.lock")
REPAIRED_MARKER = ".frayproof-audit-repaired"
"""Written into every `--repair-out` folder: the repaired snapshots in it are output, not logs."""


class InputFileError(InputError):
    """An input path does not exist, matches nothing, or cannot be read (exit 2)."""


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input file. `hive` holds `key=value` folder names above it (values URL-decoded).

    `path` is the name tables and messages show; `os_path` is the name to open when the two
    differ (a file name that is not UTF-8; a database URI whose password `path` redacts, hence
    never in the repr). Readers open `local`.
    """

    path: str
    kind: str
    size: int
    hive: tuple[tuple[str, str], ...] = ()
    os_path: str | None = field(default=None, repr=False)
    remote: bool = False
    """`path` is a URI read through fsspec (`s3://…`), not a local file."""
    source: str = "pairs"
    """What reads it (`source_choice`): `pairs` (the audit's own records) or a registered
    source (`frayproof_audit.sources.SOURCES`), whose compactions are its rows."""
    source_problem: str | None = None
    """Why no source can read it (evidence of two, a database on an object store): the file
    is then one input-error row saying so."""

    @property
    def local(self) -> str:
        return self.path if self.os_path is None else self.os_path

    @property
    def database(self) -> bool:
        """A database connection URI (`postgresql://…`), read by its source, not a file."""
        return self.kind == database_uri.KIND

    def absolute(self) -> InputFile:
        """The same file, opened by an absolute name (for workers with another working folder)."""
        if self.remote or self.database or os.path.isabs(self.local):
            return self
        return replace(self, os_path=os.path.abspath(self.local))


def open_input(file: InputFile) -> IO[bytes]:
    """A binary file for an input: the local file, or the object read through fsspec. Readers
    hand this file object to Arrow, so no name is ever parsed as a URI by accident."""
    if file.remote:
        fs, path = location.filesystem(file.path)
        handle: IO[bytes] = fs.open(path, "rb")
        return handle
    return open(file.local, "rb")


@dataclass(frozen=True, slots=True)
class ExpandedInputs:
    """The input files, and the dataset folders expansion left out (shown by the summary)."""

    files: tuple[InputFile, ...]
    skipped_datasets: tuple[str, ...] = ()

    def note(self) -> str | None:
        """One line for the run summary when dataset folders were skipped, else None."""
        if not self.skipped_datasets:
            return None
        folders = ", ".join(self.skipped_datasets)
        return f"skipped frayproof-audit output (not logs): {folders}"


def display_path(path: str) -> str:
    """`path` as valid text: bytes a file name holds that are not UTF-8 become `\\xNN`.

    Python spells such bytes as lone surrogates (PEP 383), which no UTF-8 table cell, JSON
    document or terminal accepts. The escaped form is readable and, unless a name really holds
    a backslash followed by `x`, turns back into the bytes.
    """
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a surrogate that did not come from the file system
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def kind_of(path: str) -> str | None:
    """The kind of a file by its name: a `KINDS` or a `SOURCE_KINDS` one, or None (`postgres`
    for a database URI, whatever its name ends with)."""
    if database_uri.is_database_uri(path):
        return database_uri.KIND
    lowered = path.lower()
    for ending in _ENDINGS:
        if lowered.endswith(ending):
            return KINDS.get(ending) or SOURCE_KINDS[ending]
    return None


def _input_kind(path: str, accepts: Accepts | None) -> str | None:
    """The kind of an input file, None when this run does not read files of that name."""
    kind = kind_of(path)
    if kind is None or kind in _PAIR_KINDS:
        return kind
    return kind if accepts is not None and accepts(path, kind) else None


_PAIR_KINDS = frozenset(KINDS.values())


def _hidden(name: str) -> bool:
    # Hive/Spark convention: `_SUCCESS`, `_staging`, `.crc` files are never data.
    return name.startswith((".", "_"))


def _meets_hidden(pattern: list[str], names: list[str]) -> bool:
    """Whether a wildcard or a walk met a hidden name on the way from a pattern to a match.

    `names` are the match's path parts, aligned with the `pattern` parts it was matched with;
    parts past the pattern (or past a `**`) were found by a walk. A name spelled out in the
    pattern is the user's choice, and so is one matched by a part that itself starts with `.`
    or `_` (`_*.jsonl`), as a shell's `.*` matches dot files."""
    for index, name in enumerate(names):
        part = pattern[index] if index < len(pattern) else "*"
        if part == "**":
            return any(_hidden(rest) for rest in names[index:])
        if _hidden(name) and _is_glob(part) and not _hidden(part):
            return True
    return False


def _hive_values(path: str) -> tuple[tuple[str, str], ...]:
    values: list[tuple[str, str]] = []
    for part in os.path.dirname(path).split(os.sep):
        key, sep, value = part.partition("=")
        if sep and key:
            values.append((key, unquote(value)))
    return tuple(values)


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


class _Expander:
    """One expansion: the datasets it skipped, and what it learnt about folders on the way."""

    def __init__(self, *outputs: str | None) -> None:
        self.outputs = {_key(folder) for folder in outputs if folder is not None} - {None}
        """(device, inode) of the run's own output folders (`--out`, `--repair-out`)."""
        self.skipped: dict[str, None] = {}
        self._datasets: dict[str, str | None] = {}
        self._roots: dict[str, bool] = {}

    def dataset_of(self, folder: str) -> str | None:
        """The dataset whose output `folder` is (the dataset itself or inside one of its table
        folders), else None; spelled relative when `folder` is.

        Logs kept beside the tables (`--out .` run in the folder that holds `logs/`) are not
        output and stay inputs. Each folder up to the root is looked at once per expansion.
        """
        found = self._owner(os.path.abspath(folder))
        if found is None or os.path.isabs(folder):
            return found
        return os.path.relpath(found)

    def _owner(self, folder: str) -> str | None:
        if folder not in self._datasets:
            parent = os.path.dirname(folder)
            if self._is_dataset(folder):
                found: str | None = folder
            elif parent == folder:
                found = None
            elif self._is_dataset(parent):
                found = parent if os.path.basename(folder) in _TABLE_FOLDERS else None
            else:
                found = self._owner(parent)
            self._datasets[folder] = found
        return self._datasets[folder]

    def _is_dataset(self, folder: str) -> bool:
        if folder not in self._roots:
            self._roots[folder] = (
                _key(folder) in self.outputs
                or os.path.isfile(os.path.join(folder, LOCK))
                or os.path.isfile(os.path.join(folder, REPAIRED_MARKER))
                or _holds(os.path.join(folder, STAGING), _RUN_LOCK)
                or _holds(os.path.join(folder, RUNS_FOLDER), _PART)
            )
        return self._roots[folder]

    def skip(self, folder: str) -> None:
        self.skipped[display_path(folder)] = None

    def walk(self, root: str) -> tuple[list[str], list[str]]:
        """(folders, files) under `root`, hidden names left out, each folder entered once."""
        folders: list[str] = []
        files: list[str] = []
        entered: set[tuple[int, int]] = set()
        pending = [root]
        while pending:
            folder = pending.pop()
            key = _key(folder)
            if key is None or key in entered:
                continue  # a second link to a folder already walked, or a loop of links
            entered.add(key)
            if self._is_dataset(folder):
                self.skip(folder)
                continue
            try:
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError as exc:
                raise InputFileError(
                    f"cannot list input folder '{display_path(folder)}': {exc.strerror or exc}"
                ) from None
            folders.append(folder)
            for entry in entries:
                if _hidden(entry.name):
                    continue
                path = os.path.join(folder, entry.name)
                if _is_folder(entry):
                    pending.append(path)
                else:
                    files.append(path)
        return folders, files


def _holds(folder: str, name: re.Pattern[str]) -> bool:
    """Whether `folder` exists and holds an entry whose name matches `name`."""
    try:
        with os.scandir(folder) as entries:
            return any(name.fullmatch(entry.name) for entry in entries)
    except OSError:
        return False


def _key(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symbolic links
    except OSError:
        return False


def _glob_parts_match(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_glob_parts_match(parts[k:], pattern[1:]) for k in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _glob_parts_match(
        parts[1:], pattern[1:]
    )


def _recursive_glob(pattern: str, expander: _Expander) -> list[str]:
    """`**` globs through the same cycle-safe walk as folders (glob.glob loops on link cycles)."""
    parts = pattern.split(os.sep)
    first = next(i for i, part in enumerate(parts) if _is_glob(part))
    root = os.sep.join(parts[:first]) or ("." if first == 0 else os.sep)
    rest = [part for part in parts[first:] if part]
    if not os.path.isdir(root):
        return []
    folders, files = expander.walk(root)
    matched: list[str] = []
    for path in (*folders, *files):
        relative = os.path.relpath(path, root)
        if relative != "." and _glob_parts_match(relative.split(os.sep), rest):
            matched.append(path if first else os.path.normpath(path))
    return sorted(matched)


def _glob(pattern: str) -> list[str]:
    """`glob.glob(pattern)` (no `**`), sorted, except that a folder the pattern has to list or
    look into and cannot is a `InputFileError` naming it: glob.glob skips it silently."""
    absolute = pattern.startswith(os.sep)
    parts = [part for part in pattern.split(os.sep) if part]
    found = [os.sep if absolute else ""]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        matched: list[str] = []
        for base in found:
            if _is_glob(part):
                names = [name for name in _names_in(base or os.curdir)
                         if fnmatchcase(name, part) and (part.startswith(".") or not name.startswith("."))]
            else:
                names = [part]
            for name in names:
                path = os.path.join(base, name)
                if _looked_up(path, base, folder=not last or pattern.endswith(os.sep)):
                    matched.append(path)
        found = matched
    if pattern.endswith(os.sep) and parts:
        found = [path + os.sep for path in found]
    return sorted(found)


def _names_in(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as listing:
            return [entry.name for entry in listing]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise InputFileError(
            f"cannot list input folder '{display_path(folder)}': {exc.strerror or exc}") from None


def _looked_up(path: str, base: str, folder: bool) -> bool:
    """Whether `path` exists (as a folder, if `folder`): an error naming `base` when it cannot
    be looked at (no search permission on `base`)."""
    try:
        info = os.stat(path) if folder else os.lstat(path)
    except PermissionError as exc:
        raise InputFileError(f"cannot list input folder '{display_path(base or os.curdir)}':"
                          f" {exc.strerror or exc}") from None
    except (OSError, ValueError):
        return False  # missing, a link loop, a name too long: no match, as for glob.glob
    return stat.S_ISDIR(info.st_mode) if folder else True


def expand_inputs(
    inputs: tuple[str, ...] | list[str], out: str | None = None, repair_out: str | None = None,
    accepts: Accepts | None = None,
) -> ExpandedInputs:
    """Every input file, once, sorted by path, and the dataset folders left out.

    `out` is the run's dataset folder and `repair_out` its `--repair-out` folder: never read,
    whatever the inputs say (nor is any other folder holding `REPAIRED_MARKER`). `accepts`
    says which local files of a `SOURCE_KINDS` kind are inputs too (None: none; the sources
    decide, `source_choice.accepts`). Raises `InputFileError` (or `ConfigError` for a URI) for
    anything unusable.
    """
    local_out = location.local_path(out) if out is not None else None
    local_repairs = location.local_path(repair_out) if repair_out is not None else None
    expander = _Expander(local_out, local_repairs)
    chosen: dict[str, str] = {}  # realpath -> path as spelled
    remote: dict[str, InputFile] = {}
    for given in inputs:
        if database_uri.is_database_uri(given):
            file = _database(given, accepts)
            remote.setdefault(file.path, file)
            continue
        local = location.local_path(given)
        if local is None:
            for file in _remote_files(given, out, expander):
                remote.setdefault(file.path, file)
            continue
        for path in _files_of(local, expander, accepts):
            chosen.setdefault(os.path.realpath(path), os.path.normpath(path))
    skipped = tuple(expander.skipped)
    if not chosen and not remote:
        also = f" (skipped frayproof-audit output: {', '.join(skipped)})" if skipped else ""
        raise InputFileError(f"the inputs hold no {_NONE_FOUND}{also}")
    found = [_input_file(path, accepts) for path in chosen.values()] + list(remote.values())
    return ExpandedInputs(tuple(sorted(found, key=lambda file: file.path)), skipped)


def _database(uri: str, accepts: Accepts | None) -> InputFile:
    """The input a database connection URI names, if a source of this run reads it (`accepts`
    asks the source, which connects: one that cannot be reached is an error here, exit 2)."""
    shown = database_uri.redacted(uri)
    if accepts is None:
        raise InputFileError(f"input '{shown}' is a database, which only a source reads"
                             " (--source langgraph reads a LangGraph Postgres checkpointer)")
    if not accepts(uri, database_uri.KIND):
        raise InputFileError(f"input '{shown}': no source of this run reads a database"
                             " (--source langgraph reads a LangGraph Postgres checkpointer)")
    return InputFile(shown, database_uri.KIND, 0, os_path=None if shown == uri else uri)


def _remote_files(given: str, out: str | None, expander: _Expander) -> list[InputFile]:
    """The data files under (or matched by) a URI, as remote input files, hidden names left out.

    The `--out` dataset and any folder holding a dataset's `runs/` part files are skipped, as
    for local folders."""
    fs, root = location.filesystem(given)
    fs.invalidate_cache()
    named: list[str] = []  # the pattern's parts below `base`: names spelled out are read
    try:
        if _is_glob(root):
            matched = fs.glob(root, detail=True)
            infos: dict[str, dict[str, object]] = {}
            for path, info in matched.items():
                if info.get("type") == "directory":
                    infos.update(fs.find(path, detail=True))
                else:
                    infos[path] = info
            base = root[: min(root.find(c) for c in "*?[" if c in root)].rsplit("/", 1)[0]
            named = root[len(base):].strip("/").split("/")
        elif fs.isdir(root):
            infos, base = fs.find(root, detail=True), root
        elif fs.isfile(root):
            infos, base = {root: fs.info(root)}, root.rsplit("/", 1)[0]
            named = [root.rsplit("/", 1)[-1]]
        else:
            raise InputFileError(f"input '{given}' does not exist")
    except (OSError, ValueError, NotImplementedError) as exc:
        # ValueError: s3fs refuses to walk every bucket (`s3://*`); NotImplementedError: a
        # filesystem that cannot list
        raise InputFileError(f"cannot list input '{given}': {exc or type(exc).__name__}") from None
    out_path = None
    if out is not None and location.is_uri(out) and location.scheme(out) == location.scheme(given):
        out_path = location.filesystem(out)[1].rstrip("/") + "/"
    datasets = {
        path.rsplit("/", 2)[0] + "/"
        for path in infos
        if path.rsplit("/", 2)[-2:-1] == [RUNS_FOLDER] and _PART.fullmatch(path.rsplit("/", 1)[-1])
    }
    files = []
    for path, info in sorted(infos.items()):
        relative = path[len(base):].strip("/").split("/")
        if _meets_hidden(named, relative) or kind_of(path) is None:
            continue
        owner = next((d for d in datasets if path.startswith(d)), None)
        if out_path is not None and path.startswith(out_path):
            owner = out_path
        if owner is not None:
            expander.skip(location.full_uri(given, owner.rstrip("/")))
            continue
        uri = location.full_uri(given, path)
        kind = kind_of(path)
        assert kind is not None
        size = info.get("size")
        files.append(InputFile(uri, kind, int(size) if isinstance(size, int) else 0,
                              _hive_values(uri), remote=True))
    if not files and not expander.skipped:
        raise InputFileError(f"input '{given}' holds no {_NONE_FOUND}")
    return files


def input_files(inputs: tuple[str, ...] | list[str], out: str | None = None) -> tuple[InputFile, ...]:
    """The input files of `expand_inputs` (kept for callers that need only the files)."""
    return expand_inputs(inputs, out).files


def _files_of(given: str, expander: _Expander, accepts: Accepts | None = None) -> list[str]:
    """The data files one input names; raises for an input that names nothing usable."""
    shown = display_path(given)
    if given == "-":
        raise InputFileError("input '-': standard input is not read; save it to a file and give its path")
    literal = not _is_glob(given) or os.path.lexists(given)
    skipped = len(expander.skipped)
    if literal:
        matches = [given]
    elif "**" in given:
        matches = _recursive_glob(given, expander)
    else:
        parts = given.split(os.sep)
        matches = [match for match in _glob(given) if not _meets_hidden(parts, match.split(os.sep))]
    if not literal and not matches and len(expander.skipped) == skipped:
        raise InputFileError(f"input '{shown}' matches no files")
    files: list[str] = []
    for match in matches:
        if os.path.isdir(match):
            dataset = expander.dataset_of(match)
            if dataset is not None:
                expander.skip(dataset)
                continue
            found = [path for path in expander.walk(match)[1]
                     if _input_kind(path, accepts) is not None]
            if not found and literal and len(expander.skipped) == skipped:
                raise InputFileError(f"input folder '{shown}' holds no {_NONE_FOUND}")
            files.extend(found)
        elif os.path.lexists(match):
            if _input_kind(match, accepts) is None:
                if not literal:
                    continue
                also = "" if accepts is None else ", nor a file a source reads"
                raise InputFileError(
                    f"input '{display_path(match)}' is not .jsonl, .ndjson, .jsonl.gz, .jsonl.zst"
                    f" or .parquet{also}"
                )
            dataset = expander.dataset_of(os.path.dirname(match) or ".")
            if dataset is not None:
                expander.skip(dataset)
                continue
            files.append(match)
        else:
            raise InputFileError(f"input '{display_path(match)}' does not exist")
    return files


def _input_file(path: str, accepts: Accepts | None = None) -> InputFile:
    """An `InputFile` for a chosen file, after checking it is a regular file we can open."""
    shown = display_path(path)
    kind = _input_kind(path, accepts)
    assert kind is not None
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            # Checked before opening: opening a FIFO blocks until a writer comes.
            raise InputFileError(f"input '{shown}' is {file_type(info.st_mode)}, not a regular file")
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise InputFileError(f"cannot read input '{shown}': {exc.strerror or exc}") from None
    return InputFile(shown, kind, info.st_size, _hive_values(shown), None if shown == path else path)
