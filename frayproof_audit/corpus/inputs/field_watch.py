"""Whether a run's mapped fields were found: a mapping typo must not fail silently.

A field moved with `--field`/`--config` (`FieldMap.mapped`), or carried with `--carry`, that
no record holds files every
pair under compactor "(none)" or the run's date without a word. Every record a worker reads as
an object is looked at for each watched path (a Hive `key=value` folder counts, as it does for
the reader); the run summary warns about a path found in fewer than half the records read, with
the keys the first record lacking it has where the path stops matching (`nearest_keys`), and
`--strict-fields` makes that an input error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frayproof_audit.corpus.inputs.field_map import FieldMap
from frayproof_audit.corpus.inputs.record_fields import has_value, nearest_keys

KEYS_SHOWN = 12
"""Keys a warning lists (the rest are counted)."""


@dataclass(frozen=True, slots=True)
class Watched:
    """One path a run looks for in every record: a mapped field (`--field NAME=PATH`) or a
    carried one (`--carry NAME=PATH`)."""

    name: str
    option: str
    """How the user spelled it: `--field compactor=strategy.name`."""
    path: str


def watched_paths(fields: FieldMap) -> tuple[Watched, ...]:
    return (*(Watched(name, f"--field {name}={path}", path) for name, path in fields.mapped()),
            *(Watched(name, f"--carry {name}={path}", path) for name, path in fields.carry))


class FieldWatch:
    """Counts, for one input file, the records holding each watched path (into a `Tally`)."""

    __slots__ = ("_hive", "_watched")

    def __init__(self, watched: tuple[Watched, ...], hive: tuple[tuple[str, str], ...]) -> None:
        folders = dict(hive)
        self._watched = tuple(item for item in watched if item.path not in folders)
        self._hive = tuple(item.name for item in watched if item.path in folders)

    def see(self, record: dict[str, Any], found: dict[str, int],
            missing: dict[str, tuple[str, tuple[str, ...]]]) -> None:
        for name in self._hive:
            found[name] = found.get(name, 0) + 1
        for item in self._watched:
            if has_value(record, item.path):
                found[item.name] = found.get(item.name, 0) + 1
            elif item.name not in missing:
                missing[item.name] = nearest_keys(record, item.path)
