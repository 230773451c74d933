"""The frozen options of one audit run, and the field mapping that says where a record keeps what.

Everything a run needs is decided here, before any work: a bad option is an `InputError` (exit 2)
raised by the parent, never a surprise inside a worker halfway through a night of logs.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field, fields, replace
from typing import Any

import yaml

from frayproof_audit.bounds import MAX_BYTES, MAX_COUNT
from frayproof_audit.contract import YamlProblem, _Schema, parse_strict_yaml
from frayproof_audit.corpus.inputs import location
from frayproof_audit.errors import InputError
from frayproof_audit.formats import FORMATS
from frayproof_audit.jsonio import is_unicode_text

FIELD_NAMES = (
    "before",
    "after",
    "pair_id",
    "session_id",
    "compactor",
    "logged_at",
    "format",
    "tools",
)
"""The input record's fields (docs/audit.md "Inputs"); each may live at a dotted path."""

BACKENDS = ("loky", "threading", "dask", "ray")
CLUSTER_BACKENDS = ("dask", "ray")
"""Backends that run on a cluster (`--scheduler`); the others run on this machine."""
FAIL_ON = ("failures", "survivors", "input-errors", "none")
STATS_BY = ("compactor", "log_date", "run_id")
"""Columns `stats --by` can group on (kept here so the CLI need not import Polars to list them)."""
DEFAULT_SHARD_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_INPUT_ERROR_RATE = 0.5
"""Input errors / records above this fail the run. A safety net against an audit that did not
see the log it was pointed at (a wrong field map, gzip bytes in a `.jsonl`: all or most records
bad), loose enough that the truncated last line of a live log, even one per small file, never
trips it. Stricter nightly jobs set a lower rate, or `--fail-on input-errors` (any)."""
DEFAULT_MAX_MUTANTS_PER_PAIR = 2000
"""Mutation sites judged per pair at most (`mutate.budget`; None: all). Generous: a typical
compacted session (tens to a few hundred messages, under ~1,000 sites) is judged in full, exactly
as without a budget, while a record of hundreds of thousands of messages costs about a second and
2,000 mutant rows instead of minutes and a million rows."""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class ConfigError(InputError):
    """An audit option, field mapping or config file is unusable (exit 2, before any work)."""


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Where each input field lives in a record, as a dotted path (`request.messages`).

    A path is first tried as one literal key (so a flattened column named `request.messages`
    works), then segment by segment into nested objects or Parquet structs.
    """

    before: str = "before"
    after: str = "after"
    pair_id: str = "pair_id"
    session_id: str = "session_id"
    compactor: str = "compactor"
    logged_at: str = "logged_at"
    format: str = "format"
    tools: str = "tools"

    def path(self, name: str) -> str:
        value: str = getattr(self, name)
        return value

    def items(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, self.path(name)) for name in FIELD_NAMES)

    def with_specs(self, specs: dict[str, str]) -> FieldMap:
        """A copy with some fields moved; unknown names or empty paths are a `ConfigError`."""
        for name, path in specs.items():
            if name not in FIELD_NAMES:
                raise ConfigError(f"unknown field {_shown(name)} (fields: {', '.join(FIELD_NAMES)})")
            if type(path) is not str or not path or path.startswith(".") or path.endswith("."):
                raise ConfigError(f"field {name}: the path must be a non-empty dotted path")
            if not is_unicode_text(path):
                raise ConfigError(f"field {name}: the path {_shown(path)} is not valid UTF-8 text")
            if ".." in path:
                raise ConfigError(f"field {name}: the path {path!r} has an empty segment")
        return replace(self, **specs)


def parse_field_specs(specs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`before=request.messages` strings → {name: path}."""
    parsed: dict[str, str] = {}
    for spec in specs:
        if not is_unicode_text(spec):
            raise ConfigError(f"--field {_shown(spec)}: not valid UTF-8 text")
        name, sep, path = spec.partition("=")
        if not sep:
            raise ConfigError(f"--field {spec!r}: expected NAME=PATH, e.g. before=request.messages")
        parsed[name.strip()] = path.strip()
    return parsed


MAX_CONFIG_BYTES = 1024 * 1024
"""A `--config` file holds a field mapping: anything bigger is a mistake (or not a config)."""
MAX_CONFIG_DEPTH = 16
"""Deepest YAML nesting read from a `--config` file (the schema itself needs 2)."""


def load_fields_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read the `fields:` block of a YAML config file (the only key it may hold for now).

    As strict as a contract: duplicate keys, merge keys (`<<`) and non-string keys are refused,
    and so are files that are not regular files (a FIFO would block), over `MAX_CONFIG_BYTES`,
    or nested deeper than `MAX_CONFIG_DEPTH`.
    """
    where = _shown_path(os.fspath(path))
    text = _read_config(os.fspath(path), where)
    try:
        _check_depth(text)
        document = parse_strict_yaml(text)
    except (_Schema, YamlProblem) as exc:
        raise ConfigError(f"Invalid config '{where}': {exc}") from None
    if document is None:
        return {}
    if type(document) is not dict:
        raise ConfigError(f"Invalid config '{where}': the document must be a mapping")
    for key in document:
        if key != "fields":
            raise ConfigError(f"Invalid config '{where}': {key}: unknown key (allowed: fields)")
    block = document.get("fields") or {}
    if type(block) is not dict or any(type(v) is not str for v in block.values()):
        raise ConfigError(f"Invalid config '{where}': fields: must map field names to dotted paths")
    return {str(k): v for k, v in block.items()}


def _read_config(path: str, where: str) -> str:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"Cannot read config '{where}': not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"Cannot read config '{where}': {info.st_size} bytes, over {MAX_CONFIG_BYTES}"
            )
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)  # the file may have grown since stat
    except OSError as exc:
        raise ConfigError(f"Cannot read config '{where}': {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"Cannot read config '{where}': over {MAX_CONFIG_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"Invalid config '{where}': not valid UTF-8") from None


def _check_depth(text: str) -> None:
    """Refuse deep nesting from the event stream, before PyYAML's recursive composer sees it."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                raise _Schema(f"nested deeper than {MAX_CONFIG_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1



def _shown(value: str) -> str:
    return f"'{_shown_path(value)}'"


def _shown_path(path: str) -> str:
    """A path as printable text: bytes that are not UTF-8 as `\\xNN` (see sources.display_path)."""
    if is_unicode_text(path):
        return path
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """Every option of one audit run. Build it, call `run_audit(config)`; nothing else is read."""

    inputs: tuple[str, ...]
    out: str
    contract: str | None = None
    n_jobs: int = -1
    backend: str = "loky"
    run_id: str | None = None
    fields: FieldMap = field(default_factory=FieldMap)
    mutate: bool = True
    operators: tuple[str, ...] | None = None
    input_format: str | None = None
    """Wire format of records without a `format` field (default: the contract's `format`)."""
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    shard_bytes: int = DEFAULT_SHARD_BYTES
    fail_on: tuple[str, ...] = ("failures",)
    max_failure_rate: float | None = None
    argv: tuple[str, ...] = ()
    max_input_error_rate: float | None = DEFAULT_MAX_INPUT_ERROR_RATE
    """Input errors / records above this fail the run (None: never; `fail_on` input-errors: any)."""
    allow_engine_errors: bool = False
    """Records whose audit raised (a bug) do not fail the run; by default any one does."""
    max_mutants_per_pair: int | None = DEFAULT_MAX_MUTANTS_PER_PAIR
    """Mutation sites judged per pair at most, sampled (None: every site)."""
    repair_out: str | None = None
    """Folder for the repaired after snapshots of failing pairs a repair fixes (None: none)."""
    scheduler: str | None = None
    """Dask or Ray cluster to run on (`tcp://HOST:PORT`, a Ray address) or `local` (the default
    for those backends: a cluster of `n_jobs` workers on this machine, started for the run)."""
    incremental: bool = False
    """Audit only what no other committed run with the same contract fingerprint audited
    (`corpus/inputs/incremental_plan.py`): the run of this run id, which this one replaces, never counts."""

    def __post_init__(self) -> None:
        if not self.inputs:
            raise ConfigError("no inputs: give at least one file, folder or glob")
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown backend {self.backend!r} (choose {', '.join(BACKENDS)})")
        if self.scheduler is not None and self.backend not in CLUSTER_BACKENDS:
            raise ConfigError(f"--scheduler needs --backend {' or '.join(CLUSTER_BACKENDS)}"
                              f" (not {self.backend})")
        if self.scheduler is not None and (not self.scheduler or not is_unicode_text(self.scheduler)):
            raise ConfigError("--scheduler must be an address (tcp://HOST:PORT) or 'local'")
        if self.n_jobs == 0 or self.n_jobs < -1 or self.n_jobs > MAX_COUNT:
            raise ConfigError(f"jobs must be a number from 1 to {MAX_COUNT}, or -1 for all cores")
        if self.run_id is not None:
            check_run_id(self.run_id)
        for name in ("max_record_bytes", "shard_bytes"):
            if not 1 <= getattr(self, name) <= MAX_BYTES:
                raise ConfigError(f"{name} must be from 1 to {MAX_BYTES} (1 TiB)")
        for gate in self.fail_on:
            if gate not in FAIL_ON:
                raise ConfigError(f"unknown --fail-on {gate!r} (choose {', '.join(FAIL_ON)})")
        if "none" in self.fail_on and len(self.fail_on) > 1:
            raise ConfigError("--fail-on none cannot be combined with other gates")
        rate = self.max_failure_rate
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise ConfigError("--max-failure-rate must be between 0 and 1")
        rate = self.max_input_error_rate
        if rate is not None and not 0.0 <= rate <= 1.0:
            raise ConfigError("--max-input-error-rate must be between 0 and 1")
        budget = self.max_mutants_per_pair
        if budget is not None and (type(budget) is not int or not 1 <= budget <= MAX_COUNT):
            raise ConfigError(f"--max-mutants-per-pair must be an integer from 1 to {MAX_COUNT}"
                              " (0 on the command line: no budget)")
        if self.operators is not None and not self.operators:
            raise ConfigError("--operators needs at least one operator name")
        if self.input_format is not None and self.input_format not in FORMATS:
            raise ConfigError(f"unknown --input-format {self.input_format!r}"
                              f" (choose {', '.join(FORMATS)})")
        _repair_folder(self.repair_out)  # a URI is refused before any work

    @property
    def repair_folder(self) -> str | None:
        """The local folder `--repair-out` names (a `file://` URI is its path), or None."""
        return _repair_folder(self.repair_out)

    def options(self) -> dict[str, Any]:
        """The options that shape the result, for the `runs` table (paths and argv excluded)."""
        skip = {"inputs", "out", "contract", "argv", "fields", "repair_out", "scheduler"}
        found = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
        found["fields"] = dict(self.fields.items())
        found["operators"] = list(self.operators) if self.operators is not None else None
        found["fail_on"] = list(self.fail_on)
        return found


def _repair_folder(repair_out: str | None) -> str | None:
    if repair_out is None:
        return None
    try:
        folder = location.local_path(repair_out)
    except location.LocationError as exc:
        raise ConfigError(f"--repair-out {exc}") from None
    if folder is None:
        raise ConfigError(f"--repair-out '{repair_out}' is a URI: repaired snapshots are written to"
                          f" a local folder (for a local folder of that name, write ./{repair_out})")
    if not folder:
        raise ConfigError("--repair-out needs a folder name")
    return folder


def check_run_id(run_id: str) -> str:
    """Run ids become file names, so they are restricted to a safe, portable alphabet."""
    if not _RUN_ID.fullmatch(run_id):
        raise ConfigError(
            f"run id {run_id!r} must be 1-128 characters of letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    return run_id
