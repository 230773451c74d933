"""Output formats of results (`--format`), one module each, registered in `OUTPUTS`.

A result is a `Report` (validate, check), a `MutationReport` (mutate) or a `RunSummary`
(audit); each owns its verdict and exit code and knows its own text and JSON forms. An output
format is a function from a result and a `RenderContext` (the files the command read, a cap) to
the text printed; the format never changes the exit code. `sarif`, `github` and `junit` are for
CI systems: they write one `Outcome` (`render/ci.py`) built from any of the three results.
Adding an output is a module here and a line in `OUTPUTS`; the commands' `--format` choices are
read from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from frayproof_audit.render.ci import RenderContext


class Renderable(Protocol):
    """What every result offers every output format."""

    @property
    def exit_code(self) -> int: ...

    def to_text(self) -> str: ...

    def to_json(self) -> str: ...


Renderer = Callable[[Renderable, RenderContext], str]


def _text(result: Renderable, context: RenderContext) -> str:
    return result.to_text()


def _json(result: Renderable, context: RenderContext) -> str:
    return result.to_json()


def _sarif(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.sarif import render_sarif  # the CI outputs load the registries

    return render_sarif(result, context)


def _github(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.github import render_github

    return render_github(result, context)


def _junit(result: Renderable, context: RenderContext) -> str:
    from frayproof_audit.render.junit import render_junit

    return render_junit(result, context)


OUTPUTS: dict[str, Renderer] = {
    "text": _text,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
    "junit": _junit,
}
"""Output format name → renderer. `text` is for people, `json` for machines, `sarif` for code
scanning (GitHub), `github` for workflow annotations, `junit` for CI test reports."""

PLAIN_OUTPUTS = ("text", "json")
"""The outputs every result has (commands whose results have no CI form offer only these)."""


def render(result: Renderable, output: str, context: RenderContext | None = None) -> str:
    """The text of `result` in output format `output` (a key of `OUTPUTS`)."""
    return OUTPUTS[output](result, context or RenderContext())


__all__ = ["OUTPUTS", "PLAIN_OUTPUTS", "RenderContext", "Renderable", "Renderer", "render"]
