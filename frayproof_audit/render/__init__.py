"""Output formats of results (`--format`), one module each, registered in `OUTPUTS`.

A result is a `Report` (validate, check), a `MutationReport` (mutate) or a `RunSummary`
(audit); each owns its verdict and exit code and knows its own text and JSON forms. An output
format is a function from a result to the text printed. Adding one (SARIF, JUnit, GitHub
annotations) is a module here and a line in `OUTPUTS`; the commands' `--format` choices are
read from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Renderable(Protocol):
    """What every result offers every output format."""

    @property
    def exit_code(self) -> int: ...

    def to_text(self) -> str: ...

    def to_json(self) -> str: ...


Renderer = Callable[[Renderable], str]


def _text(result: Renderable) -> str:
    return result.to_text()


def _json(result: Renderable) -> str:
    return result.to_json()


OUTPUTS: dict[str, Renderer] = {"text": _text, "json": _json}
"""Output format name → renderer. `text` is for people, `json` for machines."""


def render(result: Renderable, output: str) -> str:
    """The text of `result` in output format `output` (a key of `OUTPUTS`)."""
    return OUTPUTS[output](result)
