"""The registered input formats. Adding a format is one module and one line in `FORMATS`.

A format's record (`formats/base.py`) holds all it knows: how it reads, what `auto` takes as
evidence of it, and how `repair` and `compact` write it back. The contract's `format`, a corpus
record's `format` field and `--input-format` choose one by name; `get_format` turns the name
into the module's `Format` value. `auto` detects among the formats of this registry.
"""

from __future__ import annotations

from frayproof_audit.errors import InputError
from frayproof_audit.formats.anthropic import ANTHROPIC
from frayproof_audit.formats.auto import AutoFormat
from frayproof_audit.formats.base import Format, Origin, evidence_of, messages_key, writer_of
from frayproof_audit.formats.gemini import GEMINI
from frayproof_audit.formats.langchain import LANGCHAIN
from frayproof_audit.formats.openai import OPENAI
from frayproof_audit.formats.otel import OTEL_GENAI
from frayproof_audit.formats.responses import OPENAI_RESPONSES

FORMATS: dict[str, Format] = {}
AUTO = AutoFormat(FORMATS)
"""`auto` chooses among this registry, as it stands at each call."""
FORMATS.update({
    OPENAI.name: OPENAI,
    ANTHROPIC.name: ANTHROPIC,
    AUTO.name: AUTO,
    OPENAI_RESPONSES.name: OPENAI_RESPONSES,
    OTEL_GENAI.name: OTEL_GENAI,
    GEMINI.name: GEMINI,
    LANGCHAIN.name: LANGCHAIN,
})
FORMAT_NAMES = tuple(FORMATS)
DEFAULT_FORMAT = OPENAI.name


class UnknownFormat(InputError):
    """A format name no registered format has."""


def get_format(name: str) -> Format:
    found = FORMATS.get(name)
    if found is None:
        raise UnknownFormat(f"unknown input format {name!r} (known: {', '.join(FORMAT_NAMES)})")
    return found


def detect(snapshot: object) -> tuple[Format, bool]:
    """The registered format a snapshot's evidence names, and whether there was any (`auto`)."""
    return AUTO.detect(snapshot)


def rewritable() -> tuple[str, ...]:
    """The registered formats `repair` and `compact` can write back (those with a writer)."""
    return tuple(name for name, fmt in FORMATS.items() if writer_of(fmt) is not None)


__all__ = ["AUTO", "DEFAULT_FORMAT", "FORMATS", "FORMAT_NAMES", "Format", "Origin", "UnknownFormat",
           "detect", "evidence_of", "get_format", "messages_key", "rewritable", "writer_of"]
