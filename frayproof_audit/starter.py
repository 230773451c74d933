"""`init`: a starter `contract.yaml` and the `tool-schema.json` it names, written both or neither.

The two files are written to temporary names in the target folder first, then each is
hard-linked to its final name. `os.link` never replaces anything: it fails when the name exists
in any form, a dangling symlink included, and it never follows a symlink there. If the second
link fails, the first is removed again (only if it is still the file this call made), so a
refusal or a failure leaves the folder as it was: no half-written file and no half of the pair.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from frayproof_audit.errors import InputError

CONTRACT_NAME = "contract.yaml"
SCHEMA_NAME = "tool-schema.json"

CONTRACT_TEMPLATE = """\
# A starter context contract for frayproof-audit: what a compaction of an agent's message list
# must keep. Every key is explained in docs/contract.md; tighten or loosen it for your compactor.
version: 1
format: openai
checks:
  tool_pairs:
    allow_trailing_pending_call: true   # compaction may run inside a tool batch
  unique_tool_ids: true
  structure:
    system_messages: leading_only
  tool_call_integrity: true             # kept calls keep their name, arguments, result id
  # provider_validity: {profile: openai-chat}  # the provider would accept the result (its 400s)
pins:
  - name: system-prompt
    role: system                        # every system message survives verbatim
retain:
  latest_user_message: exact            # the request being worked on is never lost
  recent_exchanges: 1                   # the last closed exchange stays verbatim
  tool_results: complete                # a kept tool result is never cut
  # compare: equivalent                 # forgive re-serialization only (text blocks for a
                                        # string, re-spaced arguments, dropped empty fields)
tools: tool-schema.json                 # argument schemas of the agent's tools
"""

SCHEMA_TEMPLATE = """\
[
  {
    "type": "function",
    "function": {
      "name": "get_weather",
      "description": "Current weather for a place.",
      "parameters": {
        "type": "object",
        "properties": {
          "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
          "days": {"type": "integer", "minimum": 1, "maximum": 7}
        },
        "required": ["location"],
        "additionalProperties": false
      }
    }
  }
]
"""


class StarterError(InputError):
    """The starter files could not be written; nothing was left behind."""


class StarterExists(StarterError):
    """A starter file's name is already taken (by a file, a folder or any symlink)."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"'{path}' already exists: init never overwrites (remove it or use --dir)")
        self.path = path


@dataclass(frozen=True, slots=True)
class StarterFiles:
    """What `write_starter` wrote."""

    contract: Path
    schema: Path

    @property
    def paths(self) -> tuple[Path, Path]:
        return (self.contract, self.schema)


def write_starter(folder: str | os.PathLike[str] = ".") -> StarterFiles:
    """Write `contract.yaml` and `tool-schema.json` into `folder` (an existing folder), both or
    neither. Raises `StarterExists` when either name is taken, `StarterError` when the folder
    cannot be written."""
    where = Path(folder)
    if not where.is_dir():
        raise StarterError(f"'{where}' is not a folder")
    wanted = ((where / CONTRACT_NAME, CONTRACT_TEMPLATE), (where / SCHEMA_NAME, SCHEMA_TEMPLATE))
    for path, _ in wanted:
        if os.path.lexists(path):
            raise StarterExists(path)  # early and friendly; `os.link` below is what guarantees it
    temporaries: list[Path] = []
    try:
        for path, text in wanted:
            temporaries.append(_write_temporary(path, text))
        _link_all([(temporary, path) for temporary, (path, _) in zip(temporaries, wanted, strict=True)])
    finally:
        for temporary in temporaries:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
    return StarterFiles(where / CONTRACT_NAME, where / SCHEMA_NAME)


def _write_temporary(path: Path, text: str) -> Path:
    """A new file next to `path` holding `text`, synced (mode from the umask, as for any file)."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(temporary, flags, 0o666)
    except OSError as exc:
        raise StarterError(f"Cannot write in '{path.parent}': {exc.strerror or exc}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise StarterError(f"Cannot write '{temporary}': {exc.strerror or exc}") from None
    return temporary


def _link_all(pairs: list[tuple[Path, Path]]) -> None:
    """Link each temporary to its final name; on any failure undo the links already made."""
    made: list[tuple[Path, Path]] = []
    try:
        for temporary, path in pairs:
            try:
                os.link(temporary, path)
            except FileExistsError:
                raise StarterExists(path) from None
            except OSError as exc:
                raise StarterError(f"Cannot create '{path}': {exc.strerror or exc}") from None
            made.append((temporary, path))
    except StarterError:
        for temporary, path in made:
            _unlink_if_same(path, temporary)
        raise


def _unlink_if_same(path: Path, temporary: Path) -> None:
    """Remove `path` only while it is still the file `temporary` names (same inode)."""
    with contextlib.suppress(OSError):
        if os.path.samestat(os.lstat(path), os.lstat(temporary)):
            os.unlink(path)
