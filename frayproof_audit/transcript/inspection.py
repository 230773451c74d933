"""`inspect`: a transcript's named defects, and the result object that owns the verdict."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from frayproof_audit.formats import Format, get_format, messages_key
from frayproof_audit.report import EXIT_FAIL, EXIT_PASS
from frayproof_audit.transcript.defects import FATAL, WASTEFUL, Defect, find_defects
from frayproof_audit.transcript.loading import DEFAULT_FORMAT, Transcript, read_transcript


@dataclass(frozen=True, slots=True)
class Inspection:
    """The defects of one transcript. Valid means no FATAL defect: WASTEFUL ones only cost
    context."""

    defects: tuple[Defect, ...]
    format: str
    """The format that read it (the detected one under `auto`): pass it on to later calls."""
    messages: int
    """Wire messages (items for `openai-responses`) in the transcript's message list."""

    @property
    def fatal(self) -> tuple[Defect, ...]:
        return tuple(d for d in self.defects if d.severity == FATAL)

    @property
    def wasteful(self) -> tuple[Defect, ...]:
        return tuple(d for d in self.defects if d.severity == WASTEFUL)

    @property
    def valid(self) -> bool:
        return not self.fatal

    @property
    def repairable(self) -> bool:
        """Every defect can be repaired (True when there are none)."""
        return all(d.repairable for d in self.defects)

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.valid else EXIT_FAIL

    def of(self, name: str) -> tuple[Defect, ...]:
        return tuple(d for d in self.defects if d.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "messages": self.messages, "valid": self.valid,
                "repairable": self.repairable, "defects": [d.to_dict() for d in self.defects]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self) -> str:
        verdict = "VALID" if self.valid else "INVALID"
        head = (f"{verdict}: {len(self.fatal)} fatal, {len(self.wasteful)} wasteful "
                f"({self.messages} messages, format {self.format})")
        return "\n".join([head, *(f"  {d.to_text()}" for d in self.defects)])


def inspect(snapshot: Any, fmt: Format | str | None = DEFAULT_FORMAT,
            profile: str | None = None) -> Inspection:
    """The defects of `snapshot` in format `fmt` (default `auto`), judged by the provider
    `profile` (default: the one for the format, see `frayproof_audit.providers`). Never
    mutates its input; raises `InputError` for data the format cannot read."""
    return inspect_transcript(read_transcript(snapshot, fmt), profile)


def inspect_transcript(transcript: Transcript, profile: str | None = None) -> Inspection:
    return Inspection(tuple(find_defects(transcript.loaded, profile)), transcript.format.name,
                      wire_length(transcript.wire, transcript.format.name))


def wire_length(wire: Any, fmt: str) -> int:
    if isinstance(wire, list):
        return len(wire)
    key = messages_key(get_format(fmt))
    found = wire.get(key) if isinstance(wire, dict) else None
    return len(found) if isinstance(found, list) else 0
