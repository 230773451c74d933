"""The field mapping: where a record keeps each input field, from `--field` and `--config` files.

A bad mapping is a `ConfigError` (exit 2) raised by the parent before any work, never a surprise
inside a worker halfway through a night of logs.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, replace
from typing import Any

import yaml

from frayproof_audit.contract import YamlProblem, _Schema, parse_strict_yaml
from frayproof_audit.errors import InputError
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

CARRY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""A carried field's name: a column-like identifier (`stats --by NAME`, `pairs.carried`)."""
MAX_CARRIED = 32
"""Carried fields per run at most: each is a string kept on every `pairs` row."""


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
    carry: tuple[tuple[str, str], ...] = ()
    """(name, dotted path) of each extra field kept as text in `pairs.carried` (`--carry`)."""

    def path(self, name: str) -> str:
        value: str = getattr(self, name)
        return value

    def items(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, self.path(name)) for name in FIELD_NAMES)

    def carried_paths(self) -> tuple[str, ...]:
        return tuple(path for _, path in self.carry)

    def mapped(self) -> tuple[tuple[str, str], ...]:
        """(field, path) of every field moved from its default place (a key of its own name):
        the ones a run checks it found (`field_watch`), since a typo there fails silently."""
        return tuple((name, path) for name, path in self.items() if path != name)

    def with_specs(self, specs: dict[str, str]) -> FieldMap:
        """A copy with some fields moved; unknown names or empty paths are a `ConfigError`."""
        for name, path in specs.items():
            if name not in FIELD_NAMES:
                raise ConfigError(f"unknown field {_shown(name)} (fields: {', '.join(FIELD_NAMES)})")
            _check_path(f"field {name}", path)
        moved: dict[str, Any] = dict(specs)
        return replace(self, **moved)

    def with_carry(self, specs: dict[str, str]) -> FieldMap:
        """A copy that also carries `specs` (name → dotted path; a name given again moves it).
        A name must be an identifier, and no column `stats --by` already groups on or
        `pairs` already has; a bad path is a `ConfigError`, as for `with_specs`."""
        if not specs:
            return self
        from frayproof_audit.corpus.store.arrow_tables import PAIRS_SCHEMA  # only runs that carry

        reserved = {*PAIRS_SCHEMA.names, *FIELD_NAMES, "log_date"}
        carried = dict(self.carry)
        for name, path in specs.items():
            if type(name) is not str or not CARRY_NAME.fullmatch(name):
                raise ConfigError(f"--carry {_shown(str(name))}: the name must be 1-64 letters,"
                                  " digits or '_', not starting with a digit")
            if name in reserved:
                raise ConfigError(f"--carry {name}: a field or pairs column already has that"
                                  " name (a field is mapped with --field NAME=PATH)")
            _check_path(f"--carry {name}", path)
            carried[name] = path
        if len(carried) > MAX_CARRIED:
            raise ConfigError(f"--carry: at most {MAX_CARRIED} carried fields, got {len(carried)}")
        return replace(self, carry=tuple(carried.items()))


def _check_path(what: str, path: object) -> None:
    if type(path) is not str or not path or path.startswith(".") or path.endswith("."):
        raise ConfigError(f"{what}: the path must be a non-empty dotted path")
    if not is_unicode_text(path):
        raise ConfigError(f"{what}: the path {_shown(path)} is not valid UTF-8 text")
    if ".." in path:
        raise ConfigError(f"{what}: the path {path!r} has an empty segment")


def parse_field_specs(specs: tuple[str, ...] | list[str], option: str = "--field",
                      example: str = "before=request.messages") -> dict[str, str]:
    """`before=request.messages` strings → {name: path}."""
    parsed: dict[str, str] = {}
    for spec in specs:
        if not is_unicode_text(spec):
            raise ConfigError(f"{option} {_shown(spec)}: not valid UTF-8 text")
        name, sep, path = spec.partition("=")
        if not sep:
            raise ConfigError(f"{option} {spec!r}: expected NAME=PATH, e.g. {example}")
        parsed[name.strip()] = path.strip()
    return parsed


def field_map_of(config_file: str | os.PathLike[str] | None, field_specs: tuple[str, ...] = (),
                 carry_specs: tuple[str, ...] = ()) -> FieldMap:
    """The field map of a command line: a `--config` file's `fields:` and `carry:` blocks, then
    `--field` and `--carry` (which win over the file's)."""
    fields, carry = ({}, {}) if config_file is None else load_config(config_file)
    return (FieldMap().with_specs(fields).with_specs(parse_field_specs(field_specs))
            .with_carry(carry)
            .with_carry(parse_field_specs(carry_specs, "--carry", "model=request.model")))


MAX_CONFIG_BYTES = 1024 * 1024
"""A `--config` file holds a field mapping: anything bigger is a mistake (or not a config)."""
MAX_CONFIG_DEPTH = 16
"""Deepest YAML nesting read from a `--config` file (the schema itself needs 2)."""


CONFIG_KEYS = ("fields", "carry")


def load_fields_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """The `fields:` block of a YAML config file (`load_config`)."""
    return load_config(path)[0]


def load_config(path: str | os.PathLike[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Read the `fields:` and `carry:` blocks of a YAML config file (the only keys it may hold),
    each a mapping of names to dotted paths.

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
        return {}, {}
    if type(document) is not dict:
        raise ConfigError(f"Invalid config '{where}': the document must be a mapping")
    for key in document:
        if key not in CONFIG_KEYS:
            raise ConfigError(f"Invalid config '{where}': {key}: unknown key (allowed:"
                              f" {', '.join(CONFIG_KEYS)})")
    blocks = []
    for key, what in (("fields", "field names"), ("carry", "carried names")):
        block = document.get(key) or {}
        if type(block) is not dict or any(type(v) is not str for v in block.values()):
            raise ConfigError(f"Invalid config '{where}': {key}: must map {what} to dotted paths")
        blocks.append({str(k): v for k, v in block.items()})
    return blocks[0], blocks[1]


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
    """A path as printable text: bytes that are not UTF-8 as `\\xNN` (see expansion.display_path)."""
    if is_unicode_text(path):
        return path
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return path.encode("utf-8", "backslashreplace").decode("utf-8")
