"""The registered input formats. Adding a format is one module and one line in `FORMATS`.

The contract's `format`, a corpus record's `format` field and `--input-format` choose one by
name; `get_format` turns the name into the module's `Format` value.
"""

from __future__ import annotations

from frayproof_audit.errors import InputError
from frayproof_audit.formats.anthropic import ANTHROPIC
from frayproof_audit.formats.auto import AUTO
from frayproof_audit.formats.base import Format, Origin
from frayproof_audit.formats.gemini import GEMINI
from frayproof_audit.formats.openai import OPENAI
from frayproof_audit.formats.otel import OTEL_GENAI
from frayproof_audit.formats.responses import OPENAI_RESPONSES

FORMATS: dict[str, Format] = {
    OPENAI.name: OPENAI,
    ANTHROPIC.name: ANTHROPIC,
    AUTO.name: AUTO,
    OPENAI_RESPONSES.name: OPENAI_RESPONSES,
    OTEL_GENAI.name: OTEL_GENAI,
    GEMINI.name: GEMINI,
}
FORMAT_NAMES = tuple(FORMATS)
DEFAULT_FORMAT = OPENAI.name


class UnknownFormat(InputError):
    """A format name no registered format has."""


def get_format(name: str) -> Format:
    found = FORMATS.get(name)
    if found is None:
        raise UnknownFormat(f"unknown input format {name!r} (known: {', '.join(FORMAT_NAMES)})")
    return found


__all__ = ["DEFAULT_FORMAT", "FORMATS", "FORMAT_NAMES", "Format", "Origin", "UnknownFormat",
           "get_format"]
